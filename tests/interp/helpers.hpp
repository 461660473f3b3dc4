#pragma once
// Shared helpers of the interpreter tests: programs built with the ir:: constructors, random
// non-zero inputs, and element access for hand-written expected values.
#include "ir/derived.hpp"
#include "ir/expr.hpp"
#include "ir/interp/interp.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

namespace liftx::interp::test {

inline ir::Type array_of(ir::Type element, arith::Expr length) {
  return ir::Type::array(std::move(element), std::move(length));
}
inline ir::Type vec(const char* n) {
  return array_of(ir::Type::float_(), arith::size_var(n));
}
/// [[float]inner]outer
inline ir::Type grid(const char* outer, const char* inner) {
  return array_of(vec(inner), arith::size_var(outer));
}

inline ir::Program program(std::vector<ir::Expr> params, ir::Expr body) {
  return ir::Program{"test", std::move(params), std::move(body), {}};
}

inline ir::Fun userfun(const std::string& name, std::vector<ir::UserFunParam> params,
                       ir::ScalarKind result, const std::string& body) {
  return ir::user_fun(ir::UserFunDef::parse(name, std::move(params), result, body));
}
inline ir::Fun add() {
  return ir::user_fun(ir::UserFunDef::builtin("add"));
}
inline ir::Fun mult() {
  return ir::user_fun(ir::UserFunDef::builtin("mult"));
}

/// Random non-zero floats of the given type under sizes (seeded, so deterministic).
inline HostArray input_for(const ir::Type& t, const Sizes& sizes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return random_input(t, sizes, rng);
}

inline float f(const HostArray& a, int64_t i) {
  return static_cast<float>(a.data.at(i));
}
inline float f2(const HostArray& a, int64_t i, int64_t j) {
  REQUIRE(a.shape.size() >= 2);
  return static_cast<float>(a.data.at(i * a.shape[1] + j));
}

inline HostArray run(const ir::Program& p, std::vector<HostArray> inputs, const Sizes& sizes) {
  return evaluate(p, inputs, sizes);
}

inline void check_equal(const HostArray& got, const std::vector<int64_t>& shape,
                        const std::vector<float>& want) {
  REQUIRE(got.shape == shape);
  REQUIRE(got.data.size() == want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    INFO("element " << k);
    CHECK(got.data[k] == static_cast<double>(want[k]));
  }
}

} // namespace liftx::interp::test
