#pragma once
/// Programs for the liftx API: written with the C++ DSL (liftx::dsl, ir/dsl.hpp) or read from
/// `.lift` text (docs/language.md). A Program is an immutable, type-checked value: cheap to copy
/// and safe to share between threads.
#include "ir/dsl.hpp"
#include "liftx/errors.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace liftx {

/// A type-checked liftx program: `def name(params) = body`.
using Program = ir::Program;

// liftx::Sizes, the values of a program's size variables (e.g. {{"M", 512}, {"N", 512}}), comes
// with the DSL's headers (ir/arith/expr.hpp): the library and its users share one name.

/// The definition `name` (default: the last one) of a `.lift` file. UserError, located
/// `file:line:col`, for an unreadable file, a syntax or type error, or an unknown name.
Program load_program(const std::string& path, const std::string& name = "");
/// The same from `.lift` source text; `file` names it in messages.
Program parse_program(std::string_view source, const std::string& name = "",
                      const std::string& file = "<input>");

/// The program as a complete `.lift` module: the user functions it calls, then its definition.
/// Parses back (parse_program) to an equal program.
std::string print_program(const Program& program);

/// A stable identity of the program's meaning: a 32-hex-digit hash of print_program(program).
/// The same program built again (in this run or a later one) has the same identity.
std::string program_identity(const Program& program);

} // namespace liftx
