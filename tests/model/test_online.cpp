// Online adaptation (model/online) and the online exploration strategy (explore/explore) on
// synthetic candidate spaces.
#include "explore/explore.hpp"
#include "model/kind_spread.hpp"
#include "model/online.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

using namespace liftx;
using namespace liftx::model;

namespace {

/// Candidates 0..n-1 on a line (one feature column, its index), predicted best first.
Matrix line(size_t n) {
  Matrix rows(Eigen::Index(n), 1);
  for (size_t i = 0; i < n; ++i)
    rows(Eigen::Index(i), 0) = double(i);
  return rows;
}

std::vector<double> decreasing(size_t n, double step) {
  std::vector<double> prior;
  for (size_t i = 0; i < n; ++i)
    prior.push_back(1 - step * double(i));
  return prior;
}

size_t position(const std::vector<size_t>& ranking, size_t candidate) {
  return size_t(std::find(ranking.begin(), ranking.end(), candidate) - ranking.begin());
}

} // namespace

TEST_CASE("online: a variant whose neighbours measured fast moves up the ranking") {
  OnlineRanker ranker(decreasing(20, 0.02), line(20));
  CHECK(ranker.ranking().front() == 0); // the prior's order before any run
  ranker.observe(0, 1 / 1.00);          // as predicted
  ranker.observe(1, 1 / 0.98);
  ranker.observe(14, 1 / 5.0); // five times faster than predicted
  ranker.observe(16, 1 / 5.0);
  const std::vector<size_t> ranking = ranker.ranking();
  CHECK(ranking.size() == 16);
  CHECK(ranking.front() == 15);
  CHECK(position(ranking, 15) < position(ranking, 2));
}

TEST_CASE("online: a prior that is right up to its scale keeps its order") {
  const std::vector<double> prior = decreasing(20, 0.03);
  OnlineRanker ranker(prior, line(20));
  for (size_t i : {0, 1, 2, 3})
    ranker.observe(i, 0.25 / prior[i]); // the input's scale: 4x the normalised throughput
  const std::vector<size_t> ranking = ranker.ranking();
  for (size_t r = 0; r < ranking.size(); ++r)
    CHECK(ranking[r] == r + 4);
  CHECK(ranker.measured() == 4);
}

TEST_CASE("online: expected improvement runs an unsure candidate before a near-copy of a run") {
  // Candidate 1 sits next to the measured candidate 0, candidate 2 far from both: the posterior
  // is sure about 1 (a little slower than the best run) and unsure about 2.
  Matrix rows(3, 1);
  rows << 0, 0.1, 5;
  const std::vector<double> prior = {1.0, 0.95, 0.9};
  OnlineOptions options;
  OnlineRanker by_mean(prior, rows, options);
  options.acquisition = OnlineAcquisition::expected_improvement;
  OnlineRanker by_gain(prior, rows, options);
  CHECK(by_gain.ranking() == std::vector<size_t>{0, 1, 2}); // no run yet: the prior's order
  CHECK(std::isinf(by_gain.expected_gain(0)));
  by_mean.observe(0, 1.0);
  by_gain.observe(0, 1.0);
  CHECK(by_mean.ranking() == std::vector<size_t>{1, 2});
  CHECK(by_gain.ranking() == std::vector<size_t>{2, 1});
  CHECK(by_gain.expected_gain(2) > 2 * by_gain.expected_gain(1));
  CHECK(by_gain.remaining_gain() == doctest::Approx(by_gain.expected_gain(2)));
}

TEST_CASE("online: failures mark their neighbours down; no gain is known before a success") {
  OnlineRanker ranker(decreasing(20, 0.02), line(20));
  ranker.observe(0, std::nullopt);
  ranker.observe(1, std::nullopt);
  CHECK(std::isinf(ranker.remaining_gain()));
  // Candidate 2, next to both failures, falls below candidates predicted slower but far away.
  const std::vector<size_t> ranking = ranker.ranking();
  CHECK(position(ranking, 10) < position(ranking, 2));
  CHECK(ranker.score(2) < 0.7 * 0.96);
  CHECK_THROWS_AS(ranker.observe(1, 1.0), UserError);  // measured already
  CHECK_THROWS_AS(ranker.observe(20, 1.0), UserError); // unknown
  CHECK_THROWS_AS(OnlineRanker({1.0, 0.5}, line(3)), UserError);
}

TEST_CASE("online: a batch skips near-duplicates of the variants already in it") {
  // Candidates 0-3 are one point of feature space, 4-7 another, 8-11 a third.
  Matrix rows(12, 1);
  for (Eigen::Index i = 0; i < 12; ++i)
    rows(i, 0) = double(i / 4);
  OnlineRanker ranker(decreasing(12, 0.01), rows);
  CHECK(ranker.next_batch(3) == std::vector<size_t>{0, 4, 8});
  CHECK(ranker.next_batch(5) == std::vector<size_t>{0, 4, 8, 1, 2}); // then duplicates after all
}

TEST_CASE("online: a batch takes one launch per kernel while other kernels are left") {
  // Twelve points of feature space, all equally far apart; candidates 0-5 launch kernel 7,
  // 6-11 kernel 9.
  const Matrix apart = Matrix::Identity(12, 12);
  OnlineRanker ranker(decreasing(12, 0.01), apart);
  CHECK(ranker.next_batch(3) == std::vector<size_t>{0, 1, 2}); // no kernel ids: the ranking
  std::vector<int64_t> kernels(12, 7);
  std::fill(kernels.begin() + 6, kernels.end(), 9);
  ranker.set_kernels(kernels);
  CHECK(ranker.next_batch(3) == std::vector<size_t>{0, 6, 1}); // then the same kernels again
  ranker.observe(0, 1.0);
  CHECK(ranker.next_batch(2) == std::vector<size_t>{1, 6});
  CHECK_THROWS_AS(ranker.set_kernels({1, 2}), UserError);
}

TEST_CASE("launch shapes: the dimensions a work-group spans") {
  CHECK(launch_shape_of(3, {32, 1, 8}) == 0b101);
  CHECK(launch_shape_of(3, {32, 8, 1}) == 0b011);
  CHECK(launch_shape_of(3, {1, 1, 1}) == 0);
  CHECK(launch_shape_of(2, {1, 256, 7}) == 0b10); // dimensions past dims do not count
  CHECK(launch_shape_of(2, {0, 4, 1}) == -1);     // the runtime chooses: unknown
}

TEST_CASE("online: a batch measures other launch shapes among near-ties before a second of one") {
  // Twelve kernels far apart in feature space; 0-5 of one launch shape, 6-11 of another.
  const Matrix apart = Matrix::Identity(12, 12);
  std::vector<int64_t> shapes(12, 0b101);
  std::fill(shapes.begin() + 6, shapes.end(), 0b011);
  OnlineOptions spread;
  spread.launch_spread = 0.1;
  // Applies: candidate 6 predicts within 10% of candidate 1, so it runs second.
  OnlineRanker near(decreasing(12, 0.01), apart, spread);
  near.set_launch_shapes(shapes);
  CHECK(near.next_batch(3) == std::vector<size_t>{0, 6, 1});
  CHECK(near.next_batch(1) == std::vector<size_t>{0}); // the first place is the ranking's
  // Refuses: candidate 6 predicts 40% below candidate 1, not a near-tie.
  OnlineRanker far(decreasing(12, 0.07), apart, spread);
  far.set_launch_shapes(shapes);
  CHECK(far.next_batch(3) == std::vector<size_t>{0, 1, 2});
  // Refuses: off, or no shapes given, or shapes unknown (-1): the ranking's order.
  OnlineOptions off = spread;
  off.launch_spread = 0;
  OnlineRanker without(decreasing(12, 0.01), apart, off);
  without.set_launch_shapes(shapes);
  CHECK(without.next_batch(3) == std::vector<size_t>{0, 1, 2});
  OnlineRanker unset(decreasing(12, 0.01), apart, spread);
  CHECK(unset.next_batch(3) == std::vector<size_t>{0, 1, 2});
  unset.set_launch_shapes(std::vector<int64_t>(12, -1));
  CHECK(unset.next_batch(3) == std::vector<size_t>{0, 1, 2});
  // A third shape among the near-ties joins too, the better-predicted new shape first; the
  // measured leave the pool.
  shapes[4] = 0b111;
  near.set_launch_shapes(shapes);
  CHECK(near.next_batch(4) == std::vector<size_t>{0, 4, 6, 1});
  near.observe(0, 1.0);
  CHECK(near.next_batch(2) == std::vector<size_t>{1, 4});
  CHECK_THROWS_AS(near.set_launch_shapes({1, 2}), UserError);
}

TEST_CASE("spread over kinds: the best of each of the first kinds first, the rest in order") {
  // Candidates 0..7 best first; kinds: 0 0 0 1 0 2 1 3.
  const std::vector<int64_t> kinds = {0, 0, 0, 1, 0, 2, 1, 3};
  const std::vector<size_t> order = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(spread_over_kinds(order, kinds, 3) == std::vector<size_t>{0, 3, 5, 1, 2, 4, 6, 7});
  CHECK(spread_over_kinds(order, kinds, 1) == order);
  CHECK(spread_over_kinds(order, kinds, 0) == order);
  CHECK(spread_over_kinds(order, kinds, 9) == std::vector<size_t>{0, 3, 5, 7, 1, 2, 4, 6});
  // Kinds already tried are passed over; the order given decides which candidate leads a kind.
  CHECK(spread_over_kinds({7, 6, 5, 4, 3, 2, 1, 0}, kinds, 2, {3}) ==
        std::vector<size_t>{6, 5, 7, 4, 3, 2, 1, 0});
}

TEST_CASE("online: the first runs spread over kinds, then the ranking takes over") {
  // Twelve candidates equally far apart; 0-8 are kind 0, 9-10 kind 1, 11 kind 2.
  const Matrix apart = Matrix::Identity(12, 12);
  OnlineOptions options;
  options.spread_kinds = 3;
  OnlineRanker ranker(decreasing(12, 0.01), apart, options);
  CHECK(ranker.next_batch(4) == std::vector<size_t>{0, 1, 2, 3}); // no kinds: one kind
  ranker.set_kinds({0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2});
  CHECK(ranker.next_batch(4) == std::vector<size_t>{0, 9, 11, 1});
  // One run at a time: the spread is owed until three runs were made, over kinds not yet run.
  CHECK(ranker.next_batch(1) == std::vector<size_t>{0});
  ranker.observe(0, 1.0);
  CHECK(ranker.next_batch(1) == std::vector<size_t>{9});
  ranker.observe(9, 1.0);
  CHECK(ranker.next_batch(2) == std::vector<size_t>{11, 1});
  ranker.observe(11, 1.0);
  CHECK(ranker.next_batch(2) == std::vector<size_t>{1, 2}); // spread done: the ranking's order
  CHECK_THROWS_AS(ranker.set_kinds({1, 2}), UserError);
}

TEST_CASE("online: a kind the prior rated low but that measured fast leads the next batch, when "
          "the runs spread over kinds and residuals correlate within a kind") {
  // Kind 0 (candidates 0-9) is predicted best but runs 10x slower than predicted; kind 1
  // (10-19), predicted a third as fast, runs as predicted. Features: the kind and the index.
  Matrix rows(20, 2);
  std::vector<double> prior;
  std::vector<int64_t> kinds;
  for (Eigen::Index i = 0; i < 20; ++i) {
    rows(i, 0) = double(i / 10);
    rows(i, 1) = double(i % 10);
    prior.push_back(i < 10 ? 0.9 - 0.01 * double(i) : 0.3 - 0.01 * double(i - 10));
    kinds.push_back(i / 10);
  }
  auto time_of = [&](size_t i) { return i < 10 ? 10 / prior[i] : 1 / prior[i]; };
  OnlineOptions options;
  options.spread_kinds = 2;
  options.kind_correlation = 0.5;
  OnlineRanker spread(prior, rows, options), plain(prior, rows);
  spread.set_kinds(kinds);
  plain.set_kinds(kinds);
  for (OnlineRanker* ranker : {&spread, &plain})
    for (size_t i : ranker->next_batch(2))
      ranker->observe(i, time_of(i));
  for (size_t i : plain.next_batch(2))
    CHECK(i < 10); // never left the wrong kind
  const std::vector<size_t> next = spread.next_batch(2);
  CHECK(next.size() == 2);
  CHECK(next[0] >= 10);
  CHECK(next[1] >= 10);
}

TEST_CASE("online: the kNN method re-ranks too") {
  OnlineOptions options;
  options.method = OnlineMethod::knn;
  OnlineRanker ranker(decreasing(20, 0.02), line(20), options);
  ranker.observe(0, 1.0);
  ranker.observe(14, 0.2);
  ranker.observe(16, 0.2);
  const std::vector<size_t> ranking = ranker.ranking();
  CHECK(ranking.front() > 10); // the fast region
  CHECK(position(ranking, 15) < position(ranking, 2));
}

namespace {

/// Ranked variants on a line, predicted 0.9^i (best first), with their feature rows.
std::vector<explore::RankedVariant> ranked_line(size_t n) {
  std::vector<explore::RankedVariant> ranked(n);
  for (size_t i = 0; i < n; ++i) {
    ranked[i].variant.index = int64_t(i);
    ranked[i].predicted = std::pow(0.9, double(i));
    ranked[i].rank = int(i) + 1;
    ranked[i].columns = {double(i)};
  }
  return ranked;
}

/// A fake device: the variant at index i takes time_ms(i).
explore::Measure device(std::function<double(size_t)> time_ms) {
  return [time_ms](const explore::RankedVariant& r) {
    exec::RunReport report;
    runtime::Timing t;
    t.median_ms = time_ms(size_t(r.variant.index));
    t.samples_ms = {t.median_ms};
    report.timing = t;
    return report;
  };
}

} // namespace

TEST_CASE("explore --budget auto stops early when the prior is right, not when it is wrong") {
  const std::vector<explore::RankedVariant> ranked = ranked_line(40);
  explore::ExploreOptions options;
  options.strategy = explore::Strategy::online;
  options.budget = 20;
  options.batch = 4;
  options.auto_budget = true;

  SUBCASE("the best is first and the prior is right: it stops after the first batch") {
    const explore::ExploreResult result =
        explore::explore(ranked, options, device([](size_t i) { return 2 / std::pow(0.9, i); }));
    CHECK(result.stopped_early);
    CHECK(result.attempts.size() == 4);
    REQUIRE(result.best);
    CHECK(result.attempts[*result.best].ranked_index == 0);
    REQUIRE(result.remaining_gain);
    CHECK(*result.remaining_gain < options.stop_gain);
  }
  SUBCASE("the prior is upside down: it runs the whole budget") {
    const explore::ExploreResult result = explore::explore(
        ranked, options, device([](size_t i) { return 2 / std::pow(0.9, 39 - double(i)); }));
    CHECK_FALSE(result.stopped_early);
    CHECK(result.attempts.size() == 20);
    REQUIRE(result.online_spearman);
  }
}

TEST_CASE("explore online: distinct variants in batches, within the budget") {
  const std::vector<explore::RankedVariant> ranked = ranked_line(40);
  explore::ExploreOptions options;
  options.strategy = explore::Strategy::online;
  options.budget = 16;
  options.batch = 4;
  const explore::ExploreResult result = explore::explore(
      ranked, options,
      device([](size_t i) { return std::abs(double(i) - 30) < 4 ? 0.1 : 1 / std::pow(0.9, i); }));
  CHECK(result.attempts.size() == 16);
  std::set<size_t> seen;
  for (const explore::Attempt& a : result.attempts)
    seen.insert(a.ranked_index);
  CHECK(seen.size() == 16);
  CHECK(explore::parse_strategy("online") == explore::Strategy::online);
  CHECK(explore::to_string(explore::Strategy::online) == "online");
}
