#include "helpers.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/launch.hpp"
#include "runtime/roofline.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <random>
#include <thread>

using namespace liftx;
using namespace liftx::runtime;

namespace {
std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(0.25f, 2.0f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(n);
  for (float& x : v)
    x = negative(rng) ? -dist(rng) : dist(rng);
  return v;
}

const std::string kSaxpySource = R"CL(
__kernel void saxpy(__global const float* x, __global float* y, float a, int n, long offset) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i] + (float)offset;
}
__kernel void reverse_in_group(__global const float* in, __global float* out, __local float* tile) {
  size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
  tile[l] = in[g * n + l];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[g * n + l] = tile[n - 1 - l];
}
)CL";
} // namespace

TEST_CASE("saxpy on random data matches the host") {
  LIFTX_REQUIRE_DEVICE(device);
  const int n = 1000; // not a multiple of the global size: the guard matters
  std::vector<float> x = random_floats(n, 1), y = random_floats(n, 2);
  cl::Buffer dx = upload(*device, x);
  cl::Buffer dy = upload(*device, y);
  Kernel kernel(build(*device, kSaxpySource), "saxpy");
  kernel.arg(dx).arg(dy).arg(1.5f).arg(int32_t{n}).arg(int64_t{3});
  CHECK(kernel.next_index() == 5);
  double ms = run_kernel(*device, kernel, cl::NDRange(1024), runtime_chooses_local());
  CHECK(ms >= 0);
  std::vector<float> result = download(*device, dy, n);
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(result[static_cast<size_t>(i)] ==
          doctest::Approx(1.5f * x[static_cast<size_t>(i)] + y[static_cast<size_t>(i)] + 3.0f)
              .epsilon(1e-6));
  }
}

TEST_CASE("local memory arguments and poisoned outputs") {
  LIFTX_REQUIRE_DEVICE(device);
  const size_t n = 256, group = 64;
  std::vector<float> in = random_floats(n, 3);
  cl::Buffer din = upload(*device, in);
  cl::Buffer dout = allocate(*device, n * sizeof(float));
  poison(*device, dout, n * sizeof(float));
  std::vector<float> poisoned = download(*device, dout, n);
  for (float v : poisoned)
    REQUIRE(is_poison(v));
  CHECK(std::isnan(poisoned[0]));

  Kernel kernel(build(*device, kSaxpySource), "reverse_in_group");
  kernel.arg(din).arg(dout).arg(LocalMemory{group * sizeof(float)});
  run_kernel(*device, kernel, cl::NDRange(n), cl::NDRange(group));
  std::vector<float> out = download(*device, dout, n);
  for (size_t g = 0; g < n / group; ++g)
    for (size_t l = 0; l < group; ++l)
      CHECK(out[g * group + l] == in[g * group + group - 1 - l]);
  CHECK_FALSE(is_poison(out[0]));
}

TEST_CASE("timing gives repeat samples and ordered statistics") {
  LIFTX_REQUIRE_DEVICE(device);
  const int n = 1 << 16;
  cl::Buffer dx = upload(*device, random_floats(n, 4));
  cl::Buffer dy = upload(*device, random_floats(n, 5));
  Kernel kernel(build(*device, kSaxpySource), "saxpy");
  kernel.arg(dx).arg(dy).arg(0.5f).arg(int32_t{n}).arg(int64_t{0});
  Timing timing = time_kernel(*device, kernel, cl::NDRange(n), cl::NDRange(64), 2, 7);
  CHECK(timing.samples_ms.size() == 7);
  CHECK(timing.min_ms > 0);
  CHECK(timing.min_ms <= timing.median_ms);
  CHECK(timing.median_ms <= timing.max_ms);
  CHECK(timing.q1_ms <= timing.median_ms);
  CHECK(timing.q3_ms >= timing.median_ms);
  CHECK(timing.iqr_ms() >= 0);
  CHECK_THROWS_AS(time_kernel(*device, kernel, cl::NDRange(n), cl::NullRange, 0, 0), UserError);
}

TEST_CASE("a warm-up runs its count and at least kMinWarmupMs; none when not asked for") {
  using Clock = std::chrono::steady_clock;
  int calls = 0;
  warm_up(0, [&] { ++calls; });
  CHECK(calls == 0);
  const Clock::time_point start = Clock::now();
  warm_up(3, [&] { ++calls; });
  const double took = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  CHECK(calls > 3); // a no-op call takes far less than kMinWarmupMs
  CHECK(took >= kMinWarmupMs);
  // Runs longer than kMinWarmupMs: the count alone.
  calls = 0;
  warm_up(2, [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kMinWarmupMs + 5));
  });
  CHECK(calls == 2);
}

TEST_CASE("summarize_samples computes quartiles") {
  Timing t = summarize_samples({5.0, 1.0, 3.0, 2.0, 4.0});
  CHECK(t.median_ms == 3.0);
  CHECK(t.min_ms == 1.0);
  CHECK(t.max_ms == 5.0);
  CHECK(t.q1_ms == 2.0);
  CHECK(t.q3_ms == 4.0);
  CHECK(t.samples_ms == std::vector<double>{5.0, 1.0, 3.0, 2.0, 4.0});
  Timing even = summarize_samples({4.0, 1.0, 2.0, 3.0});
  CHECK(even.median_ms == doctest::Approx(2.5));
}

TEST_CASE("a work-group larger than the device allows is out_of_resources") {
  LIFTX_REQUIRE_DEVICE(device);
  size_t too_large = device->profile.max_work_group_size * 2;
  cl::Buffer dx = upload(*device, random_floats(too_large, 6));
  cl::Buffer dy = upload(*device, random_floats(too_large, 7));
  Kernel kernel(build(*device, kSaxpySource), "saxpy");
  kernel.arg(dx).arg(dy).arg(1.0f).arg(static_cast<int32_t>(too_large)).arg(int64_t{0});
  try {
    run_kernel(*device, kernel, cl::NDRange(too_large), cl::NDRange(too_large));
    FAIL("expected a LaunchError");
  } catch (const LaunchError& e) {
    CHECK(e.status() != Status::ok);
    CHECK(e.status() == Status::out_of_resources);
    CHECK(e.code() != CL_SUCCESS);
  }
  CHECK(status_of(CL_OUT_OF_RESOURCES) == Status::out_of_resources);
  CHECK(status_of(CL_MEM_OBJECT_ALLOCATION_FAILURE) == Status::out_of_resources);
  CHECK(status_of(CL_INVALID_KERNEL_ARGS) == Status::run_error);
  CHECK(status_of(CL_SUCCESS) == Status::ok);
  CHECK(cl_error_name(CL_INVALID_WORK_GROUP_SIZE) == "CL_INVALID_WORK_GROUP_SIZE");
  CHECK(to_string(cl::NDRange(4, 8)) == "4,8");
  CHECK(to_string(cl::NullRange) == "auto");
}

TEST_CASE("an allocation beyond the device's limit is out_of_resources") {
  LIFTX_REQUIRE_DEVICE(device);
  try {
    allocate(*device, device->profile.max_alloc_bytes + 4096);
    FAIL("expected a LaunchError");
  } catch (const LaunchError& e) {
    CHECK(e.status() == Status::out_of_resources);
  }
}

TEST_CASE("float4 copy bandwidth and the roofline cache") {
  LIFTX_REQUIRE_DEVICE(device);
  CopyBandwidth copy = measure_copy_bandwidth(*device, size_t{1} << 20, 1, 3);
  CHECK(copy.gb_per_s > 0);
  CHECK(copy.timing.samples_ms.size() == 3);
  CHECK(copy.floats == size_t{1} << 20);
  CHECK_THROWS_AS(measure_copy_bandwidth(*device, 6), UserError);

  size_t floats = roofline_floats(device->profile);
  CHECK(floats % 4 == 0);
  CHECK(floats * sizeof(float) <= device->profile.max_alloc_bytes);

  testing::TempDir dir("roofline");
  CHECK_FALSE(cached_copy_roofline(device->profile.key, dir.path).has_value());
  // A known value is used without measuring.
  nlohmann::json json{{device->profile.key, {{"gb_per_s", 123.5}}}};
  REQUIRE(write_file_atomically(dir.path / "roofline.json", json.dump()));
  CHECK(measure_copy_roofline(*device, false, dir.path) == 123.5);
  // A corrupt file counts as no measurement.
  REQUIRE(write_file_atomically(dir.path / "roofline.json", "{not json"));
  CHECK_FALSE(cached_copy_roofline(device->profile.key, dir.path).has_value());
}
