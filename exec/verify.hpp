#pragma once
/// The element-by-element comparison of a kernel's output with the interpreter's values. Every
/// variant liftx times is verified this way on every output element, so at large grids (67
/// million elements at 8192^2) the comparison costs more than the kernel: it runs over several
/// threads, on chunks of the output as they are read back.
#include "ir/userfun/scalar.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>

namespace liftx::exec {

/// What a range of an output's elements gives against the interpreter.
struct ElementCheck {
  int64_t mismatches = 0;
  int64_t unwritten = 0;    ///< elements still holding the poison pattern (runtime::kPoisonBits)
  double max_abs_error = 0; ///< over the elements that differ and are both numbers
  size_t first_mismatch = std::numeric_limits<size_t>::max(); ///< index in the whole output
  double first_got = 0;                                       ///< the kernel's value there
  bool first_unwritten = false;

  /// Adds a check of later elements (merging in index order keeps the first mismatch first).
  void merge(const ElementCheck& later);
};

/// One element of an output buffer of `kind` (float, int or double) as a double, and whether it
/// still holds the poison pattern the outputs are filled with before a checked run.
double output_element(ir::ScalarKind kind, const unsigned char* at, bool* poisoned);

/// How close an element must be: |got - want| <= relative * max(floor, |want|). The floor is the
/// output's own magnitude (output_floor): 1 for an output of ordinary size, less for one whose
/// every element is small, such as a decaying iteration's after many steps (64 steps of
/// jacobi2d5pt leave values near 1e-25), where a floor of 1 would let any small value match,
/// zeros included.
struct Tolerance {
  double relative = 1e-4;
  double floor = 1.0;
};

/// min(1, the largest finite |want[i * stride]|, i < count), and at least the smallest normal
/// float: the floor of Tolerance for an output whose interpreted values are `want`.
double output_floor(const double* want, size_t count, size_t stride);

/// Compares `count` elements of one output buffer (`bytes`, elements of `kind`: float, int or
/// double) with the interpreter's values `want[(first + i) * stride]`, i < count. An element
/// matches when it was written and is equal (NaN matches NaN, equal infinities are equal) or
/// within `tolerance`. `threads` 0: one per core, at most 16, fewer for short ranges.
ElementCheck check_elements(ir::ScalarKind kind, const unsigned char* bytes, size_t first,
                            size_t count, const double* want, size_t stride, Tolerance tolerance,
                            unsigned threads = 0);

} // namespace liftx::exec
