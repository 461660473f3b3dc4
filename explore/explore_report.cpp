#include "explore/explore_report.hpp"

#include "codegen/launch.hpp"
#include "support/csv.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace liftx::explore {

bool noisy(const runtime::Timing& timing) {
  return timing.median_ms > 0 && timing.iqr_ms() > kNoisySpread * timing.median_ms;
}

std::string describe_time(const exec::RunReport& report) {
  if (report.status != runtime::Status::ok || !report.timing)
    return std::string(runtime::to_string(report.status));
  const runtime::Timing& t = *report.timing;
  const double spread = t.median_ms > 0 ? 100 * t.iqr_ms() / t.median_ms : 0;
  return fmt::format("{:.4f} ms ±{:.0f}%{}", t.median_ms, spread, noisy(t) ? " noisy" : "");
}

nlohmann::json attempt_json(const Attempt& attempt, const RankedVariant& ranked, size_t run,
                            const perfdb::Measurement* stored) {
  const exec::RunReport& rep = attempt.report;
  nlohmann::json row = {{"run", run},
                        {"rank", ranked.rank},
                        {"predicted", ranked.predicted},
                        {"strategy", ranked.variant.strategy},
                        {"parameters", describe_parameters(ranked.variant)},
                        {"launch", codegen::describe(ranked.variant.launch)},
                        {"status", std::string(runtime::to_string(rep.status))},
                        {"stored", stored != nullptr}};
  if (rep.verification.steps > 0) // a shortened check (exec::RunOptions::check_launches)
    row.update(
        {{"steps_checked", rep.verification.steps_checked}, {"steps", rep.verification.steps}});
  if (!rep.verification.checked_sizes.empty()) // exec::RunOptions::check_sizes
    row["checked_sizes"] = rep.verification.checked_sizes;
  if (rep.status == runtime::Status::ok && rep.timing) {
    const runtime::Timing& t = *rep.timing;
    row.update({{"median_ms", t.median_ms},
                {"q1_ms", t.q1_ms},
                {"q3_ms", t.q3_ms},
                {"min_ms", t.min_ms},
                {"max_ms", t.max_ms},
                {"repetitions", stored ? size_t(stored->repetitions) : t.samples_ms.size()}});
  }
  if (rep.gb_per_s)
    row["gb_per_s"] = *rep.gb_per_s;
  if (rep.roofline_fraction)
    row["roofline_fraction"] = *rep.roofline_fraction;
  if (rep.gflop_per_s)
    row["gflop_per_s"] = *rep.gflop_per_s;
  if (rep.fp32_peak_fraction)
    row["fp32_peak_fraction"] = *rep.fp32_peak_fraction;
  if (rep.status != runtime::Status::ok && !rep.message.empty())
    row["message"] = rep.message;
  return row;
}

nlohmann::json attempt_rows(const ExploreResult& result, const std::vector<RankedVariant>& ranked,
                            const RecordingWorkerMeasure& measure) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < result.attempts.size(); ++i) {
    const RankedVariant& variant = ranked[result.attempts[i].ranked_index];
    rows.push_back(attempt_json(result.attempts[i], variant, i + 1, measure.stored(variant)));
  }
  return rows;
}

namespace {

// New columns go last, so that a script reading the older ones by position still finds them.
const char* const kCsvColumns[] = {"run",
                                   "rank",
                                   "predicted",
                                   "strategy",
                                   "parameters",
                                   "launch",
                                   "status",
                                   "median_ms",
                                   "q1_ms",
                                   "q3_ms",
                                   "min_ms",
                                   "max_ms",
                                   "repetitions",
                                   "gb_per_s",
                                   "roofline_fraction",
                                   "stored",
                                   "best",
                                   "gflop_per_s",
                                   "fp32_peak_fraction"};

std::string csv_number(const std::optional<double>& value) {
  return value ? fmt::format("{:.10g}", *value) : "";
}

} // namespace

std::string explore_csv(const nlohmann::json& rows, std::optional<size_t> best) {
  std::string text = fmt::format("{}\n", fmt::join(kCsvColumns, ","));
  for (size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json& row = rows[i];
    std::vector<std::string> fields;
    for (const char* column : kCsvColumns) {
      const std::string name = column;
      if (name == "best")
        fields.push_back(best == i ? "1" : "0");
      else if (!row.contains(name))
        fields.push_back("");
      else if (row.at(name).is_string())
        fields.push_back(csv_quote(row.at(name).get<std::string>()));
      else if (row.at(name).is_number_float())
        fields.push_back(csv_number(row.at(name).get<double>()));
      else
        fields.push_back(row.at(name).dump());
    }
    text += fmt::format("{}\n", fmt::join(fields, ","));
  }
  return text;
}

Baseline measure_baseline(const Session& session, RecordingWorkerMeasure& measure) {
  const DefaultCandidate& untuned = session.default_lowering();
  Baseline baseline;
  baseline.strategy = untuned.strategy;
  baseline.why_not = untuned.why_not;
  if (untuned.candidate)
    try {
      baseline.report =
          measure.run_unrecorded(*untuned.candidate->program, untuned.candidate->variant.launch);
    } catch (const UserError& e) {
      baseline.why_not = e.message();
    }
  return baseline;
}

std::string baseline_line(const Baseline& baseline, const exec::RunReport& best) {
  if (!baseline.why_not.empty())
    return fmt::format("untuned   not compared: {}\n", baseline.why_not);
  if (!baseline.report)
    return "";
  const exec::RunReport& base = *baseline.report;
  if (base.status != runtime::Status::ok || !base.timing)
    return fmt::format("untuned   the default lowering ({}) did not run: {}{}\n", baseline.strategy,
                       runtime::to_string(base.status),
                       base.message.empty() ? "" : " (" + base.message + ")");
  const double ratio = base.timing->median_ms / best.timing->median_ms;
  return fmt::format("untuned   {:.4f} ms, the default lowering ({}): {}\n", base.timing->median_ms,
                     baseline.strategy,
                     ratio >= 1 ? fmt::format("the best is {:.2f}x faster", ratio)
                                : fmt::format("it is {:.2f}x faster than the best run: none of the "
                                              "variants run beats it here",
                                              1 / ratio));
}

std::string describe_online_stop(const ExploreResult& result, const ExploreOptions& options) {
  if (result.stopped_early)
    return fmt::format("stopped after {} runs: expected gain left {:.2f}% < {:.0f}%",
                       result.attempts.size(), *result.remaining_gain * 100,
                       options.stop_gain * 100);
  if (result.remaining_gain && std::isfinite(*result.remaining_gain))
    return fmt::format("{} runs, expected gain left {:.2f}%", result.attempts.size(),
                       *result.remaining_gain * 100);
  return fmt::format("{} runs", result.attempts.size());
}

nlohmann::json explore_document(const std::string& file, const ir::Program& program,
                                const Sizes& sizes, const target::DeviceProfile& device,
                                const std::string& strategy, const std::filesystem::path& db_path,
                                const Session& session, const ExploreResult& result,
                                const nlohmann::json& rows, const Baseline& baseline) {
  const model::Model& m = *session.model();
  const std::string route = route_of(m, program);
  nlohmann::json document = {
      {"program", program.name},
      {"file", file},
      {"sizes", sizes},
      {"device", {{"name", device.device_name}, {"key", device.key}}},
      {"model",
       {{"file", session.found_model().path.string()},
        {"kind", model::to_string(model_for(m, program).kind())},
        {"profile", m.profile},
        {"route", route.empty() ? nlohmann::json() : nlohmann::json(route)}}},
      {"space",
       {{"variants", session.ranking().variants}, {"ranked", session.candidates().size()}}},
      {"strategy", strategy},
      {"database", db_path.string()},
      {"runs", rows},
      {"best", result.best ? nlohmann::json(*result.best + 1) : nlohmann::json(nullptr)}};
  if (result.model_spearman)
    document["model_spearman"] = *result.model_spearman;
  if (baseline.report)
    document["default_lowering"] = {
        {"strategy", baseline.strategy},
        {"status", runtime::to_string(baseline.report->status)},
        {"median_ms", baseline.report->timing ? nlohmann::json(baseline.report->timing->median_ms)
                                              : nlohmann::json(nullptr)}};
  return document;
}

} // namespace liftx::explore
