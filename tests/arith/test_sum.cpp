/// Sums: flattening, constant folding, like terms, ordering, modulo identity.
#include "arith_test_env.hpp"
#include "ir/arith/simplify_internal.hpp" // kMaxSumTerms

using namespace liftx::arith;
using namespace liftx::arith::testing;

TEST_CASE("sum: table") {
  check_rows({
      {"1 + 2", "3"},
      {"x + 0", "x"},
      {"0 + x", "x"},
      {"x + x", "2*x"},
      {"x + x + x", "3*x"},
      {"x - x", "0"},
      {"x + 1 - x", "1"},
      {"2*x + 3*x", "5*x"},
      {"2*x - 3*x", "-x"},
      {"y + x", "x + y"},
      {"1 + x", "x + 1"},
      {"x - 1", "x - 1"},
      {"1 - x", "-x + 1"},
      {"N - 1", "N - 1"},
      {"N + 2", "N + 2"},
      {"(x + 1) + (y + 2)", "x + y + 3"},
      {"(x + y) - (y + x)", "0"},
      {"x + (y + (z + 1))", "x + y + z + 1"},
      {"i*4 + j", "4*i + j"},
      {"j + 4*i", "4*i + j"},
      {"N - i - 1", "N - i - 1"},
      {"-(x - y)", "-x + y"},
      {"- -x", "x"},
      {"x + x*y", "x + x*y"},
      {"x*y + y*x", "2*x*y"},
      {"x/4 + x/4", "2*(x / 4)"},
      {"min(x, y) - min(y, x)", "0"},
      {"N /^ 2 + N /^ 2", "N"},
      {"N /^ 4 + M /^ 4", "M /^ 4 + N /^ 4"},
      {"3*(N /^ 4) + N /^ 4", "N"},
      {"-1 + 1", "0"},
      {"-3 - 4", "-7"},
  });
}

TEST_CASE("sum: modulo identity (a/b)*b + a%b -> a holds for every sign in C") {
  check_rows({
      {"(x / 4)*4 + x % 4", "x"},
      {"x % 4 + 4*(x / 4)", "x"},
      {"(x / y)*y + x % y", "x"},
      {"2*((x / 4)*4) + 2*(x % 4)", "2*x"},
      {"(x / 4)*4 + x % 4 + 1", "x + 1"},
      {"((x + y) / N)*N + (x + y) % N", "x + y"},
      // different coefficients: no identity
      {"(x / 4)*4 + 2*(x % 4)", "4*(x / 4) + 2*(x % 4)"},
      // different divisors: no identity
      {"(x / 4)*4 + x % 8", "4*(x / 4) + x % 8"},
  });
}

TEST_CASE("sum: operators agree with parsed text") {
  Expr x = var("x"), y = var("y"), N = size_var("N");
  check_expr_rows({
      {x + y - x, y},
      {x + Expr(3) - Expr(3), x},
      {Expr(2) * x + x, Expr(3) * x},
      {N - Expr(1) + Expr(1), N},
      {-(-x), x},
      {(x + y) + (x - y), Expr(2) * x},
      {Expr(0) - x, -x},
  });
}

TEST_CASE("sum: constant folding never overflows silently") {
  Expr big(INT64_MAX);
  CHECK_THROWS_WITH_AS(big + Expr(1), doctest::Contains("integer overflow in constant folding"),
                       liftx::UserError);
  CHECK_THROWS_AS(Expr(INT64_MIN) - Expr(1), liftx::UserError);
  CHECK_THROWS_AS(-Expr(INT64_MIN), liftx::UserError);
  CHECK((big + Expr(-1)).as_constant() == INT64_MAX - 1);
  Expr x = var("x");
  CHECK_THROWS_AS(big * x + big * x, liftx::UserError);
}

TEST_CASE("sum: a product of sums larger than the term budget is a user error, not a blow-up") {
  Expr factor = e("N + M + x + y + 1");
  Expr product(1);
  size_t largest = 0;
  CHECK_THROWS_WITH_AS(
      [&] {
        for (int i = 0; i < 16; ++i) {
          product = product * factor;
          largest = product.node().operands.size();
        }
      }(),
      doctest::Contains("expression too large: a sum of"), liftx::UserError);
  CHECK(largest <= liftx::arith::detail::kMaxSumTerms + 1); // terms and the constant
  CHECK(largest > 500); // the budget only refuses what is truly large: 9 factors (715 terms) pass
}
