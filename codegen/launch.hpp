#pragma once
/// Concrete launches of generated kernels: the one launch type every layer uses (the variant
/// space, features, exec, explore, the API), the one check of whether a device can take a launch,
/// and the one place that turns a request (tied sizes, or given global/local sizes) into a launch.
#include "codegen/kernel.hpp"
#include "support/device_limits.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace liftx::codegen {

/// An NDRange launch. Dimensions from `dims` on are 1. `local[d] == 0` (d < dims) leaves the
/// work-group size to the OpenCL runtime.
struct Launch {
  int dims = 1;
  std::array<int64_t, 3> global{1, 1, 1};
  std::array<int64_t, 3> local{1, 1, 1};
  /// The kernel generated with thread counts tied to the mapped lengths (Options); false: the
  /// free-thread kernel, valid for any sizes.
  bool tied = true;
  bool local_given() const;
  int64_t work_items() const { return global[0] * global[1] * global[2]; }
};

/// "global 64x32 local 16x4 tied" ("free" for the free-thread kernel).
std::string describe(const Launch& launch);

/// Why a device would not take a launch: `reason` is a short stable key (the variant space
/// counts rejections under it), `message` the full sentence for a user.
struct LaunchRefusal {
  std::string reason;
  std::string message;
};

/// 32-bit registers a work-item of `kernel` is estimated to hold: its private memory in words
/// plus 16 for indices and addresses, in the allocation unit of 8, at most 255 (past that a
/// compiler spills rather than failing the launch). An estimate, not the compiler's count: on the
/// H200 measurements of the 3D suite (256³ and 512³) it refuses all 29 launches that failed with
/// CL_OUT_OF_RESOURCES and 10 of the 897 that ran, none the fastest of its stencil.
int64_t estimated_registers_per_work_item(const Kernel& kernel);

/// The one "does this launch fit" check, in this order: local sizes divide global sizes
/// ("local does not divide global"), each local size within its dimension's limit ("work-item
/// size over the dimension limit"), the work-group size ("work-group too large"), the local
/// memory per work-group ("local memory over limit"), the registers a work-group is estimated to
/// need (`limits.register_words`, "registers over limit"), enough work-groups for the device
/// ("too few work-groups", `limits.min_work_groups`), and barriers all work-items of a group
/// reach ("barrier would diverge"). Index overflow and private memory depend on the kernel and
/// sizes only: see index_overflow and Kernel::private_bytes. `local_bytes`: the kernel's local
/// memory at these sizes when the caller has evaluated it already (one kernel, many launches).
std::optional<LaunchRefusal> launch_refusal(const Kernel& kernel, const Launch& launch,
                                            const Sizes& sizes, const DeviceLimits& limits,
                                            std::optional<int64_t> local_bytes = std::nullopt);

/// Why the launch's thread counts would overflow the 32-bit int `kernel` computes in: a
/// free-thread kernel's loop step (the global size) past its largest index, or the work-item
/// number of an instrumented kernel; nullopt when they fit. prepare_launch refuses such a launch.
std::optional<std::string> launch_index_overflow(const Kernel& kernel, const Launch& launch,
                                                 const Sizes& sizes);

/// What a user (or a stored configuration) asks of a launch: thread counts per dimension, empty
/// for "tied to the mapped lengths". Giving only `local` keeps the launch rule's global size,
/// rounded up to a multiple.
struct LaunchRequest {
  std::vector<int64_t> global;
  std::vector<int64_t> local;
  bool instrument = false; ///< generate the instrumented kernel (see Options::instrument)
  /// See Options::subgroup_rows; nullopt: as the device does (subgroup_rows_for its limits).
  std::optional<SubgroupRows> subgroup_rows;
  bool interior_tiles = false; ///< see Options::interior_tiles
};

/// Where a warp stream's rows live on a device of `limits`: in the lanes' registers, exchanged by
/// shfl.sync, where its sub-groups shuffle (NVIDIA's); in local memory elsewhere. The kernel the
/// variant space checks and the features describe is generated so, as the one that runs.
SubgroupRows subgroup_rows_for(const DeviceLimits& limits);

/// The request that reproduces `launch` through prepare_launch: its local sizes (none when the
/// runtime chooses them), and its global ones unless its threads are tied to the lengths (then
/// the kernel's rule gives them again).
LaunchRequest request_for(const Launch& launch);

/// The launch of a host iteration's tail kernel (Kernel::tail) after the head kernel's `head`:
/// the tail's own tied thread counts where its launch rule gives them, else the head's (a
/// register tile's work-groups; cut to their gcd with the global size where they do not divide);
/// free-thread kernels (`head.tied` false) take the head's launch, which any thread counts serve.
Launch tail_launch(const Kernel& tail, const Launch& head, const Sizes& sizes);

struct PreparedLaunch {
  Kernel kernel;
  Launch launch;
  int64_t local_bytes = 0;    ///< local memory per work-group at these sizes
  std::optional<Launch> tail; ///< the launch of kernel.tail, when there is one
};

/// Generates the kernel and chooses the concrete launch for `request`: the tied kernel unless the
/// request asks for thread counts its launch rule does not give. UserError if the request is
/// malformed, the sizes break the kernel's alignment assumptions, its indices could overflow, or
/// launch_refusal refuses it (a user's explicit launch is not held to min_work_groups or to the
/// register estimate: the device is the judge of what it was asked for).
PreparedLaunch prepare_launch(const ir::Program& program, const Sizes& sizes,
                              const LaunchRequest& request, const DeviceLimits& limits);

} // namespace liftx::codegen
