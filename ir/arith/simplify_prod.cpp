/// Products: rational coefficient first, factors base^exponent sorted by base, equal bases merged
/// (`N * N^-1 -> 1`); products distribute over sums. Exact division is `a * b^-1`.
#include "ir/arith/simplify_internal.hpp"

#include <algorithm>

namespace liftx::arith {
namespace detail {

namespace {
int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw_overflow();
  return r;
}
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw_overflow();
  return r;
}

Rational rational_pow(Rational base, int64_t exponent) {
  if (exponent < 0) {
    LIFTX_USER_CHECK(base.num != 0, "division by zero: 0 raised to the power {}", exponent);
    base = make_rational(base.den, base.num);
    exponent = -exponent;
  }
  Rational result{1, 1};
  for (int64_t i = 0; i < exponent; ++i)
    result = mul(result, base);
  return result;
}

/// Sums as Pow bases are normalised to integer coefficients with gcd 1 and a positive first term,
/// so `(2*N + 2)^-1` becomes `1/2 * (N + 1)^-1`.
Expr pow_of_sum(const Expr& sum, int64_t exponent) {
  if (exponent > 0) {
    LIFTX_USER_CHECK(exponent <= 64, "power of a sum with exponent {} is too large", exponent);
    Expr result(1);
    for (int64_t i = 0; i < exponent; ++i)
      result = result * sum;
    return result;
  }
  Rational scale{1, 1};
  if (has_integer_coefficients(sum)) {
    int64_t g = content(sum);
    Term first = split_term(sum.node().operands[0]);
    if (first.coef.num < 0)
      g = -g;
    if (g != 1 && g != 0)
      scale = Rational{g, 1};
  }
  Expr base = scale.num == 1 ? sum : sum * make_cst(quotient(Rational{1, 1}, scale));
  return make_prod(rational_pow(scale, exponent), {Factor{base, exponent}});
}
} // namespace

void flatten_prod(const Expr& e, Rational& coef, std::vector<Factor>& factors) {
  const Node& n = e.node();
  switch (n.kind) {
  case Kind::Cst:
    coef = mul(coef, n.value);
    return;
  case Kind::Prod:
    for (const Expr& f : n.operands)
      flatten_prod(f, coef, factors);
    return;
  case Kind::Pow:
    factors.push_back(Factor{n.operands[0], n.exponent});
    return;
  default:
    factors.push_back(Factor{e, 1});
  }
}

Expr make_prod(Rational coef, std::vector<Factor> factors) {
  if (coef.num == 0)
    return make_cst(Rational{0, 1});
  std::sort(factors.begin(), factors.end(),
            [](const Factor& x, const Factor& y) { return compare_expr(x.base, y.base) < 0; });
  std::vector<Factor> merged;
  for (const Factor& f : factors) {
    if (!merged.empty() && merged.back().base == f.base)
      merged.back().exponent = checked_add(merged.back().exponent, f.exponent);
    else
      merged.push_back(f);
  }
  std::erase_if(merged, [](const Factor& f) { return f.exponent == 0; });
  // A sum raised to a positive power (after cancellation) is expanded again.
  Expr expanded(1);
  std::vector<Factor> kept;
  for (const Factor& f : merged) {
    if (f.base.node().kind == Kind::Sum && f.exponent > 0)
      expanded = expanded * pow_of_sum(f.base, f.exponent);
    else
      kept.push_back(f);
  }
  if (expanded != Expr(1)) {
    Expr rest = make_prod(coef, std::move(kept));
    return expanded * rest;
  }
  if (kept.empty())
    return make_cst(coef);
  std::vector<Expr> operands;
  if (!(coef.num == 1 && coef.den == 1))
    operands.push_back(make_cst(coef));
  for (const Factor& f : kept)
    operands.push_back(f.exponent == 1 ? f.base : make_pow(f.base, f.exponent));
  if (operands.size() == 1)
    return operands[0];
  Node n = blank_node(Kind::Prod);
  n.operands = std::move(operands);
  return intern(std::move(n));
}

std::optional<Expr> exact_quotient(const Expr& a, const Expr& b) {
  if (is_zero(b))
    return std::nullopt;
  if (a == b)
    return Expr(1);
  Expr q = exact_div(a, b);
  if (!is_integer_polynomial(q))
    return std::nullopt;
  return q;
}

} // namespace detail

namespace {

Expr multiply_uncached(const Expr& a, const Expr& b) {
  using namespace detail;
  bool a_sum = a.node().kind == Kind::Sum, b_sum = b.node().kind == Kind::Sum;
  // A sum cancels against its own negative power instead of distributing.
  auto cancels = [](const Expr& sum, const Expr& other) {
    Rational c{1, 1};
    std::vector<Factor> fs;
    flatten_prod(other, c, fs);
    return std::any_of(fs.begin(), fs.end(),
                       [&](const Factor& f) { return f.base == sum && f.exponent < 0; });
  };
  if ((a_sum && !b_sum && !cancels(a, b)) || (b_sum && !a_sum && !cancels(b, a)) ||
      (a_sum && b_sum)) {
    // distribute: (t1 + t2 + c) * x = t1*x + t2*x + c*x
    const Expr& sum = a_sum ? a : b;
    const Expr& other = a_sum ? b : a;
    std::vector<Term> terms;
    Rational constant{0, 1};
    for (const Expr& t : sum.node().operands)
      flatten_sum(t * other, Rational{1, 1}, terms, constant);
    return make_sum(std::move(terms), constant);
  }
  Rational coef{1, 1};
  std::vector<Factor> factors;
  auto take = [&](const Expr& x) {
    if (x.node().kind == Kind::Sum)
      factors.push_back(Factor{x, 1});
    else
      flatten_prod(x, coef, factors);
  };
  take(a);
  take(b);
  return make_prod(coef, std::move(factors));
}

} // namespace

Expr operator*(const Expr& a, const Expr& b) {
  using namespace detail;
  if (is_zero(a) || is_zero(b))
    return Expr(0);
  if (is_one(a))
    return b;
  if (is_one(b))
    return a;
  if (is_cst(a) && is_cst(b))
    return make_cst(mul(cst_value(a), cst_value(b)));
  return memoized(MemoOp::Mul, a, b, multiply_uncached);
}

Expr pow(const Expr& base, int64_t exponent) {
  using namespace detail;
  if (exponent == 0)
    return Expr(1);
  if (exponent == 1)
    return base;
  const Node& n = base.node();
  if (n.kind == Kind::Cst)
    return make_cst(rational_pow(n.value, exponent));
  if (n.kind == Kind::Sum)
    return pow_of_sum(base, exponent);
  Rational coef{1, 1};
  std::vector<Factor> factors;
  flatten_prod(base, coef, factors);
  for (Factor& f : factors)
    f.exponent = checked_mul(f.exponent, exponent);
  return make_prod(rational_pow(coef, exponent), std::move(factors));
}

Expr exact_div(const Expr& a, const Expr& b) {
  using namespace detail;
  LIFTX_USER_CHECK(!is_zero(b), "division by zero in exact division {} /^ 0", a.to_string());
  if (a == b)
    return Expr(1);
  if (b.node().kind == Kind::Sum && a.node().kind == Kind::Sum &&
      a.node().operands.size() == b.node().operands.size()) {
    // a == k * b for a constant k?
    Rational ka = split_term(a.node().operands[0]).coef;
    Rational kb = split_term(b.node().operands[0]).coef;
    Expr k = make_cst(quotient(ka, kb));
    if (k * b == a)
      return k;
  }
  return a * pow(b, -1);
}

} // namespace liftx::arith
