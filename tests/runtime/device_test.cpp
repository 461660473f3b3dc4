#include "helpers.hpp"
#include "runtime/cache_dir.hpp"
#include "runtime/device.hpp"
#include "runtime/status.hpp"
#include "support/error.hpp"

#include <nlohmann/json.hpp>

using namespace liftx;
using namespace liftx::runtime;

TEST_CASE("status names round-trip") {
  for (Status s : {Status::ok, Status::build_error, Status::run_error, Status::out_of_resources,
                   Status::timeout, Status::wrong_result}) {
    REQUIRE(parse_status(to_string(s)).has_value());
    CHECK(*parse_status(to_string(s)) == s);
  }
  CHECK(to_string(Status::out_of_resources) == "out_of_resources");
  CHECK_FALSE(parse_status("crashed").has_value());
}

TEST_CASE("list_devices gives sane profiles") {
  std::vector<target::DeviceProfile> devices = list_devices();
  if (devices.empty()) {
    MESSAGE("skipped: no OpenCL device on this machine (install pocl-opencl-icd)");
    return;
  }
  for (const target::DeviceProfile& p : devices) {
    CAPTURE(p.device_name);
    CHECK_FALSE(p.platform_name.empty());
    CHECK_FALSE(p.device_name.empty());
    CHECK(p.compute_units >= 1);
    CHECK(p.global_mem_bytes > 0);
    CHECK(p.max_alloc_bytes > 0);
    CHECK(p.max_alloc_bytes <= p.global_mem_bytes);
    CHECK(p.local_mem_bytes > 0);
    CHECK(p.max_work_group_size >= 1);
    CHECK(p.max_work_item_sizes.size() >= 1);
    CHECK(p.warp_width >= 1);
    CHECK(p.opencl_c_version.find("OpenCL C") != std::string::npos);
    // The key is filesystem-safe and three fields long.
    CHECK(std::count(p.key.begin(), p.key.end(), ':') == 2);
    CHECK(p.key.find_first_of(" /\\") == std::string::npos);
    CHECK(p.index_spec() == fmt::format("{}:{}", p.platform_index, p.device_index));
  }
  // Keys are stable: listing again gives the same ones.
  std::vector<target::DeviceProfile> again = list_devices();
  REQUIRE(again.size() == devices.size());
  for (size_t i = 0; i < devices.size(); ++i)
    CHECK(again[i].key == devices[i].key);
}

TEST_CASE("a device profile survives JSON") {
  LIFTX_REQUIRE_DEVICE(device);
  nlohmann::json json = device->profile;
  CHECK(json.at("type") == std::string(to_string(device->profile.type)));
  target::DeviceProfile back = json.get<target::DeviceProfile>();
  CHECK(back.key == device->profile.key);
  CHECK(back.device_name == device->profile.device_name);
  CHECK(back.max_work_item_sizes == device->profile.max_work_item_sizes);
  CHECK(back.local_mem_bytes == device->profile.local_mem_bytes);
  CHECK(back.type == device->profile.type);
  CHECK_THROWS_AS(nlohmann::json::object().get<target::DeviceProfile>(), UserError);
}

TEST_CASE("select_device by type, vendor, index and name") {
  std::vector<target::DeviceProfile> devices = list_devices();
  if (devices.empty()) {
    MESSAGE("skipped: no OpenCL device on this machine (install pocl-opencl-icd)");
    CHECK_THROWS_AS(select_device("cpu"), UserError);
    return;
  }
  bool has_cpu = std::any_of(devices.begin(), devices.end(), [](const target::DeviceProfile& p) {
    return p.type == target::DeviceType::cpu;
  });
  if (has_cpu)
    CHECK(select_device("cpu").profile.type == target::DeviceType::cpu);
  bool has_pocl = std::any_of(devices.begin(), devices.end(), [](const target::DeviceProfile& p) {
    return p.key.rfind("pocl:", 0) == 0;
  });
  if (has_pocl) {
    Device pocl = select_device("POCL"); // case does not matter
    CHECK(pocl.profile.key.rfind("pocl:", 0) == 0);
  }
  Device first = select_device("0:0");
  CHECK(first.profile.platform_index == 0);
  CHECK(first.profile.device_index == 0);
  CHECK(first.profile.key == devices.front().key);
  // A substring of the device name.
  std::string part = devices.back().device_name.substr(0, 6);
  Device by_name = select_device(part);
  CHECK(by_name.profile.device_name.find(part) != std::string::npos);
}

TEST_CASE("an unknown device spec lists what is available") {
  std::vector<target::DeviceProfile> devices = list_devices();
  try {
    select_device("no-such-device-xyz");
    FAIL("expected a UserError");
  } catch (const UserError& e) {
    std::string message = e.what();
    CHECK(message.find("no-such-device-xyz") != std::string::npos);
    for (const target::DeviceProfile& p : devices) {
      CHECK(message.find(p.device_name) != std::string::npos);
      CHECK(message.find(p.index_spec()) != std::string::npos);
    }
    if (devices.empty())
      CHECK(message.find("OCL_ICD_VENDORS") != std::string::npos);
  }
  if (!devices.empty()) {
    CHECK_THROWS_AS(select_device("9:9"), UserError);
    CHECK_THROWS_AS(select_device(""), UserError);
  }
}

TEST_CASE("cache folder and atomic writes") {
  CHECK(default_cache_dir() == testing::test_cache_dir());
  testing::TempDir dir("atomic");
  auto path = dir.path / "sub" / "file.bin";
  std::string bytes("a\0b\nc", 5);
  REQUIRE(write_file_atomically(path, bytes));
  CHECK(read_file_bytes(path) == bytes);
  REQUIRE(write_file_atomically(path, "second"));
  CHECK(read_file_bytes(path) == std::string("second"));
  // No temporary files are left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path / "sub")) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
  CHECK_FALSE(read_file_bytes(dir.path / "missing").has_value());
  CHECK(content_hash("abc") != content_hash("abd"));
  CHECK(content_hash("abc") == content_hash("abc"));
  CHECK(content_hash("").size() == 32);
}
