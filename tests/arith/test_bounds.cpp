/// bounds, sign, prove_*, modulus_remainder and divides.
#include "arith_test_env.hpp"

using namespace liftx::arith;
using namespace liftx::arith::testing;

namespace {
void check_bounds(const char* text, std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::string input = text;
  CAPTURE(input);
  Interval b = bounds(e(text));
  CHECK(b.lo == lo);
  CHECK(b.hi == hi);
}
} // namespace

TEST_CASE("bounds: numeric intervals from ranges") {
  std::optional<int64_t> none;
  check_bounds("3", 3, 3);
  check_bounds("j", 0, 15);
  check_bounds("u", -8, 7);
  check_bounds("x", none, none);
  check_bounds("N", 1, none);
  check_bounds("i", 0, none);
  check_bounds("2*j + 1", 1, 31);
  check_bounds("j - w", -3, 15);
  check_bounds("-u", -7, 8);
  check_bounds("j * u", -120, 105);
  check_bounds("j / 4", 0, 3);
  check_bounds("u / 4", -2, 1);
  check_bounds("j % 5", 0, 4);
  check_bounds("u % 5", -4, 4);
  check_bounds("x % 5", -4, 4);
  check_bounds("x % N", none, none);
  check_bounds("i % 7", 0, 6);
  check_bounds("min(j, 3)", 0, 3);
  check_bounds("max(u, 2)", 2, 7);
  check_bounds("(x < 0 ? j : w)", 0, 15);
  check_bounds("i - N", none, -1);
  check_bounds("N - i", 1, none);
  check_bounds("N - 1 - i", 0, none);
  check_bounds("16*t + l - N", none, -1);
  // N /^ 4 >= 1/4 and the sum is an integer, so the sum is at least 2
  check_bounds("N /^ 4 + 1", 2, none);
}

TEST_CASE("sign") {
  CHECK(sign(e("N")) == Sign::Positive);
  CHECK(sign(e("-N")) == Sign::Negative);
  CHECK(sign(e("i")) == Sign::NonNegative);
  CHECK(sign(e("-i")) == Sign::NonPositive);
  CHECK(sign(e("x")) == Sign::Unknown);
  CHECK(sign(e("u")) == Sign::Unknown);
  CHECK(sign(e("0")) == Sign::Zero);
  CHECK(sign(e("N - i")) == Sign::Positive);
  CHECK(sign(e("x*x")) == Sign::Unknown); // no even-power reasoning: allowed to be unknown
}

TEST_CASE("prove: symbolic ranges") {
  CHECK(prove_lt(e("i"), e("N")));
  CHECK(prove_le(e("i"), e("N - 1")));
  CHECK_FALSE(prove_lt(e("i"), e("N - 1")));
  CHECK(prove_lt(e("16*t + l"), e("N")));
  CHECK_FALSE(prove_lt(e("16*t + l"), e("N - 1")));
  CHECK(prove_lt(e("i*M + q"), e("N*M")));
  CHECK(prove_lt(e("o + k"), e("N")));
  CHECK_FALSE(prove_lt(e("o + k"), e("N - 1")));
  CHECK(prove_le(e("p - 1"), e("N - 1")));
  CHECK(prove_le(e("0"), e("p - 1")));
  CHECK(prove_lt(e("i % N"), e("N")));
  CHECK(prove_lt(e("x % N"), e("N")));
  CHECK(prove_le(e("min(x, y)"), e("x")));
  CHECK(prove_le(e("x"), e("max(x, y)")));
  CHECK(prove_le(e("min(i, N - 1)"), e("N - 1")));
  CHECK_FALSE(prove_le(e("x"), e("y")));
  CHECK_FALSE(prove_lt(e("x"), e("x")));
  CHECK(prove_le(e("x"), e("x")));
  CHECK(prove_nonneg(e("i")));
  CHECK(prove_nonneg(e("N - 1 - i")));
  CHECK(prove_nonneg(e("j % 3")));
  CHECK_FALSE(prove_nonneg(e("u")));
  CHECK_FALSE(prove_nonneg(e("x % 3")));
  CHECK(prove_eq(e("x + 1"), e("1 + x")));
  CHECK(prove_eq(e("min(j, 100)"), e("j")));
  CHECK_FALSE(prove_eq(e("x"), e("y")));
  CHECK_FALSE(prove_eq(e("i"), e("0")));
}

TEST_CASE("modulus_remainder and divides") {
  auto mr = [](const char* text) { return modulus_remainder(e(text)); };
  CHECK(mr("7").modulus == 0);
  CHECK(mr("7").remainder == 7);
  CHECK(mr("x").modulus == 1);
  CHECK(mr("4*x").modulus == 4);
  CHECK(mr("4*x").remainder == 0);
  CHECK(mr("4*x + 6").modulus == 4);
  CHECK(mr("4*x + 6").remainder == 2);
  CHECK(mr("4*x + 6*y").modulus == 2);
  CHECK(mr("4*x + 6*y").remainder == 0);
  CHECK(mr("8*x + 4*y + 3").modulus == 4);
  CHECK(mr("8*x + 4*y + 3").remainder == 3);
  CHECK(mr("8*x - 1").remainder == 7);
  CHECK(mr("(4*x) * (6*y)").modulus == 24);
  CHECK(mr("(4*x + 1) * (4*y + 1)").modulus == 4);
  CHECK(mr("(4*x + 1) * (4*y + 1)").remainder == 1);
  CHECK(mr("(8*x + 5) % 4").modulus == 4); // congruent to 8x + 5 modulo gcd(8, 4)
  CHECK(mr("(8*x + 5) % 4").remainder == 1);
  CHECK(mr("min(4*x, 4*y + 2)").modulus == 2);
  CHECK(mr("(x < y ? 6*x : 9*y)").modulus == 3);
  CHECK(mr("x / 4").modulus == 1);
  CHECK(mr("N /^ 4").modulus == 1);
  // a variable with a step: s in [2, 64) step 4 is 4k + 2
  Expr s = range_var("s", 2, 64, 4);
  CHECK(modulus_remainder(s).modulus == 4);
  CHECK(modulus_remainder(s).remainder == 2);

  CHECK(divides(Expr(4), e("8*N + 4*i")));
  CHECK_FALSE(divides(Expr(4), e("8*N + 2*i")));
  CHECK(divides(Expr(-4), e("8*N + 4*i")));
  CHECK(divides(Expr(1), e("x")));
  CHECK(divides(e("N"), e("N*i + 2*N")));
  CHECK_FALSE(divides(e("N"), e("N*i + 2")));
  CHECK(divides(e("M*N"), e("3*M*N*x")));
  CHECK_FALSE(divides(e("2*N"), e("N*x")));
  CHECK(divides(Expr(0), Expr(0)));
  CHECK_FALSE(divides(Expr(0), e("x")));
}
