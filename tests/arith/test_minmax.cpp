/// min and max: folding, decisions by proofs, clamp chains, absorption.
#include "arith_test_env.hpp"

using namespace liftx::arith;
using namespace liftx::arith::testing;

TEST_CASE("minmax: table") {
  check_rows({
      {"min(3, 5)", "3"},
      {"max(3, 5)", "5"},
      {"min(-3, -5)", "-5"},
      {"min(x, x)", "x"},
      {"max(x, x)", "x"},
      {"min(y, x)", "min(x, y)"},
      {"max(y, x)", "max(x, y)"},
      {"min(x, x + 1)", "x"},
      {"max(x, x + 1)", "x + 1"},
      {"min(x - 1, x + 1)", "x - 1"},
      {"min(i, N - 1)", "i"},
      {"min(i, N)", "i"},
      {"max(i, 0)", "i"},
      {"max(i, -1)", "i"},
      {"min(i, 0)", "0"},
      {"max(i, N)", "N"},
      {"min(j, 15)", "j"},
      {"min(j, 14)", "min(j, 14)"},
      {"max(u, 0)", "max(u, 0)"},
      {"min(x, min(x, y))", "min(x, y)"},
      {"min(min(x, y), y)", "min(x, y)"},
      {"max(x, max(y, x))", "max(x, y)"},
      {"min(x, max(x, y))", "x"},
      {"max(x, min(x, y))", "x"},
      {"min(min(x, 3), 5)", "min(x, 3)"},
      {"min(min(x, 5), 3)", "min(x, 3)"},
      {"max(max(x, 3), 5)", "max(x, 5)"},
      {"max(max(x, 5), 3)", "max(x, 5)"},
      {"min(x, y) + 1 - min(y, x)", "1"},
  });
}

TEST_CASE("minmax: clamps of pad vanish for interior indices only") {
  check_rows({
      // p in [1, N + 1) reads the interior of a 1-padded array
      {"min(max(p - 1, 0), N - 1)", "p - 1"},
      {"max(min(p - 1, N - 1), 0)", "p - 1"},
      {"min(max(i, 0), N - 1)", "i"},
      // P in [0, N + 2) reaches both borders: the clamp stays
      {"min(max(P - 1, 0), N - 1)", "min(max(P - 1, 0), N - 1)"},
      {"max(P - 1, 0)", "max(P - 1, 0)"},
      {"min(P - 1, N - 1)", "min(N - 1, P - 1)"},
      // window reads o + k - 1 with o in [0, N - 2), k in [0, 3): only the lower clamp goes
      {"min(max(o + k - 1, 0), N - 1)", "max(k + o - 1, 0)"},
      {"min(max(o + k, 0), N - 1)", "k + o"},
  });
}
