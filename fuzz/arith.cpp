// Fuzz target: the arithmetic parser, simplifier and C printer (what `liftx simplify` runs).
//
// Input: a first line of range declarations `NAME=LO:HI ...` (HI exclusive, either bound may be
// empty; a bound is an expression over names declared before it), then the expression. Property:
// at a few points inside the ranges where the input, evaluated here as written, is defined, the
// simplified expression (arith::evaluate), its C printing (evaluated here with C semantics) and the
// reparsed canonical printing all give the input's value. A difference traps.
#include "fuzz/fuzz_common.hpp"
#include "ir/arith/expr.hpp"
#include "support/error.hpp"

#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

using namespace liftx::arith;

namespace {

__extension__ typedef __int128 i128;

// The input's intermediate values, and its magnitude bounds (Value), beyond this count as
// overflow: the simplifier reassociates and distributes, which may form larger intermediate terms
// than the input's; such points are skipped, not blamed. The C printing's limit is int64's
// (beyond it, C is undefined).
constexpr i128 kInputLimit = i128{1} << 40;
constexpr i128 kCLimit = INT64_MAX;

struct Undefined {};   // division by zero, inexact /^, overflow
struct Unsupported {}; // syntax this evaluator does not know
using Env = std::map<std::string, int64_t, std::less<>>;

/// A value of the input and a bound on the magnitude of any term the simplifier may make of it:
/// each name and constant counted as at least 1 (so a zero factor hides nothing), magnitudes
/// added over sums, multiplied over products and by divisors (the simplifier merges divisors into
/// one product: a /^ b /^ c becomes a /^ (b * c)). The simplifier reorders factors and distributes
/// products over sums, so a zero the input multiplies by first may come last in a term whose
/// other factors overflow, where the input's own value stayed in range only by its order.
struct Value {
  i128 value = 0;
  i128 magnitude = 1;
};

/// The expression as written, with its own evaluator: C semantics on int64 values, `a /^ b`
/// defined only where b divides a. Same grammar as arith::parse and arith::to_c. For the input
/// (not the C printing), a point where a magnitude bound exceeds kInputLimit is undefined too.
class Original {
public:
  Original(std::string_view text, bool c_syntax) : text_(text), c_syntax_(c_syntax) {}

  i128 eval(const Env& env) {
    env_ = &env;
    pos_ = 0;
    dry_ = false;
    Value v = sum();
    skip_space();
    if (pos_ != text_.size())
      throw Unsupported{};
    return v.value;
  }

private:
  static i128 magnitude_of(i128 v) { return std::max<i128>(v < 0 ? -v : v, 1); }
  /// Products and sums of magnitudes, saturated far above every limit (no i128 overflow).
  static i128 saturate(i128 m) { return std::min<i128>(m, i128{1} << 100); }
  Value checked(i128 v, i128 magnitude) const {
    const i128 limit = c_syntax_ ? kCLimit : kInputLimit;
    if (v > limit || v < -limit - (c_syntax_ ? 1 : 0) || (!c_syntax_ && magnitude > limit))
      return {undefined(), 1};
    return {v, magnitude};
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token)
      return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!accept(token))
      throw Unsupported{};
  }

  Value sum() {
    Value v = product();
    for (;;) {
      const bool add = accept("+");
      if (!add && !accept("-"))
        return v;
      const Value t = product();
      v = checked(add ? v.value + t.value : v.value - t.value, saturate(v.magnitude + t.magnitude));
    }
  }
  Value product() {
    Value v = unary();
    for (;;) {
      if (accept("*")) {
        const Value f = unary();
        v = checked(v.value * f.value, saturate(v.magnitude * f.magnitude));
      } else if (!c_syntax_ && accept("/^")) {
        const Value d = unary();
        if (d.value == 0 || v.value % d.value != 0)
          v = {undefined(), 1};
        else // the simplifier may merge divisors into one product: a /^ b /^ c == a /^ (b * c)
          v = checked(v.value / d.value, saturate(v.magnitude * d.magnitude));
      } else if (accept("/") || accept("%")) {
        const bool divide = text_[pos_ - 1] == '/';
        const Value d = unary();
        if (d.value == 0)
          v = {undefined(), 1};
        else // i128 truncates like C; a remainder may become n - d * (n / d)
          v = checked(divide ? v.value / d.value : v.value % d.value,
                      saturate(v.magnitude * (d.magnitude + (divide ? 0 : 1))));
      } else {
        return v;
      }
    }
  }
  Value unary() {
    if (accept("-")) {
      const Value v = unary();
      return {-v.value, v.magnitude};
    }
    return primary();
  }
  Value primary() {
    skip_space();
    if (pos_ >= text_.size())
      throw Unsupported{};
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      i128 v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        v = v * 10 + (text_[pos_++] - '0');
        if (v > INT64_MAX)
          throw Unsupported{}; // arith::parse rejects it too
      }
      return checked(v, magnitude_of(v));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      const std::string_view name = text_.substr(start, pos_ - start);
      skip_space();
      if ((name == "min" || name == "max") && accept("(")) {
        const Value a = sum();
        expect(",");
        const Value b = sum();
        expect(")");
        return {name == "min" ? std::min(a.value, b.value) : std::max(a.value, b.value),
                std::max(a.magnitude, b.magnitude)};
      }
      auto it = env_->find(name);
      if (it == env_->end())
        throw Unsupported{};
      return {it->second, magnitude_of(it->second)};
    }
    if (accept("(")) {
      const Value lhs = sum();
      for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"}) {
        if (!accept(op))
          continue;
        const Value rhs = sum();
        expect("?");
        // Both branches are parsed (and evaluated: C evaluates only one, but an undefined
        // branch not taken is still defined C, so evaluate lazily through a saved position).
        const i128 a = lhs.value, b = rhs.value;
        const bool holds = op == "<="   ? a <= b
                           : op == ">=" ? a >= b
                           : op == "==" ? a == b
                           : op == "!=" ? a != b
                           : op == "<"  ? a < b
                                        : a > b;
        const Value then = branch(holds);
        expect(":");
        const Value otherwise = branch(!holds);
        expect(")");
        return {
            holds ? then.value : otherwise.value,
            std::max({lhs.magnitude, rhs.magnitude, holds ? then.magnitude : otherwise.magnitude})};
      }
      expect(")");
      return lhs;
    }
    throw Unsupported{};
  }
  /// A select branch: evaluated when taken; when not, only parsed over (C does not evaluate it,
  /// so its undefined operations do not count).
  Value branch(bool taken) {
    if (taken || dry_)
      return sum();
    dry_ = true;
    sum();
    dry_ = false;
    return {};
  }
  /// Undefined, unless parsing over an untaken branch.
  i128 undefined() const {
    if (!dry_)
      throw Undefined{};
    return 0;
  }

  std::string_view text_;
  bool c_syntax_;
  bool dry_ = false;
  const Env* env_ = nullptr;
  size_t pos_ = 0;
};

struct Declared {
  std::string name;
  Range range;
};

/// A value inside `d`'s range for the names bound so far, or nullopt if it is empty there.
std::optional<int64_t> sample(const Declared& d, const Env& env, std::mt19937_64& rng) {
  auto bound = [&](const std::optional<Expr>& b) -> std::optional<int64_t> {
    if (!b)
      return std::nullopt;
    return evaluate(*b, env);
  };
  std::optional<int64_t> lo = bound(d.range.start), hi = bound(d.range.stop);
  constexpr int64_t kSpan = 64; // unbounded sides: a small window, where index bugs show
  if ((lo && (*lo < -kInputLimit || *lo > kInputLimit)) ||
      (hi && (*hi < -kInputLimit || *hi > kInputLimit)))
    return std::nullopt; // values this large are skipped anyway
  if (!lo && !hi)
    lo = -kSpan, hi = kSpan;
  else if (!lo)
    lo = *hi - kSpan;
  else if (!hi)
    hi = *lo + kSpan;
  if (*lo >= *hi)
    return std::nullopt;
  // Mostly near the ends, where simplifications based on bounds go wrong.
  const uint64_t span = static_cast<uint64_t>(*hi - *lo);
  switch (rng() % 4) {
  case 0:
    return *lo;
  case 1:
    return *hi - 1;
  default:
    return *lo + static_cast<int64_t>(rng() % span);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == std::string::npos)
    return 0;
  const std::string expression = input.substr(newline + 1);
  if (expression.find('\0') != std::string::npos)
    return 0;

  std::vector<Declared> declared;
  std::map<std::string, Range, std::less<>> ranges;
  Expr simplified;
  bool header_ok = true;
  bool parsed = liftx::fuzz::expect_user_errors([&] {
    for (const std::string& item : liftx::fuzz::split_words(input.substr(0, newline))) {
      const size_t eq = item.find('='), colon = item.find(':', eq == std::string::npos ? 0 : eq);
      if (eq == std::string::npos || colon == std::string::npos || declared.size() == 8)
        return void(header_ok = false);
      Declared d{item.substr(0, eq), {}};
      if (d.name.empty() || ranges.count(d.name) ||
          !std::isalpha(static_cast<unsigned char>(d.name[0])))
        return void(header_ok = false);
      for (char c : d.name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
          return void(header_ok = false);
      const std::string lo = item.substr(eq + 1, colon - eq - 1), hi = item.substr(colon + 1);
      if (!lo.empty())
        d.range.start = parse(lo, ranges);
      if (!hi.empty())
        d.range.stop = parse(hi, ranges);
      // A bound may only use names declared before it: they are bound first when sampling.
      for (const std::optional<Expr>& b : {d.range.start, d.range.stop})
        if (b)
          for (const Expr& v : free_vars(*b))
            LIFTX_USER_CHECK(ranges.count(v.node().name) &&
                                 ranges.at(v.node().name) == v.node().range,
                             "bound over an undeclared name");
      d.range = var(d.name, d.range).node().range; // var() may reject it (UserError)
      ranges[d.name] = d.range;
      declared.push_back(std::move(d));
    }
    simplified = parse(expression, ranges);
  });
  if (!parsed || !header_ok)
    return 0;
  // Names used without a range are unbounded integers (all of them: simplification may drop some,
  // and the input's evaluation still needs them). Binding `min` or `max` too does no harm.
  std::set<std::string> unbounded;
  for (size_t i = 0; i < expression.size();) {
    const auto is_name_char = [&](size_t at, bool first) {
      const auto c = static_cast<unsigned char>(expression[at]);
      return std::isalpha(c) || c == '_' || (!first && std::isdigit(c));
    };
    if (!is_name_char(i, true) || (i > 0 && is_name_char(i - 1, false))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < expression.size() && is_name_char(end, false))
      ++end;
    std::string name = expression.substr(i, end - i);
    if (!ranges.count(name) && unbounded.insert(name).second)
      declared.push_back({name, {}});
    i = end;
  }

  const std::string canonical = simplified.to_string();
  // The canonical printing parses back, to an expression of the same values (not always the same
  // node: fuzz/regressions/arith/print-not-canonical-exact-div-by-sum).
  Expr reparsed;
  if (!liftx::fuzz::expect_user_errors([&] { reparsed = parse(canonical, ranges); }))
    liftx::fuzz::fail("canonical printing does not parse back", canonical);
  // to_c may refuse (a UserError: integer overflow while putting terms over one denominator,
  // fuzz/regressions/arith/to-c-overflow): then only the other properties are checked.
  std::string c_text;
  const bool printed_as_c = liftx::fuzz::expect_user_errors([&] { c_text = to_c(simplified); });

  std::mt19937_64 rng(std::hash<std::string>{}(input));
  Original original(expression, false), printed_c(c_text, true);
  for (int point = 0; point < 8; ++point) {
    Env env;
    bool empty = false;
    for (const Declared& d : declared) {
      std::optional<int64_t> v;
      if (!liftx::fuzz::expect_user_errors([&] { v = sample(d, env, rng); }) || !v) {
        empty = true; // an empty range here, or a bound that is itself undefined
        break;
      }
      env[d.name] = *v;
    }
    if (empty)
      continue;
    i128 expected;
    try {
      expected = original.eval(env);
    } catch (const Undefined&) {
      continue;
    } catch (const Unsupported&) {
      liftx::fuzz::fail("the fuzz evaluator cannot read an input arith::parse accepted",
                        expression);
    }
    int64_t got = 0;
    if (!liftx::fuzz::expect_user_errors([&] { got = evaluate(simplified, env); }) ||
        got != expected)
      liftx::fuzz::fail("simplified expression evaluates differently", canonical, env);
    int64_t from_text = 0;
    if (!liftx::fuzz::expect_user_errors([&] { from_text = evaluate(reparsed, env); }) ||
        from_text != expected)
      liftx::fuzz::fail("the canonical printing evaluates differently", canonical, env);
    if (!printed_as_c)
      continue;
    i128 from_c = 0;
    try {
      from_c = printed_c.eval(env);
    } catch (const Undefined&) {
      liftx::fuzz::fail("C printing is undefined where the input is defined", c_text, env);
    } catch (const Unsupported&) {
      liftx::fuzz::fail("the fuzz evaluator cannot read the C printing", c_text);
    }
    if (from_c != expected)
      liftx::fuzz::fail("C printing evaluates differently", c_text, env);
  }
  return 0;
}
