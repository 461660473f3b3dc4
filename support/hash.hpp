#pragma once
/// FNV-1a, 64 bits: the one hash of liftx's stored keys (a program's text in the performance
/// database, a kernel's source in the build cache). Stable across platforms, compilers and runs,
/// which std::hash is not; not cryptographic.
#include <cstdint>
#include <string_view>

namespace liftx {

inline constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ULL;
inline constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

/// The hash of `bytes`, continuing from `state` (the offset basis for a fresh hash).
constexpr uint64_t fnv1a(std::string_view bytes, uint64_t state = kFnvOffsetBasis) {
  for (char c : bytes)
    state = (state ^ static_cast<unsigned char>(c)) * kFnvPrime;
  return state;
}

} // namespace liftx
