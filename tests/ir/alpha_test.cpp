// Eta reduction, traversal, structural hash and alpha-equivalence.
#include "helpers.hpp"

#include "ir/derived.hpp"

#include <unordered_set>

using namespace liftx;
using namespace liftx::ir;
using namespace liftx::ir::test;

namespace {
/// `x => sub(neg(x), x)`, built fresh each time (new parameter ids).
Fun twice_lambda() {
  Expr x = param(f32(), "x");
  return lambda({x}, call(sub(), {call(neg(), {x}), x}));
}
} // namespace

TEST_CASE("eta reduction") {
  Fun n = neg();
  Expr x = param(f32(), "x");
  CHECK(lambda({x}, call(n, {x})).same_as(n));
  Expr a = param(f32(), "a");
  Expr b = param(f32(), "b");
  Fun s = sub();
  CHECK(lambda({a, b}, call(s, {a, b})).same_as(s));
  // Arguments in another order, or a repeated argument: no reduction.
  CHECK(lambda({a, b}, call(s, {b, a})).as<Lambda>() != nullptr);
  CHECK(lambda({a}, call(s, {a, a})).as<Lambda>() != nullptr);
  // The parameter occurs in the function: no reduction.
  Expr xs = param(arr(f32(), N()), "xs");
  Expr y = param(f32(), "y");
  Fun uses_xs = lambda({y}, call(s, {y, y}));
  Fun captures = map(lambda({y}, call(s, {y, call(at(0), {xs})})));
  Fun outer = lambda({xs}, call(captures, {xs}));
  CHECK(outer.as<Lambda>() != nullptr);
  // x => map(f)(x) is map(f).
  Fun mapped = map(uses_xs);
  CHECK(lambda({xs}, call(mapped, {xs})).same_as(mapped));
  // The identity lambda stays.
  CHECK(lambda({x}, x).as<Lambda>() != nullptr);
}

TEST_CASE("for_each_child and free_params") {
  Expr acc = param(f32(), "acc");
  Expr v = param(f32(), "v");
  Expr free = param(f32(), "free");
  Fun body = lambda({acc, v}, call(sub(), {call(sub(), {acc, v}), free}));
  Expr init = literal(0.0f);
  Fun r = reduce_seq(body, init);
  std::vector<std::string> order;
  for_each_child(
      r, [&](const Fun& f) { order.push_back("fun:" + fun_name(f)); },
      [&](const Expr& e) { order.push_back(e.as<Literal>() ? "init" : "expr"); });
  CHECK(order == std::vector<std::string>{"fun:lambda", "init"});

  std::vector<std::string> lambda_children;
  for_each_child(
      body, [&](const Fun&) { lambda_children.push_back("fun"); },
      [&](const Expr& e) {
        lambda_children.push_back(e.as<Param>() ? e.as<Param>()->name : "call");
      });
  CHECK(lambda_children == std::vector<std::string>{"acc", "v", "call"});

  auto free_of_r = free_params(r);
  REQUIRE(free_of_r.size() == 1);
  CHECK(free_of_r[0].same_as(free));

  Expr xs = param(arr(f32(), N()), "xs");
  Expr applied = call(r, {xs});
  auto free_of_applied = free_params(applied);
  REQUIRE(free_of_applied.size() == 2);
  CHECK(free_of_applied[0].same_as(free)); // the function comes before the arguments
  CHECK(free_of_applied[1].same_as(xs));
  CHECK(free_params(literal(1)).empty());
  CHECK(free_params(xs).size() == 1);
}

TEST_CASE("alpha_equal and hash: equal rows") {
  Fun a = twice_lambda();
  Fun b = twice_lambda();
  CHECK_FALSE(a.same_as(b));
  CHECK(a.hash() == b.hash());
  CHECK(alpha_equal(a, b));
  CHECK(alpha_equal(map(a), map(b)));
  Expr x = param(arr(f32(), N()), "x");
  CHECK(alpha_equal(call(map(a), {x}), call(map(b), {x})));
  // Equal user functions built separately.
  CHECK(alpha_equal(user_fun(jacobi5_def()), user_fun(jacobi5_def())));
  CHECK(alpha_equal(literal(0.5f), literal(0.5f)));
  CHECK(alpha_equal(pad(1, 1, Boundary{Boundary::Kind::Constant, 1.0f}),
                    pad(1, 1, Boundary{Boundary::Kind::Constant, 1.0f})));
  CHECK(alpha_equal(split(arith::exact_div(N(), 2)), split(arith::exact_div(N(), 2))));
  // Dedup set of the exploration.
  std::unordered_set<Fun, StructuralHash, AlphaEqual> set{a, b, twice_lambda(), neg()};
  CHECK(set.size() == 2);
}

TEST_CASE("alpha_equal and hash: different rows") {
  Expr x = param(f32(), "x");
  Expr y = param(f32(), "y");
  CHECK_FALSE(alpha_equal(x, y)); // free parameters compare by identity
  CHECK(x.hash() == y.hash());    // ... but hash by type
  CHECK(x.hash() != param(i32(), "x").hash());
  CHECK_FALSE(alpha_equal(literal(0.0f), literal(1.0f)));
  CHECK(literal(0.0f).hash() != literal(1.0f).hash());
  CHECK_FALSE(alpha_equal(literal(0.0f), literal(0.0)));
  CHECK_FALSE(alpha_equal(literal(1), literal(1.0f)));
  CHECK(literal(1).hash() != literal(1.0f).hash());
  CHECK_FALSE(alpha_equal(split(4), split(8)));
  CHECK(split(4).hash() != split(8).hash());
  CHECK_FALSE(alpha_equal(pad(1, 1, Boundary{}), pad(1, 1, Boundary{Boundary::Kind::Mirror})));
  CHECK_FALSE(alpha_equal(pad(1, 1, Boundary{Boundary::Kind::Constant, 1.0f}),
                          pad(1, 1, Boundary{Boundary::Kind::Constant, 2.0f})));
  CHECK_FALSE(alpha_equal(map(neg()), map_seq(neg())));
  CHECK(map(neg()).hash() != map_seq(neg()).hash());
  CHECK_FALSE(alpha_equal(map_glb(0, neg()), map_glb(1, neg())));
  CHECK_FALSE(alpha_equal(neg(), sub()));
  CHECK_FALSE(alpha_equal(slide(3, 1), slide(3, 2)));
  CHECK_FALSE(alpha_equal(get(0), get(1)));
  CHECK_FALSE(alpha_equal(reduce(add_f(), literal(0.0f)), reduce(add_f(), literal(1.0f))));
  // Same body shape, swapped parameters.
  Expr a = param(f32(), "a");
  Expr b = param(f32(), "b");
  Expr c = param(f32(), "c");
  Expr d = param(f32(), "d");
  CHECK_FALSE(
      alpha_equal(lambda({a, b}, call(sub(), {b, a})), lambda({c, d}, call(sub(), {c, d}))));
  CHECK(alpha_equal(lambda({a, b}, call(sub(), {b, a})), lambda({c, d}, call(sub(), {d, c}))));
  // Different parameter types.
  Expr i = param(i32(), "i");
  CHECK_FALSE(alpha_equal(lambda({a}, a), lambda({i}, i)));
}

TEST_CASE("alpha_equal: binders and shared subtrees") {
  Expr x = param(f32(), "x");
  Expr y = param(f32(), "y");
  // The same body node under different binders: `x => sub(x, x)` vs `y => sub(x, x)`.
  Expr body = call(sub(), {x, x});
  CHECK_FALSE(alpha_equal(lambda({x}, body), lambda({y}, body)));
  CHECK(alpha_equal(lambda({x}, body), lambda({x}, body)));
  // Nested binders: x => (y => x) vs x => (y => y), written as a mapped generate-free shape.
  Expr xs = param(arr(f32(), N()), "xs");
  Fun inner_x = lambda({y}, call(sub(), {x, y}));
  Fun inner_y = lambda({y}, call(sub(), {y, y}));
  Fun outer_x = lambda({x}, call(at(0), {call(map(inner_x), {xs})}));
  Fun outer_y = lambda({x}, call(at(0), {call(map(inner_y), {xs})}));
  CHECK_FALSE(alpha_equal(outer_x, outer_y));
  Expr x2 = param(f32(), "x2");
  Expr y2 = param(f32(), "y2");
  Fun outer_x2 = lambda({x2}, call(at(0), {call(map(lambda({y2}, call(sub(), {x2, y2}))), {xs})}));
  CHECK(alpha_equal(outer_x, outer_x2));
  CHECK(outer_x.hash() == outer_x2.hash());
  // A parameter free on one side must not match one bound on the other.
  CHECK_FALSE(alpha_equal(lambda({y}, call(sub(), {x, y})), lambda({x}, call(sub(), {x, x}))));
}

TEST_CASE("alpha_equal: programs") {
  auto build = [](Type t) {
    Expr g = param(t, "grid");
    return Program{"p", {g}, slide_2d(3, 1, pad_2d(1, 1, Boundary{}, g)), {}};
  };
  Program a = build(arr(arr(f32(), N()), M()));
  Program b = build(arr(arr(f32(), N()), M()));
  b.name = "other";
  CHECK(alpha_equal(a, b));
  CHECK_FALSE(alpha_equal(a, build(arr(arr(f32(), M()), N()))));
  CHECK(a.size_vars() == std::vector<arith::Expr>{M(), N()});
  Module m{{}, {a, b}};
  CHECK(&m.main() == &m.programs.back());
  CHECK(m.find("p") == &m.programs[0]);
  CHECK(m.find("nope") == nullptr);
  CHECK_THROWS_AS(Module{}.main(), UserError);
}

TEST_CASE("alpha_equal: user functions differing only in layout") {
  auto def = [](const std::string& body) {
    return user_fun(UserFunDef::parse("f", {{"a", ScalarKind::Float}}, ScalarKind::Float, body));
  };
  CHECK(alpha_equal(def("return a + 1.0f;"), def("\n  return a +  1.0f;\n")));
  CHECK_FALSE(alpha_equal(def("return a + 1.0f;"), def("return a + 2.0f;")));
  CHECK_FALSE(alpha_equal(def("return a + 1.0f;"), def("return a+1.0f;")));
}
