// print(module) parses back to alpha-equal programs, and printing is then a fixed point.
#include "examples.hpp"
#include "helpers.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace liftx::parse::test {
namespace {

void check_round_trip(std::string_view source, const std::string& name) {
  INFO("program: " << name);
  ir::Module original = parse_module(source, name);
  std::string printed = ir::print(original);
  INFO("printed:\n" << printed);
  ir::Module reparsed = parse_module(printed, name + " (printed)");
  REQUIRE(reparsed.programs.size() == original.programs.size());
  for (size_t i = 0; i < original.programs.size(); ++i) {
    CHECK(reparsed.programs[i].name == original.programs[i].name);
    CHECK(ir::alpha_equal(reparsed.programs[i], original.programs[i]));
  }
  REQUIRE(reparsed.userfuns.size() == original.userfuns.size());
  for (size_t i = 0; i < original.userfuns.size(); ++i)
    CHECK(ir::same_userfun(*reparsed.userfuns[i], *original.userfuns[i]));
  CHECK(ir::print(reparsed) == printed);
}

TEST_CASE("the examples round-trip through the printer") {
  check_round_trip(kStencil1d, "stencil1d");
  check_round_trip(kTiled1d, "tiled1d");
  check_round_trip(kChunks, "chunks");
  check_round_trip(kJacobi2d5pt, "jacobi2d5pt");
}

TEST_CASE("programs using every primitive round-trip") {
  check_round_trip(R"(
userfun scale(v: float, k: int): float { return v * (float)k; }
def reductions(g: [[float]N]M) =
  join(mapSeq(r => reduceSeq(mult, 1.0f, iterate(2, mapSeq(id), r)), transpose(pad2D(1, 0, wrap, g))))
def tuples(t: [(float, int)]N) = map(p => scale(get(0, p), get(1, p)), t)
def generated() = join(split(2, array(8, (i, n) => scale(1.5f, i))))
def indexed(g: [[float]N]M) = map(w => w[0][N - 1], slide(2, 1, pad(0, 1, mirror, g)))
def cube(h: [[[float]N]M]K) = map(m => m[0][0][0], slide3D(1, 1, h))
def tiled(x: [float]N) = mapWrg0(toLocal(mapLcl0(toPrivate(id))), split(N /^ 4, x))
def sizes(x: [float]((N + 2) * 3)) = split(N + 2, x)
def multi(a: [[float]N]M, b: [[float]N]M) = map2D((p, q) => add(p, q), zip2D(a, b))
def literals(x: [double]N) = reduce(add, -0.5, pad(1, 1, constant(1e-300), x))
def selected(x: [float]N) = x[(N < 3 ? 0 : min(N, 2) - 1)]
def applied(x: [float]N) = toLocal(mapLcl0(id))((v => v)(toGlobal(mapSeq(id), x)))
def windows(x: [float]N) = mapSeqSlide(w => add(w[0], w[2]), 3, 1, mapSeqSlide(w => w[1], 3, 1, 6, x))
)",
                   "primitives");
}

TEST_CASE("every stencil in stencils/ round-trips") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(LIFTX_SOURCE_DIR) / "stencils"))
    if (entry.path().extension() == ".lift")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  CHECK(!files.empty());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    check_round_trip(text.str(), file.filename().string());
  }
}

} // namespace
} // namespace liftx::parse::test
