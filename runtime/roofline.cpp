#include "runtime/roofline.hpp"

#include "runtime/build_cache.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <random>

namespace liftx::runtime {

namespace {

constexpr const char* kCopySource = R"CL(
__kernel void liftx_copy_float4(__global const float4* restrict in, __global float4* restrict out) {
  size_t i = get_global_id(0);
  out[i] = in[i];
}
)CL";

/// Distinct, non-zero, exactly representable values, cheap to recompute for checking.
float copy_input(size_t i) {
  return static_cast<float>((i * 2654435761u) % 65521u) + 0.5f;
}

std::filesystem::path roofline_file(const std::filesystem::path& cache_dir) {
  return cache_dir / "roofline.json";
}

nlohmann::json read_roofline_file(const std::filesystem::path& cache_dir) {
  auto bytes = read_file_bytes(roofline_file(cache_dir));
  if (!bytes)
    return nlohmann::json::object();
  nlohmann::json json = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  return json.is_object() ? json : nlohmann::json::object(); // corrupt: start afresh
}

} // namespace

CopyBandwidth measure_copy_bandwidth(Device& device, size_t floats, int warmup, int repeat) {
  LIFTX_USER_CHECK(floats != 0 && floats % 4 == 0,
                   "the copy size must be a positive multiple of 4 (got {})", floats);
  std::vector<float> input(floats);
  for (size_t i = 0; i < floats; ++i)
    input[i] = copy_input(i);
  cl::Buffer in = upload(device, input, CL_MEM_READ_ONLY);
  input = {};
  size_t bytes = floats * sizeof(float);
  cl::Buffer out = allocate(device, bytes, CL_MEM_WRITE_ONLY);
  poison(device, out, bytes);

  Kernel kernel(build(device, kCopySource), "liftx_copy_float4");
  kernel.arg(in).arg(out);
  size_t items = floats / 4;
  cl::NDRange local = cl::NullRange;
  if (device.profile.type == target::DeviceType::gpu && device.profile.max_work_group_size >= 256 &&
      items % 256 == 0)
    local = cl::NDRange(256);
  CopyBandwidth result;
  result.floats = floats;
  result.timing = time_kernel(device, kernel, cl::NDRange(items), local, warmup, repeat);

  std::mt19937_64 rng(floats);
  std::uniform_int_distribution<size_t> pick(0, floats - 1);
  for (int sample = 0; sample < 64; ++sample) {
    size_t i = pick(rng);
    float value = 0;
    check_cl(device.queue.enqueueReadBuffer(out, CL_TRUE, i * sizeof(float), sizeof(float), &value),
             "cannot read back the copy");
    if (value != copy_input(i))
      throw LaunchError(Status::wrong_result, CL_SUCCESS,
                        fmt::format("the float4 copy gave {} at element {} (expected {})", value, i,
                                    copy_input(i)));
  }
  double seconds = result.timing.median_ms * 1e-3;
  result.gb_per_s = seconds > 0 ? 2.0 * static_cast<double>(bytes) / seconds * 1e-9 : 0.0;
  return result;
}

size_t roofline_floats(const target::DeviceProfile& profile) {
  size_t floats = profile.type == target::DeviceType::gpu ? (size_t{64} << 20) : (size_t{16} << 20);
  auto fits = [&](size_t n) {
    uint64_t bytes = n * sizeof(float);
    bool alloc_ok = profile.max_alloc_bytes == 0 || bytes <= profile.max_alloc_bytes;
    bool memory_ok = profile.global_mem_bytes == 0 || 4 * bytes <= profile.global_mem_bytes;
    return alloc_ok && memory_ok;
  };
  while (floats > 4096 && !fits(floats))
    floats /= 2;
  return floats;
}

std::optional<double> cached_copy_roofline(const std::string& device_key,
                                           const std::filesystem::path& cache_dir) {
  nlohmann::json json = read_roofline_file(cache_dir);
  auto it = json.find(device_key);
  if (it == json.end() || !it->is_object())
    return std::nullopt;
  auto value = it->find("gb_per_s");
  if (value == it->end() || !value->is_number() || value->get<double>() <= 0)
    return std::nullopt;
  return value->get<double>();
}

double measure_copy_roofline(Device& device, bool refresh, const std::filesystem::path& cache_dir) {
  if (!refresh)
    if (auto known = cached_copy_roofline(device.profile.key, cache_dir))
      return *known;
  CopyBandwidth copy = measure_copy_bandwidth(device, roofline_floats(device.profile), 3, 10);
  // Re-read just before writing so entries other processes stored meanwhile survive.
  nlohmann::json json = read_roofline_file(cache_dir);
  json[device.profile.key] = {
      {"gb_per_s", copy.gb_per_s},
      {"floats", copy.floats},
      {"median_ms", copy.timing.median_ms},
      {"iqr_ms", copy.timing.iqr_ms()},
      {"device_name", device.profile.device_name},
      {"measured_at_unix", std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count()},
  };
  write_file_atomically(roofline_file(cache_dir), json.dump(2) + "\n"); // best effort
  return copy.gb_per_s;
}

} // namespace liftx::runtime
