#pragma once
/// Private-array scalarisation, a pass over the kernel AST.
#include "codegen/cl_ast.hpp"

#include <string>
#include <vector>

namespace liftx::codegen::cl {

/// Private arrays (ArrayDecl) read and written only at constant indices become scalar variables:
/// `float p[3];` becomes `float p_0, p_1, p_2;` and `p[2]` becomes `p_2`. Every OpenCL compiler
/// keeps scalars in registers, while an array may be spilled to (off-chip) private memory. An
/// array with any other use (an index that is not a literal such as `p[i]`, a pointer `p + 0`)
/// stays an array. Uses are whole identifiers in the statements' text (lines, conditions, loop
/// headers; comments are not code). Returns the names of the arrays scalarised, in declaration
/// order.
std::vector<std::string> scalarise_private_arrays(Block& body);

} // namespace liftx::codegen::cl
