#pragma once
/// How a ranking does per kind of program, and the rule a new model must pass to replace the
/// shipped one: judged on a fixed suite of inputs of every kind the variant space makes, it may
/// not be worse on any kind. A model is shipped for every program a user brings, so a gain on the
/// 2D stencils does not pay for a loss on reductions (the retrained model of 2026-11-29 did
/// exactly that, and a suite of 2D stencils could not see it).
#include "model/evaluate.hpp"
#include "model/model.hpp"

#include <string>
#include <vector>

namespace liftx::model {

/// Offline figures of one kind: every input of the kind ranked by the model, its measured
/// variants tried in that order.
struct KindSummary {
  std::string kind;
  size_t inputs = 0;
  double mean_runs_90 = 0; ///< runs until 90% of the input's best measured variant, mean
  double mean_runs_95 = 0;
  double worst_runs_95 = 0;
  /// Inputs whose first pick is within 95% of their best.
  size_t first_within_95 = 0;
  double first_share() const { return inputs ? double(first_within_95) / double(inputs) : 0; }
};

/// Every sample of `data` ranked by the trained `model` (no training), one GroupResult per input
/// (judge() over all rows; ties in a seeded order; runs to 95% of the best). UserError naming the
/// feature columns the model needs that the data lacks (features stored by an older liftx).
std::vector<GroupResult> judge_all(const Model& model, const Dataset& data, int random_orders);

/// Runs (1-based) until the best-so-far curve of a group reaches `fraction` of its best; the
/// curve's length when it never does (no successful variant).
int64_t runs_to(const GroupResult& group, double fraction);

/// One summary per kind present in `groups` (kinds from `data`), in kind-name order.
std::vector<KindSummary> summarize_by_kind(const std::vector<GroupResult>& groups,
                                           const Dataset& data);

struct ShipRule {
  /// How much higher a kind's mean runs to 95% may be than the baseline's, relative: the figures
  /// are deterministic (ties broken by a seeded order), but a one-run change on a kind of two
  /// inputs is not a regression worth refusing a model for.
  double tolerance = 0.1;
};

/// Why `candidate` may not replace `baseline` (the same kinds, judged on the same inputs): one
/// line per kind where its mean runs to 95% exceed the baseline's by more than the tolerance (and
/// by more than half a run), or where fewer of its inputs have their first pick within 95%. Empty
/// when it may. A kind the baseline was judged on and the candidate was not is a refusal.
std::vector<std::string> ship_refusals(const std::vector<KindSummary>& candidate,
                                       const std::vector<KindSummary>& baseline,
                                       const ShipRule& rule = {});

} // namespace liftx::model
