/// Truncating division: folding, proofs from ranges, and the cases that must stay unsimplified
/// because the rewrite would be unsound for negative operands.
#include "arith_test_env.hpp"

using namespace liftx::arith;
using namespace liftx::arith::testing;

TEST_CASE("div: constant folding follows C truncation") {
  check_rows({
      {"7 / 2", "3"},
      {"-7 / 2", "-3"},
      {"7 / -2", "-3"},
      {"-7 / -2", "3"},
      {"0 / 5", "0"},
      {"6 / 3", "2"},
      {"1 / 16", "0"},
      {"-1 / 16", "0"},
  });
  CHECK((Expr(INT64_MIN) / Expr(1)).as_constant() == INT64_MIN);
  CHECK_THROWS_WITH_AS(Expr(INT64_MIN) / Expr(-1), "error: integer overflow in constant folding",
                       liftx::UserError);
}

TEST_CASE("div: simplifications proven from ranges") {
  check_rows({
      {"x / 1", "x"},
      {"x / -1", "-x"},
      {"0 / x", "0"},
      {"x / x", "1"},
      {"x / -4", "-(x / 4)"},
      {"(i*16 + j) / 16", "i"},
      {"(j + 16*i) / 16", "i"},
      {"(16*i + j + 32) / 16", "i + 2"},
      {"(16*i + 35) / 16", "i + 2"},
      {"j / 16", "0"},
      {"i / N", "0"},
      {"(i*N + i) / N", "i"},
      {"(q + i*M) / M", "i"},
      {"(x % 16) / 16", "0"},
      {"(x % N) / N", "0"},
      {"(i / 4) / 4", "i / 16"},
      {"(x / 4) / 4", "x / 16"},
      {"(x / N) / M", "x / (M*N)"},
      {"(4*x) / 4", "x"},
      {"(4*x + 8) / 4", "x + 2"},
      {"(8*x) / 4", "2*x"},
      {"(4*x) / 8", "x / 2"},
      {"(4*x + 2) / 8", "(2*x + 1) / 4"},
      {"(x*N) / N", "x"},
      {"(i + N) / N", "1"},
      {"(2*N + i) / N", "2"},
      {"(16*t + l) / 16", "t"},
      {"(w + 4*j) / 4", "j"},
      {"(N - 1) / N", "0"},
      {"(-16*i - j) / 16", "-i"},
      {"(u + 8) / 16", "0"},
      {"u / 9", "0"},
      {"u / 16", "0"},
  });
}

TEST_CASE("div: rewrites that would be unsound stay unsimplified") {
  check_rows({
      // j may not be in [0, 16): u is in [-8, 8)
      {"(i*16 + u) / 16", "(16*i + u) / 16"},
      // x is unbounded: (x + 16)/16 is not x/16 + 1 for x = -1
      {"(x + 16) / 16", "(x + 16) / 16"},
      // x unbounded: 16*x + j may be negative
      {"(x*16 + j) / 16", "(j + 16*x) / 16"},
      // u = -8 gives -1
      {"u / 8", "u / 8"},
      {"(x*16 + 1) / 16", "(16*x + 1) / 16"},
      // only the numerator is bounded: i/M is unknown
      {"i / M", "i / M"},
      {"j / 8", "j / 8"},
      {"u / N", "u / N"},
      {"x / y", "x / y"},
      {"(i + 1) / N", "(i + 1) / N"},
      {"(x / y) / 2", "x / y / 2"},
      {"(16*i - j) / 16", "(16*i - j) / 16"},
  });
}

TEST_CASE("div: division by zero is kept for evaluation to report") {
  Expr x = var("x");
  Expr d = x / Expr(0);
  CHECK(d.node().kind == Kind::IntDiv);
  CHECK_THROWS_WITH_AS(evaluate(d, {{"x", 3}}), doctest::Contains("division by zero"),
                       liftx::UserError);
  CHECK_THROWS_AS(evaluate(Expr(1) / Expr(0), {}), liftx::UserError);
}

TEST_CASE("div: common factors are only divided out of integer polynomials") {
  // 2*x /^ y is an integer, but x /^ y alone may be 3/2: (2*x /^ y) / 4 must not become
  // (x /^ y) / 2.
  Expr x = var("x"), y = var("y");
  Expr q = exact_div(Expr(2) * x, y) / Expr(4);
  CHECK(evaluate(q, {{"x", 3}, {"y", 2}}) == 0);
  CHECK(evaluate(exact_div(Expr(2) * x, y) % Expr(4), {{"x", 3}, {"y", 2}}) == 3);
}
