// One case per user error: the error type and the message content.
#include "helpers.hpp"

using namespace liftx;
using namespace liftx::ir;
using namespace liftx::ir::test;

namespace {
Expr array_param(Type t) {
  return param(std::move(t), "x");
}
} // namespace

TEST_CASE("errors: primitive applied to a non-array") {
  Expr s = param(f32(), "s");
  CHECK_THROWS_AS(call(split(4), {s}), UserError);
  CHECK(user_error_of([&] { call(split(4), {s}); }) == "split(4): expected an array, got float");
  CHECK(user_error_of([&] { call(map(neg()), {s}); }) == "map: expected an array, got float");
  CHECK(user_error_of([&] { call(slide(3, 1), {s}); }) ==
        "slide(3, 1): expected an array, got float");
  CHECK(user_error_of([&] {
          call(join(), {array_param(arr(f32(), N()))});
        }).find("join: expected an array of arrays, got [float]N") == 0);
  CHECK(user_error_of([&] {
          call(transpose(), {array_param(arr(f32(), N()))});
        }).find("transpose: expected an array of arrays") == 0);
  CHECK(user_error_of([&] {
          call(split(4), {s, s});
        }).find("split(4): expected 1 argument, got 2") == 0);
}

TEST_CASE("errors: zip") {
  Expr a = param(arr(f32(), N()), "a");
  Expr b = param(arr(f32(), M()), "b");
  CHECK_THROWS_AS(call(zip(), {a, b}), UserError);
  CHECK(user_error_of([&] { call(zip(), {a, b}); }) == "zip: arrays of different lengths N and M");
  CHECK(user_error_of([&] { call(zip(), {a}); }).find("zip: expected at least 2 arrays") == 0);
  CHECK(user_error_of([&] {
          call(zip(), {a, param(f32(), "s")});
        }).find("zip: expected arrays") == 0);
}

TEST_CASE("errors: user function arguments") {
  Fun jacobi = user_fun(jacobi5_def());
  Expr c = param(f32(), "c");
  CHECK_THROWS_AS(call(jacobi, {c, c}), UserError);
  CHECK(user_error_of([&] {
          call(jacobi, {c, c});
        }) ==
        "userfun jacobi5: expected 5 arguments (float, float, float, float, float), got (float, "
        "float)");
  // Scalar kinds must match exactly: no implicit int -> float.
  Expr i = param(i32(), "i");
  CHECK(user_error_of([&] {
          call(add_f(), {i, i});
        }) == "userfun add: expected 2 arguments (float, float), got (int, int)");
  CHECK(user_error_of([&] { call(neg(), {literal(1.0)}); }) ==
        "userfun neg: expected 1 argument (float), got (double)");
}

TEST_CASE("errors: map's function does not fit the element type") {
  Expr rows = param(arr(arr(f32(), 3), N()), "rows");
  std::string message = user_error_of([&] { call(map(neg()), {rows}); });
  CHECK(message.find("map: function applied to element type [float]3") == 0);
  CHECK(message.find("userfun neg") != std::string::npos);
  CHECK(user_error_of([&] { call(map_glb(1, neg()), {rows}); }).find("mapGlb1: function applied") ==
        0);
}

TEST_CASE("errors: lambda argument types") {
  Expr v = param(i32(), "v");
  Fun f = lambda({v}, call(add_i(), {v, v}));
  Expr xs = param(arr(f32(), N()), "xs");
  std::string message = user_error_of([&] { call(map(f), {xs}); });
  CHECK(message.find("lambda: expected 1 argument (int), got (float)") != std::string::npos);
  CHECK_THROWS_AS(call(f, {literal(1.0f)}), UserError);
  CHECK_THROWS_AS(call(f, {literal(1), literal(2)}), UserError);
}

TEST_CASE("errors: reduce's function must map (U, T) -> U") {
  Expr xs = param(arr(f32(), N()), "xs");
  CHECK_THROWS_AS(call(reduce(add_f(), literal(0)), {xs}), UserError);
  // (float, float) -> int with init float
  Expr a = param(f32(), "a");
  Expr b = param(f32(), "b");
  Fun to_count = lambda({a, b}, literal(1));
  std::string message = user_error_of([&] { call(reduce_seq(to_count, literal(0.0f)), {xs}); });
  CHECK(message.find("reduceSeq: function must map (U, T) -> U") == 0);
}

TEST_CASE("errors: parameters of primitives") {
  CHECK(user_error_of([] { map_glb(3, neg()); }) == "mapGlb: dimension must be 0, 1 or 2, got 3");
  CHECK_THROWS_AS(map_wrg(-1, neg()), UserError);
  CHECK_THROWS_AS(map_lcl(3, neg()), UserError);
  CHECK(user_error_of([] { split(0); }).find("split: chunk size must be >= 1") == 0);
  CHECK_THROWS_AS(split(N() - 5), UserError); // not provably >= 1
  CHECK_THROWS_AS(slide(0, 1), UserError);
  CHECK(user_error_of([] { slide(3, 0); }).find("slide: step must be >= 1") == 0);
  CHECK(user_error_of([] { pad(-1, 0, Boundary{}); }).find("pad: left padding must be >= 0") == 0);
  CHECK_THROWS_AS(pad(0, -2, Boundary{}), UserError);
  CHECK(user_error_of([] { iterate(N(), id()); })
            .find("iterate: count must be a non-negative "
                  "constant") == 0);
  CHECK_THROWS_AS(iterate(-1, id()), UserError);
  CHECK_THROWS_AS(get(-1), UserError);
  CHECK_THROWS_AS(at(-1), UserError);
}

TEST_CASE("errors: sizes that do not fit") {
  CHECK(user_error_of([] { call(split(4), {param(arr(f32(), 10), "x")}); }) ==
        "split(4): array length 10 is not divisible by 4");
  CHECK_THROWS_AS(call(slide(3, 2), {param(arr(f32(), 6), "x")}), UserError);
  CHECK_THROWS_AS(call(slide(5, 1), {param(arr(f32(), 3), "x")}), UserError);
  CHECK(user_error_of([] { call(at(3), {param(arr(f32(), 3), "x")}); }) ==
        "at(3): index 3 is outside [0, 3) of [float]3");
  CHECK_THROWS_AS(call(at(N()), {param(arr(f32(), N()), "x")}), UserError);
  Expr pair = param(Type::tuple({f32(), i32()}), "p");
  CHECK(user_error_of([&] { call(get(2), {pair}); }) ==
        "get(2): index 2 out of range for (float, int)");
  CHECK(user_error_of([&] { call(get(0), {param(f32(), "s")}); }) ==
        "get(0): expected a tuple, got float");
}

TEST_CASE("errors: iterate must preserve the type") {
  Expr xs = param(arr(f32(), 8), "xs");
  std::string message = user_error_of([&] { call(iterate(2, split(2)), {xs}); });
  CHECK(message.find("iterate(2): function must preserve the type") == 0);
}

TEST_CASE("errors: pad constant of the wrong kind") {
  Expr xs = param(arr(f32(), N()), "xs");
  Boundary int_zero{Boundary::Kind::Constant, int32_t{0}};
  CHECK(user_error_of([&] {
          call(pad(1, 1, int_zero), {xs});
        }).find("constant boundary of type int for elements of type float") != std::string::npos);
}

TEST_CASE("errors: array's function takes (int, int)") {
  Expr v = param(f32(), "v");
  Fun f = lambda({v}, v);
  CHECK_THROWS_AS(call(generate(4, f), {}), UserError);
  Expr i = param(i32(), "i");
  Expr n = param(i32(), "n");
  CHECK_THROWS_AS(call(generate(4, lambda({i, n}, i)), {literal(1)}), UserError);
}

TEST_CASE("errors: lambda parameters") {
  Expr x = param(f32(), "x");
  CHECK_THROWS_AS(lambda({literal(1.0f)}, x), UserError);
  CHECK_THROWS_AS(lambda({x, x}, x), UserError);
}

TEST_CASE("errors: located at the call") {
  Expr s = param(f32(), "s");
  try {
    call(split(4), {s}, SourceLoc{"a.lift", 3, 7});
    FAIL("expected a UserError");
  } catch (const UserError& e) {
    CHECK(e.loc().line == 3);
    CHECK(e.loc().col == 7);
    CHECK(std::string(e.what()) == "a.lift:3:7: error: split(4): expected an array, got float");
  }
}
