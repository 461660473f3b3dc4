// The example programs and every primitive parse and type-check to the expected types.
#include "examples.hpp"
#include "helpers.hpp"

#include "ir/derived.hpp"

namespace liftx::parse::test {
namespace {

using ir::Type;

TEST_CASE("paper listings and examples have the documented result types") {
  const Type floats_n = float_array(size("N"));
  CHECK(result_type_of(kStencil1d) == floats_n);
  CHECK(result_type_of(kTiled1d) == floats_n);
  CHECK(result_type_of(kChunks) == floats_n);
  CHECK(result_type_of(kJacobi2d5pt) == Type::array(floats_n, size("M")));
}

TEST_CASE("a module keeps user functions and definitions in source order") {
  ir::Module m = parse_module(kJacobi2d5pt);
  REQUIRE(m.userfuns.size() == 1);
  CHECK(m.userfuns[0]->name() == "jacobi5");
  CHECK(m.userfuns[0]->params().size() == 5);
  CHECK(m.userfuns[0]->body_text() == "return 0.2f * (c + n + s + e + w);");
  REQUIRE(m.programs.size() == 1);
  const ir::Program& p = m.programs[0];
  CHECK(p.name == "jacobi2d5pt");
  REQUIRE(p.params.size() == 1);
  CHECK(p.params[0].type() == Type::array(float_array(size("N")), size("M")));
  CHECK(p.loc.line == 4);
  CHECK(p.loc.col == 1);
  CHECK(m.find("jacobi2d5pt") == &m.programs[0]);
}

TEST_CASE("stencil1d elaborates to the expected IR") {
  // join(map(reduce(add, 0.0f), slide(3, 1, pad(1, 1, constant(0.0f), arg))))
  ir::Module m = parse_module(kStencil1d);
  const ir::Program& p = m.main();
  const ir::Expr& arg = p.params[0];
  ir::Boundary zero{ir::Boundary::Kind::Constant, 0.0f};
  ir::Expr padded = ir::call(ir::pad(1, 1, zero), {arg});
  ir::Expr windows = ir::call(ir::slide(3, 1), {padded});
  ir::Fun sum = ir::reduce(ir::user_fun(ir::UserFunDef::builtin("add")), ir::literal(0.0f));
  ir::Expr expected = ir::call(ir::join(), {ir::call(ir::map(sum), {windows})});
  CHECK(ir::alpha_equal(p.body, expected));
  // The map's function is the primitive itself, not a lambda around it.
  const auto* join_call = p.body.as<ir::Call>();
  REQUIRE(join_call);
  const auto* map_call = join_call->args[0].as<ir::Call>();
  REQUIRE(map_call);
  const auto* map = map_call->fun.as<ir::Map>();
  REQUIRE(map);
  CHECK(map->f.as<ir::Reduce>() != nullptr);
  CHECK(map_call->loc.line == 3);
  CHECK(map_call->loc.col == 8);
}

/// The result type of `body` in `def f(params) = body`.
Type typed(std::string_view params, std::string_view body, std::string_view prelude = "") {
  std::string source = fmt::format("{}\ndef f({}) = {}\n", prelude, params, body);
  INFO(source);
  return result_type_of(source);
}

TEST_CASE("every primitive has its typing rule") {
  const arith::Expr n = size("N"), m = size("M"), k = size("K");
  const Type f = Type::float_(), i = Type::int_(), d = Type::double_();
  const Type fn = float_array(n);
  const Type fnm = Type::array(fn, m);
  const char* x = "x: [float]N";
  const char* g = "g: [[float]N]M";

  CHECK(typed(x, "map(id, x)") == fn);
  CHECK(typed(x, "mapSeq(v => v, x)") == fn);
  CHECK(typed(g, "mapGlb1(mapGlb0(id), g)") == fnm);
  CHECK(typed(g, "mapWrg2(mapLcl1(toPrivate(id)), g)") == fnm);
  CHECK(typed(x, "reduce(add, 0.0f, x)") == float_array(1));
  CHECK(typed("x: [int]N", "reduceSeq(add, 0, x)") == Type::array(i, 1));
  CHECK(typed("x: [double]N", "reduce(mult, 1.0, x)") == Type::array(d, 1));
  CHECK(typed(x, "iterate(3, mapSeq(id), x)") == fn);
  CHECK(typed("a: [float]N, b: [int]N", "zip(a, b)") == Type::array(Type::tuple({f, i}), n));
  CHECK(typed(x, "split(4, x)") == Type::array(float_array(4), arith::exact_div(n, 4)));
  CHECK(typed(x, "split(N /^ 2, x)") == Type::array(float_array(arith::exact_div(n, 2)), 2));
  CHECK(typed(g, "join(g)") == float_array(n * m));
  CHECK(typed(x, "slide(3, 1, x)") == Type::array(float_array(3), n - 2));
  CHECK(typed(x, "pad(1, 2, mirror, x)") == float_array(n + 3));
  CHECK(typed(x, "pad(2, 2, wrap, x)") == float_array(n + 4));
  CHECK(typed(x, "x[2]") == f);
  CHECK(typed(x, "at(N - 1, x)") == f);
  CHECK(typed("t: (float, int)", "get(1, t)") == i);
  CHECK(typed(g, "transpose(g)") == Type::array(float_array(m), n));
  CHECK(typed("", "array(5, (i, n) => i)") == Type::array(i, 5));
  CHECK(typed(x, "toLocal(mapLcl0(id, x))") == fn);
  CHECK(typed(x, "toLocal(mapLcl0(id))(x)") == fn);
  CHECK(typed(x, "toGlobal(toLocal(mapLcl0(id, x)))") == fn);
  CHECK(typed(x, "(v => map(id, v))(x)") == fn);
  CHECK(typed(x, "map(id)(x)") == fn);
  CHECK(typed("a: [float]N, b: [float]N", "map(add, zip(a, b))") == fn);
  CHECK(typed("a: [float]N, b: [float]N", "map((p, q) => mult(p, q), zip(a, b))") == fn);
  CHECK(typed("a: [float]N, b: [float]N", "map(p => get(0, p), zip(a, b))") == fn);
  CHECK(typed("x: [float](2 * N + 1)", "x") == float_array(2 * n + 1));
  CHECK(typed("x: [float]8", "split(max(2, 4), x)") == Type::array(float_array(4), 2));
  CHECK(typed("x: [(float, bool)]K", "x") == Type::array(Type::tuple({f, Type::bool_()}), k));
  CHECK(typed(x, "reduce(add, -1.5f, x)") == float_array(1));
}

TEST_CASE("derived forms expand to their compositions") {
  const arith::Expr n = size("N"), m = size("M"), o = size("O");
  const Type fn = float_array(n);
  const Type fnm = Type::array(fn, m);
  const Type window2 = Type::array(float_array(3), 3);
  CHECK(typed("g: [[float]N]M", "slide2D(3, 1, g)") ==
        Type::array(Type::array(window2, n - 2), m - 2));
  CHECK(typed("g: [[float]N]M", "pad2D(1, 1, clamp, g)") == Type::array(float_array(n + 2), m + 2));
  CHECK(typed("g: [[float]N]M", "map2D(id, g)") == fnm);
  CHECK(typed("g: [[[float]O]N]M", "map3D(id, pad3D(1, 1, clamp, g))") ==
        Type::array(Type::array(float_array(o + 2), n + 2), m + 2));
  CHECK(typed("g: [[[float]O]N]M", "slide3D(3, 1, g)") ==
        Type::array(Type::array(Type::array(Type::array(window2, 3), o - 2), n - 2), m - 2));
  CHECK(typed("a: [[float]N]M, b: [[int]N]M", "zip2D(a, b)") ==
        Type::array(Type::array(Type::tuple({Type::float_(), Type::int_()}), n), m));
  CHECK(typed("a: [[[float]O]N]M, b: [[[float]O]N]M", "zip3D(a, b)") ==
        Type::array(Type::array(Type::array(Type::tuple({Type::float_(), Type::float_()}), o), n),
                    m));
  // A composite form where a function is expected is eta-expanded.
  CHECK(typed("g: [[[float]N]M]K", "map(slide2D(3, 1), g)") ==
        Type::array(Type::array(Type::array(window2, n - 2), m - 2), size("K")));

  // map2D(f, x) builds the same IR as ir::map_2d, slide2D as ir::slide_2d.
  ir::Module mod = parse_module("def f(g: [[float]N]M) = map2D(id, slide2D(3, 1, g))");
  const ir::Program& p = mod.main();
  ir::Expr expected = ir::call(ir::map_2d(ir::id()), {ir::slide_2d(3, 1, p.params[0])});
  CHECK(ir::alpha_equal(p.body, expected));
}

TEST_CASE("literals, comments and layout") {
  ir::Module m = parse_module(R"(
    /* block comment */ userfun k(a: int, b: double, c: bool): float { // a comment with a }
      /* { */ if (c) return 1.5f; return 2.0f; }
    // line comment
    def f(x: [int]N) =  // trailing
      pad(1, 1, constant(-2), map(v => v, x))
  )");
  REQUIRE(m.userfuns.size() == 1);
  CHECK(m.userfuns[0]->params()[1].kind == ir::ScalarKind::Double);
  const auto* call = m.main().body.as<ir::Call>();
  REQUIRE(call);
  const auto* pad = call->fun.as<ir::Pad>();
  REQUIRE(pad);
  CHECK(pad->boundary.kind == ir::Boundary::Kind::Constant);
  CHECK(pad->boundary.value == ir::Scalar{int32_t{-2}});

  auto literal_of = [](std::string_view text, std::string_view element = "float") {
    ir::Module lm =
        parse_module(fmt::format("def f(x: [{}]N) = pad(1, 1, constant({}), x)", element, text));
    return lm.main().body.as<ir::Call>()->fun.as<ir::Pad>()->boundary.value;
  };
  CHECK(literal_of("1.5f") == ir::Scalar{1.5f});
  CHECK(literal_of("0.1f") == ir::Scalar{0.1f});
  CHECK(literal_of("1e-05f") == ir::Scalar{1e-05f});
  CHECK(literal_of("2.5e3", "double") == ir::Scalar{2500.0});
  CHECK(literal_of("0.1", "double") == ir::Scalar{0.1});
  CHECK(literal_of("7", "int") == ir::Scalar{int32_t{7}});
  CHECK(literal_of("-2147483648", "int") == ir::Scalar{INT32_MIN});
  CHECK(literal_of("true", "bool") == ir::Scalar{true});
  CHECK(literal_of("false", "bool") == ir::Scalar{false});
}

TEST_CASE("userfuns may be used before their declaration; add resolves by type") {
  ir::Module m = parse_module(R"(
    def f(x: [int]N) = mapSeq(inc, reduce(add, 0, x))
    userfun inc(v: int): int { return v + 1; }
  )");
  CHECK(m.main().result_type() == Type::array(Type::int_(), 1));
  const auto* outer = m.main().body.as<ir::Call>();
  REQUIRE(outer);
  const auto* reduce_call = outer->args[0].as<ir::Call>();
  REQUIRE(reduce_call);
  const auto* reduce = reduce_call->fun.as<ir::Reduce>();
  REQUIRE(reduce);
  const auto* add = reduce->f.as<ir::UserFun>();
  REQUIRE(add);
  CHECK(add->def->name() == "add_int");
}

TEST_CASE("parse_file reads a file and reports unreadable ones") {
  ir::Module m = parse_file(LIFTX_SOURCE_DIR "/stencils/jacobi2d5pt.lift");
  CHECK(m.main().name == "jacobi2d5pt");
  try {
    parse_file("/nonexistent/dir/x.lift");
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(e.message().rfind("cannot read /nonexistent/dir/x.lift: ", 0) == 0);
  }
}

} // namespace
} // namespace liftx::parse::test
