#include "ir/userfun/scalar.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>

namespace liftx::ir {

const char* scalar_name(ScalarKind k) {
  switch (k) {
  case ScalarKind::Bool:
    return "bool";
  case ScalarKind::Int:
    return "int";
  case ScalarKind::Float:
    return "float";
  case ScalarKind::Double:
    return "double";
  }
  LIFTX_UNREACHABLE("bad ScalarKind {}", static_cast<int>(k));
}

ScalarKind kind_of(const Scalar& s) {
  switch (s.index()) {
  case 0:
    return ScalarKind::Bool;
  case 1:
    return ScalarKind::Int;
  case 2:
    return ScalarKind::Float;
  case 3:
    return ScalarKind::Double;
  }
  LIFTX_UNREACHABLE("valueless Scalar");
}

double to_double(const Scalar& s) {
  return std::visit([](auto v) { return static_cast<double>(v); }, s);
}

namespace {

// C leaves out-of-range floating -> int conversion undefined; we saturate like OpenCL's
// convert_int_sat (NaN -> 0) so that evaluation is deterministic and free of UB.
int32_t saturate_to_int(double d) {
  if (std::isnan(d))
    return 0;
  if (d <= static_cast<double>(INT32_MIN))
    return INT32_MIN;
  if (d >= static_cast<double>(INT32_MAX))
    return INT32_MAX;
  return static_cast<int32_t>(d); // truncates toward zero, in range
}

// double -> float outside float's range is UB in C++; IEEE rounding gives +-FLT_MAX or +-inf.
float narrow_to_float(double d) {
  if (!std::isfinite(d) || std::fabs(d) <= static_cast<double>(FLT_MAX))
    return static_cast<float>(d);
  // Half an ulp above FLT_MAX rounds (ties to even, FLT_MAX's mantissa is odd) to infinity.
  const double overflow_threshold = static_cast<double>(FLT_MAX) + std::ldexp(1.0, 103);
  const float magnitude =
      std::fabs(d) >= overflow_threshold ? std::numeric_limits<float>::infinity() : FLT_MAX;
  return d < 0 ? -magnitude : magnitude;
}

} // namespace

Scalar convert(const Scalar& s, ScalarKind to) {
  switch (to) {
  case ScalarKind::Bool:
    return std::visit([](auto v) { return v != 0; }, s); // NaN -> true, as in C
  case ScalarKind::Int:
    return std::visit(
        [](auto v) -> int32_t {
          using T = decltype(v);
          if constexpr (std::is_floating_point_v<T>)
            return saturate_to_int(v);
          else
            return static_cast<int32_t>(v);
        },
        s);
  case ScalarKind::Float:
    return std::visit(
        [](auto v) -> float {
          using T = decltype(v);
          if constexpr (std::is_same_v<T, double>)
            return narrow_to_float(v);
          else
            return static_cast<float>(v);
        },
        s);
  case ScalarKind::Double:
    return to_double(s);
  }
  LIFTX_UNREACHABLE("bad ScalarKind {}", static_cast<int>(to));
}

namespace {

// fmt's `{}` prints the shortest decimal text that reads back to the same value (per type, so a
// float prints float-shortest). Make sure it still looks like a floating literal.
std::string floating_text(std::string text) {
  if (text.find_first_of(".eE") == std::string::npos)
    text += ".0";
  return text;
}

} // namespace

std::string literal_text(const Scalar& s) {
  switch (kind_of(s)) {
  case ScalarKind::Bool:
    return std::get<bool>(s) ? "true" : "false";
  case ScalarKind::Int:
    return fmt::format("{}", std::get<int32_t>(s));
  case ScalarKind::Float: {
    const float f = std::get<float>(s);
    // INFINITY and NAN are the OpenCL C (and C99 <math.h>) float constants.
    if (std::isnan(f))
      return "NAN";
    if (std::isinf(f))
      return f < 0 ? "-INFINITY" : "INFINITY";
    return floating_text(fmt::format("{}", f)) + "f";
  }
  case ScalarKind::Double: {
    const double d = std::get<double>(s);
    if (std::isnan(d))
      return "(double)NAN";
    if (std::isinf(d))
      return d < 0 ? "-(double)INFINITY" : "(double)INFINITY";
    return floating_text(fmt::format("{}", d));
  }
  }
  LIFTX_UNREACHABLE("bad Scalar");
}

Scalar negate(const Scalar& s) {
  switch (kind_of(s)) {
  case ScalarKind::Int:
    return static_cast<int32_t>(0u - static_cast<uint32_t>(std::get<int32_t>(s)));
  case ScalarKind::Float:
    return -std::get<float>(s);
  case ScalarKind::Double:
    return -std::get<double>(s);
  case ScalarKind::Bool:
    break;
  }
  LIFTX_UNREACHABLE("negating a bool (not promoted)");
}

} // namespace liftx::ir
