#pragma once
/// Sample sizes for tests that build and verify generated kernels on PoCL. The sanitizer build
/// (LIFTX_SANITIZE, CI's second pass) runs several times slower; there such a test verifies a
/// smaller fixed-seed sample: the sanitizers look for memory errors in liftx's host code, which
/// a few kernels of each kind exercise, while the plain build verifies the whole sample.
#include <algorithm>
#include <cstddef>

namespace liftx::test {

#ifdef LIFTX_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

/// For `TEST_CASE("..." * doctest::skip(test::kPlainBuildOnly))`: an end-to-end case that runs
/// for minutes under the sanitizers (every worker, enumeration and model fit instrumented) and
/// whose code paths smaller cases run there; the plain build runs it. Each such case says which
/// cases cover it under the sanitizers.
inline constexpr bool kPlainBuildOnly = kSanitized;

/// `n` in the plain build; a quarter of it (at least 2) under the sanitizers.
constexpr size_t verified_sample(size_t n) {
  return kSanitized ? std::max<size_t>(2, n / 4) : n;
}

} // namespace liftx::test
