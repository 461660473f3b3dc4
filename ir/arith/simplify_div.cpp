/// Truncating division `a / b` (C semantics). Rules that depend on signs prove them first:
///  - const-fold:        c1 / c2 folds (C truncation)
///  - identity:          x / 1 -> x, x / -1 -> -x, 0 / x -> 0, x / x -> 1
///  - neg-divisor:       x / -c -> -(x / c)
///  - mod-quotient:      (x % b) / b -> 0            (|x % b| < |b| for every sign)
///  - small-numerator:   x / y -> 0                  if -y < x < y
///  - nested-div:        (x / b) / c -> x / (b*c)    if b > 0 and c > 0 (truncation composes)
///  - common-factor:     (g*x) / (g*d) -> x / d      (exact for every sign)
///  - split-multiples:   (m*b + r) / b -> m + r / b  if r and m*b + r have the same sign
#include "ir/arith/simplify_internal.hpp"

#include <limits>

namespace liftx::arith {
namespace detail {

namespace {

int64_t c_div(int64_t a, int64_t b) {
  if (b == -1) {
    if (a == std::numeric_limits<int64_t>::min())
      throw_overflow();
    return -a;
  }
  return a / b;
}

bool proven_less(const Expr& a, const Expr& b) {
  return prove_lt(a, b);
}

} // namespace

namespace {
size_t term_count(const Expr& e) {
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(e, Rational{1, 1}, terms, constant);
  return terms.size();
}

/// Multivariate division by a sum, greedily: while some term of `rest` is a multiple m of b's
/// leading term and removing m*b leaves fewer terms, move m into the quotient. Finds
/// (M + 2)*(o + k) + c  ->  quotient o + k, rest c.
void divide_by_sum(Expr& quotient, Expr& rest, const Expr& b, bool& moved) {
  Term lead_term = split_term(b.node().operands[0]);
  Expr lead = build_term(lead_term.coef, lead_term.key);
  for (int step = 0; step < 32; ++step) {
    std::vector<Term> terms;
    Rational constant{0, 1};
    flatten_sum(rest, Rational{1, 1}, terms, constant);
    bool progress = false;
    for (const Term& t : terms) {
      std::optional<Expr> m = exact_quotient(build_term(t.coef, t.key), lead);
      if (!m)
        continue;
      Expr candidate = rest - *m * b;
      if (term_count(candidate) >= terms.size())
        continue;
      rest = candidate;
      quotient = quotient + *m;
      moved = progress = true;
      break;
    }
    if (!progress)
      return;
  }
}
} // namespace

MultipleSplit split_multiples(const Expr& a, const Expr& b, bool toward_nonneg) {
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(a, Rational{1, 1}, terms, constant);
  std::vector<Term> rest;
  Rational rest_constant = constant;
  Expr quotient(0);
  bool moved = false;
  for (const Term& t : terms) {
    Expr term = build_term(t.coef, t.key);
    if (auto q = exact_quotient(term, b)) {
      quotient = quotient + *q;
      moved = true;
    } else {
      rest.push_back(t);
    }
  }
  if (auto d = b.as_constant(); d && *d > 0 && is_integer(constant)) {
    int64_t q = constant.num / *d, r = constant.num % *d; // C truncation
    if (toward_nonneg && r < 0) {
      r += *d;
      q -= 1;
    } else if (!toward_nonneg && r > 0) {
      r -= *d;
      q += 1;
    }
    if (q != 0) {
      quotient = quotient + Expr(q);
      rest_constant = Rational{r, 1};
      moved = true;
    }
  }
  Expr rest_expr = make_sum(std::move(rest), rest_constant);
  if (b.node().kind == Kind::Sum)
    divide_by_sum(quotient, rest_expr, b, moved);
  return MultipleSplit{quotient, rest_expr, moved};
}

namespace {
Expr simplify_div_uncached(const Expr& a, const Expr& b) {
  // Kept as a node: evaluation reports the division by zero, and only if it is reached (it may
  // sit in a branch of a select that is never taken).
  if (is_zero(b))
    return make_binary(Kind::IntDiv, a, b);
  if (is_cst(a) && is_cst(b)) {
    Rational x = cst_value(a), y = cst_value(b);
    // A fractional operand comes from an inexact exact division; evaluation reports it.
    if (!is_integer(x) || !is_integer(y))
      return make_binary(Kind::IntDiv, a, b);
    return Expr(c_div(x.num, y.num));
  }
  if (is_one(b))
    return a;
  if (b == Expr(-1))
    return -a;
  if (is_zero(a))
    return Expr(0);
  if (a == b)
    return Expr(1);
  auto d = b.as_constant();
  if (d && *d < 0 && *d != std::numeric_limits<int64_t>::min())
    return -(a / Expr(-*d));
  const Node& an = a.node();
  if (an.kind == Kind::Mod && an.operands[1] == b)
    return Expr(0);

  bool b_positive = (d && *d > 0) || proven_positive(b);
  if (b_positive) {
    // |a| < b: the quotient truncates to 0 whatever a's sign
    if (proven_less(a, b) && proven_less(-a, b))
      return Expr(0);
    if (an.kind == Kind::IntDiv && proven_positive(an.operands[1]))
      return an.operands[0] / (an.operands[1] * b);
  }
  if (d && *d > 1 && is_integer_polynomial(a)) {
    int64_t g = gcd64(content(a), *d);
    if (g > 1)
      return (a * rational(1, g)) / Expr(*d / g);
  }
  for (bool toward_nonneg : {true, false}) {
    MultipleSplit split = split_multiples(a, b, toward_nonneg);
    if (!split.moved)
      break;
    if (is_zero(split.rest))
      return split.quotient;
    if (!b_positive)
      break;
    bool same_sign = toward_nonneg ? proven_nonneg(a) && proven_nonneg(split.rest)
                                   : proven_nonpos(a) && proven_nonpos(split.rest);
    if (same_sign)
      return split.quotient + split.rest / b;
  }
  return make_binary(Kind::IntDiv, a, b);
}
} // namespace

Expr simplify_div(const Expr& a, const Expr& b) {
  return memoized(MemoOp::IntDiv, a, b, simplify_div_uncached);
}

} // namespace detail

Expr operator/(const Expr& a, const Expr& b) {
  return detail::simplify_div(a, b);
}

} // namespace liftx::arith
