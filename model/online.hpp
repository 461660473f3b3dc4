#pragma once
/// Online adaptation of a cost model's ranking to the runs of one exploration (issue 19). The
/// prior model ranks the candidate variants of one program and input; every measured variant
/// tells how wrong the prior is near it. The ranker models the log-residual
/// r = log(measured throughput) - log(prior) as an unknown per-input offset c (measured
/// throughput is in seconds, the prior is normalised: their ratio is the input's scale) plus a
/// Gaussian process over the candidates' feature rows, and re-ranks the unmeasured candidates by
/// the posterior mean of log throughput, discounted by a kernel estimate of their failure
/// probability. Its expected improvement over the best measured run is the remaining gain that
/// lets an exploration stop early.
///
/// Settings are fixed a priori (docs/results.md, issue 19 section): the length scale is a fixed
/// fraction of the candidates' median pairwise distance, so it adapts to the pool without looking
/// at any measurement.
#include "model/model.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace liftx::model {

/// The expected relative gain under which `--budget auto` stops (1%), fixed a priori.
inline constexpr double kAutoStopGain = 0.01;

enum class OnlineMethod {
  gp,  ///< Gaussian-process regression of the residuals
  knn, ///< kernel-weighted mean of the residuals of the k nearest measured candidates
};

/// Which order the unmeasured candidates are run in.
enum class OnlineAcquisition {
  mean,                 ///< best posterior mean first (exploits what the runs taught)
  expected_improvement, ///< largest expected gain over the best run first (also explores where
                        ///< the posterior is unsure); before a run succeeded, as `mean`
};

struct OnlineOptions {
  OnlineMethod method = OnlineMethod::gp;
  OnlineAcquisition acquisition = OnlineAcquisition::mean;
  /// Length scale of the squared-exponential kernel, as a fraction of the median pairwise
  /// distance between candidates (standardised rows).
  double length_scale = 0.5;
  /// A-priori variance of the log-residual (0.1: the prior off by a factor of about 1.4) and how
  /// many pseudo-observations it weighs against the measured residuals' variance.
  double residual_variance = 0.1;
  double residual_weight = 3;
  double noise_ratio = 0.1; ///< measurement noise variance as a fraction of the residual variance
  int neighbours = 5;       ///< knn method
  /// A-priori failure probability and its weight in pseudo-observations; once a run failed, a
  /// candidate's failure probability is the kernel-weighted failure rate of measured candidates
  /// near it (0 for all while none failed).
  double failure_rate = 0.1;
  double failure_weight = 1;
  /// Batches skip a candidate whose kernel similarity to one already in the batch exceeds this
  /// (near-identical variants teach little beyond the first), unless nothing else is left.
  double batch_similarity = 0.9;
  /// The first this many runs are the best-ranked candidates of as many kinds (set_kinds; one
  /// run per kind, kinds in their best candidate's order): what the prior gets wrong between
  /// kinds is measured before the runs follow its ranking (model/kind_spread.hpp). 0: off.
  size_t spread_kinds = 0;
  /// The Gaussian process's correlation between the residuals of two variants of one kind
  /// (set_kinds) however far apart their features are: a prior wrong about a whole kind is
  /// corrected for the whole kind by one run of it. The feature kernel keeps the rest of the
  /// covariance (two variants of different kinds correlate by (1 - this) x their similarity).
  /// 0: kinds play no part in the residuals.
  double kind_correlation = 0;
  /// A batch takes a candidate whose launch shape (set_launch_shapes) is in it already only when
  /// no candidate of a shape not in it scores within this fraction below it (0.05: 5%); then that
  /// candidate comes first. The prior rarely tells launch shapes apart as well as it ranks tiles
  /// (its best 3D launches were work-groups 4-16 planes deep, the fastest one or two planes deep
  /// and several rows high), and its near-ties of one shape share the error: one batch measuring
  /// several shapes lets the re-ranking see which shape the prior got wrong. 0: off. 0.1: chosen
  /// inside the training data, each program's prior trained without it, and checked in explores on
  /// an H200 (docs/results.md, "Launch shapes spread in the online batches").
  double launch_spread = 0.1;
};

/// The launch shape of a work-group of local sizes `local` (`dims` of them): which dimensions it
/// spans (a bit per dimension whose local size exceeds 1), e.g. 0b101 for 32x1x8. -1 when the
/// runtime chooses the local sizes (any 0): its shape is unknown and never shared.
int64_t launch_shape_of(int dims, const std::array<int64_t, 3>& local);

class OnlineRanker {
public:
  /// `prior`: the model's predicted normalised throughput per candidate (values <= 0 count as
  /// very slow); `rows`: their raw feature rows (candidates x columns, any column order; may
  /// have no columns). Rows are put on a signed log scale and standardised over the candidates.
  OnlineRanker(std::vector<double> prior, const Matrix& rows, OnlineOptions options = {});

  /// A measured candidate: its median time, or nullopt when it failed (build, run, verify).
  void observe(size_t candidate, std::optional<double> time_ms);

  /// The unmeasured candidates in the order OnlineOptions::acquisition runs them (ties: higher
  /// score(), then lower index first).
  std::vector<size_t> ranking() const;
  /// The next `size` candidates to measure: the ranking, skipping near-duplicates of those
  /// already chosen (another launch of the same kernel, or OnlineOptions::batch_similarity)
  /// while others are left, and taking a near-tie of a launch shape not yet chosen before a
  /// second of one shape (OnlineOptions::launch_spread).
  std::vector<size_t> next_batch(size_t size) const;
  /// Which kernel each candidate launches (same id = same generated code, another launch). A
  /// batch takes one launch per kernel while other kernels are left: the prior's best launches
  /// of one kernel tend to share its error, so a batch of them teaches little about the rest.
  /// Without it every candidate is its own kernel.
  void set_kernels(std::vector<int64_t> kernel_of);
  /// Which kind of kernel each candidate is (its rewrite strategy, as an id), for
  /// OnlineOptions::spread_kinds. Without it there is one kind.
  void set_kinds(std::vector<int64_t> kind_of);
  /// Each candidate's launch shape (launch_shape_of; -1: unknown), for
  /// OnlineOptions::launch_spread. Without it no two candidates share a shape.
  void set_launch_shapes(std::vector<int64_t> shape_of);
  /// Expected relative improvement of the best unmeasured candidate over the best measured run
  /// (0.01 = 1%); infinity before a run succeeded, 0 when none is left.
  double remaining_gain() const;
  /// Posterior score per candidate (what ranking() orders by): its median throughput in the
  /// prior's normalised scale (the input's scale divided out, so that scores taken at different
  /// times compare) times its success probability.
  double score(size_t candidate) const;
  /// Expected relative gain of an unmeasured candidate over the best run so far, times its
  /// success probability (infinity before a run succeeded).
  double expected_gain(size_t candidate) const;

  size_t size() const { return prior_log_.size(); }
  size_t measured() const { return measured_count_; }
  bool is_measured(size_t candidate) const { return state_.at(candidate) != State::unmeasured; }

private:
  enum class State { unmeasured, ok, failed };
  struct Posterior {
    Vector mean;       ///< of log throughput, per candidate
    Vector variance;   ///< of log throughput, per candidate
    Vector failure;    ///< probability, per candidate
    double offset = 0; ///< log of the input's scale: measured throughput / normalised prior
  };
  Posterior fit() const;
  /// Log throughput of the best successful run; nullopt before one.
  std::optional<double> best_measured() const;
  /// expected_gain() over a best run of log throughput `best`.
  double gain_over(size_t candidate, double best) const;
  double kernel(size_t a, size_t b) const;
  /// The residuals' covariance (kernel() with OnlineOptions::kind_correlation), 1 on the diagonal.
  double covariance(size_t a, size_t b) const;

  OnlineOptions options_;
  std::vector<double> prior_log_;
  Matrix rows_;                    ///< standardised
  double inverse_2l2_ = 0;         ///< 1 / (2 length_scale^2)
  std::vector<int64_t> kernel_of_; ///< empty: every candidate its own kernel
  std::vector<int64_t> kind_of_;   ///< empty: one kind
  std::vector<int64_t> shape_of_;  ///< empty: no shape shared
  std::vector<State> state_;
  std::vector<double> measured_log_; ///< log(1 / time) of successful candidates (else 0)
  size_t measured_count_ = 0;
  Posterior posterior_;
};

} // namespace liftx::model
