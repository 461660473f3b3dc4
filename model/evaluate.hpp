#pragma once
/// Leave-one-benchmark-out evaluation of a cost model (seed 003 §7-8): for each program, train on
/// the other programs, predict every configuration of the held-out one, and measure per
/// (program, input) how well the prediction orders the configurations.
#include "model/metrics.hpp"
#include "model/model.hpp"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::model {

struct Sample {
  /// Benchmark: the unit left out. Another device's samples, learnt beside the first device's
  /// (`train --add-db`), carry "@DEVICE_KEY": their inputs are normalised among themselves.
  std::string program;
  std::string input;             ///< the sizes, e.g. {"M":256,"N":256}
  std::vector<double> features;  ///< in the dataset's feature order
  std::optional<double> time_ms; ///< median run time; nullopt for a failed measurement
  double cost_ms = 0;            ///< what running it took (all timed runs)
  double build_ms = 0;           ///< what building its kernel took
  /// Samples of one input with the same kernel share one build (empty: its own kernel).
  std::string kernel;
  /// Where the variant sits in its space, for neighbourhoods (hillclimbing): its rewrite
  /// strategy, and its coordinates by name (the tuning parameters as JSON values, the launch as
  /// dims, global0.., local0.., tied).
  std::string strategy;
  std::map<std::string, std::string> coordinates;
};

/// A sample's program without the "@DEVICE_KEY" of another device's samples: the stencil, which
/// every device's rows of share one fold.
inline std::string_view stencil_of(std::string_view program) {
  return program.substr(0, program.find('@'));
}

struct Dataset {
  std::vector<std::string> feature_names;
  std::vector<Sample> samples;
  /// The kind of each program (stencil_of a sample's program), e.g. "reduction": what the
  /// per-kind tables group inputs by. A program missing here is of kind "unknown".
  std::map<std::string, std::string> program_kinds;
};

/// The kind of `program` in `data` (its stencil's entry of program_kinds), "unknown" without one.
std::string kind_of(const Dataset& data, std::string_view program);

struct GroupResult {
  std::string program;
  std::string input;
  int configurations = 0; ///< all, failed ones included
  int failed = 0;
  double pearson = 0; ///< predicted vs measured normalised throughput (successful ones)
  double spearman = 0;
  int64_t model_runs = 0; ///< to 90% of the best, in model order
  double random_runs = 0; ///< mean over the random orders
  double model_time_ms = 0;
  double random_time_ms = 0;
  double run_speedup = 0;           ///< random_runs / model_runs
  double time_speedup = 0;          ///< random_time / model_time
  std::vector<double> model_curve;  ///< best normalised throughput so far, per run
  std::vector<double> random_curve; ///< the mean over random orders
  /// The model's prediction and the measured normalised throughput of each successful
  /// configuration (the pairs behind pearson and spearman), in the same order.
  std::vector<double> predicted;
  std::vector<double> measured;
};

/// Orders inputs (JSON objects of sizes, e.g. {"M":128,"N":64}) by their numbers, key by key in
/// alphabetical key order: {"M":64} before {"M":128}, {"M":2048,"N":8192} before
/// {"M":8192,"N":2048}. Objects with other keys are ordered by their key names first; inputs that
/// are not objects of numbers come after all of them, as text.
bool input_less(const std::string& a, const std::string& b);

/// Orders groups by program name (runs of digits as numbers: synth_2 before synth_10), then by
/// input (input_less).
void sort_groups(std::vector<GroupResult>& groups);

struct Evaluation {
  Kind kind = Kind::knn;
  int random_orders = 100;
  std::vector<GroupResult> groups;
  /// NMI of each feature with normalised throughput, over all successful samples.
  std::vector<std::pair<std::string, double>> feature_nmi;
};

struct EvaluateOptions {
  Kind kind = Kind::knn;
  TrainOptions train;
  int random_orders = 100;
  uint64_t seed = 1;
  double fraction = 0.9;
  /// Told before each program is held out ("fold 2 of 8: leave out gradient"); may be empty.
  std::function<void(const std::string& message)> progress;
};

/// Normalised throughput of the successful samples of `data` (per program and input), nullopt for
/// failed ones.
std::vector<std::optional<double>> normalised_targets(const Dataset& data);

/// The features of `rows` (samples x columns); `columns` selects and orders columns (empty: all).
Matrix feature_matrix(const Dataset& data, const std::vector<size_t>& rows,
                      const std::vector<int>& columns = {});

/// Trains on every successful sample.
Model train(const Dataset& data, Kind kind, const TrainOptions& options = {});

/// UserError with fewer than two programs.
Evaluation evaluate(const Dataset& data, const EvaluateOptions& options = {});

/// The headline figures of an evaluation over its inputs (groups), as docs/results.md reports
/// them: means, the median and worst runs to 90% in model order, and the exploration time summed
/// over the inputs.
struct EvaluationSummary {
  size_t inputs = 0;
  double mean_spearman = 0;
  double mean_pearson = 0;
  double mean_model_runs = 0;
  double mean_random_runs = 0;
  double median_model_runs = 0; ///< the mean of the middle two for an even count
  double worst_model_runs = 0;
  double model_time_ms = 0;  ///< summed over the inputs
  double random_time_ms = 0; ///< summed over the inputs
  /// random_time_ms / model_time_ms: how much less time the model's order needs (0 when the
  /// model's time is 0).
  double time_reduction = 0;
};
/// Zeros for an evaluation without groups.
EvaluationSummary summarize(const Evaluation& evaluation);

} // namespace liftx::model
