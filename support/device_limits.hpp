#pragma once
/// What a device can take, as the variant space and the launch checks need it: plain numbers,
/// no OpenCL. The one source of these numbers is target::DeviceProfile (probed from a device or
/// one of the named profiles), through DeviceProfile::limits(); nothing else lists them.
#include <array>
#include <cstdint>
#include <limits>

namespace liftx {

struct DeviceLimits {
  static constexpr int64_t unlimited = std::numeric_limits<int64_t>::max();
  int64_t max_work_group_size = unlimited;
  std::array<int64_t, 3> max_work_item_sizes{unlimited, unlimited, unlimited};
  int64_t local_memory_bytes = unlimited; ///< per work-group
  /// Private memory per work-item that liftx lets a kernel use (arrays, scalars, register
  /// windows). OpenCL does not report it: a policy, see target::DeviceProfile::limits().
  int64_t private_memory_bytes = unlimited;
  /// 32-bit registers the work-items of one work-group share (an NVIDIA SM's 65,536). A launch
  /// whose work-group needs more fails with CL_OUT_OF_RESOURCES; launch_refusal estimates the
  /// need from the kernel's private memory (codegen::estimated_registers_per_work_item).
  int64_t register_words = unlimited;
  /// Launches with fewer work-groups leave compute units idle; the variant space drops them
  /// (a pruning policy, not a limit the device enforces).
  int64_t min_work_groups = 1;
  /// Whether a sub-group's work-items read each other's registers (NVIDIA's shfl.sync). A warp
  /// stream's rows then stay in registers (codegen::SubgroupRows::nvidia_shuffle), and the kernel
  /// the space checks against these limits and the features describe is the one that runs.
  bool subgroup_shuffle = false;
};

} // namespace liftx
