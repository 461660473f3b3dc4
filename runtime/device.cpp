#include "runtime/device.hpp"

#include "runtime/roofline.hpp"

#include "support/error.hpp"
#include "support/text.hpp"

#include <CL/cl_ext.h>

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <mutex>
#include <optional>

namespace liftx::runtime {

namespace {

template <cl_int Name>
auto device_info(const cl::Device& device) {
  cl_int err = CL_SUCCESS;
  auto value = device.getInfo<Name>(&err);
  if (err != CL_SUCCESS)
    value = {};
  return value;
}

/// CL_DEVICE_REGISTERS_PER_BLOCK_NV, 0 when the driver does not have the extension.
uint32_t nvidia_registers_per_block(const cl::Device& device) {
  if (device_info<CL_DEVICE_EXTENSIONS>(device).find("cl_nv_device_attribute_query") ==
      std::string::npos)
    return 0;
  cl_uint registers = 0;
  if (clGetDeviceInfo(device(), CL_DEVICE_REGISTERS_PER_BLOCK_NV, sizeof registers, &registers,
                      nullptr) != CL_SUCCESS)
    return 0;
  return registers;
}

/// The preferred work-group size multiple of a trivial kernel; memoised per device key because
/// it costs one program build.
uint32_t probe_warp_width(const cl::Device& device, const std::string& key) {
  static std::mutex mutex;
  static std::map<std::string, uint32_t> known;
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find(key); it != known.end())
      return it->second;
  }
  uint32_t width = 1;
  cl_int err = CL_SUCCESS;
  cl::Context context(device, nullptr, nullptr, nullptr, &err);
  if (err == CL_SUCCESS) {
    cl::Program program(
        context, "__kernel void liftx_probe(__global float* x) { x[get_global_id(0)] = 1.0f; }",
        false, &err);
    if (err == CL_SUCCESS && program.build(std::vector<cl::Device>{device}) == CL_SUCCESS) {
      cl::Kernel kernel(program, "liftx_probe", &err);
      if (err == CL_SUCCESS) {
        size_t multiple =
            kernel.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(device, &err);
        if (err == CL_SUCCESS && multiple > 0)
          width = static_cast<uint32_t>(multiple);
      }
    }
  }
  std::lock_guard lock(mutex);
  known[key] = width;
  return width;
}

target::DeviceProfile make_profile(const cl::Platform& platform, const cl::Device& device,
                                   int platform_index, int device_index) {
  target::DeviceProfile p;
  p.platform_index = platform_index;
  p.device_index = device_index;
  cl_int err = CL_SUCCESS;
  p.platform_name = trim(platform.getInfo<CL_PLATFORM_NAME>(&err));
  p.platform_version = trim(platform.getInfo<CL_PLATFORM_VERSION>(&err));
  p.device_name = trim(device_info<CL_DEVICE_NAME>(device));
  p.vendor = trim(device_info<CL_DEVICE_VENDOR>(device));
  p.driver_version = trim(device_info<CL_DRIVER_VERSION>(device));
  p.opencl_c_version = trim(device_info<CL_DEVICE_OPENCL_C_VERSION>(device));
  cl_device_type type = device_info<CL_DEVICE_TYPE>(device);
  if (type & CL_DEVICE_TYPE_GPU)
    p.type = target::DeviceType::gpu;
  else if (type & CL_DEVICE_TYPE_CPU)
    p.type = target::DeviceType::cpu;
  else if (type & CL_DEVICE_TYPE_ACCELERATOR)
    p.type = target::DeviceType::accelerator;
  p.compute_units = device_info<CL_DEVICE_MAX_COMPUTE_UNITS>(device);
  p.max_clock_mhz = device_info<CL_DEVICE_MAX_CLOCK_FREQUENCY>(device);
  p.global_mem_bytes = device_info<CL_DEVICE_GLOBAL_MEM_SIZE>(device);
  p.max_alloc_bytes = device_info<CL_DEVICE_MAX_MEM_ALLOC_SIZE>(device);
  p.local_mem_bytes = device_info<CL_DEVICE_LOCAL_MEM_SIZE>(device);
  p.max_work_group_size = device_info<CL_DEVICE_MAX_WORK_GROUP_SIZE>(device);
  for (size_t size : device_info<CL_DEVICE_MAX_WORK_ITEM_SIZES>(device))
    p.max_work_item_sizes.push_back(size);
  p.cache_line_bytes = device_info<CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE>(device);
  std::string vendor = target::vendor_word(p.platform_name, p.vendor);
  p.key = fmt::format("{}:{}:{}", vendor, slug(p.device_name), slug(p.driver_version));
  if (vendor == "nvidia" && p.type == target::DeviceType::gpu)
    p.warp_width = 32;
  else if (vendor == "amd" && p.type == target::DeviceType::gpu)
    p.warp_width = 64;
  else
    p.warp_width = probe_warp_width(device, p.key);
  if (vendor == "nvidia")
    p.registers_per_work_group = nvidia_registers_per_block(device);
  if (std::optional<double> copy = cached_copy_roofline(p.key))
    p.memory_gbs = *copy;
  return p;
}

/// Platforms and their devices, enumerated once per call; a platform whose device query fails
/// contributes no devices.
struct Enumerated {
  std::vector<cl::Platform> platforms;
  std::vector<std::vector<cl::Device>> devices;
};

Enumerated enumerate() {
  Enumerated out;
  if (cl::Platform::get(&out.platforms) != CL_SUCCESS)
    out.platforms.clear();
  for (const cl::Platform& platform : out.platforms) {
    std::vector<cl::Device> devices;
    if (platform.getDevices(CL_DEVICE_TYPE_ALL, &devices) != CL_SUCCESS)
      devices.clear();
    out.devices.push_back(std::move(devices));
  }
  return out;
}

bool matches(const target::DeviceProfile& p, std::string_view spec) {
  std::string word = lowercase(spec);
  if (word == "cpu")
    return p.type == target::DeviceType::cpu;
  if (word == "gpu")
    return p.type == target::DeviceType::gpu;
  if (word == "accelerator")
    return p.type == target::DeviceType::accelerator;
  if (word == "pocl" || word == "nvidia" || word == "amd" || word == "intel")
    return p.key.rfind(word + ":", 0) == 0;
  return contains_nocase(p.device_name, spec) || contains_nocase(p.platform_name, spec);
}

std::string describe_available(const std::vector<target::DeviceProfile>& profiles) {
  std::string text;
  for (const target::DeviceProfile& p : profiles)
    text += fmt::format("\n  {}  {} / {} ({})", p.index_spec(), p.platform_name, p.device_name,
                        to_string(p.type));
  return text;
}

} // namespace

target::DeviceProfile named_profile(std::string_view name) {
  if (name == "detect")
    return select_device("0:0").profile;
  if (std::optional<target::DeviceProfile> profile = target::model_profile(name))
    return *profile;
  throw UserError(
      fmt::format("unknown device profile '{}' (known: nvidia, amd, cpu, detect)", name));
}

std::vector<target::DeviceProfile> list_devices() {
  Enumerated all = enumerate();
  std::vector<target::DeviceProfile> profiles;
  for (size_t p = 0; p < all.platforms.size(); ++p)
    for (size_t d = 0; d < all.devices[p].size(); ++d)
      profiles.push_back(make_profile(all.platforms[p], all.devices[p][d], static_cast<int>(p),
                                      static_cast<int>(d)));
  return profiles;
}

namespace {
Device open(const cl::Device& device, target::DeviceProfile profile) {
  cl_int err = CL_SUCCESS;
  Device out;
  out.device = device;
  out.profile = std::move(profile);
  out.context = cl::Context(device, nullptr, nullptr, nullptr, &err);
  LIFTX_USER_CHECK(err == CL_SUCCESS, "cannot create an OpenCL context on {} ({}): {}",
                   out.profile.device_name, out.profile.index_spec(), cl_error_name(err));
  out.queue = cl::CommandQueue(out.context, device, CL_QUEUE_PROFILING_ENABLE, &err);
  LIFTX_USER_CHECK(err == CL_SUCCESS, "cannot create an OpenCL command queue on {} ({}): {}",
                   out.profile.device_name, out.profile.index_spec(), cl_error_name(err));
  return out;
}
} // namespace

Device open_device(const target::DeviceProfile& profile) {
  Enumerated all = enumerate();
  auto p = static_cast<size_t>(profile.platform_index);
  auto d = static_cast<size_t>(profile.device_index);
  LIFTX_USER_CHECK(profile.platform_index >= 0 && profile.device_index >= 0 &&
                       p < all.platforms.size() && d < all.devices[p].size(),
                   "OpenCL device {} ({}) is no longer available", profile.index_spec(),
                   profile.device_name);
  return open(all.devices[p][d], profile);
}

std::optional<std::pair<int, int>> parse_index_spec(std::string_view spec) {
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos)
    return std::nullopt;
  auto parse = [](std::string_view text) -> std::optional<int> {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      return std::nullopt;
    return value;
  };
  auto p = parse(spec.substr(0, colon));
  auto d = parse(spec.substr(colon + 1));
  if (!p || !d)
    return std::nullopt;
  return std::pair{*p, *d};
}

namespace {

/// The (platform, device) indices of the devices `spec` names, in enumeration order.
std::vector<std::pair<size_t, size_t>> matching_indices(const Enumerated& all,
                                                        std::string_view spec) {
  std::vector<std::pair<size_t, size_t>> found;
  if (auto index = parse_index_spec(spec)) {
    auto [p, d] = *index;
    if (p >= 0 && d >= 0 && static_cast<size_t>(p) < all.platforms.size() &&
        static_cast<size_t>(d) < all.devices[static_cast<size_t>(p)].size())
      found.emplace_back(static_cast<size_t>(p), static_cast<size_t>(d));
  } else if (!spec.empty()) {
    for (size_t p = 0; p < all.platforms.size(); ++p)
      for (size_t d = 0; d < all.devices[p].size(); ++d)
        if (matches(make_profile(all.platforms[p], all.devices[p][d], static_cast<int>(p),
                                 static_cast<int>(d)),
                    spec))
          found.emplace_back(p, d);
  }
  return found;
}

} // namespace

std::vector<target::DeviceProfile> matching_devices(std::string_view spec) {
  Enumerated all = enumerate();
  std::vector<target::DeviceProfile> profiles;
  for (auto [p, d] : matching_indices(all, spec))
    profiles.push_back(make_profile(all.platforms[p], all.devices[p][d], static_cast<int>(p),
                                    static_cast<int>(d)));
  return profiles;
}

Device select_device(std::string_view spec) {
  Enumerated all = enumerate();
  LIFTX_USER_CHECK(
      !all.platforms.empty(),
      "no OpenCL platform found (device '{}' requested). Install an OpenCL driver, or register "
      "one: put a file containing the driver library's path (e.g. /usr/lib/libnvidia-opencl.so) "
      "into a folder as NAME.icd and set OCL_ICD_VENDORS to that folder",
      spec);
  const std::vector<std::pair<size_t, size_t>> found = matching_indices(all, spec);
  if (!found.empty()) {
    auto [p, d] = found.front();
    return open(all.devices[p][d], make_profile(all.platforms[p], all.devices[p][d],
                                                static_cast<int>(p), static_cast<int>(d)));
  }
  std::vector<target::DeviceProfile> profiles = list_devices();
  throw UserError(fmt::format(
      "no OpenCL device matches '{}'; available devices (P:D  platform / "
      "device (type)):{}",
      spec, profiles.empty() ? std::string("\n  (none)") : describe_available(profiles)));
}

} // namespace liftx::runtime
