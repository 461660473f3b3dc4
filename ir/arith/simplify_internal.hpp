#pragma once
/// Private helpers shared by the arith simplifiers and analyses. Not part of the public API.
#include "ir/arith/expr.hpp"
#include "support/error.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace liftx::arith::detail {

__extension__ typedef __int128 i128;

// ---- checked rational arithmetic ---------------------------------------------------------------
/// Throws UserError("integer overflow in constant folding").
[[noreturn]] void throw_overflow();
/// Normalises num/den (den != 0) to lowest terms with den > 0; throws on int64 overflow.
Rational make_rational(i128 num, i128 den);
inline Rational rat(int64_t v) {
  return Rational{v, 1};
}
Rational add(Rational a, Rational b);
Rational sub(Rational a, Rational b);
Rational mul(Rational a, Rational b);
Rational quotient(Rational a, Rational b); ///< a / b as rationals; b != 0
Rational negate(Rational a);
int compare(Rational a, Rational b);
inline bool is_integer(Rational r) {
  return r.den == 1;
}
int64_t floor_of(Rational r);
int64_t ceil_of(Rational r);
int64_t gcd64(int64_t a, int64_t b); ///< non-negative gcd; gcd(0, 0) == 0

/// The most terms a simplified sum may have; larger ones are a user error.
inline constexpr size_t kMaxSumTerms = 1000;

// ---- interning ---------------------------------------------------------------------------------
/// A node with every field empty (step points at the constant 1), ready to be filled and interned.
Node blank_node(Kind kind);
/// Returns the unique node equal to `n` (its hash is computed here).
Expr intern(Node n);
Expr make_cst(Rational r);
/// The binary operators whose simplified results are remembered.
enum class MemoOp : uint8_t { Add, Sub, Mul, IntDiv, Mod };
/// `compute(a, b)` for the operator `op`, remembered per pair of interned operands. Nodes are
/// never freed and the simplifiers are pure, so a result holds forever. Without the memo, nested
/// `/` and `%` re-simplify their shared subterms once per proof step (exponential in the depth),
/// and code generation rebuilds the same index sums and products for every kernel of a space.
Expr memoized(MemoOp op, const Expr& a, const Expr& b, Expr (*compute)(const Expr&, const Expr&));
Expr make_binary(Kind kind, const Expr& a, const Expr& b); ///< raw IntDiv/Mod/Min/Max node
Expr make_pow(const Expr& base, int64_t exponent);         ///< raw Pow node (exponent != 0, 1)

inline bool is_cst(const Expr& e) {
  return e.node().kind == Kind::Cst;
}
inline bool is_zero(const Expr& e) {
  return is_cst(e) && e.node().value.num == 0;
}
inline bool is_one(const Expr& e) {
  return is_cst(e) && e.node().value.num == 1 && e.node().value.den == 1;
}
inline Rational cst_value(const Expr& e) {
  return e.node().value;
}

// ---- deterministic structural order (never by pointer) ------------------------------------------
int compare_expr(const Expr& a, const Expr& b);
/// Order of sum terms by their monomial keys (factor lists compared lexicographically).
int compare_keys(const Expr& a, const Expr& b);
struct ExprLess {
  bool operator()(const Expr& a, const Expr& b) const { return compare_expr(a, b) < 0; }
};

// ---- sums: terms are coefficient * key, key a monomial without coefficient ---------------------
struct Term {
  Rational coef;
  Expr key;
};
/// Splits a non-sum, non-constant expression into coefficient and monomial key.
Term split_term(const Expr& e);
/// Rebuilds coef * key canonically.
Expr build_term(Rational coef, const Expr& key);
/// Appends the terms of `e * scale` to `terms` and its constant to `constant`.
void flatten_sum(const Expr& e, Rational scale, std::vector<Term>& terms, Rational& constant);
/// Canonical sum of the given terms and constant (combines like terms).
Expr make_sum(std::vector<Term> terms, Rational constant);

// ---- products: factors are base^exponent ------------------------------------------------------
struct Factor {
  Expr base;
  int64_t exponent;
};
/// Splits a non-sum expression into coefficient and factors.
void flatten_prod(const Expr& e, Rational& coef, std::vector<Factor>& factors);
Expr make_prod(Rational coef, std::vector<Factor> factors);

/// If every term of `a` is a multiple of `b` (an integer-coefficient polynomial quotient without
/// negative powers), returns a / b.
std::optional<Expr> exact_quotient(const Expr& a, const Expr& b);
/// All coefficients and the constant of `e` are integers.
bool has_integer_coefficients(const Expr& e);
/// Integer coefficients and no negative powers: every term is an integer on its own, so e / g is
/// an integer for any g dividing content(e). (2*(x /^ y) is not: x /^ y may be 3/2.)
bool is_integer_polynomial(const Expr& e);
/// gcd of the integer coefficients and constant of `e` (0 if e == 0); requires integer
/// coefficients.
int64_t content(const Expr& e);

/// `a` split as `multiples + rest` where every term of `multiples` is a multiple of `b`:
/// `quotient` is multiples / b. With a constant b, a's constant c is split as q*b + r with r in
/// [0, b) (toward_nonneg) or (-b, 0] (otherwise).
struct MultipleSplit {
  Expr quotient;
  Expr rest;
  bool moved = false; ///< something was moved out of `rest`
};
MultipleSplit split_multiples(const Expr& a, const Expr& b, bool toward_nonneg);

// ---- simplifiers per operator -------------------------------------------------------------------
Expr simplify_div(const Expr& a, const Expr& b);
Expr simplify_mod(const Expr& a, const Expr& b);
Expr simplify_min(const Expr& a, const Expr& b);
Expr simplify_max(const Expr& a, const Expr& b);
Expr simplify_select(CmpOp op, const Expr& l, const Expr& r, const Expr& t, const Expr& e);

// ---- bounds (bounds.cpp) -----------------------------------------------------------------------
/// Extended rational: -inf, finite or +inf.
struct Ext {
  int inf = 0; ///< -1: -inf, 0: finite, +1: +inf
  Rational v{};
  static Ext neg_inf() { return Ext{-1, {}}; }
  static Ext pos_inf() { return Ext{1, {}}; }
  static Ext of(Rational r) { return Ext{0, r}; }
  bool finite() const { return inf == 0; }
};
/// Best lower / upper bound found for an integer-valued expression (rounded to integers).
Ext lower_bound(const Expr& e);
Ext upper_bound(const Expr& e);
/// e >= 0 and e <= 0 proven; d > 0 proven.
bool proven_nonneg(const Expr& e);
bool proven_nonpos(const Expr& e);
bool proven_positive(const Expr& e);

/// True if `needle` occurs in `e` (not looking inside variable ranges).
bool occurs(const Expr& needle, const Expr& e);

} // namespace liftx::arith::detail
