/// `lhs op rhs ? then : otherwise`, decided by proofs where possible:
///  - same-branches:  (c ? x : x) -> x
///  - decided:        (i < 0 ? a : b) -> b when i >= 0 is proven, and so on for every operator
///  - canonical:      `>` and `>=` become `<` and `<=` with swapped operands; `!=` becomes `==`
///  with
///                    swapped branches; `==` operands are sorted
#include "ir/arith/simplify_internal.hpp"

namespace liftx::arith {
namespace detail {

namespace {
/// true / false when `l op r` is decided for every assignment, nullopt otherwise.
std::optional<bool> decide(CmpOp op, const Expr& l, const Expr& r) {
  switch (op) {
  case CmpOp::Lt:
    if (prove_lt(l, r))
      return true;
    if (prove_le(r, l))
      return false;
    return std::nullopt;
  case CmpOp::Le:
    if (prove_le(l, r))
      return true;
    if (prove_lt(r, l))
      return false;
    return std::nullopt;
  case CmpOp::Eq:
    if (l == r)
      return true;
    if (prove_lt(l, r) || prove_lt(r, l))
      return false;
    if (prove_eq(l, r))
      return true;
    return std::nullopt;
  default:
    LIFTX_UNREACHABLE("comparison {} is not canonical", static_cast<int>(op));
  }
}
} // namespace

Expr simplify_select(CmpOp op, const Expr& l, const Expr& r, const Expr& t, const Expr& e) {
  switch (op) {
  case CmpOp::Gt:
    return simplify_select(CmpOp::Lt, r, l, t, e);
  case CmpOp::Ge:
    return simplify_select(CmpOp::Le, r, l, t, e);
  case CmpOp::Ne:
    return simplify_select(CmpOp::Eq, l, r, e, t);
  default:
    break;
  }
  if (t == e)
    return t;
  if (auto decided = decide(op, l, r))
    return *decided ? t : e;
  Node n = blank_node(Kind::Select);
  n.cmp = op;
  // == operands in the order min/max use: more structured first, constants last
  int order = compare_expr(l, r);
  if (l.node().kind != r.node().kind)
    order = -order;
  if (op == CmpOp::Eq && order > 0)
    n.operands = {r, l, t, e};
  else
    n.operands = {l, r, t, e};
  return intern(std::move(n));
}

} // namespace detail

Expr select(CmpOp op, const Expr& lhs, const Expr& rhs, const Expr& then, const Expr& otherwise) {
  return detail::simplify_select(op, lhs, rhs, then, otherwise);
}

} // namespace liftx::arith
