// The synthetic program generator (synth/): determinism, variety, every drawn stencil parses,
// type-checks and interprets to finite bounded outputs, the operation counts, errors, a few
// fixed-seed stencils lowered by the variant space verify on PoCL, and the programs of every other
// kind are of that kind.
#include "exec/run.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"
#include "rewrite/program_kind.hpp"
#include "runtime/device.hpp"
#include "space/space.hpp"

#include "../verify_options.hpp"
#include "support/error.hpp"
#include "support/hash.hpp"
#include "synth/synth.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

using namespace liftx;

namespace {

/// Parses a generated stencil (UserError with the text on failure).
ir::Module parse_text(const std::string& text, const std::string& name) {
  INFO("source:\n" << text);
  return parse::parse_module(text, name + ".lift");
}

/// Runs `program` on fresh random inputs (uniform in [-1, 1), never zero).
interp::HostArray interpret(const ir::Program& program, const Sizes& sizes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<interp::HostArray> inputs;
  for (const ir::Expr& p : program.params)
    inputs.push_back(interp::random_input(p.type(), sizes, rng));
  return interp::evaluate(program, inputs, sizes);
}

} // namespace

TEST_CASE("the same seed gives the same stencil, other seeds other stencils") {
  const synth::SynthOptions options;
  std::set<std::string> texts;
  for (int i = 0; i < 20; ++i) {
    const std::string a = synth::to_lift(synth::generate(5, i, options), "s");
    const std::string b = synth::to_lift(synth::generate(5, i, options), "s");
    CHECK(a == b);
    texts.insert(a);
    texts.insert(synth::to_lift(synth::generate(6, i, options), "s"));
  }
  CHECK(texts.size() == 40);
  // random_spec draws from the generator it is given: the same state, the same description.
  std::mt19937_64 r1(99), r2(99);
  CHECK(synth::describe(synth::random_spec(r1, options)) ==
        synth::describe(synth::random_spec(r2, options)));
  CHECK(synth::stencil_seed(1, 0) != synth::stencil_seed(1, 1));
  CHECK(synth::stencil_seed(1, 0) != synth::stencil_seed(2, 0));
}

TEST_CASE("a fixed seed draws a fixed stencil on every platform") {
  // The draws use only mt19937_64's standardised output (no std distributions, no pow/exp): these
  // lines change only when the generator itself does.
  const synth::StencilSpec a = synth::generate(1, 0, {});
  CHECK(synth::describe(a) ==
        "diamond r=3 (25 points), 3 grids [g0 nbh wrap, g1 nbh zero, g2 point], sum, 0 steps, "
        "~50 ops");
  const synth::StencilSpec b = synth::generate(42, 3, {});
  CHECK(synth::describe(b) == "star r=1 (5 points), 3 grids [g0 nbh zero, g1 point, g2 point], "
                              "sum, 9 steps (rational poly2 poly4 poly3 minmax rational root root "
                              "minmax), ~57 ops");
  // The whole text, coefficients and layout included, by its FNV-1a hash.
  CHECK(liftx::fnv1a(synth::to_lift(a, "a")) == 8336979745461304947ULL);
  CHECK(liftx::fnv1a(synth::to_lift(b, "b")) == 16701795162894432516ULL);
}

TEST_CASE("over 200 seeds every shape, radius, boundary, grid count, combination and step "
          "appears") {
  std::set<synth::Shape> shapes;
  std::set<int> radii, grid_counts;
  std::set<synth::Boundary> boundaries;
  std::set<synth::Combine> combines;
  std::set<synth::StepKind> steps;
  bool upwind = false, subset = false, pointwise = false, second_neighbourhood = false;
  for (int i = 0; i < 200; ++i) {
    const synth::StencilSpec s = synth::generate(2024, i, {});
    CAPTURE(synth::describe(s));
    shapes.insert(s.shape);
    radii.insert(s.radius);
    grid_counts.insert(static_cast<int>(s.grids.size()));
    combines.insert(s.combine);
    for (const synth::Step& step : s.steps)
      steps.insert(step.kind);
    upwind |= s.shape == synth::Shape::asymmetric && s.upwind;
    subset |= s.shape == synth::Shape::asymmetric && !s.upwind;
    REQUIRE(!s.grids.empty());
    CHECK(s.grids[0].use == synth::Use::neighbourhood);
    int read = 0;
    for (size_t g = 0; g < s.grids.size(); ++g) {
      if (s.grids[g].use == synth::Use::pointwise) {
        pointwise = true;
        continue;
      }
      boundaries.insert(s.grids[g].boundary);
      second_neighbourhood |= g > 0;
      read += static_cast<int>(s.points.size());
    }
    CHECK(read <= synth::SynthOptions{}.max_points);
    // The centre is always read; the radius is the largest offset.
    CHECK(std::count(s.points.begin(), s.points.end(), synth::Offset{0, 0}) == 1);
    int radius = 0;
    for (const synth::Offset& p : s.points)
      radius = std::max({radius, std::abs(p.dy), std::abs(p.dx)});
    CHECK(radius == s.radius);
  }
  CHECK(shapes.size() == 5);
  CHECK(radii == std::set<int>{1, 2, 3});
  CHECK(boundaries.size() == 4);
  CHECK(grid_counts == std::set<int>{1, 2, 3, 4, 5, 6});
  CHECK(combines.size() == 3);
  CHECK(steps.size() == 4);
  CHECK(upwind);
  CHECK(subset);
  CHECK(pointwise);
  CHECK(second_neighbourhood);
}

TEST_CASE("the shapes have their point counts") {
  auto points = [](synth::Shape shape, int radius) {
    synth::SynthOptions o;
    o.shapes = {shape};
    for (int i = 0;; ++i) {
      synth::StencilSpec s = synth::generate(3, i, o);
      if (s.radius == radius)
        return s.points.size();
    }
  };
  for (int r = 1; r <= 3; ++r) {
    CAPTURE(r);
    CHECK(points(synth::Shape::star, r) == static_cast<size_t>(4 * r + 1));
    CHECK(points(synth::Shape::box, r) == static_cast<size_t>((2 * r + 1) * (2 * r + 1)));
    CHECK(points(synth::Shape::cross, r) == static_cast<size_t>(8 * r + 1));
    CHECK(points(synth::Shape::diamond, r) == static_cast<size_t>(2 * r * r + 2 * r + 1));
  }
  // 3D: the star 6r + 1 points, the cross the star and 12r diagonals of the axis planes, the
  // diamond (2r + 1)(2r^2 + 2r + 3) / 3, the box (radius 1 only) 27; the upwind star 3r + 1.
  auto points_3d = [](synth::Shape shape, int radius) {
    synth::SynthOptions o;
    o.shapes = {shape};
    for (int i = 0;; ++i) {
      const synth::ProgramSpec p = synth::generate_program(synth::Kind::stencil3d, 3, i, o);
      const synth::StencilSpec& s = std::get<synth::StencilSpec>(p.spec);
      REQUIRE(s.radius <= (shape == synth::Shape::box ? 1 : 2));
      if (s.radius == radius && (shape != synth::Shape::asymmetric || s.upwind))
        return s.points.size();
    }
  };
  for (int r = 1; r <= 2; ++r) {
    CAPTURE(r);
    CHECK(points_3d(synth::Shape::star, r) == static_cast<size_t>(6 * r + 1));
    CHECK(points_3d(synth::Shape::cross, r) == static_cast<size_t>(18 * r + 1));
    CHECK(points_3d(synth::Shape::diamond, r) ==
          static_cast<size_t>((2 * r + 1) * (2 * r * r + 2 * r + 3) / 3));
    CHECK(points_3d(synth::Shape::asymmetric, r) == static_cast<size_t>(3 * r + 1));
  }
  CHECK(points_3d(synth::Shape::box, 1) == 27);
}

TEST_CASE("options restrict the shapes, the radius and the grids") {
  synth::SynthOptions o;
  o.shapes = {synth::Shape::diamond, synth::Shape::asymmetric};
  o.max_radius = 2;
  o.max_grids = 2;
  for (int i = 0; i < 50; ++i) {
    const synth::StencilSpec s = synth::generate(8, i, o);
    CHECK((s.shape == synth::Shape::diamond || s.shape == synth::Shape::asymmetric));
    CHECK(s.radius <= 2);
    CHECK(s.grids.size() <= 2);
  }
  o.max_radius = 1;
  o.max_grids = 1;
  o.shapes = {synth::Shape::star};
  const synth::StencilSpec s = synth::generate(8, 0, o);
  CHECK(s.points.size() == 5);
  CHECK(s.grids.size() == 1);
}

TEST_CASE("100 generated stencils parse, type-check and interpret to finite bounded outputs") {
  const Sizes sizes{{"M", 13}, {"N", 17}};
  for (int i = 0; i < 100; ++i) {
    const synth::StencilSpec spec = synth::generate(77, i, {});
    const std::string name = fmt::format("synth_77_{}", i);
    const std::string text = synth::to_lift(spec, name);
    CAPTURE(text);
    ir::Module module = parse_text(text, name);
    const ir::Program& program = module.main();
    CHECK(program.name == name);
    CHECK(program.params.size() == spec.grids.size());
    CHECK(program.result_type().to_string() == "[[float]N]M");
    // The printed module parses back to the same program.
    CHECK(ir::alpha_equal(parse::parse_module(ir::print(module), "printed").main(), program));
    const interp::HostArray out = interpret(program, sizes, 1000 + i);
    REQUIRE(out.shape == std::vector<int64_t>{13, 17});
    const double bound = synth::output_bound(spec);
    double lo = out.data[0], hi = out.data[0];
    for (double v : out.data) {
      REQUIRE(std::isfinite(v));
      CHECK(std::abs(v) <= bound * (1 + 1e-5));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    // The chain of steps keeps the variation of the input: no constant outputs.
    CHECK(hi - lo > 1e-3);
  }
}

TEST_CASE("every kind draws programs of that kind, which interpret to finite bounded outputs") {
  for (synth::Kind kind : synth::kAllKinds) {
    std::set<std::string> texts;
    for (int i = 0; i < 12; ++i) {
      const synth::ProgramSpec drawn = synth::generate_program(kind, 31, i, {});
      const std::string name = synth::program_name(kind, 31, i);
      const std::string text = synth::to_lift(drawn, name);
      CAPTURE(text);
      texts.insert(text);
      CHECK(drawn.kind == kind);
      CHECK(text == synth::to_lift(synth::generate_program(kind, 31, i, {}), name));
      ir::Module module = parse_text(text, name);
      const ir::Program& program = module.main();
      CHECK(rewrite::kind_name(rewrite::program_kind(program)) == synth::to_string(kind));
      CHECK(ir::alpha_equal(parse::parse_module(ir::print(module), "printed").main(), program));
      Sizes sizes{{"M", 9}, {"N", 11}};
      if (kind == synth::Kind::stencil3d)
        sizes = {{"M", 5}, {"N", 6}, {"O", 7}};
      if (kind == synth::Kind::product)
        sizes = {{"M", 5}, {"N", 6}, {"K", 7}};
      // A zero boundary drains an iterated average: on 9 x 11 points, 64 steps leave nearly 0.
      if (kind == synth::Kind::time_steps)
        sizes = {{"M", 24}, {"N", 24}};
      double bound = 11; // a reduction's sum of at most 11 elements within [-1, 1]
      if (kind == synth::Kind::product)
        bound = 7;
      if (const auto* stencil = std::get_if<synth::StencilSpec>(&drawn.spec)) {
        bound = synth::output_bound(*stencil);
        CHECK(stencil->rank == (kind == synth::Kind::stencil3d ? 3 : 2));
        CHECK((stencil->time_steps > 0) == (kind == synth::Kind::time_steps));
        CHECK(!stencil->more_outputs.empty() == (kind == synth::Kind::multi_output));
        CHECK((stencil->layout != synth::Layout::separate) == (kind == synth::Kind::layout));
        if (kind == synth::Kind::time_steps)
          CHECK(stencil->grids.size() == 1);
        if (kind == synth::Kind::layout)
          CHECK(stencil->grids.size() >= 2);
      }
      const interp::HostArray out = interpret(program, sizes, 2000 + i);
      double largest = 0;
      for (double v : out.data) {
        REQUIRE(std::isfinite(v));
        CHECK(std::abs(v) <= bound * (1 + 1e-5));
        largest = std::max(largest, std::abs(v));
      }
      // Not driven to zero (an iterated average keeps the inputs' mean): checks are not blind.
      CHECK(largest > 1e-3);
    }
    CHECK(texts.size() == 12);
  }
  // The 2D stencils are the ones generate draws, under the names they had.
  for (int i = 0; i < 20; ++i) {
    CHECK(synth::to_lift(synth::generate_program(synth::Kind::stencil2d, 5, i, {}), "s") ==
          synth::to_lift(synth::generate(5, i, {}), "s"));
    CHECK(synth::program_name(synth::Kind::stencil2d, 5, i) == fmt::format("synth_5_{}", i));
  }
}

TEST_CASE("the shipped synthetic stencils are drawn again byte for byte") {
  // model/data/synth is `liftx synth --count 24 --seed 101` (model/data/README.md): the models were
  // trained on these files, so the 2D draws and their text must not move.
  const std::filesystem::path folder = std::filesystem::path(LIFTX_SOURCE_DIR) / "model/data/synth";
  for (int i = 0; i < 24; ++i) {
    const std::string name = synth::program_name(synth::Kind::stencil2d, 101, i);
    CAPTURE(name);
    std::ifstream file(folder / (name + ".lift"), std::ios::binary);
    REQUIRE(file);
    const std::string shipped((std::istreambuf_iterator<char>(file)),
                              std::istreambuf_iterator<char>());
    CHECK(synth::to_lift(synth::generate_program(synth::Kind::stencil2d, 101, i, {}), name) ==
          shipped);
  }
}

TEST_CASE("operations per output point span about 1 to 100") {
  int lo = 1 << 30, hi = 0;
  std::map<int, int> per_decade;
  for (int i = 0; i < 200; ++i) {
    const synth::StencilSpec s = synth::generate(2024, i, {});
    const int ops = synth::ops_per_point(s);
    lo = std::min(lo, ops);
    hi = std::max(hi, ops);
    ++per_decade[ops < 10 ? 0 : ops < 100 ? 1 : 2];
    CHECK(ops >= synth::combined_values(s) - 1);
    CHECK(ops <= 150);
  }
  CHECK(lo <= 5);
  CHECK(hi >= 90);
  CHECK(per_decade[0] >= 5);
  CHECK(per_decade[1] >= 100);
}

TEST_CASE("a hand-built spec: its text, its operation count and its values") {
  // star r=1 on g0 (clamp) plus g1 point-wise, weighted, one minmax step.
  synth::StencilSpec s;
  s.shape = synth::Shape::star;
  s.radius = 1;
  s.points = {{-1, 0}, {0, -1}, {0, 0}, {0, 1}, {1, 0}};
  s.grids = {{synth::Use::neighbourhood, synth::Boundary::clamp, {0.1, -0.2, 0.3, 0.05, -0.15}},
             {synth::Use::pointwise, synth::Boundary::clamp, {0.2}}};
  s.combine = synth::Combine::weighted;
  s.steps = {{synth::StepKind::minmax, {0.8, -0.01, -0.5, 0.5}}};
  CHECK(synth::combined_values(s) == 6);
  CHECK(synth::ops_per_point(s) == 2 * 6 - 1 + 4);
  const std::string text = synth::to_lift(s, "hand");
  INFO("text:\n" << text);
  CHECK(text.find("userfun hand_f(g0_ym1_x0: float, g0_y0_xm1: float, g0_y0_x0: float, "
                  "g0_y0_xp1: float,\n    g0_yp1_x0: float, g1: float): float {\n") !=
        std::string::npos);
  CHECK(text.find("  float s = 0.1f * g0_ym1_x0 - 0.2f * g0_y0_xm1 + 0.3f * g0_y0_x0 + 0.05f * "
                  "g0_y0_xp1\n            - 0.15f * g0_yp1_x0 + 0.2f * g1;\n") !=
        std::string::npos);
  CHECK(text.find("  v = fmin(fmax(0.8f * v - 0.01f, -0.5f), 0.5f);\n") != std::string::npos);
  CHECK(text.find("  map2D((n0, p1) => hand_f(n0[0][1], n0[1][0], n0[1][1], n0[1][2], n0[2][1], "
                  "p1),\n        zip2D(slide2D(3, 1, pad2D(1, 1, clamp, g0)), g1))\n") !=
        std::string::npos);
  CHECK(text.find("// ops      ~15 floating-point operations per output point") !=
        std::string::npos);

  // The values: out[y][x] = clamp(0.8 s - 0.01, -0.5, 0.5) with s over the clamped star.
  ir::Module module = parse_text(text, "hand");
  const Sizes sizes{{"M", 5}, {"N", 7}};
  std::mt19937_64 rng(3);
  std::vector<interp::HostArray> in;
  for (const ir::Expr& p : module.main().params)
    in.push_back(interp::random_input(p.type(), sizes, rng));
  const interp::HostArray out = interp::evaluate(module.main(), in, sizes);
  auto g0 = [&](int y, int x) {
    y = std::clamp(y, 0, 4);
    x = std::clamp(x, 0, 6);
    return static_cast<float>(in[0].data[static_cast<size_t>(y * 7 + x)]);
  };
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      const float p = static_cast<float>(in[1].data[static_cast<size_t>(y * 7 + x)]);
      const float sum = 0.1f * g0(y - 1, x) - 0.2f * g0(y, x - 1) + 0.3f * g0(y, x) +
                        0.05f * g0(y, x + 1) - 0.15f * g0(y + 1, x) + 0.2f * p;
      const float want = std::fmin(std::fmax(0.8f * sum - 0.01f, -0.5f), 0.5f);
      CHECK(out.data[static_cast<size_t>(y * 7 + x)] == doctest::Approx(want).epsilon(1e-5));
    }
}

TEST_CASE("bad options and names are user errors") {
  std::mt19937_64 rng(1);
  synth::SynthOptions o;
  o.max_radius = 4;
  CHECK_THROWS_AS(synth::random_spec(rng, o), UserError);
  o.max_radius = 0;
  CHECK_THROWS_AS(synth::random_spec(rng, o), UserError);
  o = {};
  o.max_grids = 7;
  CHECK_THROWS_AS(synth::random_spec(rng, o), UserError);
  o.max_grids = 0;
  CHECK_THROWS_AS(synth::random_spec(rng, o), UserError);
  const synth::StencilSpec s = synth::generate(1, 0, {});
  CHECK_THROWS_AS(synth::to_lift(s, "1abc"), UserError);
  CHECK_THROWS_AS(synth::to_lift(s, "a-b"), UserError);
  CHECK_THROWS_AS(synth::to_lift(s, "float"), UserError);
  CHECK_THROWS_AS(synth::to_lift(s, ""), UserError);
  CHECK(synth::parse_shape("cross") == synth::Shape::cross);
  CHECK(!synth::parse_shape("circle"));
}

TEST_CASE("three fixed-seed stencils lower to variants that verify on PoCL") {
  // Kernel builds are cached: keep the cache out of the home directory.
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / fmt::format("liftx-synth-cache-{}", getpid());
  std::filesystem::create_directories(cache);
  setenv("LIFTX_CACHE_DIR", cache.c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  const Sizes sizes{{"M", 32}, {"N", 64}};
  space::SpaceOptions options;
  options.sizes = sizes;
  options.device = runtime::named_profile("cpu").limits();
  // Per stencil, the first variant of each of these strategies in the stream (workgroup2d_local
  // and window apply to tiled programs: overlapped tiles in local memory, register windows).
  const std::vector<std::string> strategies = {"global2d_10", "chunks", "workgroup2d_local",
                                               "window"};
  for (int index : {9, 12, 28}) {
    const synth::StencilSpec spec = synth::generate(11, index, {});
    const std::string name = fmt::format("synth_11_{}", index);
    CAPTURE(synth::describe(spec));
    ir::Module module = parse_text(synth::to_lift(spec, name), name);
    space::VariantStream stream(module.main(), options);
    std::vector<space::Variant> picked;
    std::set<std::string> seen;
    space::Variant v;
    while (seen.size() < strategies.size() && stream.next(v))
      if (std::find(strategies.begin(), strategies.end(), v.strategy) != strategies.end() &&
          seen.insert(v.strategy).second)
        picked.push_back(v);
    CHECK(picked.size() == strategies.size());
    for (const space::Variant& variant : picked) {
      CAPTURE(variant.strategy);
      const exec::RunOptions o = test::verify_options(variant, module.main());
      const exec::RunReport r = exec::run_program(device, variant.program, sizes, o);
      INFO("message: " << r.message);
      CHECK(r.status == runtime::Status::ok);
      CHECK(r.verification.passed);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
}
