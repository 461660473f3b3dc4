// Input-adaptive selection (adapt/adapt.hpp): the greedy portfolio on tables whose answer is
// known, the selector's nearest shape and its fallback when a member does not apply, candidates
// that apply only where their tiles divide, shapes as text, and the artifact's JSON round trip.
#include "adapt/adapt.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace liftx;
using adapt::AdaptiveTable;

namespace {

adapt::AdaptiveCandidate named(const std::string& name) {
  adapt::AdaptiveCandidate c;
  c.printed = "def " + name + "(x: [float]N) = mapGlb0(id, x)\n";
  c.strategy = name;
  c.local = {1};
  return c;
}

/// Shapes 1..n along N; times[s][c] in ms, 0 = did not run.
AdaptiveTable table_of(const std::vector<std::vector<double>>& times) {
  AdaptiveTable t;
  for (size_t s = 0; s < times.size(); ++s) {
    t.shapes.push_back({{"N", int64_t(1) << (4 + s)}});
    std::vector<std::optional<double>> row;
    for (double ms : times[s])
      row.push_back(ms > 0 ? std::optional<double>(ms) : std::nullopt);
    t.ms.push_back(row);
  }
  for (size_t c = 0; c < times.at(0).size(); ++c)
    t.candidates.push_back(named(fmt::format("c{}", c)));
  return t;
}

const std::string kAvg3 =
    "userfun avg3(a: float, b: float, c: float): float { return (a + b + c) / 3.0f; }\n";
/// A 1D smoother, a work-item per point (no tile: it runs at any N).
const std::string kPlainSmoother = kAvg3 + "def s(xs: [float]N) = mapGlb0(w => avg3(w[0], w[1], "
                                           "w[2]), slide(3, 1, pad(1, 1, clamp, xs)))\n";
/// The smoother in work-groups of 8 outputs (N must be a multiple of 8).
const std::string kTiledSmoother =
    kAvg3 + "def s(xs: [float]N) = join(mapWrg0(t => mapLcl0(w => avg3(w[0], w[1], w[2]), "
            "slide(3, 1, t)), slide(10, 8, pad(1, 1, clamp, xs))))\n";

/// An artifact whose only member and candidate is `c`, measured at N = 64.
adapt::AdaptiveArtifact single_member_artifact(const adapt::AdaptiveCandidate& c) {
  adapt::AdaptiveArtifact a;
  a.portfolio = {c};
  a.training.shapes = {{{"N", 64}}};
  a.training.candidates = {c};
  a.training.ms = {{1.0}};
  a.selector = adapt::fit_selector(a.training, {0});
  return a;
}

} // namespace

TEST_CASE("the portfolio maximises the worst shape, then the mean, with as few members as "
          "that takes") {
  // c0 is best on shapes 0-1, c1 on shape 2, c2 is good everywhere but best nowhere.
  const AdaptiveTable t = table_of({{1.0, 4.0, 1.25}, {1.0, 4.0, 1.25}, {4.0, 1.0, 1.25}});
  CHECK(t.best_ms(2) == 1.0);
  CHECK(t.fraction(0, 2) == doctest::Approx(0.8));
  // One member: c2's worst (0.8) beats c0's and c1's (0.25).
  CHECK(adapt::choose_portfolio(t, 1) == std::vector<size_t>{2});
  // Two: c0 and c1 make every shape 100% (c0 first: the higher mean).
  CHECK(adapt::choose_portfolio(t, 2) == std::vector<size_t>{0, 1});
  // More room changes nothing: c2 would add a member and no shape.
  CHECK(adapt::choose_portfolio(t, 8) == std::vector<size_t>{0, 1});
  // A candidate that never ran is never chosen.
  const AdaptiveTable dead = table_of({{1.0, 0}, {2.0, 0}});
  CHECK(adapt::choose_portfolio(dead, 4) == std::vector<size_t>{0});
  // Where a greedy search fails: c0 is the best single member (30% everywhere), but c1 and c2,
  // each the best at one shape and not running at the other, together reach 100%.
  const AdaptiveTable split = table_of({{1.0 / 0.3, 1.0, 0}, {1.0 / 0.3, 0, 1.0}});
  CHECK(adapt::choose_portfolio(split, 1) == std::vector<size_t>{0});
  const std::vector<size_t> two = adapt::choose_portfolio(split, 2);
  CHECK(std::set<size_t>(two.begin(), two.end()) == std::set<size_t>{1, 2});
}

TEST_CASE("a paired fraction is the median of the rounds' ratios, at most 1") {
  using Rounds = std::vector<std::optional<double>>;
  // The run e measurement at 640x480 (H200, jacobi2d9pt): each one's own median gives
  // 0.0061 / 0.0088 = 69%; round by round the ratios are 0.97, 0.92 and 0.69.
  CHECK(adapt::paired_fraction(Rounds{0.0085, 0.0061, 0.0061}, Rounds{0.0088, 0.0066, 0.0088})
            .value() == doctest::Approx(0.0061 / 0.0066));
  const struct {
    Rounds best, variant;
    std::optional<double> expected;
  } rows[] = {
      {{1.0}, {2.0}, 0.5},
      {{1.0, 1.0}, {2.0, 4.0}, (0.5 + 0.25) / 2}, // an even count: the mean of the middle two
      {{1.0, 2.0, 1.0}, {1.0, 1.0, 1.0}, 1.0},    // faster than the best in a round: at most 1
      {{1.0, std::nullopt, 1.0}, {2.0, 1.0, std::nullopt}, 0.5}, // only rounds where both ran
      {{std::nullopt}, {1.0}, std::nullopt},
      {{}, {}, std::nullopt},
  };
  for (const auto& row : rows) {
    const std::optional<double> got = adapt::paired_fraction(row.best, row.variant);
    REQUIRE(got.has_value() == row.expected.has_value());
    if (got)
      CHECK(*got == doctest::Approx(*row.expected));
  }
}

TEST_CASE("the selector takes the nearest training shape in log2 sizes and falls back") {
  const AdaptiveTable t = table_of({{1.0, 2.0}, {3.0, 1.0}}); // shapes N=16, N=32
  const adapt::AdaptiveSelector sel = adapt::fit_selector(t, {0, 1});
  CHECK(sel.size_names == std::vector<std::string>{"N"});
  CHECK(sel.order == std::vector<std::vector<size_t>>{{0, 1}, {1, 0}});
  auto everyone = [](size_t) { return true; };
  CHECK(sel.choose({{"N", 8}}, everyone) == 0u);
  CHECK(sel.choose({{"N", 20}}, everyone) == 0u); // log2 20 is nearer 16 than 32
  CHECK(sel.choose({{"N", 24}}, everyone) == 1u);
  CHECK(sel.choose({{"N", 4096}}, everyone) == 1u);
  // Member 1 does not apply: the next fastest at the nearest shape.
  CHECK(sel.choose({{"N", 4096}}, [](size_t p) { return p != 1; }) == 0u);
  CHECK_FALSE(sel.choose({{"N", 4096}}, [](size_t) { return false; }));
}

TEST_CASE("a candidate applies where its tiles and work-group divide the shape") {
  const DeviceLimits limits = runtime::named_profile("cpu").limits();
  adapt::AdaptiveCandidate c;
  // Tiles of 8 outputs over a 1D smoother: N must be a multiple of 8.
  c.printed = kTiledSmoother;
  c.strategy = "workgroup1d";
  c.local = {8};
  const std::optional<space::Variant> at64 = adapt::candidate_at(c, {{"N", 64}}, limits);
  REQUIRE(at64);
  CHECK(at64->launch.tied);
  CHECK(at64->launch.global[0] == 64);
  CHECK(at64->launch.local[0] == 8);
  CHECK_FALSE(adapt::candidate_at(c, {{"N", 60}}, limits)); // 60 is no multiple of 8
  c.local = {16};                                           // 8 work-items per group only
  CHECK_FALSE(adapt::candidate_at(c, {{"N", 64}}, limits));
}

TEST_CASE("a member's work-group is fitted to a shape it does not divide, and says so") {
  const DeviceLimits limits = runtime::named_profile("cpu").limits();
  adapt::AdaptiveCandidate c;
  c.printed = kPlainSmoother;
  c.strategy = "global1d";
  c.local = {16};
  adapt::Fit fit = adapt::Fit::rounded;
  std::optional<space::Variant> v = adapt::candidate_at_fitted(c, {{"N", 64}}, limits, &fit);
  REQUIRE(v);
  CHECK(fit == adapt::Fit::as_measured);
  CHECK(v->launch.local[0] == 16);
  CHECK_FALSE(adapt::candidate_at(c, {{"N", 40}}, limits)); // 16 does not divide 40
  v = adapt::candidate_at_fitted(c, {{"N", 40}}, limits, &fit);
  REQUIRE(v);
  CHECK(fit == adapt::Fit::shrunk);
  CHECK(v->launch.tied);
  CHECK(v->launch.local[0] == 10); // the largest divisor of 40 within 16: more than half of 16
  // 37 is prime: a divisor would leave a work-group of 1; the work-group of 16 is kept and the
  // global size rounded up to 48 (the free-thread kernel, which guards the last 11 work-items).
  v = adapt::candidate_at_fitted(c, {{"N", 37}}, limits, &fit);
  REQUIRE(v);
  CHECK(fit == adapt::Fit::rounded);
  CHECK_FALSE(v->launch.tied);
  CHECK(v->launch.local[0] == 16);
  CHECK(v->launch.global[0] == 48);
  // 36: the divisor 12 keeps 12 of 16 work-items.
  v = adapt::candidate_at_fitted(c, {{"N", 36}}, limits, &fit);
  REQUIRE(v);
  CHECK(fit == adapt::Fit::shrunk);
  CHECK(v->launch.local[0] == 12);
  // 34 = 2 x 17: the divisor 2 keeps fewer than half: rounded up to 48.
  v = adapt::candidate_at_fitted(c, {{"N", 34}}, limits, &fit);
  REQUIRE(v);
  CHECK(fit == adapt::Fit::rounded);
  CHECK(v->launch.global[0] == 48);

  // The artifact picks as measured where it can, fitted where it must.
  const adapt::AdaptiveArtifact a = single_member_artifact(c);
  const std::optional<adapt::AdaptiveArtifact::Pick> at64 = a.pick({{"N", 64}}, limits);
  REQUIRE(at64);
  CHECK(at64->as_measured);
  const std::optional<adapt::AdaptiveArtifact::Pick> at40 = a.pick({{"N", 40}}, limits);
  REQUIRE(at40);
  CHECK_FALSE(at40->as_measured);
  CHECK_FALSE(at40->rounded);
  CHECK(at40->local == std::vector<int64_t>{10});
  const std::optional<adapt::AdaptiveArtifact::Pick> at37 = a.pick({{"N", 37}}, limits);
  REQUIRE(at37);
  CHECK_FALSE(at37->as_measured);
  CHECK(at37->rounded);
  CHECK(at37->local == std::vector<int64_t>{16});
}

TEST_CASE("the fallback member runs where no tiled member divides the shape") {
  const DeviceLimits limits = runtime::named_profile("cpu").limits();
  adapt::AdaptiveCandidate tiled;
  tiled.printed = kTiledSmoother;
  tiled.strategy = "workgroup1d";
  tiled.parameters = {{"tile_x", 8}};
  tiled.local = {8};
  adapt::AdaptiveCandidate plain;
  plain.printed = kPlainSmoother;
  plain.strategy = "global1d";
  plain.local = {16};
  CHECK_FALSE(adapt::is_shape_free(tiled.parameters));
  CHECK(adapt::is_shape_free(plain.parameters));
  CHECK(adapt::is_shape_free({{"interchange", 1}, {"vector", 1}}));

  adapt::AdaptiveArtifact a;
  a.training.shapes = {{{"N", 64}}};
  a.training.candidates = {tiled, plain};
  a.training.ms = {{1.0, 2.0}};
  a.portfolio = {tiled};
  a.selector = adapt::fit_selector(a.training, {0});
  CHECK_FALSE(a.pick({{"N", 60}}, limits)); // 8 does not divide 60, and no fallback
  a.portfolio.push_back(plain);
  a.fallback = 1;
  const std::optional<adapt::AdaptiveArtifact::Pick> at64 = a.pick({{"N", 64}}, limits);
  REQUIRE(at64);
  CHECK(at64->member == 0); // the tiled member where it applies
  const std::optional<adapt::AdaptiveArtifact::Pick> at60 = a.pick({{"N", 60}}, limits);
  REQUIRE(at60);
  CHECK(at60->member == 1);
  CHECK(at60->local == std::vector<int64_t>{15}); // the largest divisor of 60 within 16
  CHECK_FALSE(at60->as_measured);
  // The fallback survives the JSON round trip.
  CHECK(adapt::adaptive_artifact_from(adapt::to_json(a), "a.json").fallback == 1u);
}

TEST_CASE("a fixed-grid candidate runs as measured at every shape, odd ones too, never fitted") {
  const DeviceLimits limits = runtime::named_profile("cpu").limits();
  adapt::AdaptiveCandidate c;
  c.printed = kPlainSmoother;
  c.strategy = "global1d";
  c.local = {16};
  c.global = {32};
  CHECK(c.fixed_grid());
  CHECK(c.describe() == "global1d, local 16, global 32");
  for (int64_t n : {64, 37, 1, 32}) {
    CAPTURE(n);
    adapt::Fit fit = adapt::Fit::rounded;
    const std::optional<space::Variant> v = adapt::candidate_at_fitted(c, {{"N", n}}, limits, &fit);
    REQUIRE(v);
    CHECK(fit == adapt::Fit::as_measured);
    CHECK(v->launch.global[0] == 32); // the grid strides over the sizes
    CHECK(v->launch.local[0] == 16);
    CHECK(v->launch.tied == (n == 32)); // the tied launch where the grid is the mapped length
  }
  // It goes back to the same candidate.
  const std::optional<space::Variant> at64 = adapt::candidate_at(c, {{"N", 64}}, limits);
  REQUIRE(at64);
  const adapt::AdaptiveCandidate again =
      adapt::candidate_of(*at64, parse::parse_module(c.printed, "<test>"));
  CHECK(again.global == c.global);
  CHECK(again.local == c.local);
  // A work-group that does not divide its grid, or that the device cannot hold: no fitting.
  adapt::AdaptiveCandidate uneven = c;
  uneven.local = {24};
  adapt::Fit fit = adapt::Fit::as_measured;
  CHECK_FALSE(adapt::candidate_at_fitted(uneven, {{"N", 64}}, limits, &fit));
  DeviceLimits small = limits;
  small.max_work_group_size = 8;
  small.max_work_item_sizes = {8, 8, 8};
  CHECK_FALSE(adapt::candidate_at_fitted(c, {{"N", 64}}, small, &fit));

  // The artifact picks it as measured, with its grid, and keeps the grid through JSON.
  const adapt::AdaptiveArtifact a = single_member_artifact(c);
  const std::optional<adapt::AdaptiveArtifact::Pick> at37 = a.pick({{"N", 37}}, limits);
  REQUIRE(at37);
  CHECK(at37->as_measured);
  CHECK(at37->global == std::vector<int64_t>{32});
  CHECK(at37->local == std::vector<int64_t>{16});
  const adapt::AdaptiveArtifact b = adapt::adaptive_artifact_from(adapt::to_json(a), "a.json");
  CHECK(b.portfolio == a.portfolio);
  nlohmann::json mismatched = adapt::to_json(a);
  mismatched["portfolio"][0]["global"] = {32, 2};
  CHECK_THROWS_WITH_AS(adapt::adaptive_artifact_from(mismatched, "m.json"),
                       doctest::Contains("m.json: a candidate's fixed grid (2 sizes) and "
                                         "work-group (1) differ in dimensions"),
                       UserError);
  // Artifacts from before fixed grids (no "global") read as tied members.
  nlohmann::json old = adapt::to_json(a);
  old["portfolio"][0].erase("global");
  CHECK(adapt::adaptive_artifact_from(old, "old.json").portfolio[0].global.empty());
}

TEST_CASE("coverage probes are nearby shapes that 2, 4, 8 and 16 divide but not twice that") {
  const std::vector<Sizes> probes = adapt::coverage_probes({{"M", 64}, {"N", 100}});
  REQUIRE(probes.size() == 4);
  CHECK(probes[0] == Sizes{{"M", 66}, {"N", 102}});
  CHECK(probes[1] == Sizes{{"M", 68}, {"N", 100}});
  CHECK(probes[2] == Sizes{{"M", 72}, {"N", 104}});
  CHECK(probes[3] == Sizes{{"M", 80}, {"N", 112}});
  // A probe equal to the shape is no probe.
  CHECK(adapt::coverage_probes({{"N", 8}}).size() == 3);
}

TEST_CASE("the portfolio covers the probes: a member that divides fewer shapes gives way") {
  const DeviceLimits limits = runtime::named_profile("cpu").limits();
  auto tiled = [&](int tile) {
    adapt::AdaptiveCandidate c;
    c.printed = kAvg3 + fmt::format("def s(xs: [float]N) = join(mapWrg0(t => mapLcl0(w => "
                                    "avg3(w[0], w[1], w[2]), slide(3, 1, t)), slide({}, {}, "
                                    "pad(1, 1, clamp, xs))))\n",
                                    tile + 2, tile);
    c.strategy = "workgroup1d";
    c.parameters = {{"tile_x", tile}};
    c.local = {tile};
    return c;
  };
  adapt::AdaptiveTable t;
  t.shapes = {{{"N", 256}}};
  t.candidates = {tiled(32), tiled(4)};
  t.ms = {{1.0, 1.1}}; // tiles of 32 a little faster at 256
  // On the training shape alone, one member: the faster.
  CHECK(adapt::choose_portfolio(t, 1) == std::vector<size_t>{0});
  // With the probes (258, 260, 264, 272: 32 divides none of them, 4 divides two), the member
  // that runs at more of them.
  const AdaptiveTable probed = adapt::with_coverage_probes(t, limits);
  REQUIRE(probed.shapes.size() == 4); // the training shape and three probes: at 258 neither runs
  CHECK(probed.shapes[1] == Sizes{{"N", 260}});
  CHECK(probed.ms[1] == std::vector<std::optional<double>>{std::nullopt, 1.1});
  CHECK(adapt::choose_portfolio(probed, 1) == std::vector<size_t>{1});
  CHECK(adapt::choose_portfolio(probed, 2) == std::vector<size_t>{1, 0});
}

TEST_CASE("shapes as text") {
  const std::vector<std::string> names{"M", "N"};
  CHECK(adapt::parse_shape("256x512", names) == Sizes{{"M", 256}, {"N", 512}});
  CHECK(adapt::parse_shape("N=512,M=256", names) == Sizes{{"M", 256}, {"N", 512}});
  CHECK(adapt::shape_text({{"M", 256}, {"N", 512}}) == "256x512");
  CHECK_THROWS_AS(adapt::parse_shape("256", names), UserError);
  CHECK_THROWS_AS(adapt::parse_shape("256x0", names), UserError);
  CHECK_THROWS_AS(adapt::parse_shape("256xq", names), UserError);
  CHECK_THROWS_AS(adapt::parse_shape("M=2,K=3", names), UserError);
  CHECK_THROWS_AS(adapt::parse_shape("M=2", names), UserError);
}

TEST_CASE("the adaptive artifact round-trips through JSON; other JSON is refused") {
  adapt::AdaptiveArtifact a;
  a.program_name = "p";
  a.program_source = "def p(x: [float]N) = map(id, x)\n";
  a.device = "dev";
  a.profile = "cpu";
  a.training = table_of({{1.0, 2.0}, {3.0, 0}});
  a.portfolio = {a.training.candidates[1], a.training.candidates[0]};
  a.selector = adapt::fit_selector(a.training, {1, 0});
  const adapt::AdaptiveArtifact b = adapt::adaptive_artifact_from(adapt::to_json(a), "test.json");
  CHECK(b.portfolio == a.portfolio);
  CHECK(b.selector.order == a.selector.order);
  CHECK(b.selector.shapes == a.selector.shapes);
  CHECK(b.training.ms == a.training.ms);
  CHECK(b.training.candidates == a.training.candidates);
  CHECK(adapt::to_json(b) == adapt::to_json(a));
  CHECK_THROWS_AS(adapt::adaptive_artifact_from(nlohmann::json{{"format", "x"}}, "x.json"),
                  UserError);
  nlohmann::json broken = adapt::to_json(a);
  broken["selector"]["order"][0] = {7};
  CHECK_THROWS_AS(adapt::adaptive_artifact_from(broken, "broken.json"), UserError);
}
