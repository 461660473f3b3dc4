#include "model/replay_csv.hpp"

#include "model/evaluation_report.hpp"

#include <fmt/format.h>

namespace liftx::model {

std::string replay_summary_csv(const ReplayResult& result) {
  std::string csv = "strategy,inputs,mean_90,median_90,worst_90,censored_90,mean_95,median_95,"
                    "worst_95,censored_95,largest_programs,largest_95_within_10,auto_stopped,"
                    "mean_auto_runs,mean_auto_fraction\n";
  for (const ReplaySummary& s : result.summaries)
    csv += fmt::format(
        "{},{},{:.4f},{:.1f},{:.1f},{},{:.4f},{:.1f},{:.1f},{},{},{},{},{:.3f},{:.4f}\n",
        to_string(s.strategy), s.inputs, s.mean_90, s.median_90, s.worst_90, s.censored_90,
        s.mean_95, s.median_95, s.worst_95, s.censored_95, s.largest_programs,
        s.largest_95_within_10, s.auto_stopped, s.mean_auto_runs, s.mean_auto_fraction);
  return csv;
}

std::string replay_groups_csv(const ReplayResult& result) {
  std::string csv = "program,input,pool,failed,strategy,runs_to_90,censored_90,runs_to_95,"
                    "censored_95,auto_runs,auto_fraction\n";
  for (const ReplayGroup& g : result.groups)
    for (const ReplayOutcome& o : g.outcomes)
      csv += fmt::format("{},\"{}\",{},{},{},{:.2f},{},{:.2f},{},{},{:.4f}\n", g.program,
                         short_input(g.input), g.pool, g.failed, to_string(o.strategy),
                         o.runs_to_90, int(o.censored_90), o.runs_to_95, int(o.censored_95),
                         o.auto_runs, o.auto_fraction);
  return csv;
}

} // namespace liftx::model
