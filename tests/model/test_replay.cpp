// Replayed exploration (model/replay) on small synthetic datasets.
#include "model/replay.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>

using namespace liftx;
using namespace liftx::model;

namespace {

/// One input of `program`: variant i takes times[i] ms (nullopt: failed), feature row {i}, and
/// coordinates a = i / 2, b = (i + 1) / 2, so that i's neighbours are i - 1 and i + 1.
Dataset pool(const std::string& program, const std::vector<std::optional<double>>& times) {
  Dataset data;
  data.feature_names = {"x"};
  for (size_t i = 0; i < times.size(); ++i) {
    Sample s;
    s.program = program;
    s.input = R"({"N":64})";
    s.features = {double(i)};
    s.time_ms = times[i];
    s.strategy = "s";
    s.coordinates = {{"a", std::to_string(i / 2)}, {"b", std::to_string((i + 1) / 2)}};
    data.samples.push_back(s);
  }
  return data;
}

std::vector<size_t> all_rows(const Dataset& data) {
  std::vector<size_t> rows(data.samples.size());
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i] = i;
  return rows;
}

Matrix rows_of(const Dataset& data) {
  return feature_matrix(data, all_rows(data));
}

} // namespace

TEST_CASE("replay: the static order and random orders reach 90% when expected") {
  // Ten variants, the only one within 90% of the best is the best itself (index 7); index 1
  // failed. The prior ranks the best third.
  std::vector<std::optional<double>> times(10, 10.0);
  times[7] = 1.0;
  times[1] = std::nullopt;
  const Dataset data = pool("p", times);
  const std::vector<double> prior = {0.9, 0.8, 0.3, 0.2, 0.1, 0.1, 0.1, 0.7, 0.1, 0.1};
  ReplayOptions options;
  options.strategies = {ReplayStrategy::static_order, ReplayStrategy::random};
  options.budget = 10;
  options.random_seeds = 200;
  const ReplayGroup g = replay_group(data, all_rows(data), prior, rows_of(data), options);
  CHECK(g.pool == 10);
  CHECK(g.failed == 1);
  REQUIRE(g.outcomes.size() == 2);
  CHECK(g.outcomes[0].runs_to_90 == 3); // 0, 1 (failed), then 7
  CHECK(g.outcomes[0].runs_to_95 == 3);
  CHECK_FALSE(g.outcomes[0].censored_90);
  // A random order finds one given variant of ten after (10 + 1) / 2 runs on average.
  CHECK(g.outcomes[1].runs_to_90 == doctest::Approx(5.5).epsilon(0.1));

  options.budget = 2; // not found within 2 runs: censored at 3
  const ReplayGroup short_budget =
      replay_group(data, all_rows(data), prior, rows_of(data), options);
  CHECK(short_budget.outcomes[0].runs_to_90 == 3);
  CHECK(short_budget.outcomes[0].censored_90);
}

TEST_CASE("replay: online and hillclimb follow the fast region the prior missed") {
  // The prior peaks at x = 10; the truth is fast around x = 15. The static order alternates
  // around 10 (10, 9 or 11, ...) and reaches 15 at run 11.
  std::vector<std::optional<double>> times;
  std::vector<double> prior;
  for (int i = 0; i < 20; ++i) {
    times.push_back(1 + std::abs(i - 15));
    prior.push_back(1 - 0.02 * std::abs(i - 10));
  }
  const Dataset data = pool("p", times);
  ReplayOptions options;
  options.strategies = {ReplayStrategy::static_order, ReplayStrategy::online,
                        ReplayStrategy::hillclimb};
  options.budget = 20;
  options.batch = 1;
  const ReplayGroup g = replay_group(data, all_rows(data), prior, rows_of(data), options);
  CHECK(g.outcomes[0].runs_to_95 == 11);
  CHECK(g.outcomes[1].runs_to_95 < 11);
  CHECK(g.outcomes[2].runs_to_95 <= 7); // 10, perhaps 9, 11, 12, 13, 14, 15
  CHECK(to_string(ReplayStrategy::online_knn) == "online-knn");
  CHECK(parse_replay_strategy("static") == ReplayStrategy::static_order);
  CHECK_THROWS_AS(parse_replay_strategy("greedy"), UserError);
}

TEST_CASE("replay: online batches spread over the launch shapes of the samples' coordinates") {
  // Eight kernels; the prior's four best are work-groups spanning x and z, the fastest (4) spans
  // all three dimensions and predicts within 5% of them; 7's launch is the runtime's choice.
  std::vector<std::optional<double>> times(8, 2.0);
  times[4] = 1.0;
  Dataset data = pool("p", times);
  const std::vector<std::array<const char*, 3>> locals = {
      {"32", "1", "8"}, {"64", "1", "4"}, {"16", "1", "16"}, {"32", "1", "2"},
      {"32", "4", "2"}, {"32", "8", "1"}, {"64", "8", "1"},  {"-", "-", "-"}};
  for (size_t i = 0; i < locals.size(); ++i) {
    data.samples[i].coordinates["dims"] = "3";
    for (size_t d = 0; d < 3; ++d)
      data.samples[i].coordinates["local" + std::to_string(d)] = locals[i][d];
  }
  const std::vector<double> prior = {1.0, 0.99, 0.98, 0.97, 0.95, 0.5, 0.5, 0.5};
  ReplayOptions options;
  options.strategies = {ReplayStrategy::online};
  options.budget = 4;
  options.batch = 4;
  options.online.batch_similarity = 1; // only the launch shapes keep candidates apart
  options.online.launch_spread = 0;
  const ReplayGroup off = replay_group(data, all_rows(data), prior, rows_of(data), options);
  CHECK(off.outcomes[0].censored_95); // 0-3: one shape, none fast
  options.online.launch_spread = 0.1;
  const ReplayGroup on = replay_group(data, all_rows(data), prior, rows_of(data), options);
  CHECK(on.outcomes[0].runs_to_95 == 2); // the first pick, then shape (x, y, z)
}

TEST_CASE("replay: one prior per held-out program, summaries over the inputs") {
  Dataset data = pool("a", {4.0, 2.0, 1.0, std::nullopt});
  for (const Sample& s : pool("b", {1.0, 2.0, 4.0, 8.0}).samples)
    data.samples.push_back(s);
  ReplayOptions options;
  options.prior.kind = Kind::knn;
  options.prior.train.k = 2;
  options.budget = 4;
  const ReplayResult result = replay(data, options);
  REQUIRE(result.groups.size() == 2);
  REQUIRE(result.summaries.size() == options.strategies.size());
  for (const ReplaySummary& s : result.summaries) {
    CHECK(s.inputs == 2);
    CHECK(s.largest_programs == 2);
    CHECK(s.mean_90 >= 1);
    CHECK(s.worst_90 <= 5);
  }
  options.replayed = [](const std::string& program) { return program == "b"; };
  CHECK(replay(data, options).groups.size() == 1);
  options.budget = 0;
  CHECK_THROWS_AS(replay(data, options), UserError);
}

TEST_CASE("replay: a prior trained on another dataset, without the replayed program") {
  // Replayed: one program whose fast variants have large x. Prior data from "another device":
  // the same program with the opposite trend (left out of training, so it cannot mislead), and
  // another program with the replayed trend (what the prior must learn from).
  const Dataset replayed = pool("p", {8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0});
  Dataset other = pool("p", {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0});
  for (const Sample& s : pool("q", {8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0}).samples)
    other.samples.push_back(s);
  ReplayOptions options;
  options.strategies = {ReplayStrategy::static_order};
  options.prior.kind = Kind::knn;
  options.prior.train.k = 1;
  options.budget = 8;
  // Without prior data, a lone program has nothing to train a prior on.
  CHECK_THROWS_AS(replay(replayed, options), UserError);
  options.prior_data = &other;
  const ReplayResult result = replay(replayed, options);
  REQUIRE(result.groups.size() == 1);
  CHECK(result.groups[0].program == "p");
  CHECK(result.groups[0].outcomes[0].runs_to_90 == 1); // q's trend: the largest x first

  // Prior data holding only the replayed program leaves nothing to train on.
  const Dataset only_p = pool("p", {1.0, 2.0});
  options.prior_data = &only_p;
  CHECK_THROWS_WITH_AS(replay(replayed, options),
                       doctest::Contains("holds no program but p to train on"), UserError);
  // Other columns: refused.
  Dataset other_columns = other;
  other_columns.feature_names = {"y"};
  options.prior_data = &other_columns;
  CHECK_THROWS_AS(replay(replayed, options), UserError);
}

TEST_CASE("replay: the spread strategies run the best of each first kind first") {
  // Kind "slow" (0-9) is predicted best and runs slowly; kind "fast" (10-11) is predicted
  // worst and holds the pool's best.
  std::vector<std::optional<double>> times;
  std::vector<double> prior;
  for (int i = 0; i < 12; ++i) {
    times.push_back(i < 10 ? 10.0 : 1.0 + 0.01 * (i - 10));
    prior.push_back(1 - 0.05 * i);
  }
  Dataset data = pool("p", times);
  for (size_t i = 10; i < 12; ++i)
    data.samples[i].strategy = "fast";
  ReplayOptions options;
  options.strategies = {ReplayStrategy::static_order, ReplayStrategy::static_spread,
                        ReplayStrategy::online, ReplayStrategy::online_spread};
  options.budget = 12;
  options.spread_kinds = 2;
  const ReplayGroup g = replay_group(data, all_rows(data), prior, rows_of(data), options);
  CHECK(g.outcomes[0].runs_to_95 == 11);
  CHECK(g.outcomes[1].runs_to_95 == 2);
  CHECK(g.outcomes[3].runs_to_95 == 2);
  CHECK(g.outcomes[2].runs_to_95 > 2);
  CHECK(parse_replay_strategy("online-spread") == ReplayStrategy::online_spread);
  CHECK(to_string(ReplayStrategy::static_spread) == "static-spread");
}

TEST_CASE("replay: a trained model file as every program's prior, per kind of program") {
  // The prior learnt "large x is fast" elsewhere; the replayed programs have that trend too, so
  // its first pick is the best. Kinds group the summaries.
  Dataset learnt = pool("q", {8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0});
  Setting setting;
  setting.kind = Kind::knn;
  setting.train.k = 1;
  const Model prior = train_on(learnt, all_rows(learnt), setting);
  Dataset replayed = pool("p", {8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0});
  for (const Sample& s : pool("r", {4.0, 3.0, 2.0, 1.0}).samples)
    replayed.samples.push_back(s);
  replayed.program_kinds = {{"p", "stencil2d"}, {"r", "reduction"}};
  ReplayOptions options;
  options.strategies = {ReplayStrategy::static_order, ReplayStrategy::random};
  options.budget = 8;
  options.fixed_prior = &prior; // one program of one kind each: nothing is trained
  const ReplayResult result = replay(replayed, options);
  REQUIRE(result.groups.size() == 2);
  for (const ReplayGroup& g : result.groups)
    CHECK(g.outcomes[0].runs_to_95 == 1);
  REQUIRE(result.kind_summaries.size() == 2);
  CHECK(result.kind_summaries[0].first == "reduction");
  CHECK(result.kind_summaries[1].first == "stencil2d");
  CHECK(result.kind_summaries[1].second.at(0).inputs == 1);
  CHECK(result.kind_summaries[1].second.at(1).mean_95 > 1);
}
