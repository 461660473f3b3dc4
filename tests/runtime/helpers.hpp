#pragma once
// Shared fixtures of the runtime tests: one opened device per process (skipping cleanly when the
// machine has no OpenCL device) and a private cache folder.
#include "runtime/device.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>

namespace liftx::runtime::testing {

/// The first CPU device (PoCL here), else the first device; nullptr when there is none.
inline Device* test_device() {
  static std::optional<Device> device = []() -> std::optional<Device> {
    std::vector<target::DeviceProfile> devices = list_devices();
    if (devices.empty())
      return std::nullopt;
    for (const target::DeviceProfile& p : devices)
      if (p.type == target::DeviceType::cpu)
        return open_device(p);
    return open_device(devices.front());
  }();
  return device ? &*device : nullptr;
}

#define LIFTX_REQUIRE_DEVICE(var)                                                                  \
  ::liftx::runtime::Device* var = ::liftx::runtime::testing::test_device();                        \
  if (!var) {                                                                                      \
    MESSAGE("skipped: no OpenCL device on this machine (install pocl-opencl-icd)");                \
    return;                                                                                        \
  }

/// A fresh folder under the system temporary folder, removed when the object dies.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// The process-wide cache folder the tests point LIFTX_CACHE_DIR at (set before main runs).
const std::filesystem::path& test_cache_dir();

} // namespace liftx::runtime::testing
