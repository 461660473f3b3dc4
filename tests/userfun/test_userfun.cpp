#include "ir/userfun/userfun.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <climits>
#include <cmath>
#include <random>

using namespace liftx;
using namespace liftx::ir;

namespace {

constexpr ScalarKind F = ScalarKind::Float;
constexpr ScalarKind I = ScalarKind::Int;
constexpr ScalarKind D = ScalarKind::Double;
constexpr ScalarKind B = ScalarKind::Bool;

std::vector<UserFunParam> params_of(std::initializer_list<const char*> names, ScalarKind kind) {
  std::vector<UserFunParam> params;
  for (const char* n : names)
    params.push_back({n, kind});
  return params;
}

float eval_f(const UserFunPtr& f, std::vector<Scalar> args) {
  return std::get<float>(f->evaluate(args));
}
int32_t eval_i(const UserFunPtr& f, std::vector<Scalar> args) {
  return std::get<int32_t>(f->evaluate(args));
}

bool same_bits(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Non-zero, mixed-sign floats of varied magnitude.
float random_float(std::mt19937& rng) {
  std::uniform_real_distribution<float> mantissa(0.5f, 2.0f);
  std::uniform_int_distribution<int> exponent(-10, 10);
  const float sign = rng() % 2 ? 1.0f : -1.0f;
  return sign * std::ldexp(mantissa(rng), exponent(rng));
}

const char* srad_body = R"(
  float dN = n - c;
  float dS = s - c;
  float dW = w - c;
  float dE = e - c;
  float g2 = (dN * dN + dS * dS + dW * dW + dE * dE) / (c * c);
  float l = (dN + dS + dW + dE) / c;
  float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
  float den = 1.0f + 0.25f * l;
  float qsqr = num / (den * den);
  den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
  float coef = 1.0f / (1.0f + den);
  if (coef < 0.0f) {
    coef = 0.0f;
  } else if (coef > 1.0f) coef = 1.0f;
  return coef;
)";

float srad_reference(float c, float n, float s, float e, float w, float q0sqr) {
  float dN = n - c, dS = s - c, dW = w - c, dE = e - c;
  float g2 = (dN * dN + dS * dS + dW * dW + dE * dE) / (c * c);
  float l = (dN + dS + dW + dE) / c;
  float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
  float den = 1.0f + 0.25f * l;
  float qsqr = num / (den * den);
  den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
  float coef = 1.0f / (1.0f + den);
  if (coef < 0.0f)
    coef = 0.0f;
  else if (coef > 1.0f)
    coef = 1.0f;
  return coef;
}

} // namespace

TEST_CASE("jacobi5 evaluates in float exactly like C") {
  const auto f = UserFunDef::parse("jacobi5", params_of({"c", "n", "s", "e", "w"}, F), F,
                                   "return 0.2f * (c + n + s + e + w);");
  CHECK(f->name() == "jacobi5");
  CHECK(f->params().size() == 5);
  CHECK(f->result() == F);
  CHECK(f->body_text() == "return 0.2f * (c + n + s + e + w);");
  std::mt19937 rng(2024);
  for (int i = 0; i < 1000; ++i) {
    const float c = random_float(rng), n = random_float(rng), s = random_float(rng),
                e = random_float(rng), w = random_float(rng);
    const float expected = 0.2f * (c + n + s + e + w);
    const float got = eval_f(f, {c, n, s, e, w});
    REQUIRE(same_bits(got, expected));
  }
  CHECK(f->to_opencl() == "float jacobi5(float c, float n, float s, float e, float w) {\n"
                          "  return 0.2f * (c + n + s + e + w);\n"
                          "}");
  const OpCounts counts = f->op_counts();
  CHECK(counts.add == 4);
  CHECK(counts.mul == 1);
  CHECK(counts.div == 0);
  CHECK(counts.compare == 0);
  CHECK(counts.special == 0);
  CHECK(counts.total() == 5);
}

TEST_CASE("srad-like body with locals, if/else-if and reassignment") {
  const auto f =
      UserFunDef::parse("srad", params_of({"c", "n", "s", "e", "w", "q0sqr"}, F), F, srad_body);
  std::mt19937 rng(7);
  int clamped_low = 0, clamped_high = 0;
  for (int i = 0; i < 2000; ++i) {
    const float c = random_float(rng), n = random_float(rng), s = random_float(rng),
                e = random_float(rng), w = random_float(rng);
    const float q = random_float(rng); // negative q0sqr also drives coef below 0
    const float expected = srad_reference(c, n, s, e, w, q);
    REQUIRE(same_bits(eval_f(f, {c, n, s, e, w, q}), expected));
    clamped_low += expected == 0.0f;
    clamped_high += expected == 1.0f;
  }
  CHECK(clamped_low > 0); // both branches of the if were exercised
  CHECK(clamped_high > 0);
  const OpCounts counts = f->op_counts();
  // Per statement: dN..dE, g2, l, num, den, qsqr, den again, coef.
  CHECK(counts.add == 4 + 3 + 3 + 1 + 1 + 0 + 2 + 1);
  CHECK(counts.mul == 0 + 5 + 0 + 3 + 1 + 1 + 1 + 0);
  CHECK(counts.div == 1 + 1 + 1 + 1 + 1 + 1);
  CHECK(counts.compare == 2); // the else-if path tests both conditions
  CHECK(counts.special == 0);
}

TEST_CASE("ternaries and builtins fmin fmax clamp sqrt") {
  const auto f = UserFunDef::parse("blend", params_of({"a", "b", "c"}, F), F, R"(
    float lo = fmin(a, b);
    float hi = fmax(a, b);
    float r = a > b ? sqrt(fabs(a - b)) : clamp(c, lo, hi);
    return r + (lo < 0.0f ? -lo : lo) * rsqrt(hi * hi + 1.0f);
  )");
  std::mt19937 rng(11);
  for (int i = 0; i < 1000; ++i) {
    const float a = random_float(rng), b = random_float(rng), c = random_float(rng);
    const float lo = std::fmin(a, b), hi = std::fmax(a, b);
    const float r = a > b ? std::sqrt(std::fabs(a - b)) : std::min(std::max(c, lo), hi);
    const float expected = r + (lo < 0.0f ? -lo : lo) * (1.0f / std::sqrt(hi * hi + 1.0f));
    REQUIRE(same_bits(eval_f(f, {a, b, c}), expected));
  }
  const OpCounts counts = f->op_counts();
  CHECK(counts.special == 2 + 2 + 1); // fmin fmax, max(sqrt+fabs, clamp), rsqrt
  CHECK(counts.compare == 2);
  CHECK(counts.add == 1 + 2);
  CHECK(counts.mul == 2);
}

TEST_CASE("every builtin matches the float C library function") {
  struct Case {
    const char* call;
    float (*reference)(float, float, float);
  };
  const Case cases[] = {
      {"sqrt(x)", [](float x, float, float) { return std::sqrt(x); }},
      {"rsqrt(x)", [](float x, float, float) { return 1.0f / std::sqrt(x); }},
      {"fabs(-x)", [](float x, float, float) { return std::fabs(-x); }},
      {"abs(-x)", [](float x, float, float) { return std::fabs(-x); }},
      {"exp(y)", [](float, float y, float) { return std::exp(y); }},
      {"log(x)", [](float x, float, float) { return std::log(x); }},
      {"pow(x, y)", [](float x, float y, float) { return std::pow(x, y); }},
      {"sin(y)", [](float, float y, float) { return std::sin(y); }},
      {"cos(y)", [](float, float y, float) { return std::cos(y); }},
      {"fmin(x, y)", [](float x, float y, float) { return std::fmin(x, y); }},
      {"fmax(x, y)", [](float x, float y, float) { return std::fmax(x, y); }},
      {"min(x, y)", [](float x, float y, float) { return y < x ? y : x; }},
      {"max(x, y)", [](float x, float y, float) { return x < y ? y : x; }},
      {"clamp(z, y, x)", [](float x, float y, float z) { return std::min(std::max(z, y), x); }},
      {"floor(y)", [](float, float y, float) { return std::floor(y); }},
      {"ceil(y)", [](float, float y, float) { return std::ceil(y); }},
  };
  std::mt19937 rng(5);
  for (const auto& c : cases) {
    CAPTURE(c.call);
    const auto f =
        UserFunDef::parse("b", params_of({"x", "y", "z"}, F), F, fmt::format("return {};", c.call));
    CHECK(f->op_counts().special == 1);
    for (int i = 0; i < 50; ++i) {
      const float x = std::fabs(random_float(rng)), y = random_float(rng), z = random_float(rng);
      REQUIRE(same_bits(eval_f(f, {x, y, z}), c.reference(x, y, z)));
    }
  }
}

TEST_CASE("double functions compute in double, mixed float/double in double") {
  const auto f = UserFunDef::parse("d", {{"x", D}, {"y", F}}, D, "return sqrt(x) + y * 0.1;");
  const double got = std::get<double>(f->evaluate(std::vector<Scalar>{2.0, 3.0f}));
  CHECK(got == std::sqrt(2.0) + static_cast<double>(3.0f) * 0.1);
  // A double literal in a float function promotes the arithmetic to double, then narrows.
  const auto g = UserFunDef::parse("g", {{"x", F}}, F, "return x * 0.1;");
  const float x = 0.3f;
  CHECK(same_bits(eval_f(g, {x}), static_cast<float>(static_cast<double>(x) * 0.1)));
  CHECK(g->to_opencl() == "float g(float x) {\n  return (float)((double)x * 0.1);\n}");
}

TEST_CASE("int arithmetic with negatives and wrap-around") {
  const auto f =
      UserFunDef::parse("ints", params_of({"a", "b", "c"}, I), I, "return a * b - c / b + a % b;");
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> small(-1000, 1000);
  for (int i = 0; i < 1000; ++i) {
    const int32_t a = small(rng), c = small(rng);
    int32_t b = small(rng);
    if (b == 0)
      b = -7;
    REQUIRE(eval_i(f, {a, b, c}) == a * b - c / b + a % b);
  }
  // Wrap-around: computed in 32-bit two's complement.
  CHECK(eval_i(f, {INT32_MAX, 2, 0}) ==
        static_cast<int32_t>(static_cast<uint32_t>(INT32_MAX) * 2u) + INT32_MAX % 2);
  const auto add = UserFunDef::builtin("add_int");
  REQUIRE(add);
  CHECK(eval_i(add, {INT32_MAX, 1}) == INT32_MIN);
  CHECK(eval_i(add, {INT32_MIN, -1}) == INT32_MAX);
  CHECK(eval_i(UserFunDef::builtin("mult_int"), {65536, 65536}) == 0);
  const auto div = UserFunDef::parse("div", params_of({"a", "b"}, I), I, "return a / b;");
  CHECK(eval_i(div, {-7, 2}) == -3); // truncation toward zero
  CHECK(eval_i(div, {INT32_MIN, -1}) == INT32_MIN);
  const auto rem = UserFunDef::parse("rem", params_of({"a", "b"}, I), I, "return a % b;");
  CHECK(eval_i(rem, {-7, 2}) == -1);
  CHECK(eval_i(rem, {INT32_MIN, -1}) == 0);
  const auto neg = UserFunDef::parse("neg", params_of({"a"}, I), I, "return -a + abs(a);");
  CHECK(eval_i(neg, {-5}) == 10);
  CHECK(eval_i(neg, {INT32_MIN}) == 0); // -INT_MIN and abs(INT_MIN) both wrap to INT_MIN
  const auto mm = UserFunDef::parse("mm", params_of({"a", "b"}, I), I,
                                    "return min(a, b) * 100 + max(a, b) + clamp(a, -1, 1);");
  CHECK(eval_i(mm, {-3, 4}) == -300 + 4 - 1);
}

TEST_CASE("integer division by zero is a user error") {
  const auto div = UserFunDef::parse("idiv", params_of({"a", "b"}, I), I, "return a / b;");
  try {
    div->evaluate(std::vector<Scalar>{1, 0});
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(e.message() == "userfun idiv: integer division by zero");
  }
  const auto rem = UserFunDef::parse("irem", params_of({"a", "b"}, I), I, "return a % b;");
  CHECK_THROWS_AS(rem->evaluate(std::vector<Scalar>{1, 0}), UserError);
  // Short-circuit and ternary evaluate only what C evaluates.
  const auto guarded =
      UserFunDef::parse("g", params_of({"n", "d"}, I), B, "return d != 0 && n / d > 1;");
  CHECK(std::get<bool>(guarded->evaluate(std::vector<Scalar>{5, 0})) == false);
  CHECK(std::get<bool>(guarded->evaluate(std::vector<Scalar>{5, 2})) == true);
  const auto tern =
      UserFunDef::parse("t", params_of({"n", "d"}, I), I, "return d == 0 ? 0 : n / d;");
  CHECK(eval_i(tern, {5, 0}) == 0);
  CHECK(eval_i(tern, {9, -3}) == -3);
  // Float division by zero is IEEE.
  const auto fdiv = UserFunDef::parse("fdiv", params_of({"a", "b"}, F), F, "return a / b;");
  CHECK(std::isinf(eval_f(fdiv, {1.0f, 0.0f})));
}

TEST_CASE("conversions, casts, comparisons and compound assignment") {
  const auto mixed = UserFunDef::parse("mixed", {{"i", I}, {"f", F}}, F, "return i + f;");
  CHECK(eval_f(mixed, {16777217, 0.0f}) == 16777216.0f); // i converted to float first
  const auto cast = UserFunDef::parse("cast", {{"f", F}}, I, "return (int)f + (int)(f * 2.0f);");
  CHECK(eval_i(cast, {-2.7f}) == -2 + -5);
  const auto ret = UserFunDef::parse("ret", {{"f", F}}, I, "return f;"); // converted to int
  CHECK(eval_i(ret, {3.9f}) == 3);
  CHECK(eval_i(ret, {1e20f}) == INT32_MAX); // saturates (documented), no UB
  const auto cmp = UserFunDef::parse("cmp", params_of({"a", "b"}, F), B,
                                     "return a < b && !(a == 0.0f) || b >= 10.0f;");
  CHECK(std::get<bool>(cmp->evaluate(std::vector<Scalar>{1.0f, 2.0f})) == true);
  CHECK(std::get<bool>(cmp->evaluate(std::vector<Scalar>{0.0f, 2.0f})) == false);
  CHECK(std::get<bool>(cmp->evaluate(std::vector<Scalar>{3.0f, 12.0f})) == true);
  const auto compound = UserFunDef::parse("compound", {{"a", I}}, I, R"(
    int x = a;
    x += 3;   // 10
    x *= 2;   // 20
    x -= 1;   // 19
    x /= 3;   // 6
    int y = 5;
    y += 1.5f; /* (int)(5.0f + 1.5f) */
    bool flag = x > y;
    return x * 10 + y + flag;
  )");
  CHECK(eval_i(compound, {7}) == 6 * 10 + 6 + 0);
  CHECK(eval_i(compound, {10}) == 8 * 10 + 6 + 1);
  const OpCounts counts = compound->op_counts();
  CHECK(counts.add == 5);
  CHECK(counts.mul == 2);
  CHECK(counts.div == 1);
  CHECK(counts.compare == 1);
  const auto boolean = UserFunDef::parse("boolean", {{"b", B}, {"x", F}}, F,
                                         "if (b) return x; else if (!x) return 1.0f; return -x;");
  CHECK(eval_f(boolean, {true, 2.0f}) == 2.0f);
  CHECK(eval_f(boolean, {false, 0.0f}) == 1.0f);
  CHECK(eval_f(boolean, {false, 2.0f}) == -2.0f);
  const auto blocks = UserFunDef::parse("blocks", {{"x", F}}, F, R"(
    float r;
    { float t = x * 2.0f; r = t; }
    { float t = x + 1.0f; r += t; }
    ;
    return r;
  )");
  CHECK(eval_f(blocks, {3.0f}) == 10.0f);
}

TEST_CASE("to_opencl prints a deterministic, fully parenthesised definition") {
  const auto f = UserFunDef::parse("f", {{"a", F}, {"i", I}, {"b", B}}, F, R"(
    float d = a - i;   // implicit int -> float
    int k = -i * 2 % 3;
    if (d < 0.0f && b) {
      d = -d;
    } else if (k == 1) d *= 0.5f;
    else {
      d = (float)k + (b ? 1 : 2);
    }
    return d > 1 ? sqrt(d) : (double)d * 0.1;
  )");
  CHECK(f->to_opencl() == "float f(float a, int i, bool b) {\n"
                          "  float d = a - (float)i;\n"
                          "  int k = liftx_rem(liftx_mul(liftx_neg(i), 2), 3);\n"
                          "  if ((d < 0.0f) && b) {\n"
                          "    d = -d;\n"
                          "  } else if (k == 1) {\n"
                          "    d = d * 0.5f;\n"
                          "  } else {\n"
                          "    d = (float)k + (float)(b ? 1 : 2);\n"
                          "  }\n"
                          "  return (float)((d > 1.0f) ? (double)sqrt(d) : ((double)d * 0.1));\n"
                          "}");
  const auto g =
      UserFunDef::parse("g", {{"i", I}}, I, "return abs(i) < 3 ? -(-i) : - -2147483648 + -2;");
  CHECK(g->to_opencl() == "int g(int i) {\n"
                          "  return ((int)abs(i) < 3) ? liftx_neg(liftx_neg(i)) : "
                          "liftx_add((-2147483647 - 1), -2);\n"
                          "}");
  const auto h = UserFunDef::parse("h", {}, D, "{ return -(double)INFINITY; }");
  CHECK(h->to_opencl() == "double h(void) {\n  {\n    return -(double)INFINITY;\n  }\n}");
  CHECK(std::get<double>(h->evaluate({})) == -std::numeric_limits<double>::infinity());
  // Printing is a pure function of the parse.
  const auto f2 = UserFunDef::parse("f", f->params(), F, f->body_text());
  CHECK(f2->to_opencl() == f->to_opencl());
}

TEST_CASE("to_opencl prints left chains flat and prefix operators without parentheses") {
  const auto f = UserFunDef::parse("f", {{"a", F}, {"b", F}, {"i", I}, {"p", B}, {"q", B}}, F,
                                   R"(
    float s = a + b - a + 2.0f * b * a / b - (a - b) - a * (b / a);
    bool t = p && q && !(!p) || q || p && (q || p);
    return t ? -(-s) + (float)(-i) - -(-(a)) : s * s;
  )");
  CHECK(f->to_opencl() == "float f(float a, float b, int i, bool p, bool q) {\n"
                          "  float s = a + b - a + (2.0f * b * a / b) - (a - b) - (a * (b / a));\n"
                          "  bool t = (p && q && !!p) || q || (p && (q || p));\n"
                          "  return t ? (- -s + (float)liftx_neg(i) - - -a) : (s * s);\n"
                          "}");
  const std::vector<Scalar> args = {Scalar{1.5f}, Scalar{-0.25f}, Scalar{7}, Scalar{true},
                                    Scalar{false}};
  const std::string printed = f->to_opencl();
  const auto again = UserFunDef::parse(
      "f", f->params(), F,
      printed.substr(printed.find('{') + 1, printed.rfind('}') - printed.find('{') - 1));
  CHECK(again->evaluate(args) == f->evaluate(args));
}

TEST_CASE("a long sum prints flat, so any stencil's weighted points compile") {
  // 343 points: a 7x7x7 box. Parenthesising each term would nest past clang's 256 brackets.
  std::string body = "return a";
  for (int i = 1; i < 343; ++i)
    body += fmt::format(" {} {}.0f * a", i % 3 == 0 ? '-' : '+', i);
  body += ";";
  const auto f = UserFunDef::parse("f", {{"a", F}}, F, body);
  const std::string printed = f->to_opencl();
  CHECK(printed.find("((") == std::string::npos);
  const auto again = UserFunDef::parse(
      "f", {{"a", F}}, F,
      printed.substr(printed.find('{') + 1, printed.rfind('}') - printed.find('{') - 1));
  const std::vector<Scalar> half = {Scalar{0.5f}};
  CHECK(again->evaluate(half) == f->evaluate(half));
}

TEST_CASE("to_opencl defines what C leaves undefined, as the interpreter does") {
  // int arithmetic through helpers that wrap and define INT_MIN / -1; float to int saturates.
  const auto f = UserFunDef::parse("f", {{"x", F}, {"i", I}}, I,
                                   "int k = (int)x; return (i / -1) % k + -i * 3 - k;");
  CHECK(f->to_opencl() == "int f(float x, int i) {\n"
                          "  int k = convert_int_sat(x);\n"
                          "  return liftx_sub(liftx_add(liftx_rem(liftx_div(i, -1), k), "
                          "liftx_mul(liftx_neg(i), 3)), k);\n"
                          "}");
  CHECK(f->uses_opencl_int_helpers());
  CHECK_FALSE(UserFunDef::builtin("add")->uses_opencl_int_helpers());
  CHECK(UserFunDef::builtin("add_int")->uses_opencl_int_helpers());
  const std::string helpers = UserFunDef::opencl_int_helpers();
  for (const char* name :
       {"liftx_add", "liftx_sub", "liftx_mul", "liftx_neg", "liftx_div", "liftx_rem"})
    CHECK(helpers.find(std::string("int ") + name + "(") != std::string::npos);
  // The printed forms read back as the operations they stand for, with the same values.
  const auto g = UserFunDef::parse("g", {{"x", F}, {"i", I}}, I,
                                   "return liftx_add(liftx_div(i, -1), convert_int_sat(x));");
  const Scalar args[] = {Scalar{3.0e10f}, Scalar{INT32_MIN}};
  CHECK(std::get<int32_t>(g->evaluate(args)) == -1); // INT_MIN + INT_MAX
  // Names with the generated code's prefix are reserved.
  CHECK_THROWS_WITH_AS(UserFunDef::parse("h", {{"liftx_x", I}}, I, "return liftx_x;"),
                       doctest::Contains("reserved"), liftx::UserError);
}

TEST_CASE("op_counts follow paths: early returns do not add up") {
  const auto f = UserFunDef::parse("paths", params_of({"a", "b"}, F), F, R"(
    float d = a - b;
    if (d < 0.0f) {
      return sqrt(d * d);
    }
    return d / b + a * b;
  )");
  const OpCounts c = f->op_counts();
  CHECK(c.add == 2);
  CHECK(c.mul == 1);
  CHECK(c.div == 1);
  CHECK(c.compare == 1);
  CHECK(c.special == 1);
  const auto t = UserFunDef::parse("tern", params_of({"a", "b"}, F), F,
                                   "return a > b ? a * b * 2.0f : a + b;");
  const OpCounts tc = t->op_counts();
  CHECK(tc.compare == 1);
  CHECK(tc.mul == 2);
  CHECK(tc.add == 1);
  CHECK(tc.total() == 4);
}

TEST_CASE("builtin user functions") {
  for (const char* name : {"add", "mult", "add_int", "mult_int", "add_double", "mult_double"}) {
    CAPTURE(name);
    const auto f = UserFunDef::builtin(name);
    REQUIRE(f);
    CHECK(f->name() == name);
    REQUIRE(f->params().size() == 2);
    CHECK(f->params()[0].name == "x");
    CHECK(f->params()[1].name == "y");
    CHECK(f->params()[0].kind == f->result());
    CHECK(UserFunDef::builtin(name) == f); // shared
  }
  CHECK(UserFunDef::builtin("add")->result() == F);
  CHECK(UserFunDef::builtin("mult_int")->result() == I);
  CHECK(UserFunDef::builtin("add_double")->result() == D);
  CHECK(UserFunDef::builtin("id") == nullptr);
  CHECK(UserFunDef::builtin("sub") == nullptr);
  CHECK(eval_f(UserFunDef::builtin("add"), {1.5f, 2.25f}) == 3.75f);
  CHECK(eval_f(UserFunDef::builtin("mult"), {1.5f, -2.0f}) == -3.0f);
  CHECK(std::get<double>(
            UserFunDef::builtin("mult_double")->evaluate(std::vector<Scalar>{0.1, 3.0})) ==
        0.1 * 3.0);
  CHECK(UserFunDef::builtin("add")->to_opencl() ==
        "float add(float x, float y) {\n  return x + y;\n}");
  CHECK(UserFunDef::builtin("mult_double")->op_counts().mul == 1);
  CHECK(UserFunDef::builtin("add_int")->op_counts().add == 1);
}

TEST_CASE("same_userfun compares name, signature and body text") {
  const auto a = UserFunDef::parse("f", {{"x", F}}, F, "return x;");
  const auto a2 = UserFunDef::parse("f", {{"x", F}}, F, "return x;");
  CHECK(same_userfun(*a, *a));
  CHECK(same_userfun(*a, *a2));
  CHECK(!same_userfun(*a, *UserFunDef::parse("g", {{"x", F}}, F, "return x;")));
  CHECK(!same_userfun(*a, *UserFunDef::parse("f", {{"x", F}}, F, "return  x;")));
  CHECK(!same_userfun(*a, *UserFunDef::parse("f", {{"x", D}}, F, "return x;")));
  CHECK(!same_userfun(*a, *UserFunDef::parse("f", {{"x", F}}, D, "return x;")));
  CHECK(!same_userfun(*a, *UserFunDef::parse("f", {{"x", F}, {"y", F}}, F, "return x;")));
}

TEST_CASE("to_opencl output parses back to the same definition and values") {
  struct Fun {
    const char* name;
    std::vector<UserFunParam> params;
    const char* body;
  };
  const Fun funs[] = {
      {"srad", params_of({"c", "n", "s", "e", "w", "q0sqr"}, F), srad_body},
      {"blend", params_of({"a", "b", "c"}, F),
       "float lo = fmin(a, b); return a > b ? -sqrt(a - b) : clamp(c, lo, 2.0f) / -lo;"},
      {"ints",
       {{"a", F}, {"i", I}, {"b", B}},
       "int k = -i * 2 % 3 + abs(i); if (!b || k != 2) { k -= 1; } return k + (b ? a : 0.5f);"},
  };
  std::mt19937 rng(31);
  for (const auto& fun : funs) {
    const std::string name = fun.name;
    CAPTURE(name);
    const auto f = UserFunDef::parse(fun.name, fun.params, F, fun.body);
    const std::string printed = f->to_opencl();
    const size_t open = printed.find("{\n"), close = printed.rfind('}');
    REQUIRE(open != std::string::npos);
    const auto g =
        UserFunDef::parse(fun.name, fun.params, F, printed.substr(open + 2, close - open - 2));
    CHECK(g->to_opencl() == printed);
    for (int i = 0; i < 200; ++i) {
      std::vector<Scalar> args;
      for (const auto& p : fun.params) {
        const float x = random_float(rng);
        args.push_back(convert(Scalar{p.kind == I ? x * 100.0f : x}, p.kind));
      }
      REQUIRE(same_bits(std::get<float>(f->evaluate(args)), std::get<float>(g->evaluate(args))));
    }
  }
}

TEST_CASE("a tuple result: one value per component, converted to its kind") {
  const auto f = UserFunDef::parse("divmod", params_of({"a", "b"}, I), std::vector{I, I, F},
                                   "int q = a / b; return {q, a - q * b, a};");
  REQUIRE(f->returns_tuple());
  CHECK(f->results() == std::vector{I, I, F});
  CHECK(result_type_text(*f) == "(int, int, float)");
  CHECK_THROWS_AS((void)f->result(), InternalError);
  std::vector<Scalar> out(3);
  f->evaluate(std::vector<Scalar>{Scalar{int32_t{-7}}, Scalar{int32_t{2}}}, out);
  CHECK(std::get<int32_t>(out[0]) == -3);
  CHECK(std::get<int32_t>(out[1]) == -1);
  CHECK(std::get<float>(out[2]) == -7.0f); // the int a converted to the float component
  // Each path returns its own values; the operations of the longest path count.
  const auto g = UserFunDef::parse("sorted", params_of({"a", "b"}, F), std::vector{F, F},
                                   "if (a < b) return {a, b}; return {b, a};");
  g->evaluate(std::vector<Scalar>{Scalar{3.0f}, Scalar{1.0f}}, out = std::vector<Scalar>(2));
  CHECK(std::get<float>(out[0]) == 1.0f);
  CHECK(std::get<float>(out[1]) == 3.0f);
  CHECK(g->op_counts().compare == 1);
  CHECK(f->op_counts().div == 1);
  CHECK(f->op_counts().total() == 3);
  // One scalar kind is a scalar result, written with either overload.
  CHECK(!UserFunDef::parse("h", {{"x", F}}, std::vector{F}, "return x;")->returns_tuple());
}

TEST_CASE("a tuple result prints as an OpenCL C struct and a compound literal") {
  const auto f = UserFunDef::parse("minmax", params_of({"a", "b"}, F), std::vector{F, F},
                                   "return {fmin(a, b), fmax(a, b)};");
  CHECK(f->tuple_type_name() == "liftx_tuple_float_float");
  CHECK(f->tuple_type_definition() == "typedef struct { float _0; float _1; } "
                                      "liftx_tuple_float_float;");
  CHECK(f->to_opencl() == "liftx_tuple_float_float minmax(float a, float b) {\n"
                          "  return (liftx_tuple_float_float){fmin(a, b), fmax(a, b)};\n}");
  CHECK_FALSE(f->uses_opencl_int_helpers()); // the struct's liftx_ prefix is not a helper
  const auto ints =
      UserFunDef::parse("pair", params_of({"a"}, I), std::vector{I, D}, "return {a + 1, a};");
  CHECK(ints->uses_opencl_int_helpers());
  CHECK(ints->tuple_type_name() == "liftx_tuple_int_double");
  // Scalar results have no struct.
  const auto s = UserFunDef::parse("s", {{"x", F}}, F, "return x;");
  CHECK(s->tuple_type_name().empty());
  CHECK(s->tuple_type_definition().empty());
  CHECK(result_type_text(*s) == "float");
}

TEST_CASE("same_userfun tells tuple results apart") {
  const auto a = UserFunDef::parse("f", {{"x", F}}, std::vector{F, F}, "return {x, x};");
  CHECK(same_userfun(*a, *UserFunDef::parse("f", {{"x", F}}, std::vector{F, F}, "return {x, x};")));
  CHECK(
      !same_userfun(*a, *UserFunDef::parse("f", {{"x", F}}, std::vector{F, D}, "return {x, x};")));
}
