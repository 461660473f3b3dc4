// store-grids-together (rewrite/layout.hpp): applies / refuses tables; each result is the
// expected program (its layout clause included), means what the input means on the interpreter,
// and prints back.
#include "helpers.hpp"

#include "rewrite/layout.hpp"

using namespace liftx;
using namespace liftx::rewrite;
using namespace liftx::rewrite::test;

namespace {

const ir::StorageGroup kAoS{ir::StorageGroup::Layout::AoS, 1, {}};
const ir::StorageGroup kAoSoA8{ir::StorageGroup::Layout::AoSoA, 8, {}};

const char* const kBody = "map(map((x, y) => addsq(x, y)), map(zip, zip(a, b)))";

std::string def(const std::string& params, const std::string& clause = "") {
  return fmt::format("def f({}){} = {}", params, clause.empty() ? "" : " layout " + clause, kBody);
}

} // namespace

TEST_CASE("store-grids-together applies: the most common grid type, in parameter order") {
  struct Row {
    std::string input;
    ir::StorageGroup layout;
    std::string expected;
  };
  const std::string two = "a: [[float]N]M, b: [[float]N]M";
  const Row rows[] = {
      {def(two), kAoS, def(two, "aos(a, b)")},
      {def(two), kAoSoA8, def(two, "aosoa(8, a, b)")},
      // Three grids of one type beat two of another; other parameters stay apart.
      {def("c: [float]M, a: [[float]N]M, k: float, b: [[float]N]M, d: [float]M, e: [[float]N]M"),
       kAoS,
       def("c: [float]M, a: [[float]N]M, k: float, b: [[float]N]M, d: [float]M, e: [[float]N]M",
           "aos(a, b, e)")},
      // Grids already grouped are left alone; the others form a second group.
      {def("a: [[float]N]M, b: [[float]N]M, c: [[float]N]M, d: [[float]N]M", "aos(c, d)"), kAoSoA8,
       def("a: [[float]N]M, b: [[float]N]M, c: [[float]N]M, d: [[float]N]M",
           "aos(c, d), aosoa(8, a, b)")},
  };
  const Sizes sizes{{"M", 3}, {"N", 10}};
  for (const Row& row : rows) {
    INFO(row.input << " with " << store_grids_name(row.layout));
    ir::Module m = parse_program(row.input);
    auto r = store_grids_together(m.main(), row.layout);
    REQUIRE(std::holds_alternative<ir::Program>(r));
    const ir::Program& after = std::get<ir::Program>(r);
    CHECK(ir::alpha_equal(after, parse_program(row.expected).main()));
    check_same_results(m.main(), after, sizes);
    check_round_trip(m, after);
  }
}

TEST_CASE("store-grids-together refuses single grids, other element types and the iterated input") {
  const auto refused = [](const std::string& input, std::optional<size_t> keep_apart,
                          const std::string& reason) {
    INFO(input);
    auto r = store_grids_together(parse_program(input).main(), kAoS, keep_apart);
    REQUIRE(std::holds_alternative<std::string>(r));
    CHECK(std::get<std::string>(r).find(reason) != std::string::npos);
  };
  refused("def f(a: [[float]N]M) = map(map(neg), a)", std::nullopt,
          "f has no two ungrouped grids of one type");
  refused("def f(a: [[float]N]M, b: [[float]M]N) = map(map(neg), a)", std::nullopt,
          "no two ungrouped grids");
  refused(def("a: [[float]N]M, b: [[float]N]M", "aos(a, b)"), std::nullopt,
          "no two ungrouped grids");
  refused(def("a: [[float]N]M, b: [[float]N]M"), size_t{0}, "besides its iterated input");
  refused("def f(a: [(float, float)]N, b: [(float, float)]N) = map((x, y) => addsq(get(0, x), "
          "get(1, y)), "
          "zip(a, b))",
          std::nullopt, "no two ungrouped grids");
}
