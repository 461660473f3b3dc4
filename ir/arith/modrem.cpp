/// Modulus/remainder analysis (Halide's ModulusRemainder): e == modulus * k + remainder. A modulus
/// of 0 means e is exactly `remainder`; a modulus of 1 means nothing is known.
#include "ir/arith/simplify_internal.hpp"

namespace liftx::arith {
namespace detail {

namespace {

ModRem unknown() {
  return ModRem{1, 0};
}

int64_t mod_floor(i128 v, int64_t m) {
  if (m == 0) {
    if (v > INT64_MAX || v < INT64_MIN)
      throw_overflow();
    return static_cast<int64_t>(v);
  }
  i128 r = v % m;
  if (r < 0)
    r += m;
  return static_cast<int64_t>(r);
}

int64_t narrow(i128 v) {
  if (v > INT64_MAX || v < INT64_MIN)
    throw_overflow();
  return static_cast<int64_t>(v);
}

ModRem normalise(int64_t modulus, i128 remainder) {
  if (modulus < 0)
    modulus = narrow(-i128{modulus});
  return ModRem{modulus, mod_floor(remainder, modulus)};
}

ModRem mr_add(ModRem a, ModRem b) {
  int64_t m = gcd64(a.modulus, b.modulus);
  return normalise(m, i128{a.remainder} + b.remainder);
}

ModRem mr_mul(ModRem a, ModRem b) {
  // (ma*k + ra)(mb*j + rb) = ma*mb*kj + ma*rb*k + mb*ra*j + ra*rb
  int64_t m =
      gcd64(gcd64(narrow(i128{a.modulus} * b.modulus), narrow(i128{a.modulus} * b.remainder)),
            narrow(i128{b.modulus} * a.remainder));
  return normalise(m, i128{a.remainder} * b.remainder);
}

/// Both a and b are possible: the result must cover both.
ModRem mr_union(ModRem a, ModRem b) {
  int64_t m = gcd64(gcd64(a.modulus, b.modulus), narrow(i128{a.remainder} - b.remainder));
  return normalise(m, a.remainder);
}

/// nullopt: the node may be a fraction (a term of an integer sum such as N /^ 4 + M /^ 4); the
/// integer-valued node around it then knows nothing.
std::optional<ModRem> analyse_term(const Expr& e);

ModRem analyse(const Expr& e) {
  return analyse_term(e).value_or(unknown());
}

std::optional<ModRem> analyse_term(const Expr& e) {
  const Node& n = e.node();
  switch (n.kind) {
  case Kind::Cst:
    if (!is_integer(n.value))
      return std::nullopt;
    return ModRem{0, n.value.num};
  case Kind::Var: {
    // start + step*k when start and step are known
    if (!n.range.start)
      return unknown();
    ModRem start = analyse(*n.range.start);
    ModRem step = analyse(n.range.step);
    if (step.modulus != 0)
      return unknown();
    return mr_add(start, normalise(step.remainder, 0));
  }
  case Kind::Sum: {
    ModRem r{0, 0};
    for (const Expr& t : n.operands) {
      std::optional<ModRem> term = analyse_term(t);
      if (!term)
        return unknown();
      r = mr_add(r, *term);
    }
    return r;
  }
  case Kind::Prod: {
    ModRem r{0, 1};
    for (const Expr& f : n.operands) {
      std::optional<ModRem> factor = analyse_term(f);
      if (!factor)
        return std::nullopt;
      r = mr_mul(r, *factor);
    }
    return r;
  }
  case Kind::Pow: {
    if (n.exponent < 0)
      return std::nullopt;
    if (n.exponent > 64)
      return unknown();
    ModRem base = analyse(n.operands[0]), r{0, 1};
    for (int64_t i = 0; i < n.exponent; ++i)
      r = mr_mul(r, base);
    return r;
  }
  case Kind::Mod: {
    // a % d == a - d*q, so a % d is congruent to a modulo gcd(modulus(a), d)
    ModRem a = analyse(n.operands[0]);
    ModRem d = analyse(n.operands[1]);
    if (d.modulus != 0)
      return unknown();
    return normalise(gcd64(a.modulus, d.remainder), a.remainder);
  }
  case Kind::Min:
  case Kind::Max:
    return mr_union(analyse(n.operands[0]), analyse(n.operands[1]));
  case Kind::Select:
    return mr_union(analyse(n.operands[2]), analyse(n.operands[3]));
  case Kind::IntDiv:
    return unknown();
  }
  return unknown();
}

} // namespace
} // namespace detail

ModRem modulus_remainder(const Expr& e) {
  try {
    return detail::analyse(e);
  } catch (const UserError&) {
    return ModRem{1, 0}; // overflow in the analysis: nothing known
  }
}

bool divides(const Expr& b, const Expr& a) {
  if (detail::is_zero(b))
    return detail::is_zero(a);
  if (auto d = b.as_constant()) {
    if (*d == INT64_MIN)
      return detail::is_zero(a);
    int64_t m = *d < 0 ? -*d : *d;
    ModRem r = modulus_remainder(a);
    return r.modulus % m == 0 && r.remainder % m == 0;
  }
  return detail::exact_quotient(a, b).has_value();
}

} // namespace liftx::arith
