#include "space/stratified_sample.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <random>

namespace liftx::space {

std::string stratum_of(const Variant& v) {
  std::string kind = v.strategy;
  for (const auto& [name, value] : v.parameters)
    kind += " " + name;
  return kind + (v.launch.tied ? " | tied" : " | free");
}

namespace {

/// A uniform reservoir sample of one stratum, of at most `capacity` variants.
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

} // namespace

std::vector<Variant> stratified_sample(VariantStream& stream, int64_t n, uint64_t seed,
                                       const std::function<bool(const Variant&)>& keep) {
  std::vector<Variant> chosen;
  if (n <= 0)
    return chosen;
  std::mt19937_64 rng(seed);
  // Every stratum could end up with the whole of `n` (when it is the only one), so each holds
  // up to n; std::map keeps the strata in a fixed order for the fixed-seed draws below.
  std::map<std::string, Reservoir> strata;
  Variant v;
  while (stream.next(v))
    if (!keep || keep(v))
      strata[stratum_of(v)].offer(v, n, rng);

  // Water-filling: the smallest strata first, each taking min(its size, an equal share of
  // what is left), so that the shares of small strata go to the larger ones.
  std::vector<Reservoir*> order;
  for (auto& [kind, reservoir] : strata)
    order.push_back(&reservoir);
  std::stable_sort(order.begin(), order.end(), [](const Reservoir* a, const Reservoir* b) {
    return a->held.size() < b->held.size();
  });
  int64_t left = n;
  for (size_t i = 0; i < order.size() && left > 0; ++i) {
    const auto strata_left = static_cast<int64_t>(order.size() - i);
    const int64_t share = (left + strata_left - 1) / strata_left;
    std::vector<Variant>& held = order[i]->held;
    const int64_t take = std::min<int64_t>(share, static_cast<int64_t>(held.size()));
    std::shuffle(held.begin(), held.end(), rng); // a uniform subset of a uniform sample
    chosen.insert(chosen.end(), std::make_move_iterator(held.begin()),
                  std::make_move_iterator(held.begin() + take));
    left -= take;
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Variant& a, const Variant& b) { return a.index < b.index; });
  return chosen;
}

} // namespace liftx::space
