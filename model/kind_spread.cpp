#include "model/kind_spread.hpp"

#include "support/error.hpp"

namespace liftx::model {

std::vector<size_t> spread_over_kinds(const std::vector<size_t>& order,
                                      const std::vector<int64_t>& kind_of, size_t kinds,
                                      const std::set<int64_t>& tried) {
  std::vector<size_t> front, rest;
  std::set<int64_t> seen;
  for (size_t i : order) {
    LIFTX_INTERNAL_CHECK(i < kind_of.size(), "spread_over_kinds: candidate {} of {}", i,
                         kind_of.size());
    if (seen.size() < kinds && !tried.count(kind_of[i]) && seen.insert(kind_of[i]).second)
      front.push_back(i);
    else
      rest.push_back(i);
  }
  front.insert(front.end(), rest.begin(), rest.end());
  return front;
}

} // namespace liftx::model
