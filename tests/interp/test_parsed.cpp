// Programs written in .lift, parsed and evaluated: same results as loops; located errors.
#include "helpers.hpp"

#include "../scoped_env.hpp"
#include "ir/parse/parser.hpp"

using namespace liftx;
using namespace liftx::interp;
using namespace liftx::interp::test;

namespace {

constexpr const char* kJacobi = R"(
userfun jacobi5(c: float, n: float, s: float, e: float, w: float): float {
  return 0.2f * (c + n + s + e + w);
}

def jacobi(grid: [[float]N]M) =
  map2D(nbh => jacobi5(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]),
        slide2D(3, 1, pad2D(1, 1, clamp, grid)))
)";

} // namespace

TEST_CASE("parsed jacobi equals a loop, high-level and lowered") {
  const std::string lowered = std::string(kJacobi) + R"(
def jacobi_lowered(grid: [[float]N]M) =
  mapGlb1(mapGlb0(toGlobal(nbh => jacobi5(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]))),
          slide2D(3, 1, pad2D(1, 1, clamp, grid)))
)";
  ir::Module m = parse::parse_module(lowered, "jacobi.lift");
  const Sizes sizes{{"M", 11}, {"N", 17}};
  const ir::Program* high = m.find("jacobi");
  const ir::Program* low = m.find("jacobi_lowered");
  REQUIRE(high);
  REQUIRE(low);
  std::mt19937_64 rng(3);
  HostArray in = random_input(high->params[0].type(), sizes, rng);
  HostArray out = run(*high, {in}, sizes);
  auto cl = [](int64_t v, int64_t len) { return v < 0 ? 0 : (v >= len ? len - 1 : v); };
  std::vector<float> want;
  for (int64_t i = 0; i < 11; ++i)
    for (int64_t j = 0; j < 17; ++j)
      want.push_back(0.2f * (f2(in, i, j) + f2(in, cl(i - 1, 11), j) + f2(in, cl(i + 1, 11), j) +
                             f2(in, i, cl(j + 1, 17)) + f2(in, i, cl(j - 1, 17))));
  check_equal(out, {11, 17}, want);
  HostArray out_low = run(*low, {in}, sizes);
  CHECK(out_low.data == out.data);
}

TEST_CASE("errors of parsed programs point into the file") {
  ir::Module m = parse::parse_module("def chunks(x: [float]N) =\n  split(4, x)\n", "chunks.lift");
  const ir::Program& p = m.main();
  const Sizes sizes{{"N", 66}};
  std::mt19937_64 rng(1);
  HostArray in = random_input(p.params[0].type(), sizes, rng);
  try {
    run(p, {in}, sizes);
    FAIL("expected a UserError");
  } catch (const UserError& e) {
    CHECK(e.loc().file == "chunks.lift");
    CHECK(e.loc().line == 2);
    CHECK(e.message() == "split(4) of an array of length 66: 66 is not a multiple of 4");
  }
}

TEST_CASE("slide2D and pad2D with a pair per dimension equal a loop on a non-square grid") {
  // A 3-row by 5-column window: rows padded by 1 (clamp), columns by 2 (wrap).
  ir::Module m = parse::parse_module(R"(
userfun plus5(n: float, s: float, c: float, w: float, e: float): float {
  return n + 2.0f * s + 3.0f * c + 4.0f * w + 5.0f * e;
}
def aniso(g: [[float]N]M) =
  map2D(w => plus5(w[0][2], w[2][2], w[1][2], w[1][0], w[1][4]),
        slide2D(3, 1, 5, 1, map(pad(2, 2, wrap), pad(1, 1, clamp, g))))
def aniso_pad2d(g: [[float]N]M) =
  map2D(w => plus5(w[0][2], w[2][2], w[1][2], w[1][0], w[1][4]),
        slide2D(3, 1, 5, 1, pad2D(1, 1, 2, 2, clamp, g)))
)",
                                     "aniso.lift");
  const int64_t rows = 7, cols = 12;
  const Sizes sizes{{"M", rows}, {"N", cols}};
  std::mt19937_64 rng(5);
  HostArray in = random_input(m.main().params[0].type(), sizes, rng);
  auto clamp = [](int64_t v, int64_t len) { return std::clamp<int64_t>(v, 0, len - 1); };
  auto wrap = [](int64_t v, int64_t len) { return ((v % len) + len) % len; };
  auto want_for = [&](auto column) {
    std::vector<float> want;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        want.push_back(f2(in, clamp(i - 1, rows), j) + 2.0f * f2(in, clamp(i + 1, rows), j) +
                       3.0f * f2(in, i, j) + 4.0f * f2(in, i, column(j - 2, cols)) +
                       5.0f * f2(in, i, column(j + 2, cols)));
    return want;
  };
  check_equal(run(*m.find("aniso"), {in}, sizes), {rows, cols}, want_for(wrap));
  check_equal(run(*m.find("aniso_pad2d"), {in}, sizes), {rows, cols}, want_for(clamp));
}

TEST_CASE("slide3D and pad3D with a pair per dimension equal a loop") {
  // Windows of 3 planes x 1 row x 5 columns; pads 1 (z), 0 (y), 2 (x), clamped.
  ir::Module m = parse::parse_module(R"(
def box(g: [[[float]O]N]M) =
  map3D(w => reduce(add, 0.0f, join(join(w))),
        slide3D(3, 1, 1, 1, 5, 1, pad3D(1, 1, 0, 0, 2, 2, clamp, g)))
)",
                                     "box.lift");
  const int64_t nz = 4, ny = 3, nx = 6;
  const Sizes sizes{{"M", nz}, {"N", ny}, {"O", nx}};
  std::mt19937_64 rng(8);
  HostArray in = random_input(m.main().params[0].type(), sizes, rng);
  auto at = [&](int64_t z, int64_t y, int64_t x) {
    z = std::clamp<int64_t>(z, 0, nz - 1);
    x = std::clamp<int64_t>(x, 0, nx - 1);
    return in.data[size_t((z * ny + y) * nx + x)];
  };
  std::vector<float> want;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x) {
        float sum = 0.0f; // reduce's order: planes, then columns
        for (int64_t dz = -1; dz <= 1; ++dz)
          for (int64_t dx = -2; dx <= 2; ++dx)
            sum += static_cast<float>(at(z + dz, y, x + dx));
        want.push_back(sum);
      }
  check_equal(run(m.main(), {in}, sizes), {nz, ny, nx, 1}, want);
}

TEST_CASE("slide and pad forms with a wrong number of sizes say both forms") {
  try {
    parse::parse_module("def f(g: [[float]N]M) =\n  slide2D(3, 1, 5, g)\n", "arity.lift");
    FAIL("expected a UserError");
  } catch (const UserError& e) {
    CHECK(e.loc().line == 2);
    CHECK(e.message() == "slide2D expects 2 size arguments and 1 array (or 4 size arguments, a "
                         "pair per dimension), got 4 arguments");
  }
  try {
    parse::parse_module("def f(g: [[[float]O]N]M) = pad3D(1, 1, 2, 2, clamp, g)\n", "arity.lift");
    FAIL("expected a UserError");
  } catch (const UserError& e) {
    CHECK(e.message() == "pad3D expects 2 size arguments, 1 boundary and 1 array (or 6 size "
                         "arguments, a pair per dimension, then the boundary), got 6 arguments");
  }
}

TEST_CASE(
    "host memory: a program run on a device needs its buffers, interpreted its intermediates") {
  // Two sequential maps over every window: the interpreter holds the windows' results as well
  // as the inputs and the result; a device run (checked against another program) does not.
  ir::Module m = parse::parse_module(std::string(kJacobi) + R"(
def staged(grid: [[float]N]M) =
  mapGlb1(mapGlb0(toGlobal(nbh => jacobi5(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]))),
          slide2D(3, 1, mapGlb1(mapGlb0(toGlobal(id)), pad2D(1, 1, clamp, grid))))
)",
                                     "staged.lift");
  const Sizes sizes{{"M", 256}, {"N", 256}};
  const ir::Program& p = m.main();
  const int64_t buffers = 2 * 256 * 256 * 2 * static_cast<int64_t>(sizeof(double));
  const int64_t everything = estimated_host_bytes(p, sizes);
  REQUIRE(everything > buffers);
  const std::string between = std::to_string((buffers + everything) / 2);
  liftx_test::ScopedEnv limit("LIFTX_MAX_MEMORY", between.c_str());
  CHECK_THROWS_AS(check_host_memory(p, sizes), UserError);
  CHECK_NOTHROW(check_host_memory(p, sizes, false));
  const std::string below = std::to_string(buffers - 1);
  liftx_test::ScopedEnv tighter("LIFTX_MAX_MEMORY", below.c_str());
  CHECK_THROWS_AS(check_host_memory(p, sizes, false), UserError);
}
