// Result types of every primitive (the typing rules of ir/expr.hpp).
#include "helpers.hpp"

#include "ir/derived.hpp"

using namespace liftx;
using namespace liftx::ir;
using namespace liftx::ir::test;

namespace {
Type type_of(const Fun& f, std::vector<Type> args) {
  return result_type(f, args);
}
} // namespace

TEST_CASE("typing: maps") {
  Type xs = arr(f32(), N());
  CHECK(type_of(map(neg()), {xs}) == xs);
  CHECK(type_of(map(to_int()), {xs}) == arr(i32(), N()));
  CHECK(type_of(map_seq(to_int()), {xs}) == arr(i32(), N()));
  for (int d = 0; d <= 2; ++d) {
    CAPTURE(d);
    CHECK(type_of(map_glb(d, to_int()), {xs}) == arr(i32(), N()));
    CHECK(type_of(map_wrg(d, to_int()), {xs}) == arr(i32(), N()));
    CHECK(type_of(map_lcl(d, to_int()), {xs}) == arr(i32(), N()));
  }
  CHECK(type_of(map(map(to_int())), {arr(xs, M())}) == arr(arr(i32(), N()), M()));
}

TEST_CASE("typing: reductions") {
  Type xs = arr(f32(), N());
  CHECK(type_of(reduce(add_f(), literal(0.0f)), {xs}) == arr(f32(), 1));
  CHECK(type_of(reduce_seq(add_f(), literal(0.0f)), {xs}) == arr(f32(), 1));
  CHECK(type_of(reduce_seq(add_i(), literal(0)), {arr(i32(), N())}) == arr(i32(), 1));
  // (U, T) -> U with U != T: count elements into an int.
  Expr acc = param(i32(), "acc");
  Expr v = param(f32(), "v");
  Fun count = lambda({acc, v}, call(add_i(), {acc, literal(1)}));
  CHECK(type_of(reduce_seq(count, literal(0)), {xs}) == arr(i32(), 1));
}

TEST_CASE("typing: iterate, id, to*") {
  Type xs = arr(f32(), N());
  CHECK(type_of(iterate(5, map(neg())), {xs}) == xs);
  CHECK(type_of(iterate(0, map(neg())), {xs}) == xs);
  CHECK(type_of(id(), {xs}) == xs);
  CHECK(type_of(to_global(map(to_int())), {xs}) == arr(i32(), N()));
  CHECK(type_of(to_local(map(to_int())), {xs}) == arr(i32(), N()));
  CHECK(type_of(to_private(map(to_int())), {xs}) == arr(i32(), N()));
}

TEST_CASE("typing: zip and get") {
  Type a = arr(f32(), N());
  Type b = arr(i32(), N());
  CHECK(type_of(zip(), {a, b}) == arr(Type::tuple({f32(), i32()}), N()));
  CHECK(type_of(zip(), {a, b, a}) == arr(Type::tuple({f32(), i32(), f32()}), N()));
  // Lengths equal after canonicalisation.
  CHECK(type_of(zip(), {arr(f32(), N() + 1), arr(f32(), 1 + N())}) ==
        arr(Type::tuple({f32(), f32()}), N() + 1));
  Type pair = Type::tuple({f32(), i32()});
  CHECK(type_of(get(0), {pair}) == f32());
  CHECK(type_of(get(1), {pair}) == i32());
  CHECK(type_of(map(get(1)), {arr(pair, N())}) == b);
}

TEST_CASE("typing: split, join, slide, pad, transpose, at") {
  Type xs = arr(f32(), N());
  CHECK(type_of(split(4), {xs}) == arr(arr(f32(), 4), arith::exact_div(N(), 4)));
  CHECK(type_of(split(4), {arr(f32(), 16)}) == arr(arr(f32(), 4), 4));
  CHECK(type_of(join(), {arr(arr(f32(), N()), M())}) == arr(f32(), M() * N()));
  // join o split(4) gives back [float]N: 4 * (N /^ 4) == N.
  Expr x = param(xs, "x");
  Expr chunks = call(split(4), {x});
  CHECK(call(join(), {chunks}).type() == xs);
  CHECK(call(join(), {chunks}).type().to_string() == "[float]N");
  // slide: (N - 3 + 1) /^ 1 windows.
  CHECK(type_of(slide(3, 1), {xs}) == arr(arr(f32(), 3), N() - 3 + 1));
  CHECK(type_of(slide(3, 1), {xs}) == arr(arr(f32(), 3), N() - 2));
  CHECK(type_of(slide(3, 2), {xs}) == arr(arr(f32(), 3), arith::exact_div(N() - 1, 2)));
  CHECK(type_of(slide(3, 1), {arr(f32(), 10)}) == arr(arr(f32(), 3), 8));
  CHECK(type_of(pad(1, 2, Boundary{}), {xs}) == arr(f32(), N() + 3));
  CHECK(type_of(pad(1, 1, Boundary{Boundary::Kind::Constant, 0.0f}), {xs}) == arr(f32(), N() + 2));
  CHECK(type_of(transpose(), {arr(arr(f32(), N()), M())}) == arr(arr(f32(), M()), N()));
  CHECK(type_of(at(0), {xs}) == f32());
  CHECK(type_of(at(2), {arr(f32(), 3)}) == f32());
  CHECK(type_of(at(N() - 1), {xs}) == f32());
  CHECK(type_of(at(1), {arr(arr(i32(), 3), N())}) == arr(i32(), 3));
  CHECK(call(at(1), {x}).type() == x[1].type());
}

TEST_CASE("typing: generate (array)") {
  Expr i = param(i32(), "i");
  Expr n = param(i32(), "n");
  Fun index = lambda({i, n}, i);
  CHECK(call(generate(N(), index), {}).type() == arr(i32(), N()));
  Fun as_float = lambda({i, n}, literal(1.5f));
  CHECK(call(generate(8, as_float), {}).type() == arr(f32(), 8));
}

TEST_CASE("typing: lambdas and argument spreading") {
  Type pairs = arr(Type::tuple({f32(), f32()}), N());
  // A user function of 2 parameters applied to one pair receives its components.
  CHECK(type_of(map(sub()), {pairs}) == arr(f32(), N()));
  // The same for a lambda of 2 parameters.
  Expr a = param(f32(), "a");
  Expr b = param(f32(), "b");
  Fun swapped = lambda({a, b}, call(sub(), {b, a}));
  REQUIRE(swapped.as<Lambda>() != nullptr);
  CHECK(type_of(map(swapped), {pairs}) == arr(f32(), N()));
  CHECK(type_of(swapped, {f32(), f32()}) == f32());
  // And for zip: map(zip) over a zip of rows is zip2D.
  Type grid = arr(arr(f32(), N()), M());
  Type igrid = arr(arr(i32(), N()), M());
  Expr g = param(grid, "g");
  Expr h = param(igrid, "h");
  Expr zipped = call(map(zip()), {call(zip(), {g, h})});
  CHECK(zipped.type() == arr(arr(Type::tuple({f32(), i32()}), N()), M()));
  CHECK(zip_2d({g, h}).type() == zipped.type());
}

TEST_CASE("typing: derived forms") {
  Type grid = arr(arr(f32(), N()), M());
  Expr g = param(grid, "grid");
  Type window = arr(arr(f32(), 3), 3);
  CHECK(slide_2d(3, 1, g).type() == arr(arr(window, N() - 2), M() - 2));
  CHECK(pad_2d(1, 1, Boundary{}, g).type() == arr(arr(f32(), N() + 2), M() + 2));
  CHECK(slide_2d(3, 1, pad_2d(1, 1, Boundary{}, g)).type() == arr(arr(window, N()), M()));
  CHECK(call(map_2d(id()), {g}).type() == grid);

  Type cube = arr(arr(arr(f32(), O()), N()), M());
  Expr c = param(cube, "cube");
  Type window3 = arr(arr(arr(f32(), 3), 3), 3);
  CHECK(slide_3d(3, 1, c).type() == arr(arr(arr(window3, O() - 2), N() - 2), M() - 2));
  CHECK(pad_3d(1, 1, Boundary{}, c).type() == arr(arr(arr(f32(), O() + 2), N() + 2), M() + 2));
  CHECK(slide_3d(3, 1, pad_3d(1, 1, Boundary{}, c)).type() ==
        arr(arr(arr(window3, O()), N()), M()));
  CHECK(call(map_3d(id()), {c}).type() == cube);
  CHECK(zip_3d({c, c}).type() == arr(arr(arr(Type::tuple({f32(), f32()}), O()), N()), M()));
}

TEST_CASE("structural hash: cached, ignores locations") {
  Expr x = param(arr(f32(), N()), "x");
  Expr a = call(map(neg()), {x}, SourceLoc{"f.lift", 1, 2});
  Expr b = call(map(neg()), {x});
  CHECK(a.hash() == b.hash());
  CHECK(alpha_equal(a, b));
}
