#pragma once
/// Quality measures of a cost model (seed 003 §7-8): correlations, runs and time needed to reach a
/// fraction of the best performance when configurations are tried in a given order, and the
/// normalised mutual information of a feature with performance.
#include <cstdint>
#include <optional>
#include <vector>

namespace liftx::model {

/// Pearson's r; 0 when either side is constant or there are fewer than 2 values.
double pearson(const std::vector<double>& a, const std::vector<double>& b);
/// Ranks 1..n, ties sharing the mean of their ranks.
std::vector<double> ranks(const std::vector<double>& values);
/// Spearman's rho: Pearson of the (tie-averaged) ranks.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

/// One tried configuration: its performance (nullopt for a failed one, which still costs a run)
/// and what trying it cost: its runs every time, and building its kernel the first time that
/// kernel comes up in an order (several launches of one kernel share one build).
struct Trial {
  std::optional<double> performance;
  double cost_ms = 0;  ///< charged every time it is tried: its runs
  double build_ms = 0; ///< charged the first time `kernel` is tried in an order (always if -1)
  int64_t kernel = -1; ///< trials with the same kernel share its build; -1: its own
};

/// Runs (1-based) until a trial reaches `fraction` of the best performance of all `trials` when
/// tried in `order` (indices into trials); 0 when no trial has a performance.
int64_t runs_to_fraction(const std::vector<Trial>& trials, const std::vector<size_t>& order,
                         double fraction = 0.9);
/// Cumulative cost of those runs (0 when none is reached).
double time_to_fraction(const std::vector<Trial>& trials, const std::vector<size_t>& order,
                        double fraction = 0.9);

struct RandomOrderStats {
  double mean_runs = 0;
  double mean_time_ms = 0;
  /// Mean over the orders of the best performance so far after 1, 2, ... runs.
  std::vector<double> mean_best_so_far;
};
/// `orders` random permutations from a fixed seed.
RandomOrderStats random_orders(const std::vector<Trial>& trials, int orders, uint64_t seed,
                               double fraction = 0.9);
/// Best performance so far after 1, 2, ... runs of `order` (0 before the first success).
std::vector<double> best_so_far(const std::vector<Trial>& trials, const std::vector<size_t>& order);

/// Mutual information of x and y, both discretised into `bins` equal-frequency bins, divided by
/// sqrt(H(x) H(y)); 0 when either is constant. In [0, 1].
double normalised_mutual_information(const std::vector<double>& x, const std::vector<double>& y,
                                     int bins = 10);
/// The equal-frequency bin (0..bins-1) of each value; equal values share a bin.
std::vector<int> quantile_bins(const std::vector<double>& values, int bins);

} // namespace liftx::model
