#pragma once
/// Shared fixtures for the arith table tests: a fixed set of variables with ranges, and a loop that
/// checks `{input, expected}` rows (Halide/TVM style).
#include "ir/arith/expr.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

namespace liftx::arith::testing {

/// Variables used by the tables:
///   N, M      sizes, [1, inf)
///   i         [0, N)        an index into an array of length N
///   o         [0, N - 2)    a slide window index (size 3, step 1)
///   k         [0, 3)        an offset inside a slide window
///   j, l      [0, 16)       inner tile / lane indices
///   t         [0, N /^ 16)  a tile index
///   p         [1, N + 1)    an index into a padded array, interior part
///   P         [0, N + 2)    an index into an array padded by 1 on both sides
///   q         [0, M)        a column index
///   w         [0, 4)
///   u         [-8, 8)       may be negative
///   x, y, z   unbounded
inline const std::map<std::string, Range, std::less<>>& env() {
  static const std::map<std::string, Range, std::less<>> ranges = [] {
    Expr N = size_var("N"), M = size_var("M");
    std::map<std::string, Range, std::less<>> r;
    r["N"] = N.node().range;
    r["M"] = M.node().range;
    r["i"] = Range{Expr(0), N};
    r["o"] = Range{Expr(0), N - 2};
    r["k"] = Range{Expr(0), Expr(3)};
    r["j"] = Range{Expr(0), Expr(16)};
    r["l"] = Range{Expr(0), Expr(16)};
    r["t"] = Range{Expr(0), exact_div(N, Expr(16))};
    r["p"] = Range{Expr(1), N + 1};
    r["P"] = Range{Expr(0), N + 2};
    r["q"] = Range{Expr(0), M};
    r["w"] = Range{Expr(0), Expr(4)};
    r["u"] = Range{Expr(-8), Expr(8)};
    return r;
  }();
  return ranges;
}

inline Expr e(const char* text) {
  return parse(text, env());
}

struct Row {
  const char* input;    ///< parsed (and so simplified) with env()
  const char* expected; ///< the exact canonical text of the result
};

/// Checks every row: the simplified input prints as `expected`, and `expected` parses back to the
/// same node.
inline int check_rows(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    std::string input = row.input;
    CAPTURE(input);
    Expr got = e(row.input);
    CHECK(got.to_string() == std::string(row.expected));
    CHECK(e(row.expected) == got);
  }
  return static_cast<int>(rows.size());
}

/// Rows built with the C++ operators.
struct ExprRow {
  Expr input;
  Expr expected;
};
inline void check_expr_rows(const std::vector<ExprRow>& rows) {
  for (const ExprRow& row : rows) {
    std::string got = row.input.to_string(), want = row.expected.to_string();
    CAPTURE(got);
    CAPTURE(want);
    CHECK(row.input == row.expected);
  }
}

} // namespace liftx::arith::testing
