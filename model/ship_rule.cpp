#include "model/ship_rule.hpp"

#include "model/protocol.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace liftx::model {

namespace {

/// UserError naming the feature columns `model` needs that `data` lacks.
void check_columns(const Model& model, const Dataset& data) {
  std::vector<std::string> missing;
  for (const std::string& name : model.feature_names())
    if (std::find(data.feature_names.begin(), data.feature_names.end(), name) ==
        data.feature_names.end())
      missing.push_back(name);
  LIFTX_USER_CHECK(missing.empty(),
                   "the model needs feature columns the data's rows do not all have ({}{}): "
                   "recompute the stored features with this liftx",
                   missing.front(),
                   missing.size() > 1 ? fmt::format(" and {} more", missing.size() - 1) : "");
}

} // namespace

std::vector<GroupResult> judge_all(const Model& model, const Dataset& data, int random_orders) {
  // Each kind's rows are ranked by the model that would rank them in explore (its route).
  std::map<std::string, std::vector<size_t>> rows_by_kind;
  for (size_t r = 0; r < data.samples.size(); ++r)
    rows_by_kind[kind_of(data, data.samples[r].program)].push_back(r);
  std::vector<GroupResult> groups;
  for (const auto& [kind, rows] : rows_by_kind) {
    const Model& ranking = model.for_kind(kind);
    check_columns(ranking, data);
    for (GroupResult& g : judge(ranking, data, rows, random_orders, 1, 0.95))
      groups.push_back(std::move(g));
  }
  sort_groups(groups);
  return groups;
}

int64_t runs_to(const GroupResult& group, double fraction) {
  const std::vector<double>& curve = group.model_curve;
  if (curve.empty() || curve.back() <= 0)
    return int64_t(curve.size());
  const double target = fraction * curve.back();
  const auto reached = std::find_if(curve.begin(), curve.end(),
                                    [&](double best) { return best >= target * (1 - 1e-12); });
  return int64_t(reached - curve.begin()) + 1;
}

std::vector<KindSummary> summarize_by_kind(const std::vector<GroupResult>& groups,
                                           const Dataset& data) {
  std::map<std::string, KindSummary> by_kind;
  for (const GroupResult& g : groups) {
    const std::string kind = kind_of(data, g.program);
    KindSummary& s = by_kind[kind];
    s.kind = kind;
    ++s.inputs;
    s.mean_runs_90 += double(runs_to(g, 0.90));
    const double runs_95 = double(runs_to(g, 0.95));
    s.mean_runs_95 += runs_95;
    s.worst_runs_95 = std::max(s.worst_runs_95, runs_95);
    if (runs_95 == 1)
      ++s.first_within_95;
  }
  std::vector<KindSummary> out;
  for (auto& [kind, s] : by_kind) {
    s.mean_runs_90 /= double(s.inputs);
    s.mean_runs_95 /= double(s.inputs);
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> ship_refusals(const std::vector<KindSummary>& candidate,
                                       const std::vector<KindSummary>& baseline,
                                       const ShipRule& rule) {
  std::vector<std::string> out;
  for (const KindSummary& base : baseline) {
    const auto it = std::find_if(candidate.begin(), candidate.end(),
                                 [&](const KindSummary& c) { return c.kind == base.kind; });
    if (it == candidate.end()) {
      out.push_back(
          fmt::format("{}: not judged (the baseline was, on {} inputs)", base.kind, base.inputs));
      continue;
    }
    const double allowed =
        std::max(base.mean_runs_95 * (1 + rule.tolerance), base.mean_runs_95 + 0.5);
    if (it->mean_runs_95 > allowed)
      out.push_back(fmt::format("{}: mean runs to 95% {:.2f} against {:.2f} (at most {:.2f})",
                                base.kind, it->mean_runs_95, base.mean_runs_95, allowed));
    if (it->first_within_95 < base.first_within_95)
      out.push_back(fmt::format("{}: first pick within 95% on {} of {} inputs against {}",
                                base.kind, it->first_within_95, it->inputs, base.first_within_95));
  }
  return out;
}

} // namespace liftx::model
