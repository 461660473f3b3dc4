#include "model/online.hpp"

#include "model/kind_spread.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <set>

namespace liftx::model {

namespace {

constexpr double kSlowest = 1e-9; ///< a prior of 0 or less: very slow, but still rankable

/// Counts and sizes span orders of magnitude: a signed log puts a doubling at the same distance
/// everywhere (and keeps negative derived columns finite). Then each column is standardised over
/// the candidates, constant ones dropped: distances measure how the candidates differ.
Matrix standardise_rows(const Matrix& raw) {
  const Matrix logged =
      raw.unaryExpr([](double x) { return std::copysign(std::log2(1 + std::abs(x)), x); });
  std::vector<Eigen::Index> kept;
  std::vector<double> means, scales;
  for (Eigen::Index c = 0; c < logged.cols(); ++c) {
    const double mean = logged.col(c).mean();
    const double scale = std::sqrt((logged.col(c).array() - mean).square().mean());
    if (scale > 1e-12) {
      kept.push_back(c);
      means.push_back(mean);
      scales.push_back(scale);
    }
  }
  Matrix out(logged.rows(), static_cast<Eigen::Index>(kept.size()));
  for (size_t k = 0; k < kept.size(); ++k)
    out.col(Eigen::Index(k)) = (logged.col(kept[k]).array() - means[k]) / scales[k];
  return out;
}

/// Median distance between candidates (an evenly spaced sample of at most 256 of them: the
/// length scale needs its size, not its exact value).
double median_distance(const Matrix& rows) {
  const Eigen::Index n = rows.rows();
  const Eigen::Index step = std::max<Eigen::Index>(1, n / 256);
  std::vector<double> distances;
  for (Eigen::Index a = 0; a < n; a += step)
    for (Eigen::Index b = a + step; b < n; b += step)
      distances.push_back((rows.row(a) - rows.row(b)).norm());
  if (distances.empty())
    return 0;
  auto mid = distances.begin() + ptrdiff_t(distances.size() / 2);
  std::nth_element(distances.begin(), mid, distances.end());
  return *mid;
}

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

/// E[max(e^f - e^best, 0)] / e^best for f ~ N(mean, variance): the expected relative gain of a
/// log-normal throughput over the best one measured.
double relative_improvement(double mean, double variance, double best) {
  const double sd = std::sqrt(std::max(variance, 1e-12));
  const double d = mean - best;
  return std::exp(d + variance / 2) * normal_cdf((d + variance) / sd) - normal_cdf(d / sd);
}

} // namespace

int64_t launch_shape_of(int dims, const std::array<int64_t, 3>& local) {
  int64_t shape = 0;
  for (int d = 0; d < dims && d < 3; ++d) {
    if (local[size_t(d)] <= 0)
      return -1;
    if (local[size_t(d)] > 1)
      shape |= int64_t{1} << d;
  }
  return shape;
}

OnlineRanker::OnlineRanker(std::vector<double> prior, const Matrix& rows, OnlineOptions options)
    : options_(options), rows_(standardise_rows(rows)) {
  LIFTX_USER_CHECK(rows.rows() == static_cast<Eigen::Index>(prior.size()),
                   "online ranking: {} prior predictions for {} feature rows", prior.size(),
                   rows.rows());
  for (double p : prior)
    prior_log_.push_back(std::log(std::max(p, kSlowest)));
  const double length = options_.length_scale * median_distance(rows_);
  inverse_2l2_ = length > 0 ? 1 / (2 * length * length) : 0;
  state_.assign(prior_log_.size(), State::unmeasured);
  measured_log_.assign(prior_log_.size(), 0);
  posterior_ = fit();
}

double OnlineRanker::kernel(size_t a, size_t b) const {
  return std::exp(-(rows_.row(Eigen::Index(a)) - rows_.row(Eigen::Index(b))).squaredNorm() *
                  inverse_2l2_);
}

double OnlineRanker::covariance(size_t a, size_t b) const {
  const double rho = kind_of_.empty() ? 0 : options_.kind_correlation;
  return (1 - rho) * kernel(a, b) + (rho != 0 && kind_of_[a] == kind_of_[b] ? rho : 0);
}

void OnlineRanker::observe(size_t candidate, std::optional<double> time_ms) {
  LIFTX_USER_CHECK(candidate < size() && !is_measured(candidate),
                   "online ranking: candidate {} is unknown or measured already", candidate);
  const bool ok = time_ms && *time_ms > 0;
  state_[candidate] = ok ? State::ok : State::failed;
  measured_log_[candidate] = ok ? -std::log(*time_ms) : 0;
  ++measured_count_;
  posterior_ = fit();
}

OnlineRanker::Posterior OnlineRanker::fit() const {
  const size_t n = size();
  std::vector<size_t> ok, measured;
  for (size_t i = 0; i < n; ++i) {
    if (state_[i] != State::unmeasured)
      measured.push_back(i);
    if (state_[i] == State::ok)
      ok.push_back(i);
  }
  // Kernel between every candidate and every measured one (columns in `measured` order).
  Matrix cross(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(measured.size()));
  for (size_t j = 0; j < measured.size(); ++j)
    for (size_t i = 0; i < n; ++i)
      cross(Eigen::Index(i), Eigen::Index(j)) = kernel(i, measured[j]);

  Posterior post;
  // Without a failure there is nothing to learn about failing: no candidate is marked down.
  const bool any_failed = measured.size() > ok.size();
  post.failure = Vector::Zero(Eigen::Index(n));
  for (size_t i = 0; any_failed && i < n; ++i) {
    double weight = options_.failure_weight,
           failed = options_.failure_weight * options_.failure_rate;
    for (size_t j = 0; j < measured.size(); ++j) {
      weight += cross(Eigen::Index(i), Eigen::Index(j));
      if (state_[measured[j]] == State::failed)
        failed += cross(Eigen::Index(i), Eigen::Index(j));
    }
    post.failure[Eigen::Index(i)] = failed / weight;
  }

  post.mean = Vector(Eigen::Index(n));
  for (size_t i = 0; i < n; ++i)
    post.mean[Eigen::Index(i)] = prior_log_[i];
  post.variance = Vector::Constant(Eigen::Index(n), options_.residual_variance);
  if (ok.empty())
    return post;

  // Residuals, their offset (the input's scale) and their variance around it.
  const auto m = static_cast<Eigen::Index>(ok.size());
  Vector residual(m);
  for (Eigen::Index j = 0; j < m; ++j)
    residual[j] = measured_log_[ok[size_t(j)]] - prior_log_[ok[size_t(j)]];
  const double offset = residual.mean();
  post.offset = offset;
  residual.array() -= offset;
  const double variance =
      (options_.residual_weight * options_.residual_variance + residual.squaredNorm()) /
      (options_.residual_weight + double(m) - 1);

  // Candidates x successful measured: the feature kernel's columns, unless kinds correlate too.
  const bool by_kind = !kind_of_.empty() && options_.kind_correlation != 0;
  Matrix k_ok(Eigen::Index(n), m);
  for (Eigen::Index j = 0; j < m; ++j) {
    const size_t measured_j = ok[size_t(j)];
    if (!by_kind) {
      k_ok.col(j) = cross.col(
          Eigen::Index(std::find(measured.begin(), measured.end(), measured_j) - measured.begin()));
      continue;
    }
    for (size_t i = 0; i < n; ++i)
      k_ok(Eigen::Index(i), j) = covariance(i, measured_j);
  }

  if (options_.method == OnlineMethod::gp) {
    Matrix gram(m, m);
    for (Eigen::Index a = 0; a < m; ++a)
      gram.row(a) = k_ok.row(Eigen::Index(ok[size_t(a)]));
    gram.diagonal().array() += options_.noise_ratio;
    const Eigen::LLT<Matrix> llt(gram);
    const Vector alpha = llt.solve(residual);
    const Matrix solved = llt.solve(k_ok.transpose()); // m x n
    for (size_t i = 0; i < n; ++i) {
      const auto row = k_ok.row(Eigen::Index(i));
      post.mean[Eigen::Index(i)] += offset + row.dot(alpha);
      const double shared = row.dot(solved.col(Eigen::Index(i)));
      post.variance[Eigen::Index(i)] = variance * std::max(1e-9, 1 - shared);
    }
    return post;
  }
  // knn: the nearest measured residuals, weighted by similarity, shrunk towards the offset by one
  // pseudo-observation.
  const auto k = std::min<Eigen::Index>(m, options_.neighbours);
  std::vector<Eigen::Index> order(static_cast<size_t>(m));
  for (size_t i = 0; i < n; ++i) {
    const auto row = k_ok.row(Eigen::Index(i));
    std::iota(order.begin(), order.end(), Eigen::Index{0});
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](Eigen::Index a, Eigen::Index b) { return row[a] > row[b]; });
    double weight = 1, sum = 0;
    for (Eigen::Index r = 0; r < k; ++r) {
      weight += row[order[size_t(r)]];
      sum += row[order[size_t(r)]] * residual[order[size_t(r)]];
    }
    post.mean[Eigen::Index(i)] += offset + sum / weight;
    post.variance[Eigen::Index(i)] = variance / weight;
  }
  return post;
}

double OnlineRanker::score(size_t candidate) const {
  const auto i = static_cast<Eigen::Index>(candidate);
  return std::exp(posterior_.mean[i] - posterior_.offset) * (1 - posterior_.failure[i]);
}

std::optional<double> OnlineRanker::best_measured() const {
  std::optional<double> best;
  for (size_t i = 0; i < size(); ++i)
    if (state_[i] == State::ok && (!best || measured_log_[i] > *best))
      best = measured_log_[i];
  return best;
}

double OnlineRanker::gain_over(size_t candidate, double best) const {
  const auto e = static_cast<Eigen::Index>(candidate);
  return (1 - posterior_.failure[e]) *
         relative_improvement(posterior_.mean[e], posterior_.variance[e], best);
}

double OnlineRanker::expected_gain(size_t candidate) const {
  const std::optional<double> best = best_measured();
  return best ? gain_over(candidate, *best) : std::numeric_limits<double>::infinity();
}

std::vector<size_t> OnlineRanker::ranking() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < size(); ++i)
    if (!is_measured(i))
      out.push_back(i);
  std::vector<double> scores(size()), gains(size(), 0);
  const std::optional<double> best = best_measured();
  const bool by_gain = options_.acquisition == OnlineAcquisition::expected_improvement && best;
  for (size_t i : out) {
    scores[i] = score(i);
    if (by_gain)
      gains[i] = gain_over(i, *best);
  }
  std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    return gains[a] != gains[b] ? gains[a] > gains[b] : scores[a] > scores[b];
  });
  return out;
}

std::vector<size_t> OnlineRanker::next_batch(size_t size) const {
  std::vector<size_t> order = ranking();
  // The runs still owed to the spread go to the best of kinds not yet run, whatever the kernel
  // similarity says: kinds differ in kind, not in degree.
  size_t spread = 0;
  if (!kind_of_.empty() && measured_count_ < options_.spread_kinds) {
    std::set<int64_t> tried, untried;
    for (size_t i = 0; i < this->size(); ++i)
      (is_measured(i) ? tried : untried).insert(kind_of_[i]);
    for (int64_t kind : tried)
      untried.erase(kind);
    spread = std::min({size, options_.spread_kinds - measured_count_, untried.size()});
    order = spread_over_kinds(order, kind_of_, spread, tried);
  }
  std::vector<size_t> batch(order.begin(), order.begin() + ptrdiff_t(spread)), skipped;
  auto duplicate = [&](size_t i) {
    return std::any_of(batch.begin(), batch.end(), [&](size_t b) {
      return (!kernel_of_.empty() && kernel_of_[i] == kernel_of_[b]) ||
             kernel(i, b) > options_.batch_similarity;
    });
  };
  auto shape_taken = [&](size_t i) {
    return !shape_of_.empty() && shape_of_[i] >= 0 &&
           std::any_of(batch.begin(), batch.end(),
                       [&](size_t b) { return shape_of_[b] == shape_of_[i]; });
  };
  std::vector<bool> taken(this->size(), false);
  for (size_t i : batch)
    taken[i] = true;
  // The best candidate of a shape not yet in the batch that is a near-tie of `i`, if any.
  auto other_shape = [&](size_t i, size_t from) -> std::optional<size_t> {
    const double floor = (1 - options_.launch_spread) * score(i);
    for (size_t later = from; later < order.size(); ++later) {
      const size_t j = order[later];
      if (!taken[j] && score(j) >= floor && !shape_taken(j) && !duplicate(j))
        return j;
    }
    return std::nullopt;
  };
  for (size_t r = spread; r < order.size() && batch.size() < size;) {
    const size_t i = order[r];
    if (taken[i]) {
      ++r;
    } else if (duplicate(i)) {
      skipped.push_back(i);
      taken[i] = true;
      ++r;
    } else if (std::optional<size_t> j;
               options_.launch_spread > 0 && shape_taken(i) && (j = other_shape(i, r + 1))) {
      taken[*j] = true; // order[r] stays in line for the next place
      batch.push_back(*j);
    } else {
      taken[i] = true;
      batch.push_back(i);
      ++r;
    }
  }
  for (size_t i : skipped) // nothing else left: near-duplicates after all
    if (batch.size() < size)
      batch.push_back(i);
  return batch;
}

void OnlineRanker::set_kinds(std::vector<int64_t> kind_of) {
  LIFTX_USER_CHECK(kind_of.empty() || kind_of.size() == size(),
                   "online ranking: {} kinds for {} candidates", kind_of.size(), size());
  kind_of_ = std::move(kind_of);
  posterior_ = fit(); // the covariance may take kinds into account
}

void OnlineRanker::set_launch_shapes(std::vector<int64_t> shape_of) {
  LIFTX_USER_CHECK(shape_of.empty() || shape_of.size() == size(),
                   "online ranking: {} launch shapes for {} candidates", shape_of.size(), size());
  shape_of_ = std::move(shape_of);
}

void OnlineRanker::set_kernels(std::vector<int64_t> kernel_of) {
  LIFTX_USER_CHECK(kernel_of.empty() || kernel_of.size() == size(),
                   "online ranking: {} kernel ids for {} candidates", kernel_of.size(), size());
  kernel_of_ = std::move(kernel_of);
}

double OnlineRanker::remaining_gain() const {
  const std::optional<double> best = best_measured();
  if (!best)
    return std::numeric_limits<double>::infinity();
  double gain = 0;
  for (size_t i = 0; i < size(); ++i)
    if (!is_measured(i))
      gain = std::max(gain, gain_over(i, *best));
  return gain;
}

} // namespace liftx::model
