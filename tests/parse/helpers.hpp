#pragma once
// Shared helpers of the .lift front-end tests.
#include "ir/parse/parser.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace liftx::parse::test {

inline ir::Type float_array(const arith::Expr& n) {
  return ir::Type::array(ir::Type::float_(), n);
}
inline arith::Expr size(const char* name) {
  return arith::size_var(name);
}

/// The result type of the only (or last) definition of `source`.
inline ir::Type result_type_of(std::string_view source) {
  return parse_module(source).main().result_type();
}

/// Parses `source` expecting one UserError at line:col whose message contains `message`.
inline void check_error(std::string_view source, int line, int col, std::string_view message) {
  INFO("source:\n" << source);
  try {
    parse_module(source, "test.lift");
    FAIL("no error for this source");
  } catch (const UserError& e) {
    INFO("error: " << std::string(e.what()));
    CHECK(e.loc().file == "test.lift");
    CHECK(e.loc().line == line);
    CHECK(e.loc().col == col);
    CHECK(e.message().find(message) != std::string::npos);
    CHECK(std::string(e.what()).rfind(fmt::format("test.lift:{}:{}: error: ", line, col), 0) == 0);
  } catch (const std::exception& e) {
    FAIL("expected a UserError, got another exception: " << e.what());
  }
}

} // namespace liftx::parse::test
