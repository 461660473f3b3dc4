#pragma once
/// Which cost model ranks a device's variants: the one the user names, the device's own from
/// `liftx calibrate`, the shipped model of its kind, or else the shipped model of the most similar
/// device, which exploration then corrects with its own measurements.
#include "runtime/device.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace liftx::explore {

/// A cost model file and what a user should know about the choice.
struct FoundModel {
  std::filesystem::path path;
  std::vector<std::string> notes; ///< e.g. "no model for amd devices: ..."
  /// False when the model was trained for another kind of device (the closest shipped one):
  /// its order is a prior that exploration should adapt to the measurements.
  bool for_this_device = true;
};

/// The folders shipped models are looked for in, in order: $LIFTX_MODEL_DIR, `extra_folders`,
/// <source tree>/model/data and ../share/liftx/model next to the executable.
std::vector<std::filesystem::path>
model_folders(const std::vector<std::filesystem::path>& extra_folders = {});

/// How unlike two devices are for a cost model: a different device type outweighs everything;
/// then the log-ratios of compute units and memory bandwidth, and a different warp width.
double device_distance(const target::DeviceProfile& a, const target::DeviceProfile& b);

/// The model for `device`: `explicit_path` if given; else the device's calibrated model
/// (calibrated_model_path); else `<kind>-model.json` (kind = profile_name_for(device)) in the
/// first of model_folders() that has it; else the shipped model of the named profile closest to
/// the device (device_distance), with a note saying so and suggesting `liftx calibrate`.
/// UserError listing the folders looked in when there is none at all.
FoundModel find_model(const std::string& explicit_path, const target::DeviceProfile& device,
                      const std::vector<std::filesystem::path>& extra_folders = {});

} // namespace liftx::explore
