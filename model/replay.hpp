#pragma once
/// Replayed exploration (issue 19): how many runs an exploration strategy needs to find a good
/// variant, simulated on measured data without a device. For each (program, input) the candidate
/// pool is its measured variants (a failed measurement is a run that finds nothing); the prior
/// model is trained without the program (leave one program out, every other program of the data
/// in training); each strategy picks variants from the pool and is charged one run per variant.
#include "model/evaluate.hpp"
#include "model/online.hpp"
#include "model/protocol.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace liftx::model {

enum class ReplayStrategy {
  static_order,  ///< the prior's ranking (what `explore --strategy model` runs)
  online,        ///< OnlineRanker, Gaussian process, in batches
  online_knn,    ///< OnlineRanker, kNN residuals, in batches
  online_ei,     ///< OnlineRanker, Gaussian process, expected improvement first, in batches
  random,        ///< uniform random orders (the mean over seeds)
  hillclimb,     ///< seed 000: the best-predicted unmeasured neighbour of the best measured
  static_spread, ///< the prior's ranking with the best of its first kinds first (kind_spread.hpp)
  online_spread, ///< online, its first runs spread over kinds (OnlineOptions::spread_kinds),
                 ///< with ReplayOptions::kind_correlation
};
std::string to_string(ReplayStrategy strategy);
/// "static", "online", "online-knn", "online-ei", "random", "hillclimb", "static-spread" or
/// "online-spread"; UserError otherwise.
ReplayStrategy parse_replay_strategy(const std::string& text);

struct ReplayOptions {
  std::vector<ReplayStrategy> strategies = {ReplayStrategy::static_order, ReplayStrategy::online,
                                            ReplayStrategy::random, ReplayStrategy::hillclimb};
  int64_t budget = 30; ///< runs per input; a fraction not reached by then is censored
  size_t batch = 4;    ///< online strategies re-rank after each batch
  int random_seeds = 20;
  uint64_t seed = 1;
  OnlineOptions online;
  /// The spread strategies' kinds (a kind: a sample's rewrite strategy).
  size_t spread_kinds = 4;
  /// online-spread: OnlineOptions::kind_correlation (0: the spread alone).
  double kind_correlation = 0;
  double stop_gain = kAutoStopGain;
  Setting prior; ///< the prior model's kind, options and columns
  /// Where the prior learns from: nullptr, the replayed data (another program of the same
  /// device); else this dataset, e.g. another device's measurements (a new device explored with
  /// the model of an old one), with the replayed data's feature columns. Either way without the
  /// replayed program.
  const Dataset* prior_data = nullptr;
  /// A trained model as every program's prior instead (its route for the program's kind; no
  /// training, no program left out): judging a shipped model's explorations on data it never
  /// saw.
  const Model* fixed_prior = nullptr;
  /// Which programs are replayed (each with a prior trained without it); all when empty.
  std::function<bool(const std::string& program)> replayed;
  std::function<void(const std::string& message)> progress;
};

/// One strategy on one input. Runs-to figures count runs (1 = the first variant); a fraction not
/// reached within the budget is `budget + 1` with `censored` set (a lower bound). Random: the
/// mean over its seeds, censored when any seed was.
struct ReplayOutcome {
  ReplayStrategy strategy = ReplayStrategy::static_order;
  double runs_to_90 = 0;
  double runs_to_95 = 0;
  bool censored_90 = false;
  bool censored_95 = false;
  /// Online strategies: where `--budget auto` would have stopped (runs) and the fraction of the
  /// pool's best found by then; 0 for the others or when it would not stop within the budget.
  int64_t auto_runs = 0;
  double auto_fraction = 0;
};

struct ReplayGroup {
  std::string program;
  std::string input;
  int pool = 0; ///< measured variants, failed ones included
  int failed = 0;
  std::vector<ReplayOutcome> outcomes; ///< in ReplayOptions::strategies order
};

struct ReplaySummary {
  ReplayStrategy strategy = ReplayStrategy::static_order;
  size_t inputs = 0;
  double mean_90 = 0, median_90 = 0, worst_90 = 0;
  double mean_95 = 0, median_95 = 0, worst_95 = 0;
  size_t censored_90 = 0, censored_95 = 0;
  /// At each program's largest input: how many programs reach 95% of the best within 10 runs.
  size_t largest_programs = 0;
  size_t largest_95_within_10 = 0;
  size_t auto_stopped = 0;       ///< inputs where `--budget auto` stopped within the budget
  double mean_auto_runs = 0;     ///< over those
  double mean_auto_fraction = 0; ///< over those
};

struct ReplayResult {
  std::vector<ReplayGroup> groups;
  std::vector<ReplaySummary> summaries; ///< per strategy, in ReplayOptions::strategies order
  /// The same per kind of program (Dataset::program_kinds), kinds in name order.
  std::vector<std::pair<std::string, std::vector<ReplaySummary>>> kind_summaries;
};

/// UserError with fewer than two programs (without prior_data), an empty budget, or prior_data
/// on other feature columns or holding nothing but the replayed program.
ReplayResult replay(const Dataset& data, const ReplayOptions& options);

/// One input replayed with a given prior (predicted normalised throughput per row of `rows`):
/// what replay() does inside each fold, exposed for tests.
ReplayGroup replay_group(const Dataset& data, const std::vector<size_t>& rows,
                         const std::vector<double>& prior, const Matrix& prior_rows,
                         const ReplayOptions& options);

/// The summaries of `groups` (ReplayResult::summaries).
std::vector<ReplaySummary> summarize(const std::vector<ReplayGroup>& groups,
                                     const std::vector<ReplayStrategy>& strategies);

} // namespace liftx::model
