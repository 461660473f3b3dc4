/// Products: coefficients, powers, distribution over sums, exact division as powers.
#include "arith_test_env.hpp"

using namespace liftx::arith;
using namespace liftx::arith::testing;

TEST_CASE("prod: table") {
  check_rows({
      {"2 * 3", "6"},
      {"x * 1", "x"},
      {"1 * x", "x"},
      {"x * 0", "0"},
      {"0 * (x / y)", "0"},
      {"x * 2", "2*x"},
      {"y * x", "x*y"},
      {"x * x", "x*x"},
      {"x * x * x", "x*x*x"},
      {"2*x * 3*y", "6*x*y"},
      {"-x * -y", "x*y"},
      {"-(2*x)", "-2*x"},
      {"x * (y + 1)", "x + x*y"},
      {"(x + 1) * (x - 1)", "x*x - 1"},
      {"(x + 1) * (x + 1)", "2*x + x*x + 1"},
      {"2 * (x + y + 3)", "2*x + 2*y + 6"},
      {"N * (i + 1) - N", "N*i"},
      {"(x / 4) * 4", "4*(x / 4)"},
      {"min(x, y) * 2", "2*min(x, y)"},
  });
}

TEST_CASE("prod: exact division a /^ b is a * b^-1") {
  check_rows({
      {"4 * (N /^ 4)", "N"},
      {"(N*4) /^ 4", "N"},
      {"N /^ N", "1"},
      {"N * (1 /^ N)", "1"},
      {"(N*M) /^ M", "N"},
      {"(N /^ 4) * 2", "N /^ 2"},
      {"(3*N) /^ 6", "N /^ 2"},
      {"N /^ 4 /^ 4", "N /^ 16"},
      {"(N /^ 4) /^ (M /^ 2)", "N /^ (2*M)"},
      {"(4*N + 8) /^ 4", "N + 2"},
      {"(N + 1) /^ (N + 1)", "1"},
      {"(2*N + 2) /^ (N + 1)", "2"},
      {"N /^ (2*M + 2)", "N /^ (2*(M + 1))"},
      {"(N - 2) /^ 1", "N - 2"},
      {"6 /^ 3", "2"},
      {"1 /^ 2 + 1 /^ 2", "1"},
      {"(N*N) /^ N", "N"},
      {"N*M /^ N /^ M", "1"},
  });
}

TEST_CASE("prod: operators and pow") {
  Expr x = var("x"), N = size_var("N");
  check_expr_rows({
      {pow(x, 2), x * x},
      {pow(x, 0), Expr(1)},
      {pow(x, 1), x},
      {pow(x, 2) * pow(x, -2), Expr(1)},
      {pow(Expr(2), 10), Expr(1024)},
      {pow(Expr(2), -1) * Expr(2), Expr(1)},
      {pow(x + Expr(1), 2), x * x + Expr(2) * x + Expr(1)},
      {exact_div(N, Expr(4)) * Expr(4), N},
      {exact_div(N * Expr(4), Expr(4)), N},
      {exact_div(N, N), Expr(1)},
      {rational(2, 4), exact_div(Expr(1), Expr(2))},
  });
  CHECK_THROWS_AS(exact_div(x, Expr(0)), liftx::UserError);
  CHECK_THROWS_AS(pow(Expr(0), -1), liftx::UserError);
  CHECK_THROWS_AS(Expr(INT64_MAX) * Expr(2), liftx::UserError);
  CHECK((Expr(INT64_MAX) * Expr(1)).as_constant() == INT64_MAX);
  CHECK(rational(3, 6).node().value == Rational{1, 2});
  CHECK(rational(3, -6).node().value == Rational{-1, 2});
}
