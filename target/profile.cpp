#include "target/profile.hpp"

#include "support/error.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace liftx::target {

std::string vendor_word(const std::string& platform_name, const std::string& vendor) {
  if (contains_nocase(platform_name, "portable computing language") ||
      contains_nocase(platform_name, "pocl"))
    return "pocl";
  for (std::string_view name : {platform_name, vendor}) {
    if (contains_nocase(name, "nvidia"))
      return "nvidia";
    if (contains_nocase(name, "advanced micro devices") || contains_nocase(name, "amd"))
      return "amd";
    if (contains_nocase(name, "intel"))
      return "intel";
  }
  return slug(platform_name);
}

std::string_view to_string(DeviceType type) {
  switch (type) {
  case DeviceType::cpu:
    return "cpu";
  case DeviceType::gpu:
    return "gpu";
  case DeviceType::accelerator:
    return "accelerator";
  case DeviceType::other:
    return "other";
  }
  return "other";
}

DeviceLimits DeviceProfile::limits() const {
  auto known = [](uint64_t value) {
    return value > 0 ? static_cast<int64_t>(value) : DeviceLimits::unlimited;
  };
  DeviceLimits l;
  l.max_work_group_size = known(max_work_group_size);
  for (size_t d = 0; d < 3 && d < max_work_item_sizes.size(); ++d)
    l.max_work_item_sizes[d] = known(max_work_item_sizes[d]);
  l.local_memory_bytes = known(local_mem_bytes);
  const bool gpu = type == DeviceType::gpu;
  l.private_memory_bytes = gpu ? 1024 : 64 * 1024;
  l.min_work_groups = gpu ? 8 : 1;
  if (registers_per_work_group > 0)
    l.register_words = registers_per_work_group;
  else if (gpu)
    l.register_words = 65536;
  l.subgroup_shuffle = gpu && vendor_word(platform_name, vendor) == "nvidia";
  return l;
}

DeviceProfile::Throughput DeviceProfile::throughput() const {
  const bool gpu = type == DeviceType::gpu;
  const std::string vendor_name = vendor_word(platform_name, vendor);
  Throughput t;
  t.compute_units = std::max<int64_t>(compute_units, 1);
  t.warp_width = std::max<int64_t>(warp_width, 1);
  t.cache_line_bytes = cache_line_bytes > 0 ? cache_line_bytes : 64;
  const double ghz = max_clock_mhz > 0 ? max_clock_mhz / 1000.0 : 1.5;
  // Lanes per compute unit: an NVIDIA SM has 4 x 32 float lanes, an AMD CU 4 x 16; a CPU core
  // retires about two SIMD vectors of the "warp" width per cycle.
  const double lanes = !gpu ? 2.0 * double(t.warp_width) : vendor_name == "amd" ? 64 : 128;
  t.gops = double(t.compute_units) * lanes * ghz;
  // Local memory: one 4-byte word per bank per cycle on GPUs; a CPU's "local" memory is its L1.
  t.local_gbs = double(t.compute_units) * (gpu ? 4.0 * local_mem_banks : 64.0) * ghz;
  t.memory_gbs = memory_gbs > 0 ? memory_gbs : gpu ? 1000 : 20;
  // The last-level cache serves about 2.5x DRAM on current GPUs and ~4x on CPUs.
  t.cache_gbs = t.memory_gbs * (gpu ? 2.5 : 4.0);
  t.memory_latency_ns = gpu ? 600 : 100;
  if (gpu && warp_width == 32)
    t.resident_work_items_per_cu = 2048; // NVIDIA SM
  else if (gpu && warp_width == 64)
    t.resident_work_items_per_cu = 2560; // AMD CU: 40 wavefronts
  else
    t.resident_work_items_per_cu = std::max<int64_t>(static_cast<int64_t>(max_work_group_size), 1);
  return t;
}

std::string DeviceProfile::index_spec() const {
  return fmt::format("{}:{}", platform_index, device_index);
}

void to_json(nlohmann::json& json, const DeviceProfile& p) {
  json = nlohmann::json{
      {"platform_index", p.platform_index},
      {"device_index", p.device_index},
      {"platform_name", p.platform_name},
      {"platform_version", p.platform_version},
      {"device_name", p.device_name},
      {"vendor", p.vendor},
      {"driver_version", p.driver_version},
      {"opencl_c_version", p.opencl_c_version},
      {"type", std::string(to_string(p.type))},
      {"compute_units", p.compute_units},
      {"max_clock_mhz", p.max_clock_mhz},
      {"global_mem_bytes", p.global_mem_bytes},
      {"max_alloc_bytes", p.max_alloc_bytes},
      {"local_mem_bytes", p.local_mem_bytes},
      {"max_work_group_size", p.max_work_group_size},
      {"max_work_item_sizes", p.max_work_item_sizes},
      {"warp_width", p.warp_width},
      {"cache_line_bytes", p.cache_line_bytes},
      {"local_mem_banks", p.local_mem_banks},
      {"registers_per_work_group", p.registers_per_work_group},
      {"key", p.key},
      {"memory_gbs", p.memory_gbs},
  };
}

namespace {

/// A whole number of a stored profile within [lo, T's maximum]: nlohmann would wrap a negative
/// number into an unsigned field and truncate a fraction, so the value is checked as written.
template <typename T>
T profile_integer(const nlohmann::json& value, std::string_view name, int64_t lo) {
  const int64_t hi = static_cast<int64_t>(
      std::min<uint64_t>(std::numeric_limits<T>::max(), std::numeric_limits<int64_t>::max()));
  std::optional<int64_t> v;
  if (value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(hi))
    v = static_cast<int64_t>(value.get<uint64_t>());
  else if (value.is_number_integer() && !value.is_number_unsigned())
    v = value.get<int64_t>();
  LIFTX_USER_CHECK(v && *v >= lo && *v <= hi,
                   "device profile: {} is {}; expected a whole number from {} to {}", name,
                   value.dump(), lo, hi);
  return static_cast<T>(*v);
}

/// The field `name` of a stored profile (profile_integer); `fallback` when it is absent, for
/// fields added after profiles were first stored.
template <typename T>
T profile_field(const nlohmann::json& json, const char* name, int64_t lo,
                std::optional<T> fallback = std::nullopt) {
  if (!json.contains(name) && fallback)
    return *fallback;
  return profile_integer<T>(json.at(name), name, lo);
}

} // namespace

void from_json(const nlohmann::json& json, DeviceProfile& p) {
  try {
    p.platform_index = profile_field<int>(json, "platform_index", 0);
    p.device_index = profile_field<int>(json, "device_index", 0);
    json.at("platform_name").get_to(p.platform_name);
    json.at("platform_version").get_to(p.platform_version);
    json.at("device_name").get_to(p.device_name);
    json.at("vendor").get_to(p.vendor);
    json.at("driver_version").get_to(p.driver_version);
    json.at("opencl_c_version").get_to(p.opencl_c_version);
    std::string type = json.at("type").get<std::string>();
    p.type = type == "cpu"           ? DeviceType::cpu
             : type == "gpu"         ? DeviceType::gpu
             : type == "accelerator" ? DeviceType::accelerator
                                     : DeviceType::other;
    // Counts the features divide by are at least 1; sizes and limits may be 0 ("unknown": no
    // limit, see limits()).
    p.compute_units = profile_field<uint32_t>(json, "compute_units", 1);
    p.max_clock_mhz = profile_field<uint32_t>(json, "max_clock_mhz", 0);
    p.global_mem_bytes = profile_field<uint64_t>(json, "global_mem_bytes", 0);
    p.max_alloc_bytes = profile_field<uint64_t>(json, "max_alloc_bytes", 0);
    p.local_mem_bytes = profile_field<uint64_t>(json, "local_mem_bytes", 0);
    p.max_work_group_size = profile_field<uint64_t>(json, "max_work_group_size", 1);
    const nlohmann::json& item_sizes = json.at("max_work_item_sizes");
    LIFTX_USER_CHECK(item_sizes.is_array() && !item_sizes.empty() && item_sizes.size() <= 3,
                     "device profile: max_work_item_sizes is {}; expected 1 to 3 "
                     "whole numbers of at least 1",
                     item_sizes.dump());
    p.max_work_item_sizes.clear();
    for (const nlohmann::json& size : item_sizes)
      p.max_work_item_sizes.push_back(profile_integer<uint64_t>(size, "max_work_item_sizes", 1));
    p.warp_width = profile_field<uint32_t>(json, "warp_width", 1);
    p.cache_line_bytes = profile_field<uint32_t>(json, "cache_line_bytes", 0);
    p.local_mem_banks = profile_field<uint32_t>(json, "local_mem_banks", 1, 32u);
    p.registers_per_work_group = profile_field<uint32_t>(json, "registers_per_work_group", 0, 0u);
    json.at("key").get_to(p.key);
    p.memory_gbs = json.value("memory_gbs", 0.0); // absent in profiles stored before it existed
    LIFTX_USER_CHECK(std::isfinite(p.memory_gbs) && p.memory_gbs >= 0,
                     "device profile: memory_gbs is {}; expected a bandwidth of 0 "
                     "(unknown) or more GB/s",
                     json.at("memory_gbs").dump());
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("malformed device profile JSON: {}", e.what()));
  }
}

namespace {

/// The named profiles: the one table of device numbers for planning without a device.
struct NamedProfile {
  std::string_view name;
  std::string_view platform_name;
  std::string_view vendor;
  DeviceType type;
  uint32_t compute_units;
  uint64_t local_mem_bytes;
  uint64_t max_work_group_size;
  std::array<uint64_t, 3> max_work_item_sizes;
  uint32_t warp_width;
  uint32_t cache_line_bytes;
  uint64_t global_mem_gib;
  uint32_t clock_mhz;
  double memory_gbs;
};

// clang-format off
constexpr std::array<NamedProfile, 3> named_profiles{{
  // nvidia: H100 (copy ~3.0 TB/s; an H200 measures 4.1); amd: an MI50-class GPU; cpu: 2 cores.
  // name     platform                               vendor                          type              CUs  local     group  work-item sizes      warp line  GiB  MHz   copy GB/s
  {"nvidia", "NVIDIA CUDA",                         "NVIDIA Corporation",           DeviceType::gpu, 132, 48 << 10, 1024, {1024, 1024, 64},    32,  128,  80, 1755, 3000},
  {"amd",    "AMD Accelerated Parallel Processing", "Advanced Micro Devices, Inc.", DeviceType::gpu,  64, 64 << 10,  256, {256, 256, 256},     64,   64,  16, 1725,  800},
  {"cpu",    "Portable Computing Language",         "GenuineIntel",                 DeviceType::cpu,   2, 64 << 10, 4096, {4096, 4096, 4096},   8,   64,   8, 2000,   15},
}};
// clang-format on

} // namespace

std::optional<DeviceProfile> model_profile(std::string_view name) {
  auto row = std::find_if(named_profiles.begin(), named_profiles.end(),
                          [&](const NamedProfile& n) { return n.name == name; });
  if (row == named_profiles.end())
    return std::nullopt;
  DeviceProfile p;
  p.platform_index = -1;
  p.device_index = -1;
  p.platform_name = row->platform_name;
  p.device_name = fmt::format("{} (model)", name);
  p.vendor = row->vendor;
  p.type = row->type;
  p.compute_units = row->compute_units;
  p.local_mem_bytes = row->local_mem_bytes;
  p.max_work_group_size = row->max_work_group_size;
  p.max_work_item_sizes.assign(row->max_work_item_sizes.begin(), row->max_work_item_sizes.end());
  p.warp_width = row->warp_width;
  p.cache_line_bytes = row->cache_line_bytes;
  p.local_mem_banks = 32;
  p.global_mem_bytes = p.max_alloc_bytes = row->global_mem_gib << 30;
  p.max_clock_mhz = row->clock_mhz;
  p.memory_gbs = row->memory_gbs;
  p.key = fmt::format("model:{}", name);
  return p;
}

} // namespace liftx::target
