#pragma once
/// Evaluation protocols with nested model selection. A protocol splits a dataset into folds
/// (train rows, test rows); for each fold the setting (model kind, its options, its feature
/// columns) is chosen among candidates by an inner evaluation on the fold's training rows only,
/// then trained on all of them and judged on the test rows. The reported figures therefore never
/// saw the data that chose the setting (the audit found the seed-style selection on the reported
/// folds worth 1.2 runs of optimism).
///
/// Protocols: leave one program out (optionally only programs with a given name prefix are held
/// out, e.g. synthetic stencils), leave the largest input size out, and train on one dataset and
/// test on another (a second device).
#include "model/evaluate.hpp"

#include <functional>
#include <string>
#include <vector>

namespace liftx::model {

/// One candidate: what is trained and on which columns.
struct Setting {
  std::string name; ///< e.g. "knn log k=10 1/d"
  Kind kind = Kind::knn;
  TrainOptions train;
  /// Feature columns it uses (names of Dataset::feature_names); empty = every column.
  std::vector<std::string> features;
};

/// How a fold's training rows are split again to choose its setting.
enum class InnerSplit {
  programs, ///< held-out groups of programs (at most `inner_folds` folds)
  /// Extrapolation in size, as the outer fold does it: each training size but the smallest is
  /// held out in turn (the largest first, at most `inner_folds` folds), trained on the sizes
  /// below it. One step alone (8 inputs for the suite) chose noisily; every step agrees more.
  size_steps,
};

struct Fold {
  std::string name; ///< what is held out
  std::vector<size_t> train;
  std::vector<size_t> test;
  InnerSplit inner = InnerSplit::programs;
};

/// The inner folds that choose a setting for the training rows `rows` of `data`: `split` says
/// how; at most `max_folds` folds.
std::vector<Fold> inner_folds(const Dataset& data, const std::vector<size_t>& rows,
                              InnerSplit split, int max_folds);

/// Leave one program out, over the programs whose name starts with `test_prefix` (all when empty).
std::vector<Fold> leave_one_program_out(const Dataset& data, const std::string& test_prefix = "");
/// Train on every input size but the largest (by element count), test on the largest.
std::vector<Fold> leave_largest_size_out(const Dataset& data);

struct ProtocolOptions {
  std::vector<Setting> candidates; ///< at least one; one means no selection
  int inner_folds = 4;             ///< program groups of the inner split
  int random_orders = 100;
  uint64_t seed = 1;
  double fraction = 0.9;
  /// Told before each fold is worked on ("fold 2 of 8: leave out gradient"); may be empty.
  std::function<void(const std::string& message)> progress;
};

/// A fold's choice and how the candidates scored inside it (mean runs to the fraction, lower is
/// better; ties broken by the higher mean Pearson).
struct FoldChoice {
  std::string fold;
  std::string setting;
  std::vector<std::pair<std::string, EvaluationSummary>> inner; ///< per candidate
};

struct ProtocolResult {
  Evaluation evaluation; ///< the test groups of every fold
  std::vector<FoldChoice> choices;
};

/// UserError when a fold has no training or no test rows, or there is no candidate.
ProtocolResult evaluate_folds(const Dataset& data, const std::vector<Fold>& folds,
                              const ProtocolOptions& options);

/// Train on all of `train` and judge on all of `test` (e.g. two devices), choosing the setting
/// inside `train` by leave-program-groups-out.
ProtocolResult evaluate_transfer(const Dataset& train, const Dataset& test,
                                 const ProtocolOptions& options);

/// Trains `setting` on the successful samples among `rows` of `data` (targets normalised over
/// each whole program and input). UserError when none of them succeeded.
Model train_on(const Dataset& data, const std::vector<size_t>& rows, const Setting& setting);

/// `data` with only the columns `names` (in that order); UserError naming a missing column.
Dataset select_columns(const Dataset& data, const std::vector<std::string>& names);

/// Judges a trained model on `rows` of `data`: one GroupResult per (program, input). Prediction
/// ties are broken by a seeded random order, not by row order (which correlates with speed).
std::vector<GroupResult> judge(const Model& model, const Dataset& data,
                               const std::vector<size_t>& rows, int random_orders, uint64_t seed,
                               double fraction);

} // namespace liftx::model
