// exec::count_flops: the floating-point operations of a program at concrete sizes, the same for
// every lowering of one algorithm.
#include "exec/flops.hpp"
#include "ir/parse/parser.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace liftx;
namespace fs = std::filesystem;

namespace {

const fs::path kStencils = fs::path(LIFTX_SOURCE_DIR) / "stencils";

double flops_of_file(const fs::path& file, const Sizes& sizes) {
  return exec::count_flops(parse::parse_file(file.string()).main(), sizes);
}

double flops_of_text(const std::string& text, const Sizes& sizes) {
  return exec::count_flops(parse::parse_module(text).main(), sizes);
}

// mm.lift's product as a lowering would write it: one work-item per output, the multiply fused
// into a sequential reduction.
const char* const kLoweredProduct =
    "def mm(A: [[float]K]M, B: [[float]N]K) =\n"
    "  mapGlb1(row => mapGlb0(column => reduceSeq((acc, p) => add(acc, mult(p)), 0.0f,\n"
    "                                             zip(row, column))[0], transpose(B)), A)\n";

} // namespace

TEST_CASE("a matrix product counts 2 M N K: a multiply and an add per term") {
  for (const Sizes& sizes :
       {Sizes{{"M", 3}, {"N", 5}, {"K", 7}}, Sizes{{"M", 16}, {"N", 1}, {"K", 33}},
        Sizes{{"M", 1}, {"N", 1}, {"K", 1}}}) {
    CAPTURE(sizes.at("M"));
    const double expected = 2.0 * sizes.at("M") * sizes.at("N") * sizes.at("K");
    CHECK(flops_of_file(kStencils / "linalg" / "mm.lift", sizes) == expected);
    CHECK(flops_of_text(kLoweredProduct, sizes) == expected);
  }
}

TEST_CASE("a stencil counts its user function's operations once per point") {
  // jacobi5: five multiplies, four adds and a division per point; padding and windows are free.
  CHECK(flops_of_file(kStencils / "jacobi2d5pt.lift", {{"M", 6}, {"N", 9}}) == 10.0 * 6 * 9);
  // heat: five adds or subtracts and two multiplies per point, in each of the six steps.
  CHECK(flops_of_file(kStencils / "iterated" / "heat2d.lift", {{"M", 4}, {"N", 8}}) ==
        6 * 7.0 * 4 * 8);
}

TEST_CASE("int index arithmetic and comparisons are not floating-point operations") {
  // gaussWeight computes the weights from the window index in ints: only the 25 multiplies,
  // the 25 adds and gaussNorm's division count.
  CHECK(flops_of_file(kStencils / "gaussian.lift", {{"M", 4}, {"N", 5}}) == 51.0 * 4 * 5);
  CHECK(flops_of_text("userfun pick(a: float, b: float, i: int): float {\n"
                      "  int j = i * 2 + 1;\n"
                      "  return j > 3 && a < b ? a * b : fmax(a, b);\n"
                      "}\n"
                      "def f(a: [float]N, b: [float]N, i: [int]N) = map(pick, zip(a, b, i))",
                      {{"N", 10}}) == 10.0); // the costlier branch: one multiply or one fmax
  CHECK(flops_of_text("def f(a: [int]N) = map(x => add(x, x), a)", {{"N", 10}}) == 0.0);
}

TEST_CASE("every hand-lowered variant of a stencil counts what the stencil counts") {
  const Sizes sizes{{"M", 40}, {"N", 112}}; // valid for every strategy of stencils/variants
  int variants = 0;
  for (const fs::directory_entry& folder : fs::directory_iterator(kStencils / "variants")) {
    if (!folder.is_directory())
      continue;
    const double stencil =
        flops_of_file(kStencils / (folder.path().filename().string() + ".lift"), sizes);
    CHECK(stencil > 0);
    for (const fs::directory_entry& variant : fs::directory_iterator(folder.path())) {
      CAPTURE(variant.path().string());
      CHECK(flops_of_file(variant.path(), sizes) == stencil);
      ++variants;
    }
  }
  CHECK(variants >= 30);
}

TEST_CASE("vectorised calls and register windows count as the plain program") {
  const Sizes sizes{{"N", 64}};
  const std::string scale = "userfun scale(a: float, b: float): float { return a * 0.5f - b; }\n";
  CHECK(flops_of_text(scale + "def f(a: [float]N, b: [float]N) = asScalar(mapGlb0(vectorize(4, "
                              "scale), zip(asVector(4, a), asVector(4, b))))",
                      sizes) == 2.0 * 64);
  CHECK(flops_of_text(scale + "def f(a: [float]N, b: [float]N) = map(scale, zip(a, b))", sizes) ==
        2.0 * 64);
  const double window = flops_of_text("def f(x: [float]N) = join(mapGlb0(t => mapSeqSlide("
                                      "reduceSeq(add, 0.0f), 3, 1, t), slide(10, 8, pad(1, 1, "
                                      "clamp, x))))",
                                      sizes);
  CHECK(window == flops_of_text("def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 1, pad(1, "
                                "1, clamp, x)))",
                                sizes));
  CHECK(window == 3.0 * 64);
}
