// The `layout` clause of a definition: grids stored together (ir/storage.hpp), parsed, checked,
// printed back, and refused with a located message when it cannot hold.
#include "helpers.hpp"

#include "ir/storage.hpp"

namespace liftx::parse::test {
namespace {

constexpr std::string_view kTwoGrids = R"(
userfun plus(a: float, b: float): float { return a + b; }
def f(a: [[float]N]M, k: float, b: [[float]N]M, c: [[float]N]M) layout %s =
  map(map((x, y) => plus(x, y)), map(zip, zip(a, c)))
)";

std::string with_layout(std::string_view clause) {
  std::string s(kTwoGrids);
  return s.replace(s.find("%s"), 2, clause);
}

TEST_CASE("a layout clause groups parameters in its order, and prints back") {
  ir::Module m = parse_module(with_layout("aos(c, a)"), "t.lift");
  const ir::Program& p = m.main();
  REQUIRE(p.storage.size() == 1);
  CHECK(p.storage[0].layout == ir::StorageGroup::Layout::AoS);
  CHECK(p.storage[0].fields == std::vector<size_t>{3, 0});
  std::string printed = ir::print(m);
  CHECK(printed.find("layout aos(c, a) =") != std::string::npos);
  ir::Module again = parse_module(printed, "printed.lift");
  CHECK(ir::alpha_equal(again.main(), p));

  ir::Module blocked = parse_module(with_layout("aosoa(32, a, b, c)"), "t.lift");
  REQUIRE(blocked.main().storage.size() == 1);
  CHECK(blocked.main().storage[0].layout == ir::StorageGroup::Layout::AoSoA);
  CHECK(blocked.main().storage[0].block == 32);
  CHECK(ir::print(blocked).find("layout aosoa(32, a, b, c) =") != std::string::npos);
  // Two groups; a program differs from the same one stored otherwise.
  ir::Module two = parse_module(with_layout("aos(a, b)"), "t.lift");
  CHECK_FALSE(ir::alpha_equal(two.main(), p));
  CHECK_FALSE(ir::alpha_equal(two.main(), parse_module(with_layout("aos(b, a)"), "t").main()));
}

TEST_CASE("a layout that cannot hold is a located error") {
  // Errors point into the clause on line 3: at its first group, or at the name or group that
  // fails (`offset` characters into the clause).
  const auto check = [](std::string_view clause, size_t offset, std::string_view message) {
    const std::string source = with_layout(clause);
    const size_t at = source.find(clause);
    const auto col = static_cast<int>(at - source.rfind('\n', at) + offset);
    check_error(source, 3, col, message);
  };
  check("soa(a, b)", 0, "expected a layout ('aos(a, b)' or 'aosoa(32, a, b)'), got 'soa'");
  check("aos(a, z)", 7, "layout: 'z' is not a parameter of 'f'");
  check("aos(a)", 0, "an aos layout groups two or more grids");
  check("aos(a, k)", 0, "layout: 'k' is not an array of scalars (float)");
  check("aos(a, a)", 0, "layout: 'a' is stored in two places");
  check("aos(a, b), aos(b, c)", 11, "layout: 'b' is stored in two places");
  check("aosoa(1, a, b)", 0, "an aosoa block holds 2 to 1024 elements, not 1");
  check("aosoa(a, b)", 6, "expected the elements per block of 'aosoa'");
  check_error("def f(a: [float]N, b: [float]M) layout aos(a, b) = a", 1, 40,
              "the grids of one aos group have one type: 'a' is [float]N, 'b' is [float]M");
}

} // namespace
} // namespace liftx::parse::test
