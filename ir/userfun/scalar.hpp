#pragma once
/// Scalar kinds and scalar values shared by types, user functions and the interpreter.
#include <cstdint>
#include <string>
#include <variant>

namespace liftx::ir {

enum class ScalarKind : uint8_t { Bool, Int, Float, Double };

/// "bool", "int", "float", "double" (the spelling in .lift and OpenCL C).
const char* scalar_name(ScalarKind k);

/// A scalar value with OpenCL C semantics of its kind: Float arithmetic is done in float, Int in
/// 32-bit two's complement int.
using Scalar = std::variant<bool, int32_t, float, double>;

ScalarKind kind_of(const Scalar& s);
/// Converts with C conversion rules (e.g. float -> int truncates).
Scalar convert(const Scalar& s, ScalarKind to);
/// The value as double (bool: 0/1).
double to_double(const Scalar& s);
/// A literal in .lift / OpenCL C spelling that reads back to the same value: `1.5f`, `2`, `true`,
/// `0.1` (double). Floats print with enough digits to round-trip.
std::string literal_text(const Scalar& s);
/// -s with OpenCL C semantics: int negation wraps around (INT_MIN stays INT_MIN, without C++'s
/// undefined behaviour). InternalError for a bool, which the type checker promotes first.
Scalar negate(const Scalar& s);

} // namespace liftx::ir
