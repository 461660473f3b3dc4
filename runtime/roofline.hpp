#pragma once
/// The streaming roofline of a device: the effective bandwidth of a float4 copy, against which
/// every stencil variant's bandwidth is reported as a fraction.
#include "runtime/cache_dir.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"

#include <filesystem>
#include <optional>

namespace liftx::runtime {

struct CopyBandwidth {
  double gb_per_s = 0; ///< 1 read + 1 write of 4 bytes per float, over the median time
  size_t floats = 0;   ///< elements copied per launch
  Timing timing;
};

/// Times a copy of `floats` (a positive multiple of 4) floats, one float4 per work-item: `repeat`
/// runs after `warmup`, checked by reading back a random sample of the output. Not cached.
/// LaunchError if the copy fails or copies wrongly (status wrong_result).
CopyBandwidth measure_copy_bandwidth(Device& device, size_t floats, int warmup = 3,
                                     int repeat = 10);

/// The element count measure_copy_roofline uses: 64 Mi floats on GPUs, 16 Mi elsewhere, halved
/// until two buffers fit the device's allocation and memory limits.
size_t roofline_floats(const target::DeviceProfile& profile);

/// The cached roofline of the device with `device_key` in `cache_dir`/roofline.json, if any.
std::optional<double>
cached_copy_roofline(const std::string& device_key,
                     const std::filesystem::path& cache_dir = default_cache_dir());

/// The device's float4-copy bandwidth in GB/s: from roofline.json in `cache_dir` when known
/// (unless `refresh`), otherwise measured (median of 10 after 3 warm-ups) and stored there.
double measure_copy_roofline(Device& device, bool refresh = false,
                             const std::filesystem::path& cache_dir = default_cache_dir());

} // namespace liftx::runtime
