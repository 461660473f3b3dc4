// The driver: sites (order, paths, contexts, function sites), replace_at, apply_at and the
// fixpoint.
#include "helpers.hpp"

namespace liftx::rewrite::test {

TEST_CASE("sites: pre-order, paths, contexts and function sites") {
  ir::Module m = parse_program("def f(x: [[float]N]M) = map(map(neg), transpose(x))");
  std::vector<Site> all = sites(m.main());
  INFO(describe_sites(m.main()));
  REQUIRE(all.size() == 4);

  CHECK(ir::print(all[0].expr) == "map(map(neg), transpose(x))");
  CHECK(all[0].path.empty());
  CHECK_FALSE(all[0].is_function);
  CHECK(all[0].context.enclosing.empty());

  CHECK(all[1].is_function);
  CHECK(all[1].path == Path{0, 0});
  CHECK(all[1].context.enclosing == std::vector<std::string>{"map"});
  REQUIRE(all[1].params.size() == 1);
  CHECK(all[1].params[0].type().to_string() == "[float]M");
  CHECK(all[1].expr.as<ir::Call>()->args.at(0).same_as(all[1].params[0]));

  CHECK(all[2].is_function);
  CHECK(all[2].path == Path{0, 0, 0});
  CHECK(all[2].context.enclosing == std::vector<std::string>{"map", "map"});
  CHECK(all[2].expr.type() == ir::Type::float_());

  CHECK(ir::print(all[3].expr) == "transpose(x)");
  CHECK(all[3].path == Path{1});
}

TEST_CASE("sites: lambda bodies, reduce functions and initial values") {
  ir::Module m = parse_program(
      "def f(x: [[float]N]M) = map(r => reduce(add, 0.0f, map(sq, r)), pad(1, 1, clamp, x))");
  std::vector<Site> all = sites(m.main());
  INFO(describe_sites(m.main()));
  // root; reduce(...) in the lambda body; add (function site of reduce); map(sq, r); sq
  // (function site); pad(...).
  REQUIRE(all.size() == 6);
  CHECK(ir::print(all[1].expr) == "reduce(add, 0.0f, map(sq, r))");
  CHECK(all[1].path == Path{0, 0, 0});
  CHECK(all[1].context.enclosing == std::vector<std::string>{"map"});
  CHECK(all[2].is_function);
  CHECK(all[2].params.size() == 2);
  CHECK(all[2].context.enclosing == std::vector<std::string>{"map", "reduce"});
  CHECK(ir::print(all[3].expr) == "map(sq, r)");
  CHECK(all[4].is_function);
  CHECK(all[5].path == Path{1});
  // The parallel-context queries.
  RuleContext c{{"mapGlb1", "mapWrg0", "mapSeq"}};
  CHECK(c.inside("mapSeq"));
  CHECK_FALSE(c.inside("mapGlb0"));
  CHECK(c.inside_parallel("mapGlb"));
  CHECK(c.inside_parallel("mapGlb", 1));
  CHECK_FALSE(c.inside_parallel("mapGlb", 0));
  CHECK_FALSE(c.inside_parallel("mapLcl"));
}

TEST_CASE("contexts: queries by parallel level and dimension (the primitive registry)") {
  using Level = ir::ParallelLevel;
  RuleContext c{{"mapGlb1", "mapWrg0", "reduceSeq"}};
  CHECK(c.inside(Level::Global));
  CHECK(c.inside(Level::Global, 1));
  CHECK_FALSE(c.inside(Level::Global, 0));
  CHECK(c.inside(Level::Workgroup, 0));
  CHECK_FALSE(c.inside(Level::Local));
  CHECK(c.inside(Level::Seq)); // reduceSeq
  CHECK(c.innermost() == ir::find_primitive("reduceSeq"));
  CHECK(c.inside_parallel("mapWrg", 0));
  CHECK_FALSE(c.inside_parallel("mapSeq"));
  CHECK(RuleContext{}.innermost() == nullptr);
  // Sites record the loops around them, which the queries then see.
  ir::Module m = parse_program("def f(x: [[[float]O]N]M) = mapWrg1(mapLcl0(mapSeq(neg)), x)");
  std::vector<Site> all = sites(m.main());
  REQUIRE_FALSE(all.empty());
  const RuleContext& inner = all.back().context;
  CHECK(inner.enclosing == std::vector<std::string>{"mapWrg1", "mapLcl0", "mapSeq"});
  CHECK(inner.inside(Level::Workgroup, 1));
  CHECK(inner.inside(Level::Local, 0));
  CHECK(inner.innermost()->level == Level::Seq);
}

TEST_CASE("replace_at: rebuilds and re-typechecks") {
  ir::Module m = parse_program("def f(x: [[float]N]M) = map(map(neg), transpose(x))");
  const ir::Program& p = m.main();
  // A function replaced by another of the same type.
  ir::Program q = replace_at(
      p, Path{0, 0, 0}, parse_program("def g(y: float) = sq(y)").main().body.as<ir::Call>()->fun);
  CHECK(ir::alpha_equal(
      q, parse_program("def f(x: [[float]N]M) = map(map(sq), transpose(x))").main()));
  // The argument replaced by one of another type: the program's type changes.
  CHECK_THROWS_AS(replace_at(p, Path{1}, p.params[0]), UserError);
  // A function that does not accept the elements.
  CHECK_THROWS_AS(replace_at(p, Path{0, 0, 0}, ir::transpose()), UserError);
  // A path into a non-call is a broken invariant.
  CHECK_THROWS_AS(replace_at(p, Path{1, 1, 0}, p.params[0]), InternalError);
}

TEST_CASE("apply_at: refusals, and rewrites that do not type-check in context") {
  ir::Module m = parse_program("def f(x: [float]N) = map(neg, x)");
  auto refused = apply_at(m.main(), reduce_to_seq(), sites(m.main()).at(0));
  REQUIRE(std::holds_alternative<NoMatch>(refused));
  CHECK(std::get<NoMatch>(refused).why == "not a call of reduce");

  // A rule whose result has another type than its site.
  Rule to_pair{"bad", "x => zip(x, x)", {"test"}, [](const ir::Expr& site, const RuleContext&) {
                 return RuleResult(ir::call(ir::zip(), {site, site}));
               }};
  auto bad = apply_at(m.main(), to_pair, sites(m.main()).at(0));
  REQUIRE(std::holds_alternative<NoMatch>(bad));
  CHECK(std::get<NoMatch>(bad).why.find("does not type-check in context") != std::string::npos);
}

TEST_CASE("apply_everywhere and apply_until_fixpoint") {
  ir::Module m = parse_program("def f(x: [[float]N]M) = map(map(neg), map(r => map(sq, r), x))");
  // Four maps compute: the two outer ones and their inner maps (function sites; `r => map(sq, r)`
  // is eta-reduced to map(sq)).
  std::vector<ir::Program> once = apply_everywhere(m.main(), map_to_seq());
  CHECK(once.size() == 4);
  ir::Program all_seq = apply_until_fixpoint(m.main(), map_to_seq());
  CHECK(ir::alpha_equal(
      all_seq,
      parse_program("def f(x: [[float]N]M) = mapSeq(mapSeq(neg), mapSeq(mapSeq(sq), x))").main()));
  check_same_results(m.main(), all_seq, {{"M", 3}, {"N", 5}});
  // A fixpoint of a rule that applies nowhere is the program itself.
  CHECK(ir::alpha_equal(apply_until_fixpoint(all_seq, map_to_seq()), all_seq));
  // A rule that always applies does not terminate: InternalError after max_steps.
  Rule wrap{"wrap-id", "x => id(x)", {"test"}, [](const ir::Expr& site, const RuleContext&) {
              return RuleResult(ir::call(ir::id(), {site}));
            }};
  CHECK_THROWS_AS(apply_until_fixpoint(m.main(), wrap, 5), InternalError);
}

TEST_CASE("function sites: the rewritten function replaces the original (eta-reduced)") {
  ir::Module m = parse_program("def f(x: [[float]N]M) = mapGlb1(map(neg), x)");
  Site s = find_site(m.main(), "map(neg, p)");
  auto r = apply_at(m.main(), map_to_glb(0), s);
  REQUIRE(std::holds_alternative<ir::Program>(r));
  const ir::Program& p = std::get<ir::Program>(r);
  // No lambda left around the new function.
  const auto* outer = p.body.as<ir::Call>()->fun.as<ir::MapGlb>();
  REQUIRE(outer);
  CHECK(outer->f.as<ir::MapGlb>() != nullptr);
}

} // namespace liftx::rewrite::test
