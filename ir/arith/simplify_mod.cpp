/// C remainder `a % b` (sign of the dividend). Rules that depend on signs prove them first:
///  - const-fold:        c1 % c2 folds (C semantics)
///  - identity:          x % 1 -> 0, 0 % x -> 0, x % x -> 0
///  - neg-divisor:       x % -c -> x % c             (C: the sign follows the dividend)
///  - multiple:          (m*b) % b -> 0              (exact for every sign)
///  - mod-mod:           (x % b) % b -> x % b
///  - small-dividend:    x % y -> x                  if -y < x < y
///  - common-factor:     (g*x) % (g*d) -> g * (x % d)
///  - drop-multiples:    (m*b + r) % b -> r % b      if r and m*b + r have the same sign
#include "ir/arith/simplify_internal.hpp"

#include <limits>

namespace liftx::arith {
namespace detail {

namespace {
Expr simplify_mod_uncached(const Expr& a, const Expr& b) {
  // Kept as a node: evaluation reports the division by zero, and only if it is reached (it may
  // sit in a branch of a select that is never taken).
  if (is_zero(b))
    return make_binary(Kind::Mod, a, b);
  if (is_cst(a) && is_cst(b)) {
    Rational x = cst_value(a), y = cst_value(b);
    // A fractional operand comes from an inexact exact division; evaluation reports it.
    if (!is_integer(x) || !is_integer(y))
      return make_binary(Kind::Mod, a, b);
    if (y.num == -1)
      return Expr(0); // INT64_MIN % -1 would trap
    return Expr(x.num % y.num);
  }
  if (is_one(b) || b == Expr(-1) || is_zero(a) || a == b)
    return Expr(0);
  auto d = b.as_constant();
  if (d && *d < 0 && *d != std::numeric_limits<int64_t>::min())
    return a % Expr(-*d);
  if (a == -b)
    return Expr(0);
  const Node& an = a.node();
  if (an.kind == Kind::Mod && an.operands[1] == b)
    return a;
  if (exact_quotient(a, b))
    return Expr(0);

  bool b_positive = (d && *d > 0) || proven_positive(b);
  if (b_positive) {
    // |a| < b: C's remainder is a itself, whatever a's sign
    if (prove_lt(a, b) && prove_lt(-a, b))
      return a;
  }
  if (d && *d > 1 && is_integer_polynomial(a)) {
    int64_t g = gcd64(content(a), *d);
    if (g > 1)
      return Expr(g) * ((a * rational(1, g)) % Expr(*d / g));
  }
  if (b_positive) {
    for (bool toward_nonneg : {true, false}) {
      MultipleSplit split = split_multiples(a, b, toward_nonneg);
      if (!split.moved)
        break;
      if (is_zero(split.rest))
        return Expr(0);
      bool same_sign = toward_nonneg ? proven_nonneg(a) && proven_nonneg(split.rest)
                                     : proven_nonpos(a) && proven_nonpos(split.rest);
      if (same_sign)
        return split.rest % b;
    }
  }
  return make_binary(Kind::Mod, a, b);
}
} // namespace

Expr simplify_mod(const Expr& a, const Expr& b) {
  return memoized(MemoOp::Mod, a, b, simplify_mod_uncached);
}

} // namespace detail

Expr operator%(const Expr& a, const Expr& b) {
  return detail::simplify_mod(a, b);
}

} // namespace liftx::arith
