// Reductions: the rules that split and fuse a reduction (split-reduce, reduce-map-fusion) and the
// work-group lowering of matrix row and column reductions (rewrite/reduction.hpp).
#include "rewrite/reduction.hpp"
#include "ir/userfun/userfun.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/rules/match.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace liftx::rewrite {

using namespace match;

std::optional<std::string> refuse_reordering(const ir::Fun& f, const ir::Expr& init) {
  const auto* uf = f.as<ir::UserFun>();
  if (!uf)
    return std::string("the operator is not a user function");
  // The built-in add and mult of each scalar type, with their identities.
  const std::pair<const char*, double> known[] = {{"add", 0.0},        {"add_int", 0.0},
                                                  {"add_double", 0.0}, {"mult", 1.0},
                                                  {"mult_int", 1.0},   {"mult_double", 1.0}};
  for (const auto& [name, identity_value] : known) {
    const double identity = identity_value; // a plain local: lambdas may not capture bindings
    const auto builtin = ir::UserFunDef::builtin(name);
    if (!builtin || !ir::same_userfun(*uf->def, *builtin))
      continue;
    const auto* literal = init.as<ir::Literal>();
    const bool is_identity =
        literal &&
        std::visit([&](auto v) { return static_cast<double>(v) == identity; }, literal->value);
    if (!is_identity)
      return fmt::format("the initial value is not the identity of {} ({})", name, identity);
    return std::nullopt;
  }
  return fmt::format("{} is not known to be associative and commutative (built-in add and mult "
                     "are)",
                     uf->def->name());
}

namespace {

/// (a, e) => f(a, g(e)): the function of a reduction of map(g, x) over x itself.
ir::Fun fuse_element(const ir::Fun& f, const ir::Expr& init, const ir::Fun& g,
                     const ir::Type& element) {
  ir::Expr a = ir::param(init.type(), "a");
  ir::Expr e = ir::param(element, "e");
  return ir::lambda({a, e}, ir::call(f, {a, ir::call(g, {e})}));
}

} // namespace

// ---- rules -----------------------------------------------------------------------------------

Rule split_reduce(int64_t k) {
  LIFTX_USER_CHECK(k >= 2, "split-reduce needs at least 2 parts, got {}", k);
  return make_rule(
      fmt::format("split-reduce({})", k),
      "reduce(f, init, x) => reduce(f, init, join(map(reduce(f, init), transpose(split(k, x)))))  "
      "(f associative and commutative, init its identity)",
      {"algorithmic", "reduction"}, [k](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto r = as_unary_call_of<ir::Reduce>(site);
        if (!r)
          return NoMatch{"not a call of reduce"};
        if (auto why = refuse_reordering(r->fun->f, r->fun->init))
          return NoMatch{*why};
        const ir::Expr& x = r->arg();
        if (auto why = refuse_indivisible(length_of(x.type()), k, "the reduced length"))
          return *why;
        const ir::Fun partial = ir::reduce(r->fun->f, r->fun->init);
        ir::Expr parts = ir::call(ir::transpose(), {ir::call(ir::split(arith::Expr(k)), {x})});
        ir::Expr partials = ir::call(ir::join(), {ir::call(ir::map(partial), {parts})});
        return ir::call(partial, {partials});
      });
}

namespace {

/// reduce(f, init, map(g, x)) => reduce((a, e) => f(a, g(e)), init, x), refusing constant
/// lengths of x when `symbolic_lengths_only`.
RuleResult fuse_reduce_map(const ir::Expr& site, bool symbolic_lengths_only) {
  auto r = as_unary_call_of<ir::Reduce>(site);
  if (!r)
    return NoMatch{"not a call of reduce"};
  auto m = as_unary_call_of<ir::Map>(r->arg());
  if (!m)
    return NoMatch{"the reduced array is not a map"};
  const ir::Expr& x = m->arg();
  if (symbolic_lengths_only && length_of(x.type()).as_constant())
    return NoMatch{"the reduced length is a constant"};
  ir::Fun fused = fuse_element(r->fun->f, r->fun->init, m->fun->f, element_of(x.type()));
  return ir::call(ir::reduce(fused, r->fun->init), {x});
}

} // namespace

Rule reduce_map_fusion() {
  return make_rule(
      "reduce-map-fusion", "reduce(f, init, map(g, x)) => reduce((a, e) => f(a, g(e)), init, x)",
      {"algorithmic", "reduction"}, [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        return fuse_reduce_map(site, false);
      });
}

Rule long_reduce_map_fusion() {
  return make_rule("long-reduce-map-fusion",
                   "reduce(f, init, map(g, x)) => reduce((a, e) => f(a, g(e)), init, x)  (the "
                   "length of x not a constant)",
                   {"algorithmic", "reduction"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     return fuse_reduce_map(site, true);
                   });
}

// ---- recognising and lowering matrix reductions ------------------------------------------------

std::variant<MatrixReduction, std::string> as_matrix_reduction(const ir::Program& program) {
  auto outer = as_unary_call_of<ir::Map>(program.body);
  if (!outer)
    return std::string("the program is not a map over a matrix");
  const auto* lambda = outer->fun->f.as<ir::Lambda>();
  if (!lambda || lambda->params.size() != 1)
    return std::string("the mapped function is not a lambda of one vector");
  auto first = as_unary_call_of<ir::At>(lambda->body);
  if (!first || !(first->fun->index == arith::Expr(0)))
    return std::string("an output is not the result of one reduction");
  auto reduction = as_unary_call_of<ir::Reduce>(first->arg());
  if (!reduction)
    return std::string("an output is not the result of one reduction");
  if (auto why = refuse_reordering(reduction->fun->f, reduction->fun->init))
    return *why;
  const ir::Type& matrix_type = outer->arg().type();
  const auto* rows = matrix_type.as<ir::ArrayType>();
  if (!rows || !rows->element.as<ir::ArrayType>())
    return std::string("the mapped array is not a matrix");

  ir::Expr data = reduction->arg();
  std::optional<ir::Fun> element;
  if (auto g = as_unary_call_of<ir::Map>(data)) {
    element = g->fun->f;
    data = g->arg();
  }
  auto transposed = as_unary_call_of<ir::Transpose>(outer->arg());
  return MatrixReduction{lambda->params[0],
                         data,
                         element,
                         reduction->fun->f,
                         reduction->fun->init,
                         transposed ? transposed->arg() : outer->arg(),
                         transposed.has_value()};
}

std::variant<ir::Program, std::string> build_matrix_reduction(const ir::Program& program,
                                                              const ReductionTiling& tiling) {
  auto recognised = as_matrix_reduction(program);
  if (auto* why = std::get_if<std::string>(&recognised))
    return *why;
  const MatrixReduction& m = std::get<MatrixReduction>(recognised);
  const int64_t lanes = tiling.lanes, parts = tiling.parts;
  if (lanes < 1 || parts < 1)
    return std::string("a work-group needs at least one work-item and one part");
  if (!m.columns && parts != lanes)
    return std::string("a row reduction has one part per work-item");
  if (m.columns && lanes % parts != 0)
    return fmt::format("{} parts do not divide {} work-items", parts, lanes);

  // The sequential reduction of one part, the products fused in (reduce-map-fusion).
  const ir::Fun fused =
      m.element ? fuse_element(m.op, m.init, *m.element, element_of(m.data.type())) : m.op;
  const ir::Fun reduce_part = ir::reduce_seq(fused, m.init);
  const ir::Fun combine = ir::to_global(ir::map_lcl(0, ir::reduce_seq(m.op, m.init)));
  const ir::Fun partial_results = ir::to_local(ir::map_lcl(0, reduce_part));

  try {
    ir::Expr per_groups = [&] {
      if (!m.columns) {
        // A work-group per row; work-item l reduces the row's elements l, l + parts, ...
        // (split-reduce), then one work-item combines the parts.
        const arith::Expr p(parts);
        ir::Expr partials = join_of(ir::call(partial_results, {transpose_of(split_of(p, m.data))}));
        ir::Fun per_row = ir::lambda({m.vector}, ir::call(combine, {split_of(p, partials)}));
        return ir::call(ir::map_wrg(0, per_row), {m.matrix});
      }
      // A work-group per block of `columns` columns; work-item r * columns + c reduces the rows
      // r, r + parts, ... of column c (split-reduce; consecutive work-items read consecutive
      // columns of one row), then work-item c combines the parts of column c.
      const arith::Expr columns(lanes / parts), p(parts);
      const ir::Expr all_columns = ir::call(ir::transpose(), {m.matrix});
      ir::Expr blocks = split_of(columns, all_columns);
      ir::Fun per_block = lambda1(element_of(blocks.type()), "block", [&](const ir::Expr& block) {
        ir::Expr data = ir::call(ir::map(ir::lambda({m.vector}, m.data)), {block});
        ir::Expr cut = ir::call(ir::map(lambda1(element_of(data.type()), "column",
                                                [&](const ir::Expr& column) {
                                                  return transpose_of(split_of(p, column));
                                                })),
                                {data});
        ir::Expr partials = join_of(ir::call(partial_results, {join_of(transpose_of(cut))}));
        return ir::call(combine, {transpose_of(split_of(columns, partials))});
      });
      return ir::call(ir::map_wrg(0, per_block), {blocks});
    }();
    ir::Program lowered = program;
    lowered.body = join_of(join_of(per_groups));
    return lowered;
  } catch (const UserError& e) {
    return std::string(e.what());
  }
}

} // namespace liftx::rewrite
