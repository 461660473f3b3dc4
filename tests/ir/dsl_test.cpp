// The C++ embedded DSL builds the same IR as the primitives of ir/expr.hpp.
#include "helpers.hpp"

#include "ir/derived.hpp"
#include "ir/dsl.hpp"

using namespace liftx;
using namespace liftx::dsl;
using liftx::ir::test::M;
using liftx::ir::test::N;
using liftx::ir::test::O;

namespace {

Fn jacobi5_fn() {
  const auto F = ScalarKind::Float;
  return userfun("jacobi5", {{"c", F}, {"n", F}, {"s", F}, {"e", F}, {"w", F}}, F,
                 "return 0.2f * (c + n + s + e + w);");
}

ir::Program jacobi2d5pt() {
  Fn jacobi5 = jacobi5_fn();
  return program("jacobi2d5pt", {{"grid", array_of(Type::float_(), "N", "M")}}, [&](Expr grid) {
    return map2D(Fn({"nbh"},
                    [&](Expr nbh) {
                      return jacobi5(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]);
                    }),
                 slide2D(3, 1, pad2D(1, 1, clamp, grid)));
  });
}

} // namespace

TEST_CASE("dsl: jacobi2d5pt") {
  ir::Program p = jacobi2d5pt();
  CHECK(p.name == "jacobi2d5pt");
  CHECK(p.result_type() == array_of(Type::float_(), "N", "M"));
  CHECK(p.result_type().to_string() == "[[float]N]M");
  const std::string def =
      "def jacobi2d5pt(grid: [[float]N]M) = map(map(nbh => jacobi5(nbh[1][1], nbh[0][1], "
      "nbh[2][1], nbh[1][2], nbh[1][0])), map(transpose, slide(3, 1, map(slide(3, 1), "
      "map(pad(1, 1, clamp), pad(1, 1, clamp, grid))))))";
  CHECK(ir::print(p) == def);
  CHECK(ir::print(module({p})) ==
        "userfun jacobi5(c: float, n: float, s: float, e: float, w: float): float {return 0.2f "
        "* (c + n + s + e + w);}\n\n" +
            def + "\n");
  // Built twice: alpha-equal, same hash; equal to the same program written with ir:: calls.
  ir::Program q = jacobi2d5pt();
  CHECK(ir::alpha_equal(p, q));
  CHECK(p.body.hash() == q.body.hash());
  Expr grid = ir::param(array_of(Type::float_(), "N", "M"), "g");
  Expr nbh = ir::param(array_of(Type::float_(), 3, 3), "w");
  ir::Fun stencil =
      ir::lambda({nbh}, ir::call(ir::user_fun(ir::test::jacobi5_def()),
                                 {nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]}));
  ir::Program by_hand{
      "x",
      {grid},
      ir::call(ir::map_2d(stencil), {ir::slide_2d(3, 1, ir::pad_2d(1, 1, ir::Boundary{}, grid))}),
      {}};
  CHECK(ir::alpha_equal(p, by_hand));
}

TEST_CASE("dsl: derived forms' types") {
  Expr grid = ir::param(array_of(Type::float_(), "N", "M"), "grid");
  Type window = array_of(Type::float_(), 3, 3);
  CHECK(slide2D(3, 1, grid).type() == array_of(window, N() - 2, M() - 2));
  CHECK(pad2D(1, 1, clamp, grid).type() == array_of(Type::float_(), N() + 2, M() + 2));
  CHECK(pad2D(2, 2, constant(0.0f), grid).type() == array_of(Type::float_(), N() + 4, M() + 4));
  CHECK(zip2D(grid, grid).type() == array_of(tuple_of(Type::float_(), Type::float_()), "N", "M"));
  Expr cube = ir::param(array_of(Type::float_(), "O", "N", "M"), "cube");
  Type window3 = array_of(Type::float_(), 3, 3, 3);
  CHECK(slide3D(3, 1, cube).type() == array_of(window3, O() - 2, N() - 2, M() - 2));
  CHECK(slide3D(3, 1, pad3D(1, 1, mirror, cube)).type() == array_of(window3, "O", "N", "M"));
  CHECK(zip3D(cube, cube, cube).type() ==
        array_of(tuple_of(Type::float_(), Type::float_(), Type::float_()), "O", "N", "M"));
  CHECK(map3D([](Expr v) { return add(v, v); }, cube).type() == cube.type());
  CHECK(slide2D(3, 1)(grid).type() == slide2D(3, 1, grid).type());
  CHECK(pad2D(1, 1, wrap)(grid).type() == pad2D(1, 1, wrap, grid).type());
}

TEST_CASE("dsl: primitives and lambdas") {
  Expr xs = ir::param(array_of(Type::float_(), "N"), "xs");
  Expr is = ir::param(array_of(Type::int_(), "N"), "is");
  // add/mult resolve by argument type.
  Expr sum_f = reduce(add, lit(0.0f), xs);
  Expr sum_i = reduceSeq(add, lit(0), is);
  CHECK(sum_f.type() == array_of(Type::float_(), 1));
  CHECK(sum_i.type() == array_of(Type::int_(), 1));
  CHECK(ir::print(sum_i) == "reduceSeq(add, 0, is)");
  CHECK(sum_i.as<ir::Call>()->fun.as<ir::ReduceSeq>()->f.as<ir::UserFun>()->def->name() ==
        "add_int");
  CHECK(mult(lit(2.0), lit(3.0)).type() == Type::double_());
  CHECK_THROWS_AS(add(lit(true), lit(false)), UserError);
  CHECK_THROWS_AS(add(lit(1), lit(1.0f)), UserError);

  // A C++ lambda becomes an eta-reduced ir lambda.
  Expr squares = map([](Expr v) { return mult(v, v); }, xs);
  CHECK(ir::print(squares) == "map(x => mult(x, x), xs)");
  Expr same = map([](Expr v) { return add(v); }, zip(xs, xs));
  CHECK(ir::print(same) == "map(add, zip(xs, xs))");
  // Two-parameter lambdas receive the components of zipped pairs.
  Expr diffs =
      map(Fn({"a", "b"}, [](Expr a, Expr b) { return add(b, mult(a, lit(-1.0f))); }), zip(xs, xs));
  CHECK(ir::print(diffs) == "map((a, b) => add(b, mult(a, -1.0f)), zip(xs, xs))");
  CHECK(diffs.type() == xs.type());

  CHECK(join(split(4, xs)).type() == xs.type());
  CHECK(ir::print(join(split(4, xs))) == "join(split(4, xs))");
  CHECK(ir::print(join()(split(4)(xs))) == "join(split(4, xs))");
  CHECK(slide(3, 1, xs).type() == array_of(Type::float_(), 3, N() - 2));
  CHECK(pad(1, 2, constant(0.0f), xs).type() == array_of(Type::float_(), N() + 3));
  CHECK(ir::print(at(xs, 2)) == "xs[2]");
  CHECK(ir::print(at(2, xs)) == "xs[2]");
  CHECK(ir::print(at(2)(xs)) == "xs[2]");
  CHECK(get(1, at(0, zip(xs, is))).type() == Type::int_());
  CHECK(ir::print(map(get(0), zip(xs, is))) == "map(get(0), zip(xs, is))");
  Expr grid = ir::param(array_of(Type::float_(), "N", "M"), "grid");
  CHECK(transpose(grid).type() == array_of(Type::float_(), "M", "N"));
  CHECK(ir::print(map(transpose(), slide(3, 1, grid))) == "map(transpose, slide(3, 1, grid))");
  CHECK(id(xs).type() == xs.type());
  CHECK(ir::print(id()(xs)) == "id(xs)");
  CHECK(ir::print(zip()(xs, xs)) == "zip(xs, xs)");

  Expr nested = mapGlb(1, mapGlb(0, [](Expr v) { return mult(v, lit(2.0f)); }), grid);
  CHECK(ir::print(nested) == "mapGlb1(mapGlb0(x => mult(x, 2.0f)), grid)");
  CHECK(ir::print(mapWrg(0, mapLcl(0, id()), split(4, xs))) ==
        "mapWrg0(mapLcl0(id), split(4, xs))");
  CHECK(ir::print(mapSeq(mapSeq(id()), split(4, xs))) == "mapSeq(mapSeq(id), split(4, xs))");
  CHECK_THROWS_AS(mapGlb(3, id()), UserError);

  Expr twice = iterate(2, map([](Expr v) { return add(v, v); }), xs);
  CHECK(ir::print(twice) == "iterate(2, map(x => add(x, x)), xs)");
  Expr local = toLocal(mapLcl(0, id()))(xs);
  CHECK(ir::print(local) == "toLocal(mapLcl0(id), xs)");
  CHECK(ir::print(toGlobal(map(id()))(xs)) == "toGlobal(map(id), xs)");
  CHECK(ir::print(toPrivate(id())(lit(1.0f))) == "toPrivate(id, 1.0f)");

  Expr indices = array(N(), Fn({"i", "n"}, [](Expr i, Expr n) { return add(n, i); }));
  CHECK(indices.type() == array_of(Type::int_(), "N"));
  CHECK(ir::print(indices) == "array(N, (i, n) => add(n, i))");
}

TEST_CASE("dsl: errors are the IR's") {
  Expr s = lit(1.0f);
  CHECK_THROWS_AS(split(4, s), UserError);
  CHECK_THROWS_AS(map([](Expr v) { return v; }, s), UserError);
  Expr xs = ir::param(array_of(Type::float_(), "N"), "xs");
  Fn two = [](Expr a, Expr b) { return add(a, b); };
  CHECK_THROWS_AS(map(two, xs), UserError); // two parameters, one float argument
  CHECK_THROWS_AS(program("p", {{"a", Type::float_()}}, [](Expr a, Expr b) { return add(a, b); }),
                  UserError);
  CHECK_THROWS_AS(userfun("bad", {{"a", ScalarKind::Float}}, ScalarKind::Float, "return b;"),
                  UserError);
}
