// Programs written in .lift, parsed and evaluated: same results as loops; located errors.
#include "helpers.hpp"

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
