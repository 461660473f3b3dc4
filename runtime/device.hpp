#pragma once
/// OpenCL devices: listing them, selecting one by a short spec, opening it. What a device is
/// (DeviceProfile) is the target's (target/profile.hpp).
#include "runtime/opencl.hpp"
#include "target/profile.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace liftx::runtime {

/// A profile by name: a kind of device (target::model_profile: `nvidia`, `amd`, `cpu`), or
/// `detect`, which opens the first OpenCL device and returns its profile. UserError for other
/// names.
target::DeviceProfile named_profile(std::string_view name);

/// Every device of every OpenCL platform, in platform then device order. No platform (no driver
/// registered) gives an empty list, not an error.
std::vector<target::DeviceProfile> list_devices();

/// A device ready to use: its context and an in-order command queue with profiling enabled.
struct Device {
  cl::Device device;
  cl::Context context;
  cl::CommandQueue queue;
  target::DeviceProfile profile;
};

/// The devices `spec` names, in list_devices() order (the rule select_device opens the first of):
/// the one device of a `P:D` spec (none if it does not exist), or every device whose type,
/// vendor word or name matches. Empty when nothing matches (or `spec` is empty).
std::vector<target::DeviceProfile> matching_devices(std::string_view spec);

/// `P:D` as its platform and device indices; nullopt for any other spec.
std::optional<std::pair<int, int>> parse_index_spec(std::string_view spec);

/// Opens the first device that matches `spec` (the first of matching_devices(spec)):
/// - `cpu`, `gpu`, `accelerator`: by device type;
/// - `pocl`, `nvidia`, `amd`, `intel`: by the platform's (or the device vendor's) name;
/// - `P:D`: platform and device indices, as `liftx devices` lists them;
/// - otherwise a case-insensitive substring of the device or platform name.
/// UserError when nothing matches (listing the available devices, or explaining how to register
/// an OpenCL driver when there is no platform at all).
Device select_device(std::string_view spec);

/// Opens the device a profile from list_devices() describes.
Device open_device(const target::DeviceProfile& profile);

} // namespace liftx::runtime
