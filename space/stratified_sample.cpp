#include "space/stratified_sample.hpp"

#include "space/reservoir.hpp"

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

  // Water-filling: every stratum with variants left gets an equal whole share of what is left,
  // capped at its size, until the sample is full; the shares small strata cannot use go to the
  // larger ones. When fewer variants are left than strata with room, the last ones go one each
  // to strata drawn at random: taking them in a fixed order (say the smallest strata first)
  // would leave the same kinds out of every sample smaller than the number of kinds.
  std::vector<Reservoir*> order;
  for (auto& [kind, reservoir] : strata)
    order.push_back(&reservoir);
  std::vector<int64_t> quota(order.size(), 0);
  int64_t left = n;
  while (left > 0) {
    std::vector<size_t> open;
    for (size_t i = 0; i < order.size(); ++i)
      if (quota[i] < static_cast<int64_t>(order[i]->held.size()))
        open.push_back(i);
    if (open.empty())
      break;
    const int64_t share = left / static_cast<int64_t>(open.size());
    if (share == 0) {
      std::shuffle(open.begin(), open.end(), rng);
      for (size_t k = 0; k < static_cast<size_t>(left); ++k)
        ++quota[open[k]];
      break;
    }
    for (size_t i : open) {
      const int64_t add =
          std::min<int64_t>(share, static_cast<int64_t>(order[i]->held.size()) - quota[i]);
      quota[i] += add;
      left -= add;
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    std::vector<Variant>& held = order[i]->held;
    std::shuffle(held.begin(), held.end(), rng); // a uniform subset of a uniform sample
    chosen.insert(chosen.end(), std::make_move_iterator(held.begin()),
                  std::make_move_iterator(held.begin() + quota[i]));
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Variant& a, const Variant& b) { return a.index < b.index; });
  return chosen;
}

} // namespace liftx::space
