#pragma once
// Shared fixtures for the IR tests: sizes, types and a few user functions.
#include "ir/expr.hpp"

#include <doctest/doctest.h>

#include <string>

namespace liftx::ir::test {

inline arith::Expr N() {
  return arith::size_var("N");
}
inline arith::Expr M() {
  return arith::size_var("M");
}
inline arith::Expr O() {
  return arith::size_var("O");
}
inline Type f32() {
  return Type::float_();
}
inline Type i32() {
  return Type::int_();
}
inline Type arr(Type t, arith::Expr n) {
  return Type::array(std::move(t), std::move(n));
}

inline UserFunPtr unary(const std::string& name, ScalarKind in, ScalarKind out,
                        const std::string& body) {
  return UserFunDef::parse(name, {{"v", in}}, out, body);
}
/// float -> float
inline Fun neg() {
  return user_fun(unary("neg", ScalarKind::Float, ScalarKind::Float, " return -v; "));
}
/// float -> int
inline Fun to_int() {
  return user_fun(unary("to_int", ScalarKind::Float, ScalarKind::Int, " return (int)v; "));
}
/// (float, float) -> float, not commutative
inline Fun sub() {
  return user_fun(UserFunDef::parse("sub", {{"a", ScalarKind::Float}, {"b", ScalarKind::Float}},
                                    ScalarKind::Float, " return a - b; "));
}
inline Fun add_f() {
  return user_fun(UserFunDef::builtin("add"));
}
inline Fun add_i() {
  return user_fun(UserFunDef::builtin("add_int"));
}

inline UserFunPtr jacobi5_def() {
  std::vector<UserFunParam> ps;
  for (const char* n : {"c", "n", "s", "e", "w"})
    ps.push_back({n, ScalarKind::Float});
  return UserFunDef::parse("jacobi5", ps, ScalarKind::Float,
                           " return 0.2f * (c + n + s + e + w); ");
}

/// The message of the UserError thrown by `f`, or "" if none is thrown.
template <class F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.message();
  }
  return "";
}

} // namespace liftx::ir::test
