#pragma once
/// The .lift front end: source text -> type-checked IR module (syntax in docs/language.md).
///
/// Every problem in the input is reported as one liftx::UserError located at the offending token
/// (`file:line:col: error: message`, 1-based line and column): syntax errors, unknown names, wrong
/// numbers of arguments, type errors of primitive applications, user function body errors (located
/// inside the file), redefinitions and size arguments that are not constants or size variables.
#include "ir/expr.hpp"

#include <string>
#include <string_view>

namespace liftx::parse {

/// Parses and type-checks a .lift module. `file` is used in diagnostics.
ir::Module parse_module(std::string_view source, std::string file = "<input>");

/// Reads and parses a .lift file. An unreadable file is a UserError "cannot read FILE: reason".
ir::Module parse_file(const std::string& path);

} // namespace liftx::parse
