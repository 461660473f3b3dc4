/// select(cmp, l, r, then, else): decisions by proofs and canonical comparisons.
#include "arith_test_env.hpp"

using namespace liftx::arith;
using namespace liftx::arith::testing;

TEST_CASE("select: table") {
  check_rows({
      {"(1 < 2 ? x : y)", "x"},
      {"(2 < 1 ? x : y)", "y"},
      {"(x < y ? z : z)", "z"},
      {"(i < 0 ? x : y)", "y"},
      {"(i >= 0 ? x : y)", "x"},
      {"(i < N ? x : y)", "x"},
      {"(i >= N ? x : y)", "y"},
      {"(i > N - 1 ? x : y)", "y"},
      {"(i <= N - 1 ? x : y)", "x"},
      {"(j == 16 ? x : y)", "y"},
      {"(j != 16 ? x : y)", "x"},
      {"(x == x ? y : z)", "y"},
      {"(x + 1 == x ? y : z)", "z"},
      {"(p < 1 ? 0 : p - 1)", "p - 1"},
      {"(p > N ? N - 1 : p - 1)", "p - 1"},
      {"(P < 1 ? 0 : P - 1)", "(P < 1 ? 0 : P - 1)"},
      {"(x > y ? x : y)", "(y < x ? x : y)"},
      {"(x >= y ? x : y)", "(y <= x ? x : y)"},
      {"(y == x ? 1 : 2)", "(x == y ? 1 : 2)"},
      {"(x != y ? 1 : 2)", "(x == y ? 2 : 1)"},
      {"(u < 0 ? -u : u)", "(u < 0 ? -u : u)"},
      {"(u < 8 ? 1 : 2)", "1"},
  });
}

TEST_CASE("select: evaluation takes only the chosen branch") {
  Expr x = var("x");
  Expr s = select(CmpOp::Eq, x, Expr(0), Expr(0), Expr(100) / x);
  CHECK(evaluate(s, {{"x", 0}}) == 0);
  CHECK(evaluate(s, {{"x", 7}}) == 14);
  CHECK(evaluate(select(CmpOp::Ge, x, Expr(3), x, -x), {{"x", 2}}) == -2);
}
