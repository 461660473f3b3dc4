/// Sums: flat, like terms combined, terms sorted by monomial key, constant last; the modulo
/// identity `c*b*(a/b) + c*(a%b) -> c*a`.
#include "ir/arith/simplify_internal.hpp"

#include <algorithm>
#include <unordered_map>

namespace liftx::arith {
namespace detail {

Term split_term(const Expr& e) {
  const Node& n = e.node();
  if (n.kind == Kind::Prod && is_cst(n.operands[0])) {
    Rational coef = cst_value(n.operands[0]);
    if (n.operands.size() == 2)
      return Term{coef, n.operands[1]};
    Node key = blank_node(Kind::Prod);
    key.operands.assign(n.operands.begin() + 1, n.operands.end());
    return Term{coef, intern(std::move(key))};
  }
  return Term{Rational{1, 1}, e};
}

Expr build_term(Rational coef, const Expr& key) {
  if (coef.num == 0)
    return make_cst(Rational{0, 1});
  if (coef.num == 1 && coef.den == 1)
    return key;
  Node n = blank_node(Kind::Prod);
  n.operands.push_back(make_cst(coef));
  if (key.node().kind == Kind::Prod)
    n.operands.insert(n.operands.end(), key.node().operands.begin(), key.node().operands.end());
  else
    n.operands.push_back(key);
  return intern(std::move(n));
}

void flatten_sum(const Expr& e, Rational scale, std::vector<Term>& terms, Rational& constant) {
  const Node& n = e.node();
  switch (n.kind) {
  case Kind::Cst:
    constant = add(constant, mul(scale, n.value));
    return;
  case Kind::Sum:
    for (const Expr& t : n.operands)
      flatten_sum(t, scale, terms, constant);
    return;
  default: {
    Term t = split_term(e);
    terms.push_back(Term{mul(t.coef, scale), t.key});
  }
  }
}

namespace {

using TermMap = std::unordered_map<Expr, Rational, std::hash<Expr>>;

void accumulate(TermMap& map, const std::vector<Term>& terms) {
  for (const Term& t : terms) {
    auto [it, inserted] = map.try_emplace(t.key, t.coef);
    if (!inserted)
      it->second = add(it->second, t.coef);
  }
}

bool has_coef(const TermMap& map, const Expr& key, Rational coef) {
  auto it = map.find(key);
  return it != map.end() && it->second == coef;
}

/// Applies `c*b*(a/b) + c*(a%b) -> c*a` once if possible; returns whether it did. This holds in C
/// for every sign of a and b (b != 0), so no proof is needed.
bool apply_modulo_identity(TermMap& map, Rational& constant) {
  std::vector<Expr> mods;
  for (const auto& [key, coef] : map)
    if (key.node().kind == Kind::Mod && coef.num != 0)
      mods.push_back(key);
  std::sort(mods.begin(), mods.end(), ExprLess{});
  for (const Expr& m : mods) {
    Rational c = map[m];
    const Expr& a = m.node().operands[0];
    const Expr& b = m.node().operands[1];
    // The quotient as the simplifier builds it, so that (x/4/2)*8 + ((x/4)%2)*4 matches x/8.
    Expr quotient_term = b * (a / b);
    std::vector<Term> wanted;
    Rational wanted_constant{0, 1};
    flatten_sum(quotient_term, c, wanted, wanted_constant);
    if (wanted_constant.num != 0 || wanted.empty())
      continue;
    bool present = std::all_of(wanted.begin(), wanted.end(),
                               [&](const Term& t) { return has_coef(map, t.key, t.coef); });
    if (!present)
      continue;
    for (const Term& t : wanted)
      map.erase(t.key);
    map.erase(m);
    std::vector<Term> replacement;
    flatten_sum(a, c, replacement, constant);
    accumulate(map, replacement);
    return true;
  }
  return false;
}

} // namespace

Expr make_sum(std::vector<Term> terms, Rational constant) {
  TermMap map;
  accumulate(map, terms);
  // Products of sums distribute, so their size multiplies: refuse before the work and memory
  // explode. Index expressions of real programs stay far below this.
  LIFTX_USER_CHECK(map.size() <= kMaxSumTerms,
                   "expression too large: a sum of {} terms, more than the {} the simplifier "
                   "accepts (a product of sums expands term by term)",
                   map.size(), kMaxSumTerms);
  for (int round = 0; round < 8 && apply_modulo_identity(map, constant); ++round) {
  }
  std::vector<Term> kept;
  for (const auto& [key, coef] : map)
    if (coef.num != 0)
      kept.push_back(Term{coef, key});
  std::sort(kept.begin(), kept.end(),
            [](const Term& x, const Term& y) { return compare_keys(x.key, y.key) < 0; });
  if (kept.empty())
    return make_cst(constant);
  if (kept.size() == 1 && constant.num == 0)
    return build_term(kept[0].coef, kept[0].key);
  Node n = blank_node(Kind::Sum);
  for (const Term& t : kept)
    n.operands.push_back(build_term(t.coef, t.key));
  if (constant.num != 0)
    n.operands.push_back(make_cst(constant));
  return intern(std::move(n));
}

bool has_integer_coefficients(const Expr& e) {
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(e, Rational{1, 1}, terms, constant);
  if (!is_integer(constant))
    return false;
  return std::all_of(terms.begin(), terms.end(), [](const Term& t) { return is_integer(t.coef); });
}

bool is_integer_polynomial(const Expr& e) {
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(e, Rational{1, 1}, terms, constant);
  if (!is_integer(constant))
    return false;
  for (const Term& t : terms) {
    if (!is_integer(t.coef))
      return false;
    Rational unit{1, 1};
    std::vector<Factor> factors;
    flatten_prod(t.key, unit, factors);
    for (const Factor& f : factors)
      if (f.exponent < 0)
        return false;
  }
  return true;
}

int64_t content(const Expr& e) {
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(e, Rational{1, 1}, terms, constant);
  int64_t g = gcd64(constant.num, 0);
  for (const Term& t : terms)
    g = gcd64(g, t.coef.num);
  return g;
}

} // namespace detail

namespace {

Expr add_uncached(const Expr& a, const Expr& b) {
  using namespace detail;
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(a, Rational{1, 1}, terms, constant);
  flatten_sum(b, Rational{1, 1}, terms, constant);
  return make_sum(std::move(terms), constant);
}

Expr subtract_uncached(const Expr& a, const Expr& b) {
  using namespace detail;
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(a, Rational{1, 1}, terms, constant);
  flatten_sum(b, Rational{-1, 1}, terms, constant);
  return make_sum(std::move(terms), constant);
}

} // namespace

Expr operator+(const Expr& a, const Expr& b) {
  using namespace detail;
  if (is_zero(a))
    return b;
  if (is_zero(b))
    return a;
  if (is_cst(a) && is_cst(b))
    return make_cst(add(cst_value(a), cst_value(b)));
  return memoized(MemoOp::Add, a, b, add_uncached);
}

Expr operator-(const Expr& a) {
  using namespace detail;
  if (is_cst(a))
    return make_cst(negate(cst_value(a)));
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(a, Rational{-1, 1}, terms, constant);
  return make_sum(std::move(terms), constant);
}

Expr operator-(const Expr& a, const Expr& b) {
  using namespace detail;
  if (a == b)
    return Expr(0);
  if (is_zero(b))
    return a;
  if (is_cst(a) && is_cst(b))
    return make_cst(sub(cst_value(a), cst_value(b)));
  return memoized(MemoOp::Sub, a, b, subtract_uncached);
}

} // namespace liftx::arith
