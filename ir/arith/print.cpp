/// to_string (canonical, minimal parentheses, parseable) and to_c (OpenCL C).
#include "ir/arith/simplify_internal.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace liftx::arith {

namespace {

using namespace detail;

// Precedence levels: a node printed where more is required gets parentheses.
enum Prec { kSum = 1, kProd = 2, kUnary = 3, kAtom = 4 };

const char* cmp_text(CmpOp op) {
  switch (op) {
  case CmpOp::Lt:
    return "<";
  case CmpOp::Le:
    return "<=";
  case CmpOp::Gt:
    return ">";
  case CmpOp::Ge:
    return ">=";
  case CmpOp::Eq:
    return "==";
  case CmpOp::Ne:
    return "!=";
  }
  return "?";
}

class Printer {
public:
  std::string print(const Expr& e, int required) {
    auto [text, prec] = render(e);
    return prec < required ? "(" + text + ")" : text;
  }

private:
  std::pair<std::string, int> render(const Expr& e) {
    const Node& n = e.node();
    switch (n.kind) {
    case Kind::Cst:
      if (n.value.den == 1)
        return {std::to_string(n.value.num), n.value.num < 0 ? kUnary : kAtom};
      return {fmt::format("{} /^ {}", n.value.num, n.value.den), kProd};
    case Kind::Var:
      return {n.name, kAtom};
    case Kind::Sum:
      return {sum(n), kSum};
    case Kind::Prod:
    case Kind::Pow:
      return product(e);
    case Kind::IntDiv:
      return {print(n.operands[0], kProd) + " / " + print(n.operands[1], kUnary), kProd};
    case Kind::Mod:
      return {print(n.operands[0], kProd) + " % " + print(n.operands[1], kUnary), kProd};
    case Kind::Min:
    case Kind::Max:
      return {fmt::format("{}({}, {})", n.kind == Kind::Min ? "min" : "max",
                          print(n.operands[0], kSum), print(n.operands[1], kSum)),
              kAtom};
    case Kind::Select:
      return {fmt::format("({} {} {} ? {} : {})", print(n.operands[0], kSum), cmp_text(n.cmp),
                          print(n.operands[1], kSum), print(n.operands[2], kSum),
                          print(n.operands[3], kSum)),
              kAtom};
    }
    return {"?", kAtom};
  }

  std::string sum(const Node& n) {
    std::string out;
    for (size_t i = 0; i < n.operands.size(); ++i) {
      const Expr& t = n.operands[i];
      bool negative = is_cst(t) ? t.node().value.num < 0 : split_term(t).coef.num < 0;
      if (i == 0)
        out += print(t, kSum);
      else if (negative)
        out += " - " + print(-t, kProd);
      else
        out += " + " + print(t, kSum);
    }
    return out;
  }

  std::pair<std::string, int> product(const Expr& e) {
    Rational coef{1, 1};
    std::vector<Factor> factors;
    flatten_prod(e, coef, factors);
    std::vector<std::string> numerator, denominator;
    for (const Factor& f : factors) {
      std::string base = print(f.base, kUnary + 1);
      int64_t count = f.exponent < 0 ? -f.exponent : f.exponent;
      for (int64_t i = 0; i < count; ++i)
        (f.exponent > 0 ? numerator : denominator).push_back(base);
    }
    std::string num;
    if (numerator.empty()) {
      num = std::to_string(coef.num);
    } else {
      if (coef.num == -1)
        num = "-";
      else if (coef.num != 1)
        num = std::to_string(coef.num) + "*";
      for (size_t i = 0; i < numerator.size(); ++i)
        num += (i ? "*" : "") + numerator[i];
    }
    if (coef.den != 1)
      denominator.insert(denominator.begin(), std::to_string(coef.den));
    if (denominator.empty())
      return {num, kProd};
    std::string den;
    for (size_t i = 0; i < denominator.size(); ++i)
      den += (i ? "*" : "") + denominator[i];
    if (denominator.size() > 1)
      den = "(" + den + ")";
    return {num + " /^ " + den, kProd};
  }
};

// ---- OpenCL C
// ------------------------------------------------------------------------------------

int64_t lcm_of_denominators(const Expr& e) {
  std::vector<Term> terms;
  Rational constant{0, 1};
  flatten_sum(e, Rational{1, 1}, terms, constant);
  i128 l = constant.den;
  for (const Term& t : terms) {
    i128 g = gcd64(static_cast<int64_t>(l), t.coef.den);
    l = l / g * t.coef.den;
    if (l > INT64_MAX)
      throw_overflow();
  }
  return static_cast<int64_t>(l);
}

std::string c_text(const Expr& e);

/// The non-constant denominator of a term (the product of its factors with negative exponents)
/// and its numerator (the term times that denominator); nullopt when it has none.
std::optional<std::pair<Expr, Expr>> split_denominator(const Expr& term) {
  if (is_cst(term))
    return std::nullopt;
  Rational coef{1, 1};
  std::vector<Factor> factors;
  flatten_prod(term, coef, factors);
  std::vector<Factor> below;
  for (const Factor& f : factors)
    if (f.exponent < 0)
      below.push_back({f.base, -f.exponent});
  if (below.empty())
    return std::nullopt;
  const Expr denominator = make_prod(Rational{1, 1}, below);
  return std::pair{denominator, term * denominator};
}

/// A sum with terms over non-constant denominators, printed as one division per denominator
/// plus the other terms; nullopt when no term has such a denominator.
std::optional<std::string> c_sum_over_denominators(const Expr& e) {
  std::vector<std::pair<Expr, Expr>> groups; // denominator, sum of numerators
  Expr rest(0);
  for (const Expr& t : e.node().operands) {
    std::optional<std::pair<Expr, Expr>> split = split_denominator(t);
    if (!split) {
      rest = rest + t;
      continue;
    }
    auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return compare_expr(g.first, split->first) == 0;
    });
    if (same == groups.end())
      groups.push_back(*split);
    else
      same->second = same->second + split->second;
  }
  if (groups.empty())
    return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& [denominator, numerator] : groups)
    parts.push_back("(" + c_text(numerator) + " / " + c_text(denominator) + ")");
  if (!(is_cst(rest) && rest.node().value.num == 0))
    parts.push_back(c_text(rest));
  if (parts.size() == 1)
    return parts.front();
  std::string out = "(";
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? " + " : "") + parts[i];
  return out + ")";
}

std::string c_product(const Expr& e) {
  Rational coef{1, 1};
  std::vector<Factor> factors;
  flatten_prod(e, coef, factors);
  std::vector<std::string> numerator, denominator;
  if (coef.num != 1 || factors.empty())
    numerator.push_back(coef.num < 0 ? fmt::format("({})", coef.num) : std::to_string(coef.num));
  if (coef.den != 1)
    denominator.push_back(std::to_string(coef.den));
  for (const Factor& f : factors) {
    std::string base = c_text(f.base);
    int64_t count = f.exponent < 0 ? -f.exponent : f.exponent;
    for (int64_t i = 0; i < count; ++i)
      (f.exponent > 0 ? numerator : denominator).push_back(base);
  }
  auto join = [](const std::vector<std::string>& parts) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i)
      out += (i ? " * " : "") + parts[i];
    return parts.size() > 1 ? "(" + out + ")" : out;
  };
  if (numerator.empty())
    numerator.push_back("1");
  if (denominator.empty())
    return join(numerator);
  return "(" + join(numerator) + " / " + join(denominator) + ")";
}

std::string c_text(const Expr& e) {
  const Node& n = e.node();
  switch (n.kind) {
  case Kind::Cst:
    if (n.value.den != 1)
      return fmt::format("({} / {})", n.value.num, n.value.den);
    return n.value.num < 0 ? fmt::format("({})", n.value.num) : std::to_string(n.value.num);
  case Kind::Var:
    return n.name;
  case Kind::Sum: {
    // Terms that divide exactly by the same non-constant denominator are printed over it once:
    // (j - k) /^ d is j/^d - k/^d in canonical form, and j / d - k / d would truncate each term
    // separately (j = -99, k = 813, d = 19: -47 instead of -48).
    if (std::optional<std::string> grouped = c_sum_over_denominators(e))
      return *grouped;
    // Exact divisions by constants are printed over one denominator: (N + M) / 4, likewise.
    int64_t l = lcm_of_denominators(e);
    if (l != 1)
      return "(" + c_text(e * Expr(l)) + " / " + std::to_string(l) + ")";
    std::string out = "(";
    for (size_t i = 0; i < n.operands.size(); ++i) {
      const Expr& t = n.operands[i];
      bool negative = is_cst(t) ? t.node().value.num < 0 : split_term(t).coef.num < 0;
      if (i == 0)
        out += c_text(t);
      else if (negative)
        out += " - " + c_text(-t);
      else
        out += " + " + c_text(t);
    }
    return out + ")";
  }
  case Kind::Prod:
  case Kind::Pow:
    return c_product(e);
  case Kind::IntDiv:
    return "(" + c_text(n.operands[0]) + " / " + c_text(n.operands[1]) + ")";
  case Kind::Mod:
    return "(" + c_text(n.operands[0]) + " % " + c_text(n.operands[1]) + ")";
  case Kind::Min:
  case Kind::Max:
    return fmt::format("{}({}, {})", n.kind == Kind::Min ? "min" : "max", c_text(n.operands[0]),
                       c_text(n.operands[1]));
  case Kind::Select:
    return fmt::format("({} {} {} ? {} : {})", c_text(n.operands[0]), cmp_text(n.cmp),
                       c_text(n.operands[1]), c_text(n.operands[2]), c_text(n.operands[3]));
  }
  return "?";
}

} // namespace

std::string Expr::to_string() const {
  Printer printer;
  return printer.print(*this, kSum);
}

std::string to_c(const Expr& e) {
  return c_text(e);
}

} // namespace liftx::arith
