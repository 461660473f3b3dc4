// Work-group reductions of matrix rows and columns (rewrite/reduction.hpp): which programs are
// recognised, what the builder refuses, and the tolerance a reordered reduction is checked with.
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "rewrite/reduction.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <variant>

using namespace liftx;

namespace {

ir::Module parse_text(const std::string& text) {
  return parse::parse_module(
      "userfun addsq(a: float, b: float): float { return a + b * b; }\n" + text, "<test>");
}

std::string refusal(const std::variant<rewrite::MatrixReduction, std::string>& r) {
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

} // namespace

TEST_CASE("matrix reductions: rows, columns, and what is not one") {
  const ir::Module mv =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mv.lift");
  const ir::Module tmv =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/tmv.lift");
  auto rows = rewrite::as_matrix_reduction(mv.main());
  REQUIRE(std::holds_alternative<rewrite::MatrixReduction>(rows));
  CHECK(!std::get<rewrite::MatrixReduction>(rows).columns);
  CHECK(std::get<rewrite::MatrixReduction>(rows).element.has_value()); // map(mult) kept apart
  auto columns = rewrite::as_matrix_reduction(tmv.main());
  REQUIRE(std::holds_alternative<rewrite::MatrixReduction>(columns));
  CHECK(std::get<rewrite::MatrixReduction>(columns).columns);

  // Row sums without a map: recognised, nothing to fuse.
  auto sums = rewrite::as_matrix_reduction(
      parse_text("def f(a: [[float]N]M) = map(row => reduce(add, 0.0f, row)[0], a)").main());
  REQUIRE(std::holds_alternative<rewrite::MatrixReduction>(sums));
  CHECK(!std::get<rewrite::MatrixReduction>(sums).element.has_value());

  CHECK(refusal(rewrite::as_matrix_reduction(
            parse_text("def f(a: [[float]N]M) = map(row => reduce(addsq, 0.0f, row)[0], a)")
                .main())) ==
        "addsq is not known to be associative and commutative (built-in add and mult are)");
  CHECK(refusal(rewrite::as_matrix_reduction(
                    parse_text("def f(a: [[float]N]M) = map(row => reduce(add, 2.0f, row)[0], a)")
                        .main()))
            .starts_with("the initial value is not the identity of add"));
  CHECK(refusal(rewrite::as_matrix_reduction(
            parse_text("def f(a: [[float]N]M) = map(row => add(row[0], row[1]), a)").main())) ==
        "an output is not the result of one reduction");
  CHECK(refusal(rewrite::as_matrix_reduction(
            parse_text("def f(x: [float]N) = reduce(add, 0.0f, x)").main())) ==
        "the program is not a map over a matrix");
  CHECK(refusal(rewrite::as_matrix_reduction(
            parse_text("def f(x: [float]N) = map(v => reduce(add, 0.0f, pad(1, 1, clamp, "
                       "x))[0], x)")
                .main())) == "the mapped array is not a matrix");
}

TEST_CASE("the builder refuses tilings that do not fit the reduction") {
  const ir::Module mv =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mv.lift");
  const ir::Module tmv =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/tmv.lift");
  auto why = [](const std::variant<ir::Program, std::string>& r) {
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
  };
  CHECK(why(rewrite::build_matrix_reduction(mv.main(), {64, 64})).empty());
  CHECK(why(rewrite::build_matrix_reduction(mv.main(), {64, 8})) ==
        "a row reduction has one part per work-item");
  CHECK(why(rewrite::build_matrix_reduction(tmv.main(), {64, 8})).empty());
  CHECK(why(rewrite::build_matrix_reduction(tmv.main(), {64, 3})) ==
        "3 parts do not divide 64 work-items");
  CHECK(why(rewrite::build_matrix_reduction(tmv.main(), {0, 1})) ==
        "a work-group needs at least one work-item and one part");
}

TEST_CASE("a long reduction is verified with a tolerance that grows with its length") {
  const ir::Module mv =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mv.lift");
  // 8 L 2^-24: 8192 terms allow 3.9e-3 relative; short stencil sums stay below the 1e-4 default.
  CHECK(exec::reordering_tolerance(mv.main(), {{"M", 4}, {"N", 8192}}) ==
        doctest::Approx(8.0 * 8192 * std::ldexp(1.0, -24)));
  CHECK(exec::reordering_tolerance(mv.main(), {{"M", 8192}, {"N", 16}}) < 1e-4);
  const ir::Module stencil =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift");
  CHECK(exec::reordering_tolerance(stencil.main(), {{"M", 64}, {"N", 64}}) == 0.0);
  const ir::Module gaussian =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/gaussian.lift");
  CHECK(exec::reordering_tolerance(gaussian.main(), {{"M", 64}, {"N", 64}}) ==
        doctest::Approx(8.0 * 25 * std::ldexp(1.0, -24)));
}
