// Golden strings of the .lift printer (docs: /work/notes/grammar.md conventions).
#include "helpers.hpp"

#include "ir/derived.hpp"

using namespace liftx;
using namespace liftx::ir;
using namespace liftx::ir::test;

TEST_CASE("print: applied primitives") {
  Expr x = param(arr(f32(), 16), "x");
  CHECK(print(x) == "x");
  CHECK(print(call(split(4), {x})) == "split(4, x)");
  CHECK(print(call(join(), {call(split(4), {x})})) == "join(split(4, x))");
  CHECK(print(call(map(neg()), {x})) == "map(neg, x)");
  CHECK(print(call(map_seq(neg()), {x})) == "mapSeq(neg, x)");
  CHECK(print(call(map_glb(1, neg()), {x})) == "mapGlb1(neg, x)");
  CHECK(print(call(map_wrg(0, map_lcl(2, neg())), {call(split(4), {x})})) ==
        "mapWrg0(mapLcl2(neg), split(4, x))");
  CHECK(print(call(reduce(add_f(), literal(0.0f)), {x})) == "reduce(add, 0.0f, x)");
  CHECK(print(call(reduce_seq(add_f(), literal(0.5f)), {x})) == "reduceSeq(add, 0.5f, x)");
  CHECK(print(call(pad(1, 1, Boundary{Boundary::Kind::Constant, 0.0f}), {x})) ==
        "pad(1, 1, constant(0.0f), x)");
  CHECK(print(call(pad(2, 0, Boundary{Boundary::Kind::Mirror}), {x})) == "pad(2, 0, mirror, x)");
  CHECK(print(call(pad(0, 3, Boundary{Boundary::Kind::Wrap}), {x})) == "pad(0, 3, wrap, x)");
  CHECK(print(call(slide(3, 1), {x})) == "slide(3, 1, x)");
  CHECK(print(x[1]) == "x[1]");
  CHECK(print(call(iterate(3, map(neg())), {x})) == "iterate(3, map(neg), x)");
  CHECK(print(call(to_local(map(neg())), {x})) == "toLocal(map(neg), x)");
  CHECK(print(call(id(), {x})) == "id(x)");
  Expr y = param(arr(i32(), 16), "y");
  Expr zipped = call(zip(), {x, y});
  CHECK(print(zipped) == "zip(x, y)");
  CHECK(print(call(map(get(1)), {zipped})) == "map(get(1), zip(x, y))");
  Expr p = param(Type::tuple({f32(), i32()}), "p");
  CHECK(print(call(get(0), {p})) == "get(0, p)");
  Expr g = param(arr(arr(f32(), N()), M()), "g");
  CHECK(print(call(transpose(), {g})) == "transpose(g)");
  CHECK(print(g[0][1]) == "g[0][1]");
}

TEST_CASE("print: unapplied primitives") {
  CHECK(print(split(4)) == "split(4)");
  CHECK(print(reduce(add_f(), literal(0.0f))) == "reduce(add, 0.0f)");
  CHECK(print(join()) == "join");
  CHECK(print(transpose()) == "transpose");
  CHECK(print(zip()) == "zip");
  CHECK(print(id()) == "id");
  CHECK(print(map(map(neg()))) == "map(map(neg))");
  CHECK(print(slide(3, 1)) == "slide(3, 1)");
  // mapSeqSlide's unroll is printed only where the loop is unrolled.
  CHECK(print(map_seq_slide(neg(), 3, 1)) == "mapSeqSlide(neg, 3, 1)");
  CHECK(print(map_seq_slide(neg(), 3, 1, 6)) == "mapSeqSlide(neg, 3, 1, 6)");
  CHECK(print(pad(1, 1, Boundary{})) == "pad(1, 1, clamp)");
  CHECK(print(at(2)) == "at(2)");
  CHECK(print(get(1)) == "get(1)");
  CHECK(print(to_global(neg())) == "toGlobal(neg)");
  CHECK(print(to_private(neg())) == "toPrivate(neg)");
  CHECK(print(split(N())) == "split(N)");
  CHECK(print(split(arith::exact_div(N(), 4))) ==
        "split(" + arith::exact_div(N(), 4).to_string() + ")");
  // Built-in variants print as the overloaded name.
  CHECK(print(add_i()) == "add");
  CHECK(print(user_fun(UserFunDef::builtin("mult_double"))) == "mult");
}

TEST_CASE("print: lambdas and parameter names") {
  Expr a = param(f32(), "a");
  Expr b = param(f32(), "b");
  CHECK(print(lambda({a, b}, call(sub(), {b, a}))) == "(a, b) => sub(b, a)");
  Expr x = param(f32(), "x");
  Expr x2 = param(f32(), "x");
  CHECK(print(lambda({x}, call(sub(), {x, x}))) == "x => sub(x, x)");
  // Equal hints get suffixes; keywords, primitives and user functions are avoided.
  CHECK(print(lambda({x, x2}, call(sub(), {x2, x}))) == "(x, x_1) => sub(x_1, x)");
  Expr m = param(f32(), "map");
  Expr s = param(f32(), "sub");
  CHECK(print(lambda({m, s}, call(sub(), {s, m}))) == "(map_1, sub_1) => sub(sub_1, map_1)");
  Expr odd = param(f32(), "2 odd");
  CHECK(print(lambda({odd}, call(sub(), {odd, odd}))) == "x2_odd => sub(x2_odd, x2_odd)");
  // A call of a lambda.
  Expr v = param(f32(), "v");
  CHECK(print(call(lambda({v}, call(sub(), {v, v})), {literal(1.0f)})) == "(v => sub(v, v))(1.0f)");
  // array(n, (i, n) => ...)
  Expr i = param(i32(), "i");
  Expr n = param(i32(), "n");
  CHECK(print(call(generate(8, lambda({i, n}, call(add_i(), {i, n}))), {})) == "array(8, add)");
  CHECK(print(call(generate(8, lambda({i, n}, call(add_i(), {n, i}))), {})) ==
        "array(8, (i, n) => add(n, i))");
}

TEST_CASE("print: literals") {
  CHECK(print(literal(0.2f)) == "0.2f");
  CHECK(print(literal(1.0f)) == "1.0f");
  CHECK(print(literal(-1.5f)) == "-1.5f");
  CHECK(print(literal(0.1)) == "0.1");
  CHECK(print(literal(2.0)) == "2.0");
  CHECK(print(literal(1e20f)) == "1.0e+20f");
  CHECK(print(literal(3)) == "3");
  CHECK(print(literal(true)) == "true");
  CHECK(print(literal(false)) == "false");
  // Shortest text that reads back: 0.1f is not 0.1 as a double.
  CHECK(print(literal(0.1f)) == "0.1f");
  CHECK(print(literal(1.0f / 3.0f)) == "0.33333334f");
  CHECK_THROWS_AS(print(literal(1.0f / 0.0f)), UserError);
}

TEST_CASE("print: programs and modules") {
  Type grid_t = arr(arr(f32(), N()), M());
  Expr grid = param(grid_t, "grid");
  Fun jacobi = user_fun(jacobi5_def());
  Expr nbh = param(arr(arr(f32(), 3), 3), "nbh");
  Fun stencil =
      lambda({nbh}, call(jacobi, {nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]}));
  Expr body = call(map_2d(stencil), {slide_2d(3, 1, pad_2d(1, 1, Boundary{}, grid))});
  Program p{"jacobi2d5pt", {grid}, body, {}};
  CHECK(p.result_type() == grid_t);
  const std::string def =
      "def jacobi2d5pt(grid: [[float]N]M) = map(map(nbh => jacobi5(nbh[1][1], nbh[0][1], "
      "nbh[2][1], nbh[1][2], nbh[1][0])), map(transpose, slide(3, 1, map(slide(3, 1), "
      "map(pad(1, 1, clamp), pad(1, 1, clamp, grid))))))";
  CHECK(print(p) == def);
  Module m{{jacobi5_def()}, {p}};
  CHECK(print(m) == "userfun jacobi5(c: float, n: float, s: float, e: float, w: float): float { "
                    "return 0.2f * (c + n + s + e + w); }\n\n" +
                        def + "\n");
  // A parameter named like a size variable is renamed.
  Expr n = param(arr(f32(), N()), "N");
  CHECK(print(Program{"f", {n}, call(map(neg()), {n}), {}}) ==
        "def f(N_1: [float]N) = map(neg, N_1)");
}
