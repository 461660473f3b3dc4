#include "explore/mpi/collect_mpi.hpp"

#include "codegen/runtime/device.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace liftx::explore::mpi {

namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_index_spec(std::string_view spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == spec.size())
    return false;
  auto digits = [](std::string_view text) {
    return std::all_of(text.begin(), text.end(),
                       [](unsigned char c) { return std::isdigit(c) != 0; });
  };
  return digits(spec.substr(0, colon)) && digits(spec.substr(colon + 1));
}

// The rule of runtime::select_device (codegen/runtime/device.cpp, `matches`), which exports only
// the first match; kept in step with it by test_explore's "device_for_local_rank" case.
bool matches(const runtime::DeviceProfile& p, std::string_view spec) {
  const std::string word = lowercase(spec);
  if (word == "cpu")
    return p.type == runtime::DeviceType::cpu;
  if (word == "gpu")
    return p.type == runtime::DeviceType::gpu;
  if (word == "accelerator")
    return p.type == runtime::DeviceType::accelerator;
  if (word == "pocl" || word == "nvidia" || word == "amd" || word == "intel")
    return p.key.rfind(word + ":", 0) == 0;
  return lowercase(p.device_name).find(word) != std::string::npos ||
         lowercase(p.platform_name).find(word) != std::string::npos;
}

} // namespace

std::string device_for_local_rank(std::string_view spec, int local_rank) {
  if (is_index_spec(spec))
    return std::string(spec);
  std::vector<runtime::DeviceProfile> matching;
  for (runtime::DeviceProfile& device : runtime::list_devices())
    if (matches(device, spec))
      matching.push_back(std::move(device));
  if (matching.empty())
    return runtime::select_device(spec).profile.index_spec(); // its message lists the devices
  return matching[static_cast<size_t>(std::max(local_rank, 0)) % matching.size()].index_spec();
}

} // namespace liftx::explore::mpi
