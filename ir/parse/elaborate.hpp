#pragma once
/// Elaboration: the syntax tree of a module -> the typed IR. Internal to liftx_parse.
///
/// Function-valued syntax (a lambda, `reduce(add, 0.0f)`, `split(4)`, a user function name) is
/// elaborated knowing the types of the arguments it will receive, which come from the data
/// arguments elaborated first: in `map(f, x)`, x first, then f with the element type of x.
#include "ir/expr.hpp"
#include "ir/parse/syntax.hpp"

namespace liftx::parse {

/// Throws a located UserError for unknown names, wrong arities, type errors, bad sizes and
/// redefinitions.
ir::Module elaborate(const ModuleSyntax& module);

} // namespace liftx::parse
