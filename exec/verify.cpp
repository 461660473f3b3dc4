#include "exec/verify.hpp"

#include "runtime/launch.hpp"
#include "support/error.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace liftx::exec {

void ElementCheck::merge(const ElementCheck& later) {
  if (mismatches == 0 && later.mismatches > 0) {
    first_mismatch = later.first_mismatch;
    first_got = later.first_got;
    first_unwritten = later.first_unwritten;
  }
  mismatches += later.mismatches;
  unwritten += later.unwritten;
  max_abs_error = std::max(max_abs_error, later.max_abs_error);
}

namespace {

/// An element as the kernel wrote it: its value and whether it still holds the poison pattern
/// (doubles are poisoned in their low word too: the fill pattern repeats every 4 bytes).
template <ir::ScalarKind kind>
double element_at(const unsigned char* at, bool* poisoned) {
  uint32_t low;
  std::memcpy(&low, at, 4);
  *poisoned = low == runtime::kPoisonBits;
  if constexpr (kind == ir::ScalarKind::Float) {
    return std::bit_cast<float>(low);
  } else if constexpr (kind == ir::ScalarKind::Int) {
    return static_cast<int32_t>(low);
  } else {
    double v;
    std::memcpy(&v, at, 8);
    return v;
  }
}

/// Whether an element matches: written and equal (equal infinities are equal although their
/// difference is NaN; NaN matches NaN), or within the tolerance.
inline bool matches(double got, double want, bool poisoned, Tolerance tolerance) {
  const bool equal = got == want || (std::isnan(got) && std::isnan(want));
  return (!poisoned && equal) ||
         std::fabs(got - want) <= tolerance.relative * std::max(tolerance.floor, std::fabs(want));
}

/// One thread's share, for one element kind. The counting pass keeps no per-mismatch state
/// (every element passes through it, and nearly all match); the first mismatch is looked for
/// only when there is one.
template <ir::ScalarKind kind>
ElementCheck check_range(const unsigned char* bytes, size_t first, size_t count, const double* want,
                         size_t stride, Tolerance tolerance) {
  constexpr size_t width = kind == ir::ScalarKind::Double ? 8 : 4;
  ElementCheck c;
  for (size_t i = 0; i < count; ++i) {
    bool poisoned;
    const double got = element_at<kind>(bytes + i * width, &poisoned);
    const double w = want[(first + i) * stride];
    c.mismatches += !matches(got, w, poisoned, tolerance);
    c.unwritten += poisoned;
    // The largest difference between numbers (NaN when either is NaN, then not counted).
    const double difference = std::fabs(got - w);
    c.max_abs_error =
        std::max(c.max_abs_error, got != w && !std::isnan(difference) ? difference : 0.0);
  }
  for (size_t i = 0; c.mismatches > 0 && i < count; ++i) {
    bool poisoned;
    const double got = element_at<kind>(bytes + i * width, &poisoned);
    if (!matches(got, want[(first + i) * stride], poisoned, tolerance)) {
      c.first_mismatch = first + i;
      c.first_got = got;
      c.first_unwritten = poisoned;
      break;
    }
  }
  return c;
}

} // namespace

double output_element(ir::ScalarKind kind, const unsigned char* at, bool* poisoned) {
  switch (kind) {
  case ir::ScalarKind::Float:
    return element_at<ir::ScalarKind::Float>(at, poisoned);
  case ir::ScalarKind::Int:
    return element_at<ir::ScalarKind::Int>(at, poisoned);
  case ir::ScalarKind::Double:
    return element_at<ir::ScalarKind::Double>(at, poisoned);
  case ir::ScalarKind::Bool:
    break;
  }
  throw NotImplemented("bool arrays as kernel buffers");
}

namespace {

ElementCheck check_range_of(ir::ScalarKind kind, const unsigned char* bytes, size_t first,
                            size_t count, const double* want, size_t stride, Tolerance tolerance) {
  switch (kind) {
  case ir::ScalarKind::Float:
    return check_range<ir::ScalarKind::Float>(bytes, first, count, want, stride, tolerance);
  case ir::ScalarKind::Int:
    return check_range<ir::ScalarKind::Int>(bytes, first, count, want, stride, tolerance);
  case ir::ScalarKind::Double:
    return check_range<ir::ScalarKind::Double>(bytes, first, count, want, stride, tolerance);
  case ir::ScalarKind::Bool:
    break;
  }
  throw NotImplemented("bool arrays as kernel buffers");
}

/// Below this many elements per thread, starting a thread costs more than it saves.
constexpr size_t kElementsPerThread = size_t{1} << 20;

} // namespace

double output_floor(const double* want, size_t count, size_t stride) {
  double largest = 0;
  for (size_t i = 0; i < count; ++i)
    if (const double magnitude = std::fabs(want[i * stride]); std::isfinite(magnitude))
      largest = std::max(largest, magnitude);
  return std::clamp(largest, static_cast<double>(std::numeric_limits<float>::min()), 1.0);
}

ElementCheck check_elements(ir::ScalarKind kind, const unsigned char* bytes, size_t first,
                            size_t count, const double* want, size_t stride, Tolerance tolerance,
                            unsigned threads) {
  if (kind == ir::ScalarKind::Bool)
    throw NotImplemented("bool arrays as kernel buffers");
  if (threads == 0)
    threads = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
  const size_t parts =
      std::clamp<size_t>(count / kElementsPerThread, 1, static_cast<size_t>(threads));
  if (parts == 1)
    return check_range_of(kind, bytes, first, count, want, stride, tolerance);
  const size_t width = kind == ir::ScalarKind::Double ? 8 : 4;
  const size_t share = (count + parts - 1) / parts;
  std::vector<ElementCheck> checks(parts);
  std::vector<std::thread> helpers;
  auto run_part = [&](size_t p) {
    const size_t begin = std::min(count, p * share);
    const size_t end = std::min(count, begin + share);
    checks[p] = check_range_of(kind, bytes + begin * width, first + begin, end - begin, want,
                               stride, tolerance);
  };
  for (size_t p = 1; p < parts; ++p)
    helpers.emplace_back(run_part, p);
  run_part(0);
  for (std::thread& helper : helpers)
    helper.join();
  ElementCheck all;
  for (const ElementCheck& check : checks)
    all.merge(check);
  return all;
}

} // namespace liftx::exec
