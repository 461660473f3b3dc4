#pragma once
/// Symbolic integer arithmetic for index expressions and array lengths.
///
/// Semantics (stated once, here):
/// - All values are mathematical integers evaluated in int64_t.
/// - `a / b` (IntDiv) and `a % b` (Mod) follow C: division truncates toward zero and the remainder
///   has the sign of the dividend, so `(a / b) * b + a % b == a` for every b != 0. This is what
///   OpenCL C does, so generated code prints them directly. Every simplification that depends on
///   signs (e.g. `(i*16 + j) / 16 -> i`) first proves the operands non-negative from variable
///   ranges.
/// - `exact_div(a, b)` (printed `a /^ b`) is division where b divides a by construction (array
///   lengths after split and slide). It is represented as `a * b^-1`: constants are rationals and
///   products may hold powers with negative exponents, so `4 * (N /^ 4)` is `N`. Evaluating it when
///   b does not divide a is a UserError.
/// - min, max and select(cmp, then, else) complete what index expressions need (clamp, mirror and
///   wrap boundaries of pad).
///
/// Expressions are immutable, interned and canonical on construction: two expressions are equal iff
/// their handles point to the same node, so `==` and `hash` are O(1). Canonical form: sums and
/// products are flat and sorted, hold at most one constant (a sum's constant last when printed, a
/// product's coefficient first), no sum directly inside a sum, no product inside a product;
/// products distribute over sums; constants fold.
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace liftx {

/// Values of size variables by name, e.g. {{"M", 512}, {"N", 512}}: what arithmetic expressions
/// are evaluated with, and the sizes a program is run, launched, ranked or tuned at, everywhere.
using Sizes = std::map<std::string, int64_t, std::less<>>;

} // namespace liftx

namespace liftx::arith {

struct Node;

/// Handle to an interned, canonical expression node. Cheap to copy; never null once built
/// (a default-constructed Expr is the constant 0).
class Expr {
public:
  Expr();                           ///< constant 0
  Expr(int64_t c);                  ///< NOLINT(implicit): constants mix freely with expressions
  Expr(int c) : Expr(int64_t{c}) {} ///< NOLINT(implicit)
  explicit Expr(const Node* n) : node_(n) {}

  const Node& node() const { return *node_; }
  const Node* get() const { return node_; }
  bool operator==(const Expr& o) const { return node_ == o.node_; }
  bool operator!=(const Expr& o) const { return node_ != o.node_; }
  size_t hash() const;

  bool is_constant() const;
  /// The value if this is an integer constant (inline below Node: the interpreter asks it of
  /// every index it evaluates).
  std::optional<int64_t> as_constant() const;
  /// Canonical printing, parseable back by `parse` (and by the .lift parser).
  std::string to_string() const;

private:
  const Node* node_; // interned; lives for the whole program
};

/// A variable's range [start, stop) with step; bounds may be symbolic (e.g. a loop index in
/// [0, N)). An absent start/stop means unbounded on that side.
struct Range {
  std::optional<Expr> start;
  std::optional<Expr> stop; ///< exclusive
  Expr step = Expr(1);
  bool operator==(const Range&) const = default;
};

enum class Kind : uint8_t { Cst, Var, Sum, Prod, Pow, IntDiv, Mod, Min, Max, Select };
enum class CmpOp : uint8_t { Lt, Le, Gt, Ge, Eq, Ne };

/// Rational constant num/den with den > 0 and gcd(num, den) == 1. Integers have den == 1.
struct Rational {
  int64_t num = 0;
  int64_t den = 1;
  bool operator==(const Rational&) const = default;
};

/// Read-only view of a node, for analyses, printers and code generators outside arith.
struct Node {
  Kind kind;
  Rational value;             ///< Cst
  std::string name;           ///< Var
  Range range;                ///< Var
  std::vector<Expr> operands; ///< Sum/Prod: terms/factors; Pow: {base}; IntDiv/Mod/Min/Max: {a, b};
                              ///< Select: {lhs, rhs, then, else}
  int64_t exponent = 0;       ///< Pow (non-zero, != 1)
  CmpOp cmp = CmpOp::Lt;      ///< Select
  size_t hash = 0;
};

inline std::optional<int64_t> Expr::as_constant() const {
  if (node_->kind == Kind::Cst && node_->value.den == 1)
    return node_->value.num;
  return std::nullopt;
}

// ---- construction (always canonical) ------------------------------------------------------------
Expr cst(int64_t c);
Expr rational(int64_t num, int64_t den);
/// A variable identified by name and range: the same name and range give the same variable.
Expr var(std::string name, Range range = {});
/// A size variable: range [1, +inf).
Expr size_var(std::string name);
/// A variable in [start, stop) with the given step.
Expr range_var(std::string name, Expr start, Expr stop, Expr step = Expr(1));

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b); ///< C truncating division (IntDiv)
Expr operator%(const Expr& a, const Expr& b); ///< C remainder (Mod)
Expr exact_div(const Expr& a, const Expr& b); ///< a /^ b, see the header comment
Expr pow(const Expr& base, int64_t exponent);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
/// `lhs op rhs ? then : otherwise`
Expr select(CmpOp op, const Expr& lhs, const Expr& rhs, const Expr& then, const Expr& otherwise);

// ---- analyses ---------------------------------------------------------------------------------
/// Numeric bounds from variable ranges (inclusive); nullopt = unbounded on that side.
struct Interval {
  std::optional<int64_t> lo;
  std::optional<int64_t> hi;
};
Interval bounds(const Expr& e);
enum class Sign : uint8_t { Negative, Zero, Positive, NonNegative, NonPositive, Unknown };
Sign sign(const Expr& e);
/// Tri-state proofs: true only when proven for every assignment of variables inside their ranges.
bool prove_lt(const Expr& a, const Expr& b);
bool prove_le(const Expr& a, const Expr& b);
bool prove_nonneg(const Expr& e);
bool prove_eq(const Expr& a, const Expr& b);
/// e is known to equal `modulus * k + remainder` for some integer k (Halide's ModulusRemainder).
struct ModRem {
  int64_t modulus = 1;
  int64_t remainder = 0;
};
ModRem modulus_remainder(const Expr& e);
/// True if `b` provably divides `a` for all assignments (e.g. 4 divides 8*N + 4*i).
bool divides(const Expr& b, const Expr& a);

// ---- traversal, substitution, evaluation, printing ---------------------------------------------
/// Every variable occurring in e (including inside variable ranges is NOT included), sorted by
/// name.
std::vector<Expr> free_vars(const Expr& e);
/// Replaces variables (keys must be Var expressions); the result is re-simplified.
Expr substitute(const Expr& e, const std::unordered_map<Expr, Expr, std::hash<Expr>>& map);
/// Evaluates with variables bound by name. Throws UserError naming an unbound variable, a division
/// by zero, or an inexact exact_div.
int64_t evaluate(const Expr& e, const Sizes& bindings);
/// OpenCL C text: integer arithmetic with explicit parentheses, min/max as `min(a, b)`, select as
/// `(l < r ? t : e)`; exact division prints as `/`.
std::string to_c(const Expr& e);
/// Parses the syntax `to_string` prints: integers, names, + - * / % /^, unary -, parentheses,
/// min(a, b), max(a, b), `(l < r ? t : e)`. A name gets the range given in `ranges`, or none.
/// Throws UserError with the column (line 1) of a syntax error.
Expr parse(std::string_view text, const std::map<std::string, Range, std::less<>>& ranges = {});
/// `parse` for text a user wrote (`liftx simplify`): a division or remainder by the constant 0
/// and an exact division `/^` of constants that is not exact are located errors, where `parse`
/// keeps them (they are what the printer writes for such nodes).
Expr parse_user_expression(std::string_view text,
                           const std::map<std::string, Range, std::less<>>& ranges = {});

} // namespace liftx::arith

template <>
struct std::hash<liftx::arith::Expr> {
  size_t operator()(const liftx::arith::Expr& e) const noexcept { return e.hash(); }
};
