#include "explore/models.hpp"

#include "explore/calibrate.hpp"
#include "explore/collect.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

namespace liftx::explore {

namespace fs = std::filesystem;

std::vector<fs::path> model_folders(const std::vector<fs::path>& extra_folders) {
  std::vector<fs::path> folders;
  if (const char* dir = std::getenv("LIFTX_MODEL_DIR"); dir && *dir)
    folders.emplace_back(dir);
  folders.insert(folders.end(), extra_folders.begin(), extra_folders.end());
#ifdef LIFTX_SOURCE_DIR
  folders.push_back(fs::path(LIFTX_SOURCE_DIR) / "model" / "data");
#endif
  std::error_code ec;
  if (const fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
    folders.push_back(exe.parent_path().parent_path() / "share" / "liftx" / "model");
  return folders;
}

namespace {

double log_ratio(double a, double b) {
  return a > 0 && b > 0 ? std::abs(std::log2(a / b)) : 1.0;
}

/// The named profiles a shipped model can be trained for.
constexpr const char* kShippedKinds[] = {"nvidia", "amd", "cpu"};

} // namespace

double device_distance(const target::DeviceProfile& a, const target::DeviceProfile& b) {
  double d = a.type == b.type ? 0.0 : 10.0;
  d += log_ratio(a.compute_units, b.compute_units);
  d += log_ratio(a.throughput().memory_gbs, b.throughput().memory_gbs);
  d += a.warp_width == b.warp_width ? 0.0 : 1.0;
  return d;
}

FoundModel find_model(const std::string& explicit_path, const target::DeviceProfile& device,
                      const std::vector<fs::path>& extra_folders) {
  std::error_code ec;
  if (!explicit_path.empty()) {
    LIFTX_USER_CHECK(fs::exists(explicit_path, ec), "model file {} does not exist", explicit_path);
    return {explicit_path, {}, true};
  }
  if (const fs::path own = calibrated_model_path(device); fs::exists(own, ec))
    return {own, {}, true};
  const std::vector<fs::path> folders = model_folders(extra_folders);
  auto look = [&](const std::string& kind) -> std::optional<fs::path> {
    for (const fs::path& folder : folders)
      if (fs::exists(folder / (kind + "-model.json"), ec))
        return folder / (kind + "-model.json");
    return std::nullopt;
  };
  const std::string kind = profile_name_for(device);
  if (std::optional<fs::path> path = look(kind))
    return {*path, {}, true};
  std::optional<fs::path> closest;
  std::string closest_kind;
  double best = std::numeric_limits<double>::infinity();
  for (const char* candidate : kShippedKinds)
    if (std::optional<fs::path> path = look(candidate)) {
      const double d = device_distance(device, runtime::named_profile(candidate));
      if (d < best) {
        best = d;
        closest = path;
        closest_kind = candidate;
      }
    }
  if (closest)
    return {*closest,
            {fmt::format("no model for this device ({}): starting from the closest shipped one "
                         "({}) and adapting it to the runs; `liftx calibrate --device {}` "
                         "measures and trains this device's own",
                         device.device_name, closest_kind, kind)},
            false};
  std::string looked;
  for (const fs::path& folder : folders)
    looked += "\n  " + folder.string();
  throw UserError(fmt::format("no cost model found for {} devices; looked in:{}\nSet "
                              "LIFTX_MODEL_DIR, run `liftx calibrate --device {}`, or pass a "
                              "model with --model",
                              kind, looked, kind));
}

} // namespace liftx::explore
