#include "model/metrics.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <unordered_set>

namespace liftx::model {

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  LIFTX_INTERNAL_CHECK(a.size() == b.size(), "pearson of {} and {} values", a.size(), b.size());
  const size_t n = a.size();
  if (n < 2)
    return 0;
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / double(n);
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / double(n);
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa <= 0 || sbb <= 0)
    return 0;
  return sab / std::sqrt(saa * sbb);
}

std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return values[x] < values[y]; });
  std::vector<double> r(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
      ++j;
    const double mean_rank = (double(i) + double(j)) / 2.0 + 1.0;
    for (size_t t = i; t <= j; ++t)
      r[order[t]] = mean_rank;
    i = j + 1;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  return pearson(ranks(a), ranks(b));
}

namespace {

std::optional<double> best_performance(const std::vector<Trial>& trials) {
  std::optional<double> best;
  for (const Trial& t : trials)
    if (t.performance && (!best || *t.performance > *best))
      best = t.performance;
  return best;
}

/// Runs and cumulative cost to reach `target` in `order`.
std::pair<int64_t, double> reach(const std::vector<Trial>& trials, const std::vector<size_t>& order,
                                 double target) {
  double cost = 0;
  std::unordered_set<int64_t> built;
  for (size_t i = 0; i < order.size(); ++i) {
    const Trial& t = trials.at(order[i]);
    cost += t.cost_ms;
    if (t.kernel < 0 || built.insert(t.kernel).second)
      cost += t.build_ms;
    if (t.performance && *t.performance >= target)
      return {static_cast<int64_t>(i + 1), cost};
  }
  return {0, 0};
}

} // namespace

int64_t runs_to_fraction(const std::vector<Trial>& trials, const std::vector<size_t>& order,
                         double fraction) {
  auto best = best_performance(trials);
  if (!best)
    return 0;
  return reach(trials, order, fraction * *best).first;
}

double time_to_fraction(const std::vector<Trial>& trials, const std::vector<size_t>& order,
                        double fraction) {
  auto best = best_performance(trials);
  if (!best)
    return 0;
  return reach(trials, order, fraction * *best).second;
}

std::vector<double> best_so_far(const std::vector<Trial>& trials,
                                const std::vector<size_t>& order) {
  std::vector<double> out;
  double best = 0;
  for (size_t i : order) {
    if (trials.at(i).performance)
      best = std::max(best, *trials.at(i).performance);
    out.push_back(best);
  }
  return out;
}

RandomOrderStats random_orders(const std::vector<Trial>& trials, int orders, uint64_t seed,
                               double fraction) {
  RandomOrderStats stats;
  stats.mean_best_so_far.assign(trials.size(), 0.0);
  auto best = best_performance(trials);
  if (orders <= 0 || trials.empty())
    return stats;
  std::mt19937_64 rng(seed);
  std::vector<size_t> order(trials.size());
  for (int o = 0; o < orders; ++o) {
    std::iota(order.begin(), order.end(), size_t{0});
    // Fisher-Yates with our own index draw: std::shuffle's sequence is library-specific.
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[rng() % i]);
    if (best) {
      auto [runs, cost] = reach(trials, order, fraction * *best);
      stats.mean_runs += double(runs);
      stats.mean_time_ms += cost;
    }
    std::vector<double> curve = best_so_far(trials, order);
    for (size_t i = 0; i < curve.size(); ++i)
      stats.mean_best_so_far[i] += curve[i];
  }
  stats.mean_runs /= orders;
  stats.mean_time_ms /= orders;
  for (double& v : stats.mean_best_so_far)
    v /= orders;
  return stats;
}

std::vector<int> quantile_bins(const std::vector<double>& values, int bins) {
  LIFTX_INTERNAL_CHECK(bins >= 1, "quantile_bins with {} bins", bins);
  std::vector<double> r = ranks(values); // ties share a rank, hence a bin
  const double n = double(values.size());
  std::vector<int> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = std::min(bins - 1, static_cast<int>(std::floor((r[i] - 1.0) * bins / n)));
  return out;
}

double normalised_mutual_information(const std::vector<double>& x, const std::vector<double>& y,
                                     int bins) {
  LIFTX_INTERNAL_CHECK(x.size() == y.size(), "NMI of {} and {} values", x.size(), y.size());
  if (x.empty())
    return 0;
  const std::vector<int> bx = quantile_bins(x, bins), by = quantile_bins(y, bins);
  std::map<int, double> px, py;
  std::map<std::pair<int, int>, double> pxy;
  const double n = double(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    px[bx[i]] += 1 / n;
    py[by[i]] += 1 / n;
    pxy[{bx[i], by[i]}] += 1 / n;
  }
  auto entropy = [](const std::map<int, double>& p) {
    double h = 0;
    for (const auto& [k, v] : p)
      h -= v * std::log(v);
    return h;
  };
  const double hx = entropy(px), hy = entropy(py);
  if (hx <= 1e-12 || hy <= 1e-12)
    return 0;
  double mi = 0;
  for (const auto& [k, v] : pxy)
    mi += v * std::log(v / (px[k.first] * py[k.second]));
  return std::clamp(mi / std::sqrt(hx * hy), 0.0, 1.0);
}

} // namespace liftx::model
