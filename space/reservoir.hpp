#pragma once
/// Reservoir sampling (Vitter's algorithm R) of variants: a uniform fixed-seed sample of a stream
/// of unknown length, shared by space::sample and space::stratified_sample (one per kind).
#include "space/space.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace liftx::space {

/// A uniform sample of at most `capacity` of the variants offered to it.
struct Reservoir {
  std::vector<Variant> held;
  int64_t seen = 0;

  void offer(const Variant& v, int64_t capacity, std::mt19937_64& rng) {
    ++seen;
    if (static_cast<int64_t>(held.size()) < capacity) {
      held.push_back(v);
      return;
    }
    const auto j = static_cast<int64_t>(
        std::uniform_int_distribution<uint64_t>(0, static_cast<uint64_t>(seen - 1))(rng));
    if (j < capacity)
      held[static_cast<size_t>(j)] = v;
  }
};

} // namespace liftx::space
