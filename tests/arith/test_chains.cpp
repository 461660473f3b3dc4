/// Index chains produced by views (split/join, slide, pad, transpose, tiling, wrap) must collapse
/// to the plain index when the ranges allow it, and stay when they do not.
#include "arith_test_env.hpp"

using namespace liftx::arith;
using namespace liftx::arith::testing;

namespace {
struct Fixture {
  Expr N = size_var("N"), M = size_var("M");
  Expr i = range_var("i", 0, N);
  // split(4): outer r in [0, N /^ 4), inner w in [0, 4)
  Expr r = range_var("r", 0, exact_div(N, 4));
  Expr w = range_var("w", 0, 4);
  // slide(3, 1): window o in [0, N - 2), offset k in [0, 3)
  Expr o = range_var("o", 0, N - 2);
  Expr k = range_var("k", 0, 3);
  // 2D tiles of 16x16: tile rows/cols and lanes
  Expr tr = range_var("tr", 0, exact_div(N, 16)), tc = range_var("tc", 0, exact_div(M, 16));
  Expr lr = range_var("lr", 0, 16), lc = range_var("lc", 0, 16);
  // 2D stencil windows over an (N+2) x (M+2) padded array
  Expr orow = range_var("orow", 0, N), ocol = range_var("ocol", 0, M);
  Expr kr = range_var("kr", 0, 3), kc = range_var("kc", 0, 3);
  Expr p = range_var("p", 1, N + 1); // interior of a 1-padded array
  Expr P = range_var("P", 0, N + 2); // whole 1-padded array
  Expr c = range_var("c", 0, M);
};
} // namespace

TEST_CASE("chains: split and join") {
  Fixture f;
  Expr flat = f.r * 4 + f.w;
  check_expr_rows({
      // join(split(4, A))[i] = A[(i/4)*4 + i%4]
      {(f.i / 4) * 4 + f.i % 4, f.i},
      // split(4, join(A))[r][w]
      {flat / 4, f.r},
      {flat % 4, f.w},
      {(flat / 4) * 4 + flat % 4, flat},
      // split(2) of split(4): (i/4/2)*8 + ((i/4)%2)*4 + i%4
      {((f.i / 4) / 2) * 8 + ((f.i / 4) % 2) * 4 + f.i % 4, f.i},
      {(f.i / 4) / 2, f.i / 8},
      // join of a split of a 2D row-major array: row r, column c
      {(f.r * f.M + f.c) / f.M, f.r},
      {(f.r * f.M + f.c) % f.M, f.c},
      {exact_div(f.N, 4) * 4, f.N},
  });
}

TEST_CASE("chains: slide") {
  Fixture f;
  Expr flat = f.o * 3 + f.k; // join of slide(3, 1)
  check_expr_rows({
      {flat / 3, f.o},
      {flat % 3, f.k},
      {(f.o * 1 + f.k) - f.o, f.k},
      // window index inside the array: o + k < N
      {min(f.o + f.k, f.N - 1), f.o + f.k},
      {select(CmpOp::Lt, f.o + f.k, f.N, f.o + f.k, Expr(0)), f.o + f.k},
      // slide over a padded array: the lower clamp stays, the upper one goes
      {min(max(f.o + f.k - 1, 0), f.N - 1), max(f.o + f.k - 1, 0)},
      // 2D slide over a padded (N+2) x (M+2) array, flattened row-major
      {((f.orow + f.kr) * (f.M + 2) + f.ocol + f.kc) / (f.M + 2), f.orow + f.kr},
      {((f.orow + f.kr) * (f.M + 2) + f.ocol + f.kc) % (f.M + 2), f.ocol + f.kc},
  });
}

TEST_CASE("chains: transpose and pad") {
  Fixture f;
  check_expr_rows({
      // clamp of pad(1) for an interior index
      {min(max(f.p - 1, 0), f.N - 1), f.p - 1},
      // transpose of pad of transpose: same clamp on the other axis, index flattened
      {(min(max(f.p - 1, 0), f.N - 1) * f.M + f.c) / f.M, f.p - 1},
      {(min(max(f.p - 1, 0), f.N - 1) * f.M + f.c) % f.M, f.c},
      // transposed view of an N x M array: [c][i] reads i*M + c
      {(f.i * f.M + f.c) / f.M, f.i},
      {(f.i * f.M + f.c) % f.M, f.c},
      // mirror pad: interior reads are the index itself
      {select(CmpOp::Lt, f.p - 1, 0, -f.p, select(CmpOp::Ge, f.p - 1, f.N, 2 * f.N - f.p, f.p - 1)),
       f.p - 1},
      // wrap pad of the interior
      {(f.p - 1 + f.N) % f.N, f.p - 1},
      // constant pad guard for the interior
      {select(CmpOp::Lt, f.p, 1, Expr(0), select(CmpOp::Gt, f.p, f.N, Expr(0), f.p)), f.p},
  });
}

TEST_CASE("chains: tiling") {
  Fixture f;
  Expr row = f.tr * 16 + f.lr, col = f.tc * 16 + f.lc;
  check_expr_rows({
      {row / 16, f.tr},
      {row % 16, f.lr},
      {(row / 16) * 16 + row % 16, row},
      {min(row, f.N - 1), row},
      {(row * f.M + col) / f.M, row},
      {(row * f.M + col) % f.M, col},
      {((row * f.M + col) / f.M) / 16, f.tr},
      {((row * f.M + col) % f.M) % 16, f.lc},
      {((row * f.M + col) % f.M) / 16, f.tc},
  });
}

TEST_CASE("chains: wrap") {
  Fixture f;
  check_expr_rows({
      {(f.i + f.N) % f.N, f.i},
      {(f.i + 2 * f.N) % f.N, f.i},
      {f.i % f.N, f.i},
      {(f.r * 4 + f.w + f.N) % f.N, f.r * 4 + f.w},
  });
}

TEST_CASE("chains: what must not collapse at the borders") {
  Fixture f;
  check_rows({
      {"(i + N - 1) % N", "(N + i - 1) % N"},
      {"min(max(P - 1, 0), N - 1)", "min(max(P - 1, 0), N - 1)"},
  });
  // the same chains with the whole padded range keep their guards
  CHECK((f.P - 1 + f.N) % f.N != f.P - 1);
  CHECK(min(max(f.P - 1, 0), f.N - 1) != f.P - 1);
  CHECK(select(CmpOp::Lt, f.P, 1, Expr(0), f.P - 1).node().kind == Kind::Select);
  // k may reach 2: o + k is not below N - 2
  CHECK(min(f.o + f.k, f.N - 3) != f.o + f.k);
}
