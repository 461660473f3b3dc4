/// evaluate, substitute and free_vars.
#include "ir/arith/simplify_internal.hpp"
#include "support/error.hpp"

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace liftx::arith {

namespace {

using detail::i128;

void collect_vars(const Expr& e, std::unordered_set<Expr, std::hash<Expr>>& seen,
                  std::vector<Expr>& out) {
  const Node& n = e.node();
  if (n.kind == Kind::Var) {
    if (seen.insert(e).second)
      out.push_back(e);
    return;
  }
  for (const Expr& o : n.operands)
    collect_vars(o, seen, out);
}

/// Values are exact rationals so that sums of exact divisions such as N /^ 4 + M /^ 4 evaluate
/// correctly; integer operations demand integer operands.
class Evaluator {
public:
  explicit Evaluator(const std::map<std::string, int64_t, std::less<>>& bindings)
      : bindings_(bindings) {}

  Rational eval(const Expr& e) {
    const Node& n = e.node();
    switch (n.kind) {
    case Kind::Cst:
      return n.value;
    case Kind::Var: {
      auto it = bindings_.find(n.name);
      LIFTX_USER_CHECK(it != bindings_.end(), "unbound variable '{}' in {}", n.name, e.to_string());
      return Rational{it->second, 1};
    }
    case Kind::Sum: {
      Rational r{0, 1};
      for (const Expr& t : n.operands)
        r = detail::add(r, eval(t));
      return r;
    }
    case Kind::Prod: {
      // All factors first: a zero factor makes the product zero whatever the others' product
      // (which may overflow where the whole, in its written order, did not).
      // A power's base is evaluated before the power, for the same reason.
      std::vector<Rational> bases;
      bases.reserve(n.operands.size());
      for (const Expr& f : n.operands) {
        const Node& factor = f.node();
        bases.push_back(eval(factor.kind == Kind::Pow ? factor.operands[0] : f));
        if (bases.back().num == 0 && (factor.kind != Kind::Pow || factor.exponent > 0))
          return Rational{0, 1};
      }
      Rational r{1, 1};
      for (size_t i = 0; i < bases.size(); ++i) {
        const Node& factor = n.operands[i].node();
        r = detail::mul(r, factor.kind == Kind::Pow
                               ? power(bases[i], factor.exponent, n.operands[i])
                               : bases[i]);
      }
      return r;
    }
    case Kind::Pow:
      return power(eval(n.operands[0]), n.exponent, e);
    case Kind::IntDiv:
    case Kind::Mod: {
      int64_t a = integer(n.operands[0]), b = integer(n.operands[1]);
      LIFTX_USER_CHECK(b != 0, "division by zero in {}", e.to_string());
      if (b == -1) {
        if (n.kind == Kind::Mod)
          return Rational{0, 1};
        if (a == std::numeric_limits<int64_t>::min())
          detail::throw_overflow();
        return Rational{-a, 1};
      }
      return Rational{n.kind == Kind::IntDiv ? a / b : a % b, 1};
    }
    case Kind::Min:
    case Kind::Max: {
      Rational a = eval(n.operands[0]), b = eval(n.operands[1]);
      bool a_less = detail::compare(a, b) <= 0;
      return (n.kind == Kind::Min) == a_less ? a : b;
    }
    case Kind::Select: {
      int c = detail::compare(eval(n.operands[0]), eval(n.operands[1]));
      bool holds = false;
      switch (n.cmp) {
      case CmpOp::Lt:
        holds = c < 0;
        break;
      case CmpOp::Le:
        holds = c <= 0;
        break;
      case CmpOp::Gt:
        holds = c > 0;
        break;
      case CmpOp::Ge:
        holds = c >= 0;
        break;
      case CmpOp::Eq:
        holds = c == 0;
        break;
      case CmpOp::Ne:
        holds = c != 0;
        break;
      }
      return eval(n.operands[holds ? 2 : 3]);
    }
    }
    LIFTX_UNREACHABLE("unknown arith node kind");
  }

  /// base^k; `e` (the power) names it in errors.
  static Rational power(Rational base, int64_t k, const Expr& e) {
    if (k < 0) {
      LIFTX_USER_CHECK(base.num != 0, "division by zero in {}", e.to_string());
      base = detail::make_rational(base.den, base.num);
      k = -k;
    }
    Rational r{1, 1};
    for (int64_t i = 0; i < k; ++i)
      r = detail::mul(r, base);
    return r;
  }

  int64_t integer(const Expr& e) {
    Rational r = eval(e);
    LIFTX_USER_CHECK(r.den == 1, "inexact exact division: {} evaluates to {}/{}", e.to_string(),
                     r.num, r.den);
    return r.num;
  }

private:
  const std::map<std::string, int64_t, std::less<>>& bindings_;
};

} // namespace

std::vector<Expr> free_vars(const Expr& e) {
  std::unordered_set<Expr, std::hash<Expr>> seen;
  std::vector<Expr> out;
  collect_vars(e, seen, out);
  std::sort(out.begin(), out.end(), detail::ExprLess{});
  return out;
}

int64_t evaluate(const Expr& e, const std::map<std::string, int64_t, std::less<>>& bindings) {
  Evaluator evaluator(bindings);
  return evaluator.integer(e);
}

namespace {
Expr rebuild(const Expr& e, const std::unordered_map<Expr, Expr, std::hash<Expr>>& map,
             std::unordered_map<Expr, Expr, std::hash<Expr>>& memo) {
  const Node& n = e.node();
  if (n.kind == Kind::Cst)
    return e;
  if (auto it = memo.find(e); it != memo.end())
    return it->second;
  Expr result = e;
  if (n.kind == Kind::Var) {
    if (auto it = map.find(e); it != map.end())
      result = it->second;
  } else {
    std::vector<Expr> ops;
    ops.reserve(n.operands.size());
    bool changed = false;
    for (const Expr& o : n.operands) {
      ops.push_back(rebuild(o, map, memo));
      changed = changed || ops.back() != o;
    }
    if (changed) {
      switch (n.kind) {
      case Kind::Sum: {
        result = Expr(0);
        for (const Expr& o : ops)
          result = result + o;
        break;
      }
      case Kind::Prod: {
        result = Expr(1);
        for (const Expr& o : ops)
          result = result * o;
        break;
      }
      case Kind::Pow:
        result = pow(ops[0], n.exponent);
        break;
      case Kind::IntDiv:
        result = ops[0] / ops[1];
        break;
      case Kind::Mod:
        result = ops[0] % ops[1];
        break;
      case Kind::Min:
        result = min(ops[0], ops[1]);
        break;
      case Kind::Max:
        result = max(ops[0], ops[1]);
        break;
      case Kind::Select:
        result = select(n.cmp, ops[0], ops[1], ops[2], ops[3]);
        break;
      default:
        LIFTX_UNREACHABLE("unexpected node kind in substitute");
      }
    }
  }
  memo.emplace(e, result);
  return result;
}
} // namespace

Expr substitute(const Expr& e, const std::unordered_map<Expr, Expr, std::hash<Expr>>& map) {
  for (const auto& [key, value] : map)
    LIFTX_USER_CHECK(key.node().kind == Kind::Var, "substitute: key {} is not a variable",
                     key.to_string());
  if (map.empty())
    return e;
  std::unordered_map<Expr, Expr, std::hash<Expr>> memo;
  return rebuild(e, map, memo);
}

} // namespace liftx::arith
