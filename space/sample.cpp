#include "space/reservoir.hpp"
#include "space/space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <utility>

namespace liftx::space {

const std::string& Variant::kernel_source() const {
  static const std::string none;
  return kernel ? kernel->source : none;
}

int64_t steps_per_launch(const Variant& variant) {
  return steps_per_launch(variant.parameters);
}

int64_t steps_per_launch(const std::map<std::string, int64_t>& parameters) {
  const auto fused = parameters.find("steps_per_launch");
  return fused == parameters.end() ? 1 : fused->second;
}

int64_t remainder_steps(const Variant& variant) {
  const auto rest = variant.parameters.find("remainder_steps");
  return rest == variant.parameters.end() ? 0 : rest->second;
}

std::vector<Variant> sample(VariantStream& stream, int64_t n, uint64_t seed,
                            const std::function<bool(const Variant&)>& keep) {
  if (n <= 0)
    return {};
  std::mt19937_64 rng(seed);
  Reservoir reservoir;
  Variant v;
  while (stream.next(v))
    if (!keep || keep(v))
      reservoir.offer(v, n, rng);
  std::sort(reservoir.held.begin(), reservoir.held.end(),
            [](const Variant& a, const Variant& b) { return a.index < b.index; });
  return std::move(reservoir.held);
}

std::string sidecar_json(const Variant& v, const Sizes& sizes) {
  std::string s = "{\n  \"sizes\": {";
  bool first = true;
  for (const auto& [k, val] : sizes) {
    s += fmt::format("{}\"{}\": {}", first ? "" : ", ", k, val);
    first = false;
  }
  auto arr = [&](const std::array<int64_t, 3>& a) {
    std::string t = "[";
    for (int d = 0; d < v.launch.dims; ++d)
      t += fmt::format("{}{}", d ? ", " : "", a[d]);
    return t + "]";
  };
  s += fmt::format("}},\n  \"dims\": {},\n  \"global\": {},\n  \"local\": {},\n  \"tied\": {},\n",
                   v.launch.dims, arr(v.launch.global), arr(v.launch.local),
                   v.launch.tied ? "true" : "false");
  s += fmt::format("  \"strategy\": \"{}\",\n  \"parameters\": {{", v.strategy);
  first = true;
  for (const auto& [k, val] : v.parameters) {
    s += fmt::format("{}\"{}\": {}", first ? "" : ", ", k, val);
    first = false;
  }
  s += "}\n}\n";
  return s;
}

} // namespace liftx::space
