/// Bounds and proofs from variable ranges.
///
/// Two layers:
///  1. a numeric interval analysis over extended rationals (Ext), rounded to integers wherever a
///     node is integer-valued (everything but products and powers, which may be rational terms of
///     an integer sum such as N /^ 4 + M /^ 4);
///  2. Lift-style symbolic relaxation for lower bounds: a variable occurring linearly is replaced
///  by
///     the end of its range that minimises its term (`i` in [0, N) with coefficient -1 becomes
///     `N - 1`), re-simplified, and bounded again. That is how `N - i >= 1` is proven. Each step
///     gives an expression that is <= the original for every assignment, so every bound found is
///     sound; the best one wins.
#include "ir/arith/simplify_internal.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace liftx::arith {
namespace detail {

namespace {

struct Ival {
  Ext lo = Ext::neg_inf();
  Ext hi = Ext::pos_inf();
};

int sign_of(const Ext& x) {
  return x.inf != 0 ? x.inf : (x.v.num > 0) - (x.v.num < 0);
}

int ext_compare(const Ext& a, const Ext& b) {
  if (a.inf != 0 || b.inf != 0)
    return a.inf == b.inf ? 0 : (a.inf < b.inf ? -1 : 1);
  return compare(a.v, b.v);
}
Ext ext_min(const Ext& a, const Ext& b) {
  return ext_compare(a, b) <= 0 ? a : b;
}
Ext ext_max(const Ext& a, const Ext& b) {
  return ext_compare(a, b) >= 0 ? a : b;
}

/// `toward` picks the infinity when -inf + +inf would be meaningless (never happens for sound
/// intervals but must not crash).
Ext ext_add(const Ext& a, const Ext& b, int toward) {
  if (a.inf != 0 && b.inf != 0 && a.inf != b.inf)
    return Ext{toward, {}};
  if (a.inf != 0)
    return a;
  if (b.inf != 0)
    return b;
  return Ext::of(add(a.v, b.v));
}
Ext ext_mul(const Ext& a, const Ext& b) {
  // 0 * inf is 0: interval ends stand for finite values.
  if ((a.inf == 0 && a.v.num == 0) || (b.inf == 0 && b.v.num == 0))
    return Ext::of(Rational{0, 1});
  if (a.inf != 0 || b.inf != 0)
    return Ext{sign_of(a) * sign_of(b), {}};
  return Ext::of(mul(a.v, b.v));
}
Ext ext_neg(const Ext& a) {
  return a.inf != 0 ? Ext{-a.inf, {}} : Ext::of(negate(a.v));
}

Ival ival_add(const Ival& a, const Ival& b) {
  return {ext_add(a.lo, b.lo, -1), ext_add(a.hi, b.hi, 1)};
}
Ival ival_mul(const Ival& a, const Ival& b) {
  Ext c[4] = {ext_mul(a.lo, b.lo), ext_mul(a.lo, b.hi), ext_mul(a.hi, b.lo), ext_mul(a.hi, b.hi)};
  Ival r{c[0], c[0]};
  for (const Ext& x : c) {
    r.lo = ext_min(r.lo, x);
    r.hi = ext_max(r.hi, x);
  }
  return r;
}
Ival ival_neg(const Ival& a) {
  return {ext_neg(a.hi), ext_neg(a.lo)};
}
Ival point(Rational r) {
  return {Ext::of(r), Ext::of(r)};
}

Ival round_int(Ival a) {
  if (a.lo.inf == 0)
    a.lo.v = Rational{ceil_of(a.lo.v), 1};
  if (a.hi.inf == 0)
    a.hi.v = Rational{floor_of(a.hi.v), 1};
  return a;
}

Ival ival(const Expr& e);
Ival ival_int(const Expr& e) {
  return round_int(ival(e));
}

Ival ival_pow(const Ival& base, int64_t exponent) {
  int64_t n = exponent < 0 ? -exponent : exponent;
  Ival p = point(Rational{1, 1});
  for (int64_t i = 0; i < n && i < 64; ++i)
    p = ival_mul(p, base);
  if (n > 64)
    p = Ival{};
  if (exponent > 0)
    return p;
  bool negative = p.hi.inf == 0 && p.hi.v.num < 0;
  if (negative)
    p = ival_neg(p);
  if (!(p.lo.inf == 0 && p.lo.v.num > 0))
    return Ival{}; // may contain 0
  Ext lo = p.hi.inf != 0 ? Ext::of(Rational{0, 1}) : Ext::of(quotient(Rational{1, 1}, p.hi.v));
  Ival r{lo, Ext::of(quotient(Rational{1, 1}, p.lo.v))};
  return negative ? ival_neg(r) : r;
}

/// Truncating quotient of interval ends (integers), b > 0 finite or +inf.
Ext div_end(const Ext& a, const Ext& b) {
  if (a.inf != 0)
    return a;
  if (b.inf != 0)
    return Ext::of(Rational{0, 1});
  return Ext::of(Rational{a.v.num / b.v.num, 1});
}

Ival ival_div(const Ival& a, Ival b) {
  bool negate_result = false;
  if (b.hi.inf == 0 && b.hi.v.num < 0) {
    b = ival_neg(b);
    negate_result = true;
  }
  Ival r;
  // (an empty range can give lo > hi: then b.hi may be <= 0 and the general case applies)
  if (b.lo.inf == 0 && b.lo.v.num > 0 && sign_of(b.hi) > 0) {
    r.hi = sign_of(a.hi) >= 0 ? div_end(a.hi, b.lo) : div_end(a.hi, b.hi);
    r.lo = sign_of(a.lo) >= 0 ? div_end(a.lo, b.hi) : div_end(a.lo, b.lo);
  } else {
    // |a / b| <= |a| whatever b is
    Ext m = ext_max(ext_neg(a.lo), a.hi);
    r = Ival{ext_neg(m), m};
  }
  return negate_result ? ival_neg(r) : r;
}

Ival ival_mod(const Ival& a, const Ival& b) {
  Ext bmax = ext_max(ext_neg(b.lo), b.hi); // max |b|
  Ext m = bmax.inf == 0 ? Ext::of(sub(bmax.v, Rational{1, 1})) : bmax;
  Ival r;
  r.lo = sign_of(a.lo) >= 0 ? Ext::of(Rational{0, 1}) : ext_max(a.lo, ext_neg(m));
  r.hi = sign_of(a.hi) <= 0 ? Ext::of(Rational{0, 1}) : ext_min(a.hi, m);
  return r;
}

Ival ival_uncaught(const Expr& e) {
  const Node& n = e.node();
  switch (n.kind) {
  case Kind::Cst:
    return point(n.value);
  case Kind::Var: {
    Ival r;
    if (n.range.start)
      r.lo = ival_int(*n.range.start).lo;
    if (n.range.stop)
      r.hi = ext_add(ival_int(*n.range.stop).hi, Ext::of(Rational{-1, 1}), 1);
    return r;
  }
  case Kind::Sum: {
    Ival r = point(Rational{0, 1});
    for (const Expr& t : n.operands)
      r = ival_add(r, ival(t));
    return round_int(r);
  }
  case Kind::Prod: {
    Ival r = point(Rational{1, 1});
    for (const Expr& f : n.operands)
      r = ival_mul(r, ival(f));
    return r;
  }
  case Kind::Pow:
    return ival_pow(ival_int(n.operands[0]), n.exponent);
  case Kind::IntDiv:
    return ival_div(ival_int(n.operands[0]), ival_int(n.operands[1]));
  case Kind::Mod:
    return ival_mod(ival_int(n.operands[0]), ival_int(n.operands[1]));
  case Kind::Min: {
    Ival a = ival_int(n.operands[0]), b = ival_int(n.operands[1]);
    return {ext_min(a.lo, b.lo), ext_min(a.hi, b.hi)};
  }
  case Kind::Max: {
    Ival a = ival_int(n.operands[0]), b = ival_int(n.operands[1]);
    return {ext_max(a.lo, b.lo), ext_max(a.hi, b.hi)};
  }
  case Kind::Select: {
    Ival a = ival_int(n.operands[2]), b = ival_int(n.operands[3]);
    return {ext_min(a.lo, b.lo), ext_max(a.hi, b.hi)};
  }
  }
  return Ival{};
}

Ival ival(const Expr& e) {
  try {
    return ival_uncaught(e);
  } catch (const UserError&) {
    return Ival{}; // a bound overflowed int64: unbounded is always sound
  }
}

// ---- symbolic relaxation -----------------------------------------------------------------------

bool range_mentions(const Expr& var_expr, const Expr& v) {
  const Range& r = var_expr.node().range;
  return (r.start && occurs(v, *r.start)) || (r.stop && occurs(v, *r.stop));
}

bool has_symbolic_range(const Expr& v) {
  const Range& r = v.node().range;
  return (r.start && !r.start->is_constant()) || (r.stop && !r.stop->is_constant());
}

/// A variable to relax next: symbolic range, not yet relaxed, and not mentioned by the range of
/// another variable still present (relax `i` in [0, N) before `N`).
std::optional<Expr> pick_variable(const Expr& d, const std::vector<Expr>& done) {
  std::vector<Expr> vars = free_vars(d);
  for (const Expr& v : vars) {
    if (std::find(done.begin(), done.end(), v) != done.end() || !has_symbolic_range(v))
      continue;
    bool mentioned = std::any_of(vars.begin(), vars.end(),
                                 [&](const Expr& w) { return w != v && range_mentions(w, v); });
    if (!mentioned)
      return v;
  }
  return std::nullopt;
}

/// Replaces every linear occurrence `rest * v` of v by the range end that minimises it.
Expr relax_variable(const Expr& d, const Expr& v) {
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(d, Rational{1, 1}, terms, constant);
  const Range& range = v.node().range;
  Expr result = make_cst(constant);
  for (const Term& t : terms) {
    Rational coef = t.coef;
    std::vector<Factor> factors, others;
    flatten_prod(t.key, coef, factors);
    bool linear = false;
    for (const Factor& f : factors) {
      if (f.base == v && f.exponent == 1)
        linear = true;
      else
        others.push_back(f);
    }
    Expr term = build_term(t.coef, t.key);
    if (linear) {
      Expr rest = make_prod(coef, others);
      Ival s = ival(rest);
      if (sign_of(s.lo) >= 0 && range.start)
        term = rest * *range.start;
      else if (sign_of(s.hi) <= 0 && range.stop)
        term = rest * (*range.stop - Expr(1));
    }
    result = result + term;
  }
  return result;
}

/// `c * (x % y)` with c < 0 and symbolic y > 0 is at least `c * (y - 1)`.
Expr relax_remainders(const Expr& d) {
  if (d.node().kind != Kind::Sum && d.node().kind != Kind::Prod)
    return d;
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(d, Rational{1, 1}, terms, constant);
  Expr result = make_cst(constant);
  for (const Term& t : terms) {
    const Node& k = t.key.node();
    if (k.kind == Kind::Mod && t.coef.num < 0 && !k.operands[1].is_constant() &&
        proven_positive(k.operands[1]))
      result = result + make_cst(t.coef) * (k.operands[1] - Expr(1));
    else
      result = result + build_term(t.coef, t.key);
  }
  return result;
}

} // namespace

namespace {
/// Nodes are immutable and never freed, so a bound computed once holds forever.
struct BoundCache {
  std::mutex mutex;
  std::unordered_map<const Node*, Ext> lower;
};
BoundCache& bound_cache() {
  static BoundCache* cache = new BoundCache;
  return *cache;
}

Ext compute_lower_bound(const Expr& e);
} // namespace

Ext lower_bound(const Expr& e) {
  if (e.is_constant())
    return ival_int(e).lo;
  BoundCache& cache = bound_cache();
  {
    std::lock_guard lock(cache.mutex);
    if (auto it = cache.lower.find(e.get()); it != cache.lower.end())
      return it->second;
  }
  Ext result = compute_lower_bound(e); // not under the lock: it recurses into lower_bound
  std::lock_guard lock(cache.mutex);
  cache.lower.emplace(e.get(), result);
  return result;
}

namespace {
Ext compute_lower_bound(const Expr& e) {
  Ext best = ival_int(e).lo;
  if (e.is_constant())
    return best;
  Expr d = relax_remainders(e);
  if (d != e)
    best = ext_max(best, ival_int(d).lo);
  std::vector<Expr> done;
  for (int step = 0; step < 8; ++step) {
    std::optional<Expr> v = pick_variable(d, done);
    if (!v)
      break;
    done.push_back(*v);
    Expr next = relax_variable(d, *v);
    if (next == d)
      continue;
    d = next;
    best = ext_max(best, ival_int(d).lo);
  }
  return best;
}
} // namespace

Ext upper_bound(const Expr& e) {
  return ext_neg(lower_bound(-e));
}

bool proven_nonneg(const Expr& e) {
  return sign_of(lower_bound(e)) >= 0;
}
bool proven_nonpos(const Expr& e) {
  return sign_of(upper_bound(e)) <= 0;
}
bool proven_positive(const Expr& e) {
  return sign_of(lower_bound(e)) > 0;
}

namespace {
/// a <= b (strict: a < b), decomposing min/max/select at the top before subtracting.
bool prove_order(const Expr& a, const Expr& b, bool strict) {
  if (a == b)
    return !strict;
  const Node& an = a.node();
  const Node& bn = b.node();
  switch (bn.kind) {
  case Kind::Min:
    return prove_order(a, bn.operands[0], strict) && prove_order(a, bn.operands[1], strict);
  case Kind::Max:
    if (prove_order(a, bn.operands[0], strict) || prove_order(a, bn.operands[1], strict))
      return true;
    break;
  case Kind::Select:
    return prove_order(a, bn.operands[2], strict) && prove_order(a, bn.operands[3], strict);
  default:
    break;
  }
  switch (an.kind) {
  case Kind::Max:
    return prove_order(an.operands[0], b, strict) && prove_order(an.operands[1], b, strict);
  case Kind::Min:
    if (prove_order(an.operands[0], b, strict) || prove_order(an.operands[1], b, strict))
      return true;
    break;
  case Kind::Select:
    return prove_order(an.operands[2], b, strict) && prove_order(an.operands[3], b, strict);
  default:
    break;
  }
  Ext lo = lower_bound(b - a);
  return ext_compare(lo, Ext::of(Rational{strict ? 1 : 0, 1})) >= 0;
}
} // namespace

} // namespace detail

Interval bounds(const Expr& e) {
  detail::Ext lo = detail::lower_bound(e), hi = detail::upper_bound(e);
  Interval r;
  if (lo.inf == 0)
    r.lo = lo.v.num;
  if (hi.inf == 0)
    r.hi = hi.v.num;
  return r;
}

Sign sign(const Expr& e) {
  Interval b = bounds(e);
  if (b.lo && b.hi && *b.lo == 0 && *b.hi == 0)
    return Sign::Zero;
  if (b.lo && *b.lo > 0)
    return Sign::Positive;
  if (b.hi && *b.hi < 0)
    return Sign::Negative;
  if (b.lo && *b.lo >= 0)
    return Sign::NonNegative;
  if (b.hi && *b.hi <= 0)
    return Sign::NonPositive;
  return Sign::Unknown;
}

bool prove_lt(const Expr& a, const Expr& b) {
  return detail::prove_order(a, b, true);
}
bool prove_le(const Expr& a, const Expr& b) {
  return detail::prove_order(a, b, false);
}
bool prove_nonneg(const Expr& e) {
  return detail::proven_nonneg(e);
}
bool prove_eq(const Expr& a, const Expr& b) {
  if (a == b)
    return true;
  Expr d = a - b;
  if (d.is_constant())
    return detail::is_zero(d);
  return prove_le(a, b) && prove_le(b, a);
}

} // namespace liftx::arith
