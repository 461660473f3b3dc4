/// min and max, decided by proofs where possible:
///  - const-fold:   min(c1, c2) folds
///  - idempotent:   min(x, x) -> x
///  - proven:       min(a, b) -> a if a <= b is proven (clamps vanish for interior indices)
///  - absorb:       min(a, min(a, b)) -> min(a, b); min(a, max(a, b)) -> a
///  - nested:       min(min(p, q), c) -> min(p, c) if c <= q is proven
///  - commutative:  operands in a fixed order (constants last)
#include "ir/arith/simplify_internal.hpp"

#include <utility>

namespace liftx::arith {
namespace detail {

namespace {

/// is_min selects min or max; `le(x, y)` means "x is the one min keeps".
Expr simplify_extremum(bool is_min, const Expr& a, const Expr& b) {
  Kind self = is_min ? Kind::Min : Kind::Max;
  Kind dual = is_min ? Kind::Max : Kind::Min;
  auto keeps = [&](const Expr& x, const Expr& y) {
    return is_min ? prove_le(x, y) : prove_le(y, x);
  };
  auto rebuild = [&](const Expr& x, const Expr& y) { return is_min ? min(x, y) : max(x, y); };

  if (is_cst(a) && is_cst(b)) {
    bool a_first = compare(cst_value(a), cst_value(b)) <= 0;
    return is_min == a_first ? a : b;
  }
  if (a == b)
    return a;
  for (int pass = 0; pass < 2; ++pass) {
    const Expr& x = pass == 0 ? a : b;
    const Expr& y = pass == 0 ? b : a;
    const Node& yn = y.node();
    if (yn.kind == self && (yn.operands[0] == x || yn.operands[1] == x))
      return y;
    if (yn.kind == dual && (yn.operands[0] == x || yn.operands[1] == x))
      return x;
  }
  if (keeps(a, b))
    return a;
  if (keeps(b, a))
    return b;
  for (int pass = 0; pass < 2; ++pass) {
    const Expr& inner = pass == 0 ? a : b;
    const Expr& outer = pass == 0 ? b : a;
    const Node& in = inner.node();
    if (in.kind != self)
      continue;
    // min(min(p, q), c) == min(p, c) when c <= q: q can never be the minimum.
    if (keeps(outer, in.operands[1]))
      return rebuild(in.operands[0], outer);
    if (keeps(outer, in.operands[0]))
      return rebuild(in.operands[1], outer);
  }
  // Reads best with the more structured operand first and constants last: min(max(i, 0), N - 1),
  // min(x, 3); same kinds in structural order: min(x, y).
  int order = compare_expr(a, b);
  if (a.node().kind != b.node().kind)
    order = -order;
  return order <= 0 ? make_binary(self, a, b) : make_binary(self, b, a);
}

} // namespace

Expr simplify_min(const Expr& a, const Expr& b) {
  return simplify_extremum(true, a, b);
}
Expr simplify_max(const Expr& a, const Expr& b) {
  return simplify_extremum(false, a, b);
}

} // namespace detail

Expr min(const Expr& a, const Expr& b) {
  return detail::simplify_min(a, b);
}
Expr max(const Expr& a, const Expr& b) {
  return detail::simplify_max(a, b);
}

} // namespace liftx::arith
