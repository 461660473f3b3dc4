// Simplification rules: pairs of layout primitives that cancel.
#include "rewrite/rules.hpp"
#include "rewrite/rules/match.hpp"

namespace liftx::rewrite {

using namespace match;

Rule transpose_transpose_id() {
  return make_rule("transpose-transpose-id", "transpose(transpose(x)) => x", {"simplification"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto outer = as_unary_call_of<ir::Transpose>(site);
                     if (!outer)
                       return NoMatch{"not a call of transpose"};
                     auto inner = as_unary_call_of<ir::Transpose>(outer->arg());
                     if (!inner)
                       return NoMatch{"the argument is not a transpose"};
                     return inner->arg();
                   });
}

Rule join_split_id() {
  return make_rule("join-split-id", "join(split(n, x)) => x", {"simplification"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto j = as_unary_call_of<ir::Join>(site);
                     if (!j)
                       return NoMatch{"not a call of join"};
                     auto s = as_unary_call_of<ir::Split>(j->arg());
                     if (!s)
                       return NoMatch{"the argument is not a split"};
                     return s->arg();
                   });
}

Rule split_join_id() {
  return make_rule("split-join-id", "split(n, join(x)) => x   when the rows of x have length n",
                   {"simplification"}, [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto s = as_unary_call_of<ir::Split>(site);
                     if (!s)
                       return NoMatch{"not a call of split"};
                     auto j = as_unary_call_of<ir::Join>(s->arg());
                     if (!j)
                       return NoMatch{"the argument is not a join"};
                     const arith::Expr& rows = length_of(element_of(j->arg().type()));
                     if (rows != s->fun->chunk)
                       return NoMatch{fmt::format("the rows have length {}, the split size is {}",
                                                  rows.to_string(), s->fun->chunk.to_string())};
                     return j->arg();
                   });
}

} // namespace liftx::rewrite
