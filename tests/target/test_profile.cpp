// target/: device profiles as plain numbers, linked without OpenCL.
#include "target/profile.hpp"

#include "support/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace liftx;

TEST_CASE("model_profile: the kinds of device liftx plans for without the device") {
  const std::optional<target::DeviceProfile> nvidia = target::model_profile("nvidia");
  REQUIRE(nvidia);
  CHECK(nvidia->type == target::DeviceType::gpu);
  CHECK(nvidia->warp_width == 32);
  CHECK(nvidia->cache_line_bytes == 128);
  CHECK(nvidia->key == "model:nvidia");
  CHECK(nvidia->limits().max_work_group_size == 1024);
  CHECK(nvidia->limits().min_work_groups == 8);
  // Its warps shuffle: a warp stream's rows stay in registers (codegen::subgroup_rows_for).
  CHECK(nvidia->limits().subgroup_shuffle);

  const std::optional<target::DeviceProfile> cpu = target::model_profile("cpu");
  REQUIRE(cpu);
  CHECK(cpu->type == target::DeviceType::cpu);
  CHECK(cpu->limits().min_work_groups == 1);
  // A CPU's throughput has no GPU lanes: two SIMD vectors of its "warp" width per cycle.
  CHECK(cpu->throughput().gops < nvidia->throughput().gops);

  CHECK_FALSE(cpu->limits().subgroup_shuffle);
  REQUIRE(target::model_profile("amd"));
  CHECK(target::model_profile("amd")->warp_width == 64);
  CHECK_FALSE(target::model_profile("amd")->limits().subgroup_shuffle);
}

TEST_CASE("model_profile refuses names that are not a kind; detect needs a device") {
  CHECK_FALSE(target::model_profile("detect"));
  CHECK_FALSE(target::model_profile("NVIDIA"));
  CHECK_FALSE(target::model_profile(""));
}

TEST_CASE("a profile's JSON round-trips; malformed numbers are user errors") {
  // As a probed device's: a kind's profile has no platform (index -1), which a stored one may not.
  target::DeviceProfile amd = *target::model_profile("amd");
  amd.platform_index = 0;
  amd.device_index = 1;
  const nlohmann::json json = amd;
  const target::DeviceProfile back = json.get<target::DeviceProfile>();
  CHECK(back.key == amd.key);
  CHECK(back.max_work_item_sizes == amd.max_work_item_sizes);
  CHECK(back.memory_gbs == amd.memory_gbs);
  CHECK(nlohmann::json(back) == json);

  nlohmann::json negative = json;
  negative["compute_units"] = -4;
  CHECK_THROWS_AS(negative.get<target::DeviceProfile>(), UserError);
  nlohmann::json fraction = json;
  fraction["warp_width"] = 31.5;
  CHECK_THROWS_AS(fraction.get<target::DeviceProfile>(), UserError);
}

TEST_CASE("vendor_word: the word --device selects a platform by") {
  CHECK(target::vendor_word("Portable Computing Language", "GenuineIntel") == "pocl");
  CHECK(target::vendor_word("NVIDIA CUDA", "NVIDIA Corporation") == "nvidia");
  CHECK(target::vendor_word("AMD Accelerated Parallel Processing",
                            "Advanced Micro Devices, Inc.") == "amd");
  CHECK(target::vendor_word("Intel(R) OpenCL", "Intel(R) Corporation") == "intel");
  CHECK(target::vendor_word("Some Vendor's Platform", "someone") == "some-vendor-s-platform");
}
