/// to_string (canonical, minimal parentheses, parseable) and to_c (OpenCL C).
#include "ir/arith/simplify_internal.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
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
    // A product of sums is distributed when parsed, N /^ (max*(N + 3)) as N /^ (N*max + 3*max),
    // so a denominator with a sum among its factors is printed as a chain of divisions instead.
    // (A constant times a sum is factored back out: N /^ (2*(M + 1)) reads back as it is.)
    int64_t below = 0; // non-constant factors of the denominator, with their multiplicity
    for (const Factor& f : factors)
      below += f.exponent < 0 ? -f.exponent : 0;
    const bool sum_below =
        below > 1 && std::any_of(factors.begin(), factors.end(), [](const Factor& f) {
          return f.exponent < 0 && f.base.node().kind == Kind::Sum;
        });
    std::string den;
    for (size_t i = 0; i < denominator.size(); ++i)
      den += (i ? (sum_below ? " /^ " : "*") : "") + denominator[i];
    if (denominator.size() > 1 && !sum_below)
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

/// The factors of a term with negative exponents, as positive powers: its non-constant
/// denominator (empty when it has none).
std::vector<Factor> denominator_factors(const Expr& term) {
  std::vector<Factor> below;
  if (is_cst(term))
    return below;
  Rational coef{1, 1};
  std::vector<Factor> factors;
  flatten_prod(term, coef, factors);
  for (const Factor& f : factors)
    if (f.exponent < 0)
      below.push_back({f.base, -f.exponent});
  return below;
}

/// The C text of the magnitude of `term` (integral coefficient) times the powers in `common`,
/// which include the term's own denominator, and whether it is negative.
std::pair<std::string, bool> c_scaled_term(const Expr& term, const std::vector<Factor>& common) {
  Rational coef{1, 1};
  std::vector<Factor> factors;
  if (is_cst(term))
    coef = term.node().value;
  else
    flatten_prod(term, coef, factors);
  std::vector<std::string> parts;
  if (coef.num != 1 && coef.num != -1)
    parts.push_back(std::to_string(coef.num < 0 ? -coef.num : coef.num));
  auto exponent_in_term = [&](const Expr& base) -> int64_t {
    for (const Factor& f : factors)
      if (compare_expr(f.base, base) == 0)
        return f.exponent;
    return 0;
  };
  for (const Factor& f : factors)
    for (int64_t i = 0; i < f.exponent; ++i)
      parts.push_back(c_text(f.base));
  for (const Factor& c : common)
    for (int64_t i = 0; i < c.exponent + std::min<int64_t>(0, exponent_in_term(c.base)); ++i)
      parts.push_back(c_text(c.base));
  if (parts.empty())
    parts.push_back("1");
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i)
    text += (i ? " * " : "") + parts[i];
  return {text, coef.num < 0};
}

bool same_factors(const std::vector<Factor>& a, const std::vector<Factor>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const Factor& x, const Factor& y) {
           return x.exponent == y.exponent && compare_expr(x.base, y.base) == 0;
         });
}

/// Raises `multiple` (powers of distinct bases) to a common multiple of itself and `factors`: each
/// base at the larger of its two exponents.
void merge_into_multiple(std::vector<Factor>& multiple, const std::vector<Factor>& factors) {
  for (const Factor& f : factors) {
    auto same = std::find_if(multiple.begin(), multiple.end(),
                             [&](const Factor& c) { return compare_expr(c.base, f.base) == 0; });
    if (same == multiple.end())
      multiple.push_back(f);
    else
      same->exponent = std::max(same->exponent, f.exponent);
  }
}

/// "a * b * b": the powers in `factors` as one C product ("1" when there are none).
std::string c_factors_text(const std::vector<Factor>& factors) {
  std::string text;
  for (const Factor& f : factors)
    for (int64_t i = 0; i < f.exponent; ++i)
      text += (text.empty() ? "" : " * ") + c_text(f.base);
  return text.empty() ? "1" : text;
}

/// The C sum of `terms` (each scaled by the powers of `common` it lacks, c_scaled_term), in
/// parentheses when it has several terms.
std::string c_scaled_sum(const std::vector<Expr>& terms, const std::vector<Factor>& common) {
  std::string out;
  for (const Expr& t : terms) {
    const auto [text, negative] = c_scaled_term(t, common);
    out += out.empty() ? (negative ? "-" : "") : (negative ? " - " : " + ");
    out += text;
  }
  return terms.size() > 1 ? "(" + out + ")" : out;
}

/// A sum (with integral coefficients) whose terms have non-constant denominators, printed with
/// C's truncating division; nullopt when no term has such a denominator. Only the whole sum is
/// known to be an integer, not each term: (i + j) /^ (4 * k) is i /^ (4k) + j /^ (4k) in
/// canonical form, so the terms over one denominator D are divided together, as the group
/// N /^ D. Groups over different denominators (a /^ j + b /^ k, from (a*k + b*j) /^ (j*k)) need
/// not be integers either; over their product L they would be (a*k + b*j) / (j*k), whose
/// numerator overflows 64 bits long before the value does. So each group is split into C's
/// quotient and remainder, N = D * (N / D) + N % D, and only the remainders, each below D in
/// magnitude, go over the common denominator: the sum of the quotients plus
/// (sum of (N % D) * (L / D)) / L, an exact division that overflows only where L does.
std::optional<std::string> c_sum_over_denominators(const Expr& e) {
  std::vector<Factor> common; // the least common multiple of the denominators
  struct Group {
    std::vector<Factor> denominator;
    std::vector<Expr> terms;
  };
  std::vector<Group> groups;
  std::vector<Expr> integral; // the terms without a denominator
  for (const Expr& t : e.node().operands) {
    std::vector<Factor> below = denominator_factors(t);
    if (below.empty()) {
      integral.push_back(t);
      continue;
    }
    merge_into_multiple(common, below);
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const Group& g) { return same_factors(g.denominator, below); });
    if (group == groups.end())
      groups.push_back({std::move(below), {t}});
    else
      group->terms.push_back(t);
  }
  if (groups.empty())
    return std::nullopt;
  // The terms without a denominator stay outside the division: they are integers, so the terms
  // over it sum to an integer too (and are not multiplied by every denominator, which overflowed
  // int64 where the input did not: fuzz/regressions/arith/to-c-integer-term-over-denominators).
  // Each numerator is printed as the term's factors times the powers of its denominator it
  // lacks, without simplifying: multiplying out denominators that are sums would expand
  // products of sums.
  auto parenthesised = [](const std::vector<Factor>& factors, const std::string& text) {
    const bool several = factors.size() > 1 || (factors.size() == 1 && factors[0].exponent > 1);
    return several ? "(" + text + ")" : text;
  };
  std::string division;
  if (groups.size() == 1) {
    const Group& g = groups.front();
    division = "(" + c_scaled_sum(g.terms, g.denominator) + " / " +
               parenthesised(g.denominator, c_factors_text(g.denominator)) + ")";
  } else {
    std::string quotients, remainders;
    for (const Group& g : groups) {
      const std::string numerator = c_scaled_sum(g.terms, g.denominator);
      const std::string denominator = parenthesised(g.denominator, c_factors_text(g.denominator));
      quotients += (quotients.empty() ? "" : " + ") + ("(" + numerator + " / " + denominator + ")");
      // L / D: the powers of the common denominator that this group's denominator lacks.
      std::vector<Factor> lacking;
      for (const Factor& c : common) {
        int64_t own = 0;
        for (const Factor& f : g.denominator)
          if (compare_expr(f.base, c.base) == 0)
            own = f.exponent;
        if (c.exponent > own)
          lacking.push_back({c.base, c.exponent - own});
      }
      const std::string remainder = "(" + numerator + " % " + denominator + ")";
      remainders += (remainders.empty() ? "" : " + ") +
                    (lacking.empty() ? remainder : remainder + " * " + c_factors_text(lacking));
    }
    division = "(" + quotients + " + ((" + remainders + ") / " +
               parenthesised(common, c_factors_text(common)) + "))";
  }
  if (integral.empty())
    return division;
  std::string rest;
  for (const Expr& t : integral) {
    const auto [text, negative] = c_scaled_term(t, {});
    rest += rest.empty() ? (negative ? "-" : "") : (negative ? " - " : " + ");
    rest += text;
  }
  return "(" + division + (rest[0] == '-' ? " - " + rest.substr(1) : " + " + rest) + ")";
}

/// A sum as the C texts of an integral numerator P and denominator Q with sum = P / Q, or nullopt
/// when no term has a denominator. A sum that is a factor of a product need not be an integer:
/// the simplifier takes a divisor's content out of its sum, so N /^ (16 /^ N + 4) /^ 4 becomes
/// N /^ (16*(4 /^ N + 1)), where 4 /^ N + 1 is 1/2 at N = -8 and only 16 times it is an integer
/// (fuzz/regressions/arith/to-c-fractional-sum-factor). Its own denominator moves to the other
/// side of the product's division instead, which is exact where the product is an integer.
std::optional<std::pair<std::string, std::string>> c_sum_as_fraction(const Expr& sum) {
  const int64_t constant_denominator = lcm_of_denominators(sum);
  std::vector<Factor> common;
  for (const Expr& t : sum.node().operands)
    merge_into_multiple(common, denominator_factors(t));
  if (constant_denominator == 1 && common.empty())
    return std::nullopt;
  std::vector<Expr> scaled;
  for (const Expr& t : sum.node().operands)
    scaled.push_back(t * Expr(constant_denominator));
  std::string below = common.empty() ? "" : c_factors_text(common);
  if (constant_denominator != 1)
    below = std::to_string(constant_denominator) + (below.empty() ? "" : " * " + below);
  const bool several =
      constant_denominator != 1 ? !common.empty() : common.size() > 1 || common[0].exponent > 1;
  return std::pair{c_scaled_sum(scaled, common), several ? "(" + below + ")" : below};
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
    const int64_t count = f.exponent < 0 ? -f.exponent : f.exponent;
    std::vector<std::string>& same_side = f.exponent > 0 ? numerator : denominator;
    std::vector<std::string>& other_side = f.exponent > 0 ? denominator : numerator;
    std::optional<std::pair<std::string, std::string>> fraction;
    if (f.base.node().kind == Kind::Sum)
      fraction = c_sum_as_fraction(f.base);
    for (int64_t i = 0; i < count; ++i) {
      if (fraction) {
        same_side.push_back(fraction->first);
        other_side.push_back(fraction->second);
      } else {
        same_side.push_back(c_text(f.base));
      }
    }
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
    // A sum is an integer as a whole, its terms need not be: (j - k) /^ d is j/^d - k/^d in
    // canonical form, and j / d - k / d would truncate each term separately (j = -99, k = 813,
    // d = 19: -47 instead of -48). So the constant denominators are taken out first,
    // (N + M) /^ 4 as (N + M) / 4, and then the non-constant ones.
    int64_t l = lcm_of_denominators(e);
    if (l != 1)
      return "(" + c_text(e * Expr(l)) + " / " + std::to_string(l) + ")";
    if (std::optional<std::string> grouped = c_sum_over_denominators(e))
      return *grouped;
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
  // Code generation prints the same index expressions over and over (a space's kernels share
  // most of them; 96% of the calls while ranking Jacobi 2D at 4096² repeat an earlier one), and
  // printing a sum simplifies. Nodes are interned and never freed, and the text is a pure function
  // of the node: remembered per thread, forgotten wholesale past a bound.
  constexpr size_t kRemembered = size_t{1} << 16;
  thread_local std::unordered_map<const Node*, std::string> remembered;
  if (const auto it = remembered.find(&e.node()); it != remembered.end())
    return it->second;
  if (remembered.size() >= kRemembered)
    remembered.clear();
  return remembered.emplace(&e.node(), c_text(e)).first->second;
}

} // namespace liftx::arith
