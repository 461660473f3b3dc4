// The same program built with the C++ DSL (ir/dsl.hpp) and parsed from .lift is alpha-equal.
#include "examples.hpp"
#include "helpers.hpp"

#if __has_include("ir/dsl.hpp")
#include "ir/dsl.hpp"

namespace liftx::parse::test {
namespace {

TEST_CASE("jacobi2d5pt from the DSL equals the parsed file") {
  using namespace liftx::dsl;
  Fn jacobi5 = userfun("jacobi5",
                       {{"c", ScalarKind::Float},
                        {"n", ScalarKind::Float},
                        {"s", ScalarKind::Float},
                        {"e", ScalarKind::Float},
                        {"w", ScalarKind::Float}},
                       ScalarKind::Float, "return 0.2f * (c + n + s + e + w);");
  ir::Program built =
      program("jacobi2d5pt", {{"grid", array_of(Type::float_(), "N", "M")}}, [&](Expr grid) {
        return map2D(Fn({"nbh"},
                        [&](Expr nbh) {
                          return jacobi5(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]);
                        }),
                     slide2D(3, 1, pad2D(1, 1, clamp, grid)));
      });
  ir::Module parsed = parse_module(kJacobi2d5pt);
  CHECK(ir::alpha_equal(parsed.main(), built));
  CHECK(parsed.main().result_type() == built.result_type());
  // Printed, read back and printed again: the same text (one identity for both routes), the user
  // function's body included, however many blanks the DSL was given around it.
  Fn padded = userfun("jacobi5",
                      {{"c", ScalarKind::Float},
                       {"n", ScalarKind::Float},
                       {"s", ScalarKind::Float},
                       {"e", ScalarKind::Float},
                       {"w", ScalarKind::Float}},
                      ScalarKind::Float, "\n   return 0.2f * (c + n + s + e + w);  \n");
  ir::Program with_blanks =
      program("jacobi2d5pt", {{"grid", array_of(Type::float_(), "N", "M")}}, [&](Expr grid) {
        return map2D(Fn({"nbh"},
                        [&](Expr nbh) {
                          return padded(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]);
                        }),
                     slide2D(3, 1, pad2D(1, 1, clamp, grid)));
      });
  for (const ir::Program& p : {built, with_blanks}) {
    const std::string printed = ir::print(module({p}));
    CHECK(ir::print(parse_module(printed)) == printed);
    CHECK(printed == ir::print(module({built})));
  }
}

TEST_CASE("slide and pad with a pair per dimension: the DSL equals the parsed text") {
  using namespace liftx::dsl;
  ir::Program built = program("aniso", {{"g", array_of(Type::float_(), "N", "M")}}, [&](Expr g) {
    return map2D(Fn({"w"}, [&](Expr w) { return w[1][2]; }),
                 slide2D(3, 1, 5, 1, pad2D(1, 1, 2, 2, clamp, g)));
  });
  ir::Module parsed = parse_module("def aniso(g: [[float]N]M) =\n"
                                   "  map2D(w => w[1][2], slide2D(3, 1, 5, 1, "
                                   "pad2D(1, 1, 2, 2, clamp, g)))\n");
  CHECK(ir::alpha_equal(parsed.main(), built));
  CHECK(built.result_type().to_string() == "[[float]N]M");
  ir::Program cube = program("box", {{"c", array_of(Type::float_(), "O", "N", "M")}}, [&](Expr c) {
    return map3D(Fn({"w"}, [&](Expr w) { return w[0][0][3]; }),
                 slide3D(3, 1, 1, 1, 7, 1, pad3D(1, 1, 0, 0, 3, 3, wrap, c)));
  });
  ir::Module parsed_cube = parse_module("def box(c: [[[float]O]N]M) =\n"
                                        "  map3D(w => w[0][0][3], slide3D(3, 1, 1, 1, 7, 1, "
                                        "pad3D(1, 1, 0, 0, 3, 3, wrap, c)))\n");
  CHECK(ir::alpha_equal(parsed_cube.main(), cube));
}

TEST_CASE("stencil1d from the DSL equals the parsed file") {
  using namespace liftx::dsl;
  ir::Program built = program("stencil1d", {{"arg", array_of(Type::float_(), "N")}}, [&](Expr arg) {
    return join(map(reduce(add, lit(0.0f)), slide(3, 1, pad(1, 1, constant(0.0f), arg))));
  });
  CHECK(ir::alpha_equal(parse_module(kStencil1d).main(), built));
}

TEST_CASE("a user function returning a tuple: the DSL equals the parsed text") {
  using namespace liftx::dsl;
  Fn minmax = userfun("minmax", {{"a", ScalarKind::Float}, {"b", ScalarKind::Float}},
                      std::vector{ScalarKind::Float, ScalarKind::Float},
                      "return {fmin(a, b), fmax(a, b)};");
  ir::Program built =
      program("pairs", {{"x", array_of(Type::float_(), "N")}, {"y", array_of(Type::float_(), "N")}},
              [&](Expr x, Expr y) { return map(minmax, zip(x, y)); });
  ir::Module parsed = parse_module(
      "userfun minmax(a: float, b: float): (float, float) { return {fmin(a, b), fmax(a, b)}; }\n"
      "def pairs(x: [float]N, y: [float]N) = map(minmax, zip(x, y))");
  CHECK(ir::alpha_equal(parsed.main(), built));
  CHECK(built.result_type().to_string() == "[(float, float)]N");
}

} // namespace
} // namespace liftx::parse::test
#endif
