/// Property tests (Halide fuzz style): random expression trees with their own C-semantics
/// evaluator, built through the API, must evaluate to the same values on random in-range
/// assignments; analyses must be sound on the same assignments; printing must round-trip.
#include "ir/arith/expr.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace liftx::arith;

namespace {

__extension__ typedef __int128 i128;

uint64_t test_seed() {
  if (const char* s = std::getenv("LIFTX_TEST_SEED"))
    return std::strtoull(s, nullptr, 10);
  return 20240611;
}

// ---- test-side variables -----------------------------------------------------------------------

struct TestVar {
  std::string name;
  Expr expr;
  // how to sample: [lo, hi] unless symbolic (then [0, value of `bound_of` - 1]); step
  int64_t lo, hi, step;
  int bound_of = -1; ///< index of the variable whose value bounds this one from above
};

std::vector<TestVar> make_vars(std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> start(-20, 5), len(1, 40);
  std::vector<TestVar> vars;
  Expr N = size_var("N");
  vars.push_back({"N", N, 1, 40, 1});
  vars.push_back({"i", range_var("i", Expr(0), N), 0, 0, 1, 0});
  int64_t a = start(rng), la = len(rng);
  vars.push_back({"a", range_var("a", Expr(a), Expr(a + la)), a, a + la - 1, 1});
  int64_t b = start(rng) + 10, lb = len(rng);
  vars.push_back({"b", range_var("b", Expr(b), Expr(b + lb)), b, b + lb - 1, 1});
  vars.push_back({"x", var("x"), -50, 50, 1});
  vars.push_back({"s", range_var("s", Expr(0), Expr(64), Expr(4)), 0, 60, 4});
  return vars;
}

std::map<std::string, Range, std::less<>> ranges_of(const std::vector<TestVar>& vars) {
  std::map<std::string, Range, std::less<>> r;
  for (const TestVar& v : vars)
    r[v.name] = v.expr.node().range;
  return r;
}

using Assignment = std::map<std::string, int64_t, std::less<>>;

std::string show(const Assignment& env) {
  std::string out;
  for (const auto& [name, value] : env)
    out += name + "=" + std::to_string(value) + " ";
  return out;
}

Assignment sample(const std::vector<TestVar>& vars, std::mt19937_64& rng) {
  Assignment values;
  for (const TestVar& v : vars) {
    int64_t lo = v.lo, hi = v.hi;
    if (v.bound_of >= 0)
      hi = values.at(vars[v.bound_of].name) - 1;
    int64_t steps = (hi - lo) / v.step;
    values[v.name] = lo + v.step * std::uniform_int_distribution<int64_t>(0, steps)(rng);
  }
  return values;
}

// ---- test-side expression trees ----------------------------------------------------------------

enum class Op {
  Const,
  Var,
  ExactLeaf,
  Add,
  Sub,
  Mul,
  Neg,
  Div,
  Mod,
  Min,
  Max,
  Select,
  ExactDiv,
  ExactDivByVar,  ///< kid /^ (variable % 3 + 3): exact only on the samples where it divides
  ExactDivByConst ///< kid /^ constant: likewise, so only the whole sum is a multiple
};

struct Tree {
  Op op;
  int64_t value = 0; ///< Const value; Var index; ExactDiv divisor
  CmpOp cmp = CmpOp::Lt;
  std::vector<std::shared_ptr<Tree>> kids;
};
using TreeP = std::shared_ptr<Tree>;

TreeP leaf(Op op, int64_t v) {
  return std::make_shared<Tree>(Tree{op, v, CmpOp::Lt, {}});
}

/// `divide_by_variables`: also exact divisions by non-constant divisors (ExactDivByVar) and
/// exact divisions by constants of arbitrary numerators (ExactDivByConst).
TreeP random_tree(std::mt19937_64& rng, int depth, size_t var_count,
                  bool divide_by_variables = false) {
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  if (depth == 0 || pick(5) == 0) {
    int k = pick(7);
    if (k < 2)
      return leaf(Op::Const, std::uniform_int_distribution<int64_t>(-20, 20)(rng));
    if (k == 2)
      return leaf(Op::ExactLeaf, 0);
    return leaf(Op::Var, pick(static_cast<int>(var_count)));
  }
  static const Op ops[] = {Op::Add, Op::Add, Op::Sub, Op::Mul, Op::Neg,    Op::Div,     Op::Div,
                           Op::Mod, Op::Mod, Op::Min, Op::Max, Op::Select, Op::ExactDiv};
  Op op = divide_by_variables && pick(3) == 0
              ? (pick(2) == 0 ? Op::ExactDivByVar : Op::ExactDivByConst)
              : ops[pick(static_cast<int>(std::size(ops)))];
  auto t = std::make_shared<Tree>(Tree{op, 0, CmpOp::Lt, {}});
  int arity =
      op == Op::Neg || op == Op::ExactDiv || op == Op::ExactDivByVar || op == Op::ExactDivByConst
          ? 1
          : (op == Op::Select ? 4 : 2);
  for (int i = 0; i < arity; ++i)
    t->kids.push_back(random_tree(rng, depth - 1, var_count, divide_by_variables));
  if (op == Op::ExactDivByVar)
    t->value = pick(static_cast<int>(var_count));
  if ((op == Op::Div || op == Op::Mod) && pick(2) == 0) {
    // divisors are most interesting as small constants of either sign
    int64_t d = std::uniform_int_distribution<int64_t>(-5, 17)(rng);
    t->kids[1] = leaf(Op::Const, d == 0 ? 16 : d);
  }
  if (op == Op::ExactDiv)
    t->value = std::uniform_int_distribution<int64_t>(1, 6)(rng);
  if (op == Op::ExactDivByConst)
    t->value = std::uniform_int_distribution<int64_t>(2, 4)(rng);
  if (op == Op::Select)
    t->cmp = static_cast<CmpOp>(pick(6));
  return t;
}

/// The evaluation failed: division by zero or overflow somewhere in the raw tree.
struct Skip {};

int64_t fit(i128 v) {
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
    throw Skip{};
  return static_cast<int64_t>(v);
}

int64_t eval_tree(const Tree& t, const std::vector<TestVar>& vars, const Assignment& env) {
  auto kid = [&](int i) { return eval_tree(*t.kids[i], vars, env); };
  switch (t.op) {
  case Op::Const:
    return t.value;
  case Op::Var:
    return env.at(vars[t.value].name);
  case Op::ExactLeaf:
    return env.at("s") / 4;
  case Op::Add:
    return fit(i128{kid(0)} + kid(1));
  case Op::Sub:
    return fit(i128{kid(0)} - kid(1));
  case Op::Mul:
    return fit(i128{kid(0)} * kid(1));
  case Op::Neg:
    return fit(-i128{kid(0)});
  case Op::ExactDiv:
    return kid(0); // (c * a) /^ c
  case Op::ExactDivByVar: {
    const int64_t a = kid(0), d = env.at(vars[t.value].name) % 3 + 3;
    if (a % d != 0)
      throw Skip{}; // not exact on this sample: the program would not be well-formed
    return a / d;
  }
  case Op::ExactDivByConst: {
    const int64_t a = kid(0);
    if (a % t.value != 0)
      throw Skip{};
    return a / t.value;
  }
  case Op::Div:
  case Op::Mod: {
    int64_t a = kid(0), b = kid(1);
    if (b == 0)
      throw Skip{};
    if (b == -1)
      return t.op == Op::Div ? fit(-i128{a}) : 0;
    return t.op == Op::Div ? a / b : a % b;
  }
  case Op::Min:
    return std::min(kid(0), kid(1));
  case Op::Max:
    return std::max(kid(0), kid(1));
  case Op::Select: {
    int64_t l = kid(0), r = kid(1);
    bool holds = false;
    switch (t.cmp) {
    case CmpOp::Lt:
      holds = l < r;
      break;
    case CmpOp::Le:
      holds = l <= r;
      break;
    case CmpOp::Gt:
      holds = l > r;
      break;
    case CmpOp::Ge:
      holds = l >= r;
      break;
    case CmpOp::Eq:
      holds = l == r;
      break;
    case CmpOp::Ne:
      holds = l != r;
      break;
    }
    return holds ? kid(2) : kid(3);
  }
  }
  throw Skip{};
}

Expr build_tree(const Tree& t, const std::vector<TestVar>& vars) {
  auto kid = [&](int i) { return build_tree(*t.kids[i], vars); };
  switch (t.op) {
  case Op::Const:
    return Expr(t.value);
  case Op::Var:
    return vars[t.value].expr;
  case Op::ExactLeaf:
    return exact_div(vars[5].expr, Expr(4));
  case Op::Add:
    return kid(0) + kid(1);
  case Op::Sub:
    return kid(0) - kid(1);
  case Op::Mul:
    return kid(0) * kid(1);
  case Op::Neg:
    return -kid(0);
  case Op::ExactDiv:
    return exact_div(kid(0) * Expr(t.value), Expr(t.value));
  case Op::ExactDivByVar:
    return exact_div(kid(0), vars[t.value].expr % Expr(3) + Expr(3));
  case Op::ExactDivByConst:
    return exact_div(kid(0), Expr(t.value));
  case Op::Div:
    return kid(0) / kid(1);
  case Op::Mod:
    return kid(0) % kid(1);
  case Op::Min:
    return min(kid(0), kid(1));
  case Op::Max:
    return max(kid(0), kid(1));
  case Op::Select:
    return select(t.cmp, kid(0), kid(1), kid(2), kid(3));
  }
  return Expr(0);
}

std::string tree_text(const Tree& t, const std::vector<TestVar>& vars) {
  auto kid = [&](int i) { return tree_text(*t.kids[i], vars); };
  static const char* cmp_names[] = {"<", "<=", ">", ">=", "==", "!="};
  switch (t.op) {
  case Op::Const:
    return std::to_string(t.value);
  case Op::Var:
    return vars[t.value].name;
  case Op::ExactLeaf:
    return "(s /^ 4)";
  case Op::Add:
    return "(" + kid(0) + " + " + kid(1) + ")";
  case Op::Sub:
    return "(" + kid(0) + " - " + kid(1) + ")";
  case Op::Mul:
    return "(" + kid(0) + " * " + kid(1) + ")";
  case Op::Neg:
    return "(-" + kid(0) + ")";
  case Op::ExactDiv:
    return "((" + kid(0) + " * " + std::to_string(t.value) + ") /^ " + std::to_string(t.value) +
           ")";
  case Op::ExactDivByVar:
    return "(" + kid(0) + " /^ (" + vars[t.value].name + " % 3 + 3))";
  case Op::ExactDivByConst:
    return "(" + kid(0) + " /^ " + std::to_string(t.value) + ")";
  case Op::Div:
    return "(" + kid(0) + " / " + kid(1) + ")";
  case Op::Mod:
    return "(" + kid(0) + " % " + kid(1) + ")";
  case Op::Min:
    return "min(" + kid(0) + ", " + kid(1) + ")";
  case Op::Max:
    return "max(" + kid(0) + ", " + kid(1) + ")";
  case Op::Select:
    return "(" + kid(0) + " " + cmp_names[static_cast<int>(t.cmp)] + " " + kid(1) + " ? " + kid(2) +
           " : " + kid(3) + ")";
  }
  return "?";
}

/// Rebuilds a canonical expression from its node's operands with the public operators; canonical
/// forms must be fixed points of this.
Expr reconstruct(const Expr& e) {
  const Node& n = e.node();
  std::vector<Expr> ops;
  for (const Expr& o : n.operands)
    ops.push_back(reconstruct(o));
  switch (n.kind) {
  case Kind::Cst:
  case Kind::Var:
    return e;
  case Kind::Sum: {
    Expr r(0);
    for (const Expr& o : ops)
      r = r + o;
    return r;
  }
  case Kind::Prod: {
    Expr r(1);
    for (const Expr& o : ops)
      r = r * o;
    return r;
  }
  case Kind::Pow:
    return pow(ops[0], n.exponent);
  case Kind::IntDiv:
    return ops[0] / ops[1];
  case Kind::Mod:
    return ops[0] % ops[1];
  case Kind::Min:
    return min(ops[0], ops[1]);
  case Kind::Max:
    return max(ops[0], ops[1]);
  case Kind::Select:
    return select(n.cmp, ops[0], ops[1], ops[2], ops[3]);
  }
  return e;
}

bool is_overflow(const liftx::UserError& e) {
  return e.message().find("overflow") != std::string::npos;
}

struct Sample {
  Assignment env;
  std::optional<int64_t> raw; ///< nullopt: the raw tree divides by zero or overflows
};

} // namespace

TEST_CASE("property: built expressions evaluate like the raw C-semantics tree") {
  uint64_t seed = test_seed();
  INFO("seed = " << seed << " (set LIFTX_TEST_SEED to reproduce)");
  std::mt19937_64 rng(seed);
  int checked_values = 0, simplified_smaller = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<TestVar> vars = make_vars(rng);
    TreeP tree = random_tree(rng, 1 + round % 4, vars.size());
    std::vector<Sample> samples;
    for (int s = 0; s < 12; ++s) {
      Sample sm{sample(vars, rng), std::nullopt};
      try {
        sm.raw = eval_tree(*tree, vars, sm.env);
      } catch (const Skip&) {
      }
      samples.push_back(sm);
    }
    std::string raw_text = tree_text(*tree, vars);
    CAPTURE(raw_text);
    Expr built;
    try {
      built = build_tree(*tree, vars);
    } catch (const liftx::UserError& e) {
      // Only a divisor that is identically zero (or a genuine overflow) may fail at construction.
      CAPTURE(e.what());
      if (!is_overflow(e))
        for (const Sample& sm : samples)
          CHECK_FALSE(sm.raw.has_value());
      continue;
    }
    std::string built_text = built.to_string();
    CAPTURE(built_text);
    if (built_text.size() < raw_text.size())
      ++simplified_smaller;
    for (const Sample& sm : samples) {
      if (!sm.raw)
        continue;
      std::string env_text = show(sm.env);
      CAPTURE(env_text);
      try {
        int64_t got = evaluate(built, sm.env);
        CHECK(got == *sm.raw);
        ++checked_values;
      } catch (const liftx::UserError& e) {
        if (!is_overflow(e))
          FAIL_CHECK("evaluate threw: " << e.what());
      }
      // bounds and sign are sound on in-range assignments
      Interval b = bounds(built);
      if (b.lo)
        CHECK(*b.lo <= *sm.raw);
      if (b.hi)
        CHECK(*sm.raw <= *b.hi);
      ModRem mr = modulus_remainder(built);
      if (mr.modulus == 0)
        CHECK(*sm.raw == mr.remainder);
      else
        CHECK(((*sm.raw - mr.remainder) % mr.modulus) == 0);
    }
    // printing round-trips and canonical forms are fixed points
    CHECK(parse(built_text, ranges_of(vars)) == built);
    CHECK(substitute(built, {}) == built);
    CHECK(reconstruct(built) == built);
  }
  CHECK(checked_values > 10000);
  CHECK(simplified_smaller > 300);
}

namespace {

/// Evaluates OpenCL C integer expression text as to_c prints it (C semantics: / and % truncate;
/// min, max, ?: and comparisons), for checking the printer against exact evaluation.
class CText {
public:
  CText(const std::string& text, const Assignment& env) : text_(text), env_(env) {}
  int64_t value() {
    const int64_t v = ternary();
    skip_spaces();
    expect(pos_ == text_.size());
    return v;
  }

private:
  /// Malformed C text: a failure of the test (checked without doctest's per-call cost).
  void expect(bool ok) {
    if (!ok)
      FAIL("malformed C text at " << pos_ << ": " << text_);
  }
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ')
      ++pos_;
  }
  bool eat(const std::string& token) {
    skip_spaces();
    if (text_.compare(pos_, token.size(), token) != 0)
      return false;
    pos_ += token.size();
    return true;
  }
  int64_t ternary() {
    const int64_t l = sum();
    static const std::pair<const char*, CmpOp> cmps[] = {{"<=", CmpOp::Le}, {">=", CmpOp::Ge},
                                                         {"==", CmpOp::Eq}, {"!=", CmpOp::Ne},
                                                         {"<", CmpOp::Lt},  {">", CmpOp::Gt}};
    for (const auto& [token, cmp] : cmps)
      if (eat(token)) {
        const int64_t r = sum();
        bool holds = cmp == CmpOp::Lt   ? l < r
                     : cmp == CmpOp::Le ? l <= r
                     : cmp == CmpOp::Gt ? l > r
                     : cmp == CmpOp::Ge ? l >= r
                     : cmp == CmpOp::Eq ? l == r
                                        : l != r;
        // Only the branch taken is evaluated, as in C; the other is parsed.
        const bool live = live_;
        expect(eat("?"));
        live_ = live && holds;
        const int64_t a = ternary();
        expect(eat(":"));
        live_ = live && !holds;
        const int64_t b = ternary();
        live_ = live;
        return holds ? a : b;
      }
    return l;
  }
  int64_t sum() {
    int64_t v = product();
    for (;;) {
      if (eat("+"))
        v = live_ ? fit(i128{v} + product()) : product();
      else if (eat("-"))
        v = live_ ? fit(i128{v} - product()) : product();
      else
        return v;
    }
  }
  int64_t product() {
    int64_t v = unary();
    for (;;) {
      char op = 0;
      if (eat("*"))
        op = '*';
      else if (eat("/"))
        op = '/';
      else if (eat("%"))
        op = '%';
      else
        return v;
      const int64_t r = unary();
      if (!live_) {
        v = 0;
        continue;
      }
      if (op == '*') {
        v = fit(i128{v} * r);
        continue;
      }
      if (r == 0)
        throw Skip{};
      v = op == '/' ? fit(i128{v} / r) : static_cast<int64_t>(i128{v} % r);
    }
  }
  int64_t unary() {
    if (eat("-")) {
      const int64_t v = unary();
      return live_ ? fit(-i128{v}) : 0;
    }
    return primary();
  }
  int64_t primary() {
    skip_spaces();
    if (eat("(")) {
      const int64_t v = ternary();
      expect(eat(")"));
      return v;
    }
    for (const char* f : {"min", "max"})
      if (eat(std::string(f) + "(")) {
        const int64_t a = ternary();
        expect(eat(","));
        const int64_t b = ternary();
        expect(eat(")"));
        return std::string(f) == "min" ? std::min(a, b) : std::max(a, b);
      }
    size_t end = pos_;
    while (end < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
      ++end;
    expect(end > pos_);
    const std::string word = text_.substr(pos_, end - pos_);
    pos_ = end;
    if (std::isdigit(static_cast<unsigned char>(word[0])))
      return std::stoll(word);
    return env_.at(word);
  }

  const std::string& text_;
  const Assignment& env_;
  size_t pos_ = 0;
  bool live_ = true; ///< false inside the branch of a ?: that is not taken
};

} // namespace

TEST_CASE("property: the OpenCL C text of an expression evaluates like the expression") {
  // Exact divisions by non-constant divisors included: their C text once divided each term of a
  // sum separately, truncating each ((j - k) /^ d printed as j / d - k / d).
  uint64_t seed = test_seed();
  INFO("seed = " << seed << " (set LIFTX_TEST_SEED to reproduce)");
  std::mt19937_64 rng(seed + 1);
  int checked = 0, over_variables = 0;
  // Fewer and shallower trees than above: divisions by non-constants make the simplifier work
  // much harder.
  for (int round = 0; round < 1000; ++round) {
    std::vector<TestVar> vars = make_vars(rng);
    TreeP tree = random_tree(rng, 1 + round % 3, vars.size(), true);
    Expr built;
    try {
      built = build_tree(*tree, vars);
    } catch (const liftx::UserError&) {
      continue; // an identically zero divisor or an overflow: nothing to print
    }
    std::string c;
    try {
      c = to_c(built);
    } catch (const liftx::UserError& e) {
      if (is_overflow(e))
        continue; // a common denominator too large for 64 bits
      throw;
    }
    CAPTURE(tree_text(*tree, vars));
    CAPTURE(c);
    for (int s = 0; s < 12; ++s) {
      const Assignment env = sample(vars, rng);
      int64_t raw = 0;
      try {
        raw = eval_tree(*tree, vars, env);
      } catch (const Skip&) {
        continue;
      }
      std::string env_text = show(env);
      CAPTURE(env_text);
      try {
        const int64_t got = CText(c, env).value();
        CHECK(got == raw);
        ++checked;
        over_variables += c.find("% 3) + 3)") != std::string::npos;
      } catch (const Skip&) {
        // the C text overflows or divides by zero where the exact value does not: it may only
        // happen in intermediate terms the exact evaluation never forms
      }
    }
  }
  MESSAGE(checked << " values checked, " << over_variables << " over non-constant divisors");
  CHECK(checked > 2000);
  CHECK(over_variables > 200);
}

TEST_CASE("to_c: an exact division by a non-constant divides the whole sum once") {
  Expr j = var("j"), k = var("k");
  const Expr e = exact_div(j - k, Expr(19) % k);
  CHECK(to_c(e) == "((j - k) / (19 % k))");
  CHECK(CText(to_c(e), {{"j", -99}, {"k", 813}}).value() == -48);
}

TEST_CASE("property: proofs hold on every sampled assignment") {
  uint64_t seed = test_seed() + 1;
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  int proven = 0;
  for (int round = 0; round < 1500; ++round) {
    std::vector<TestVar> vars = make_vars(rng);
    TreeP ta = random_tree(rng, 2, vars.size()), tb = random_tree(rng, 2, vars.size());
    Expr a, b;
    try {
      a = build_tree(*ta, vars);
      b = build_tree(*tb, vars);
    } catch (const liftx::UserError&) {
      continue;
    }
    bool lt = prove_lt(a, b), le = prove_le(a, b), eq = prove_eq(a, b), nonneg = prove_nonneg(a);
    bool div = divides(Expr(4), a);
    proven += lt + le + eq + nonneg + div;
    CAPTURE(a.to_string());
    CAPTURE(b.to_string());
    for (int s = 0; s < 10; ++s) {
      Assignment env = sample(vars, rng);
      int64_t va, vb;
      try {
        va = eval_tree(*ta, vars, env);
        vb = eval_tree(*tb, vars, env);
      } catch (const Skip&) {
        continue;
      }
      std::string env_text = show(env);
      CAPTURE(env_text);
      if (lt)
        CHECK(va < vb);
      if (le)
        CHECK(va <= vb);
      if (eq)
        CHECK(va == vb);
      if (nonneg)
        CHECK(va >= 0);
      if (div)
        CHECK(va % 4 == 0);
    }
  }
  CHECK(proven > 500);
}

TEST_CASE("property: substituting a constant commutes with evaluation") {
  std::mt19937_64 rng(test_seed() + 2);
  for (int round = 0; round < 800; ++round) {
    std::vector<TestVar> vars = make_vars(rng);
    TreeP tree = random_tree(rng, 3, vars.size());
    Expr built;
    try {
      built = build_tree(*tree, vars);
    } catch (const liftx::UserError&) {
      continue;
    }
    Assignment env = sample(vars, rng);
    int64_t expected;
    try {
      expected = eval_tree(*tree, vars, env);
    } catch (const Skip&) {
      continue;
    }
    CAPTURE(built.to_string());
    std::string env_text = show(env);
    CAPTURE(env_text);
    // substitute the variables that bound no other one (x, a, b) by their values
    std::unordered_map<Expr, Expr, std::hash<Expr>> map;
    for (const char* name : {"a", "b", "x"})
      for (const TestVar& v : vars)
        if (v.name == name)
          map.emplace(v.expr, Expr(env.at(name)));
    try {
      Expr partially = substitute(built, map);
      CHECK(evaluate(partially, env) == expected);
    } catch (const liftx::UserError& e) {
      if (!is_overflow(e))
        FAIL_CHECK("substitute/evaluate threw: " << e.what());
    }
  }
}

TEST_CASE("to_c: only the whole sum of exact divisions is known to be an integer") {
  Expr i = var("i"), j = var("j"), k = var("k"), z = var("Z");
  // (i + Z /^ j) /^ 4 is i/4 + Z/(4j) in canonical form: once printed ((Z / 4) / j) + (i / 4).
  const Expr nested = exact_div(i + exact_div(z, j), Expr(4));
  CHECK(to_c(nested) == "(((Z / j) + i) / 4)");
  CHECK(CText(to_c(nested), {{"i", 1}, {"j", 3}, {"Z", 9}}).value() == 1);
  // a /^ j + b /^ k from (a*k + b*j) /^ (j*k): neither term is an integer alone.
  const Expr a = var("a"), b = var("b");
  const Expr two = exact_div(a * k + b * j, j * k);
  const std::string c = to_c(two);
  CAPTURE(c);
  CHECK(CText(c, {{"a", 1}, {"b", 1}, {"j", 2}, {"k", 2}}).value() == 1);
  CHECK(CText(c, {{"a", 1}, {"b", 4}, {"j", 3}, {"k", 6}}).value() == 1);
  CHECK(CText(c, {{"a", -1}, {"b", -4}, {"j", 3}, {"k", 6}}).value() == -1);
}

TEST_CASE("to_c: exact divisions over different denominators do not overflow where the value "
          "does not") {
  // a /^ j + b /^ k over j * k was (a * k + b * j) / (j * k): with a = 6e17 and k = 16, a * k
  // is past 2^63 while the value is 2e17 + 2. Each group is now C's quotient plus a remainder
  // below its denominator: only the remainders go over j * k.
  const Expr a = var("a"), b = var("b"), j = var("j"), k = var("k");
  const Expr two = exact_div(a * k + b * j, j * k);
  const std::string c = to_c(two);
  CHECK(c == "((a / j) + (b / k) + (((a % j) * k + (b % k) * j) / (j * k)))");
  CHECK(CText(c, {{"a", 600000000000000000}, {"b", 32}, {"j", 3}, {"k", 16}}).value() ==
        200000000000000002);
  // The remainders carry: 1/2 + 1/2 = 1, and truncation towards zero with negative values.
  CHECK(CText(c, {{"a", 1}, {"b", 1}, {"j", 2}, {"k", 2}}).value() == 1);
  CHECK(CText(c, {{"a", -8}, {"b", 1}, {"j", 6}, {"k", 3}}).value() == -1); // -8/6 + 1/3
  // Groups over a denominator and a multiple of it: a /^ j + b /^ (j * k).
  const Expr nested = exact_div(a * k + b, j * k);
  const std::string n = to_c(nested);
  CAPTURE(n);
  CHECK(CText(n, {{"a", 5}, {"b", 9}, {"j", 4}, {"k", 3}}).value() == 2); // (15 + 9) / 12
  CHECK(CText(n, {{"a", -5}, {"b", -9}, {"j", 4}, {"k", 3}}).value() == -2);
}
