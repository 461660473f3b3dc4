// Ranking and exploration (explore/rank, explore/explore) with synthetic models.
#include "explore/explore.hpp"
#include "explore/rank.hpp"
#include "features/derived.hpp"
#include "ir/parse/parser.hpp"
#include "model/model.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>

using namespace liftx;
using namespace liftx::model;

namespace {

ir::Program jacobi() {
  static ir::Module module =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift");
  return module.main();
}

/// A model over the real feature columns, trained on made-up data: ranking only needs it to be
/// deterministic.
Model synthetic_feature_model(Kind kind) {
  const std::vector<std::string> cols = features::all_names();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  Matrix x(80, static_cast<Eigen::Index>(cols.size()));
  Vector y(80);
  for (int i = 0; i < 80; ++i) {
    for (Eigen::Index c = 0; c < x.cols(); ++c)
      x(i, c) = u(rng) * double(c + 1);
    y[i] = 0.05 + 0.95 * u(rng);
  }
  Model m = Model::train(kind, cols, x, y);
  m.profile = "cpu";
  return m;
}

/// The features of a ranked row from a fresh kernel generation and analysis (not the ranking's
/// cached kernel models).
features::Features fresh_features(const explore::RankedVariant& r, const Sizes& sizes,
                                  const target::DeviceProfile& profile) {
  const codegen::Kernel kernel =
      codegen::generate(*r.program, codegen::Options{r.variant.launch.tied});
  return features::compute(kernel, r.variant.launch, sizes, profile);
}

/// A ranked row's model columns (`columns`: model column -> features::all_values() index) from a
/// fresh analysis.
std::vector<double> fresh_columns(const explore::RankedVariant& r, const std::vector<int>& columns,
                                  const Sizes& sizes, const target::DeviceProfile& profile) {
  const std::vector<double> values =
      features::all_values(fresh_features(r, sizes, profile), profile.throughput());
  std::vector<double> out;
  for (int c : columns)
    out.push_back(values[size_t(c)]);
  return out;
}

/// Options that rank every row (none dropped) of the first `variants` Jacobi variants at 32x32
/// on two threads, so that tests can check each row against a fresh analysis.
explore::RankOptions every_row_of_jacobi_32(int64_t variants) {
  explore::RankOptions o;
  o.sizes = {{"M", 32}, {"N", 32}};
  o.max_variants = variants;
  o.keep = 0;
  o.threads = 2;
  return o;
}

/// Checks that `pruned` (the same ranking as `all`, with RankOptions::prune_traffic `factor`)
/// keeps exactly the rows of `all` whose modelled traffic, from a fresh analysis of each kernel
/// (generated once per kernel, not the ranking's cached models), is at most `factor` times the
/// least, and ranks them in `all`'s order.
void check_pruned_by_fresh_traffic(const explore::RankResult& all,
                                   const explore::RankResult& pruned, double factor,
                                   const Sizes& sizes) {
  const target::DeviceProfile profile = runtime::named_profile("cpu");
  std::map<std::pair<int64_t, bool>, codegen::Kernel> kernels;
  std::map<int64_t, float> traffic; // by variant index, as ranking stores it
  float least = std::numeric_limits<float>::infinity();
  for (const explore::RankedVariant& r : all.ranked) {
    const bool tied = r.variant.launch.tied;
    auto kernel = kernels.find({r.variant.kernel_index, tied});
    if (kernel == kernels.end())
      kernel = kernels
                   .emplace(std::pair{r.variant.kernel_index, tied},
                            codegen::generate(*r.program, codegen::Options{tied}))
                   .first;
    const float t = float(features::modelled_traffic_per_byte(
        features::compute(kernel->second, r.variant.launch, sizes, profile), profile.throughput()));
    traffic[r.variant.index] = t;
    least = std::min(least, t);
  }
  CHECK(pruned.variants == all.variants);
  CHECK(pruned.least_traffic == doctest::Approx(least));
  std::set<int64_t> expected, got;
  for (const auto& [index, t] : traffic)
    if (t <= factor * double(least))
      expected.insert(index);
  for (const explore::RankedVariant& r : pruned.ranked)
    got.insert(r.variant.index);
  CHECK(got == expected);
  CHECK(pruned.pruned == all.variants - int64_t(expected.size()));
  CHECK(pruned.pruned > 0);
  CHECK_FALSE(expected.empty());
  // The kept rows rank as they do in the whole ranking (same order).
  std::vector<int64_t> order;
  for (const explore::RankedVariant& r : all.ranked)
    if (expected.contains(r.variant.index))
      order.push_back(r.variant.index);
  std::vector<int64_t> pruned_order;
  for (const explore::RankedVariant& r : pruned.ranked)
    pruned_order.push_back(r.variant.index);
  CHECK(pruned_order == order);
}

} // namespace

TEST_CASE("ranking is deterministic and sorted; rows explain themselves") {
  explore::RankOptions o;
  o.sizes = {{"M", 32}, {"N", 32}};
  o.max_variants = 300;
  for (Kind kind : {Kind::knn, Kind::tree}) {
    Model m = synthetic_feature_model(kind);
    auto a = explore::rank(jacobi(), m, o).ranked;
    auto b = explore::rank(jacobi(), m, o).ranked;
    REQUIRE(a.size() == 300);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].variant.index == b[i].variant.index);
      CHECK(a[i].rank == int(i + 1));
      if (i)
        CHECK(a[i - 1].predicted >= a[i].predicted);
      if (i && a[i - 1].predicted == a[i].predicted)
        CHECK(a[i - 1].variant.index < a[i].variant.index); // ties in stream order
    }
    CHECK(a[0].reasons.size() == 3);
    CHECK(!explore::describe_reasons(a[0].reasons).empty());
  }
}

TEST_CASE("the streamed best k are the first k of the whole ranking, whatever the threads") {
  // A tree predicts many ties; the shipped boosted model leaves the trees unfinished for rows
  // below the worst row kept (TreeEnsemble::margins_reaching), which ranking every row never does.
  const Model tree = synthetic_feature_model(Kind::tree);
  const Model boosted =
      Model::load(std::string(LIFTX_SOURCE_DIR) + "/model/data/nvidia-model.json");
  REQUIRE(boosted.kind() == Kind::boosted);
  for (const Model* m : {&tree, &boosted}) {
    CAPTURE(to_string(m->kind()));
    explore::RankOptions o;
    o.sizes = {{"M", 64}, {"N", 64}};
    o.max_variants = 9000; // three chunks
    o.keep = 0;
    o.threads = 1;
    if (m == &boosted)
      o.profile = "nvidia";
    const explore::RankResult all = explore::rank(jacobi(), *m, o);
    REQUIRE(all.variants == 9000);
    REQUIRE(all.ranked.size() == 9000);
    for (unsigned threads : {1u, 2u, 3u}) {
      CAPTURE(threads);
      o.keep = 150;
      o.threads = threads;
      const explore::RankResult top = explore::rank(jacobi(), *m, o);
      CHECK(top.variants == 9000);
      REQUIRE(top.ranked.size() == 150);
      for (size_t i = 0; i < top.ranked.size(); ++i) {
        CHECK(top.ranked[i].variant.index == all.ranked[i].variant.index);
        CHECK(top.ranked[i].predicted == all.ranked[i].predicted);
        CHECK(top.ranked[i].columns == all.ranked[i].columns);
        CHECK(top.ranked[i].rank == int(i + 1));
      }
    }
  }
}

TEST_CASE("ranked rows carry the features of a fresh analysis of their kernel and launch") {
  const explore::RankOptions o = every_row_of_jacobi_32(600);
  const Model m = synthetic_feature_model(Kind::knn);
  const explore::RankResult result = explore::rank(jacobi(), m, o);
  REQUIRE(result.ranked.size() == 600);
  const target::DeviceProfile profile = runtime::named_profile("cpu");
  const std::vector<int> columns = m.feature_indices(features::all_names());
  const Sizes& sizes = o.sizes;
  for (const explore::RankedVariant& r : result.ranked)
    CHECK(r.columns == fresh_columns(r, columns, sizes, profile));
}

TEST_CASE("a model ranks a device with the numbers it was trained with, not the device's own") {
  // Training derives its columns with the named profile's numbers (perfdb::load_dataset); a
  // device whose measured copy bandwidth and clock differ must get the same columns, else the
  // model sees values it never learnt from (a CPU's 46 GB/s against the profile's 15).
  explore::RankOptions o = every_row_of_jacobi_32(300);
  const Model m = synthetic_feature_model(Kind::boosted);
  const explore::RankResult named = explore::rank(jacobi(), m, o);
  target::DeviceProfile measured = runtime::named_profile("cpu");
  measured.memory_gbs = 46;
  measured.max_clock_mhz = 2596;
  o.device = measured;
  const explore::RankResult on_device = explore::rank(jacobi(), m, o);
  REQUIRE(named.ranked.size() == on_device.ranked.size());
  for (size_t i = 0; i < named.ranked.size(); ++i) {
    CHECK(named.ranked[i].variant.index == on_device.ranked[i].variant.index);
    CHECK(named.ranked[i].columns == on_device.ranked[i].columns);
    CHECK(named.ranked[i].predicted == on_device.ranked[i].predicted);
  }
  // The derived columns do depend on those numbers: the same rows with the device's own differ.
  const std::vector<int> columns = m.feature_indices(features::all_names());
  bool any_differs = false;
  for (const explore::RankedVariant& r : on_device.ranked)
    any_differs = any_differs || r.columns != fresh_columns(r, columns, o.sizes, measured);
  CHECK(any_differs);
  CHECK(explore::training_throughput(m, measured).memory_gbs ==
        runtime::named_profile("cpu").throughput().memory_gbs);
}

TEST_CASE("ranked rows of many-neighbour stencils equal a fresh analysis, bit for bit") {
  // Ranking counts a warp's cache lines once for accesses whose indices differ by the same amount
  // in every lane (a stencil's neighbours); a fresh analysis counts every access. Both must agree
  // exactly, on clamped and padded neighbours, windows and tiles, on a 32-lane and a CPU profile.
  Model m = synthetic_feature_model(Kind::knn);
  const std::vector<int> columns = m.feature_indices(features::all_names());
  int checked = 0;
  for (const char* name : {"gaussian", "jacobi2d9pt", "srad1"})
    for (const char* profile_name : {"nvidia", "cpu"}) {
      CAPTURE(name);
      CAPTURE(profile_name);
      m.profile = profile_name; // a model of that profile: its derived columns use its numbers
      const ir::Program program =
          parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/" + name + ".lift").main();
      explore::RankOptions o;
      o.sizes = {{"M", 40}, {"N", 72}};
      o.profile = profile_name;
      o.sample = 150;
      o.keep = 0;
      o.threads = 2;
      const explore::RankResult result = explore::rank(program, m, o);
      REQUIRE(result.ranked.size() == 150);
      const target::DeviceProfile profile = runtime::named_profile(profile_name);
      const Sizes& sizes = o.sizes;
      for (const explore::RankedVariant& r : result.ranked) {
        CAPTURE(r.variant.index);
        CHECK(r.columns == fresh_columns(r, columns, sizes, profile));
        ++checked;
      }
    }
  CHECK(checked == 900);
}

TEST_CASE("traffic pruning ranks exactly the variants within F times the least modelled traffic") {
  explore::RankOptions o = every_row_of_jacobi_32(5000); // two chunks of the stream
  const Model m = synthetic_feature_model(Kind::knn);
  const explore::RankResult all = explore::rank(jacobi(), m, o);
  REQUIRE(all.ranked.size() == 5000);
  o.prune_traffic = 2;
  check_pruned_by_fresh_traffic(all, explore::rank(jacobi(), m, o), 2, o.sizes);

  o.prune_traffic = 0.5; // below the least: nothing could be kept
  CHECK_THROWS_AS(explore::rank(jacobi(), m, o), UserError);
}

TEST_CASE("a space of few launches per kernel (a product) ranks alike on any threads, pruned or "
          "not") {
  // mm at 16^3: 2,223 variants of about 200 kernels, so chunks end at their kernel bound long
  // before their row bound, and rows of one kernel straddle chunks.
  static ir::Module module =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  const ir::Program mm = module.main();
  const Model m = synthetic_feature_model(Kind::knn);
  explore::RankOptions o;
  o.sizes = {{"K", 16}, {"M", 16}, {"N", 16}};
  o.keep = 0;
  o.threads = 1;
  const explore::RankResult all = explore::rank(mm, m, o);
  REQUIRE(all.variants > 2000);
  REQUIRE(all.ranked.size() == size_t(all.variants));
  std::set<int64_t> indices;
  for (const explore::RankedVariant& r : all.ranked)
    indices.insert(r.variant.index);
  CHECK(indices.size() == all.ranked.size()); // each variant ranked once
  for (unsigned threads : {2u, 3u}) {
    CAPTURE(threads);
    o.keep = 100;
    o.threads = threads;
    const explore::RankResult top = explore::rank(mm, m, o);
    CHECK(top.variants == all.variants);
    REQUIRE(top.ranked.size() == 100);
    for (size_t i = 0; i < top.ranked.size(); ++i) {
      CHECK(top.ranked[i].variant.index == all.ranked[i].variant.index);
      CHECK(top.ranked[i].predicted == all.ranked[i].predicted);
    }
  }
  // Pruned, exactly the rows within the bound are kept, in the whole ranking's order: the two
  // walks' chunks line up.
  o.keep = 0;
  o.threads = 2;
  o.prune_traffic = 1.5;
  check_pruned_by_fresh_traffic(all, explore::rank(mm, m, o), 1.5, o.sizes);
}

TEST_CASE("ranking a sample ranks exactly the variants space::sample draws") {
  explore::RankOptions o;
  o.sizes = {{"M", 16}, {"N", 16}};
  o.sample = 40;
  o.sample_seed = 3;
  Model m = synthetic_feature_model(Kind::knn);
  auto ranked = explore::rank(jacobi(), m, o).ranked;
  REQUIRE(ranked.size() == 40);

  space::SpaceOptions space_options;
  space_options.sizes = o.sizes;
  space_options.device = runtime::named_profile("cpu").limits();
  space::VariantStream stream(jacobi(), space_options);
  std::set<int64_t> drawn, got;
  for (const space::Variant& v : space::sample(stream, 40, 3))
    drawn.insert(v.index);
  for (const explore::RankedVariant& r : ranked)
    got.insert(r.variant.index);
  CHECK(got == drawn);
  // Another seed draws another sample (the space holds thousands of variants).
  o.sample_seed = 4;
  std::set<int64_t> other;
  for (const explore::RankedVariant& r : explore::rank(jacobi(), m, o).ranked)
    other.insert(r.variant.index);
  CHECK(other != got);
}

TEST_CASE("exploration strategies measure distinct variants within the budget") {
  explore::RankOptions o;
  o.sizes = {{"M", 32}, {"N", 32}};
  o.max_variants = 200;
  auto ranked = explore::rank(jacobi(), synthetic_feature_model(Kind::knn), o).ranked;
  // A fake device: time grows with the variant's stream index; rank 3 fails.
  auto measure = [&](const explore::RankedVariant& r) {
    exec::RunReport rep;
    if (r.rank == 3) {
      rep.status = runtime::Status::build_error;
      return rep;
    }
    runtime::Timing t;
    t.median_ms = 1.0 + double(r.variant.index);
    t.samples_ms = {t.median_ms};
    rep.timing = t;
    return rep;
  };
  for (const char* name : {"model", "random", "hillclimb"}) {
    explore::ExploreOptions eo;
    eo.strategy = explore::parse_strategy(name);
    eo.budget = 8;
    auto result = explore::explore(ranked, eo, measure);
    CHECK(result.attempts.size() == 8);
    std::set<size_t> seen;
    for (const auto& a : result.attempts)
      seen.insert(a.ranked_index);
    CHECK(seen.size() == 8);
    REQUIRE(result.best.has_value());
    for (const auto& a : result.attempts)
      if (a.report.timing)
        CHECK(result.attempts[*result.best].report.timing->median_ms <= a.report.timing->median_ms);
    if (eo.strategy == explore::Strategy::model)
      for (size_t i = 0; i < 8; ++i)
        CHECK(result.attempts[i].ranked_index == i);
    if (eo.strategy == explore::Strategy::hillclimb) {
      CHECK(result.attempts[0].ranked_index == 0);
      // The second run is a neighbour of the first (same strategy, one coordinate changed).
      auto n = explore::neighbours(ranked, 0);
      if (!n.empty())
        CHECK(std::find(n.begin(), n.end(), result.attempts[1].ranked_index) != n.end());
    }
    if (result.model_spearman) {
      CHECK(*result.model_spearman >= -1.0);
      CHECK(*result.model_spearman <= 1.0);
    }
  }
  CHECK_THROWS_AS(explore::parse_strategy("greedy"), UserError);
}

TEST_CASE("a fused launch is ranked per step: its prediction counts the steps it computes") {
  // Heat 2D, four steps on a periodic grid: fused launches of 2 and 4 steps join the space.
  const ir::Program heat =
      parse::parse_module(
          "userfun heat(c: float, n: float, s: float, e: float, w: float): float {\n"
          "  return c + 0.125f * (n + s + e + w - 4.0f * c);\n}\n"
          "def heat2d(grid: [[float]N]M) = iterate(4, x => map2D(nbh => heat(nbh[1][1], "
          "nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]), slide2D(3, 1, pad2D(1, 1, wrap, x))), "
          "grid)",
          "<test>")
          .main();
  explore::RankOptions o;
  o.sizes = {{"M", 16}, {"N", 32}};
  o.profile = "nvidia";
  o.keep = 0;
  o.explain_top = 0;
  const Model m = synthetic_feature_model(Kind::tree);
  const explore::RankResult result = explore::rank(heat, m, o);
  std::set<int64_t> degrees;
  for (const explore::RankedVariant& r : result.ranked) {
    const double steps = double(space::steps_per_launch(r.variant));
    degrees.insert(int64_t(steps));
    const Eigen::Map<const Eigen::RowVectorXd> row(r.columns.data(),
                                                   Eigen::Index(r.columns.size()));
    CHECK(r.predicted == doctest::Approx(m.predict(Matrix(row))[0] * steps));
  }
  CHECK(degrees == std::set<int64_t>{1, 2, 3, 4}); // 3: one launch of three steps, one of one
}
