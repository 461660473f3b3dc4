#pragma once
/// The target: what liftx knows of a device to generate, rank, tune and cache kernels for it
/// (DeviceProfile), and the profiles of device kinds it can plan for without the device. Plain
/// numbers, no OpenCL: the libraries that reason about a device (features, the variant space)
/// depend on this, and only runtime/ opens devices.
#include "support/device_limits.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::target {

enum class DeviceType { cpu, gpu, accelerator, other };

/// "cpu", "gpu", "accelerator", "other".
std::string_view to_string(DeviceType type);

/// Everything liftx needs to know about a device to generate, tune and cache kernels for it.
struct DeviceProfile {
  int platform_index = 0; ///< position in clGetPlatformIDs' list (not stable across machines)
  int device_index = 0;   ///< position in the platform's device list
  std::string platform_name;
  std::string platform_version;
  std::string device_name;
  std::string vendor;
  std::string driver_version;
  std::string opencl_c_version; ///< e.g. "OpenCL C 1.2 PoCL"
  DeviceType type = DeviceType::other;
  uint32_t compute_units = 0;
  uint32_t max_clock_mhz = 0;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  uint64_t local_mem_bytes = 0;
  uint64_t max_work_group_size = 0;
  std::vector<uint64_t> max_work_item_sizes;
  /// Threads that execute in lock step: 32 on NVIDIA, 64 on AMD, otherwise the preferred
  /// work-group size multiple the driver reports for a trivial kernel.
  uint32_t warp_width = 1;
  uint32_t cache_line_bytes = 0; ///< CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE; 0 if unknown
  /// Local-memory banks (4 bytes wide); OpenCL does not report it: 32 on NVIDIA and AMD GPUs.
  uint32_t local_mem_banks = 32;
  /// 32-bit registers one work-group may use in all: CL_DEVICE_REGISTERS_PER_BLOCK_NV where the
  /// driver reports it (cl_nv_device_attribute_query), else 0 (not reported; limits() assumes
  /// 65,536 on GPUs: an NVIDIA SM, or the four wavefronts of a 256-item AMD work-group at their
  /// 256 registers each).
  uint32_t registers_per_work_group = 0;
  /// Short, filesystem-safe, stable across runs: "<vendor>:<device name>:<driver version>",
  /// e.g. "pocl:pthread-skylake-avx512-intel-r-xeon-r-processor:3.1-debian". Keys caches.
  std::string key;
  /// Streaming bandwidth of global memory in GB/s (a float4 copy's), 0 when unknown. A named
  /// profile holds a typical figure; a probed device takes the measurement `liftx roofline`
  /// cached for its key, when there is one.
  double memory_gbs = 0;

  /// What the device moves and computes per second, as the analytic features need it
  /// (features/derived.hpp). Estimates: only `memory_gbs` is measured; the rest follow from the
  /// compute units, the clock and the vendor's usual lanes per compute unit, so that the relative
  /// weight of DRAM, cache, local-memory and arithmetic time is right, not their absolute value.
  struct Throughput {
    double memory_gbs = 0; ///< global memory (DRAM)
    double cache_gbs = 0;  ///< last-level cache
    double local_gbs = 0;  ///< local memory, all compute units together
    double gops = 0;       ///< float operations (an FMA counts 1), all compute units
    int64_t compute_units = 1;
    int64_t resident_work_items_per_cu = 1; ///< hardware threads a compute unit holds
    int64_t warp_width = 1;
    int64_t cache_line_bytes = 64;
    double memory_latency_ns = 600; ///< what the work-items in flight must cover
  };
  Throughput throughput() const;

  /// "P:D", the spec that selects exactly this device.
  std::string index_spec() const;
  /// The limits launches must respect. 0 (unknown) in a field is no limit. Private memory per
  /// work-item, which OpenCL does not report, is 1 KiB on GPUs (registers: more spills) and
  /// 64 KiB elsewhere; GPUs want at least 8 work-groups (one per compute-unit cluster); a GPU's
  /// work-group holds registers_per_work_group (65,536 when not reported), a CPU's is unlimited.
  DeviceLimits limits() const;
};

void to_json(nlohmann::json& json, const DeviceProfile& profile);
void from_json(const nlohmann::json& json, DeviceProfile& profile);

/// The vendor word of a platform and vendor name: "pocl", "nvidia", "amd", "intel", else the
/// platform's name as a slug. The first part of a profile's key, and what `--device nvidia`
/// selects by.
std::string vendor_word(const std::string& platform_name, const std::string& vendor);

/// The profile of a device kind, for planning without the device: `nvidia` (warp 32, 128-byte
/// lines, 32 banks, work-groups up to 1024, 48 KiB local memory, 132 compute units as on an
/// H100/H200), `amd` (wavefront 64, 64-byte lines, 32 banks, work-groups up to 256, 64 KiB local
/// memory), `cpu` (PoCL-like: 8 SIMD lanes as the "warp", 64-byte lines, work-groups up to
/// 4096). nullopt for another name (runtime::named_profile also knows `detect`).
std::optional<DeviceProfile> model_profile(std::string_view name);

} // namespace liftx::target
