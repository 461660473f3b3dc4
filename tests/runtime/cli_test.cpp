// End-to-end tests of `liftx devices` and `liftx launch` (which runs kernels in a child process).
// Skipped when the liftx executable has not been built or there is no OpenCL device.
#include "helpers.hpp"
#include "runtime/device.hpp"
#include "runtime/isolate.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

using namespace liftx;
using namespace liftx::runtime;
using namespace std::chrono_literals;

namespace {

bool have_binary_and_device() {
  if (!std::filesystem::exists(LIFTX_BINARY)) {
    MESSAGE("skipped: " LIFTX_BINARY " is not built");
    return false;
  }
  if (!testing::test_device()) {
    MESSAGE("skipped: no OpenCL device on this machine");
    return false;
  }
  return true;
}

IsolatedResult run_liftx(std::vector<std::string> args) {
  args.insert(args.begin(), LIFTX_BINARY);
  return run_isolated(args, 60s);
}

const char* kKernels = R"CL(
__kernel void saxpy(__global const float* x, __global float* y, float a, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
// Far outside any mapping (a store through a null pointer could be optimised away as UB).
__kernel void crash(__global float* y) { y[((long)get_global_id(0) << 28) + (1L << 38)] = 1.0f; }
__kernel void spin(__global float* y) { while (y[0] != -7.0f) y[0] += 1.0f; }
)CL";

} // namespace

TEST_CASE("liftx devices lists the same devices as list_devices") {
  if (!have_binary_and_device())
    return;
  IsolatedResult json_run = run_liftx({"devices", "--json"});
  REQUIRE(json_run.succeeded());
  nlohmann::json json = nlohmann::json::parse(json_run.stdout_text);
  std::vector<target::DeviceProfile> devices = list_devices();
  REQUIRE(json.size() == devices.size());
  CHECK(json[0].get<target::DeviceProfile>().key == devices[0].key);

  IsolatedResult table = run_liftx({"devices"});
  REQUIRE(table.succeeded());
  CHECK(table.stdout_text.find("P:D") != std::string::npos);
  CHECK(table.stdout_text.find(devices[0].device_name) != std::string::npos);
}

TEST_CASE("liftx launch: ok, crash, hang, build error and bad options") {
  if (!have_binary_and_device())
    return;
  testing::TempDir dir("launch");
  std::string file = (dir.path / "kernels.cl").string();
  std::ofstream(file) << kKernels;
  std::string device = testing::test_device()->profile.index_spec();

  IsolatedResult ok = run_liftx(
      {"launch", file,        "--device", device,     "--kernel",       "saxpy", "--global",
       "1024",   "--local",   "64",       "--arg",    "buf:float:1024", "--arg", "buf:float:1024",
       "--arg",  "float:2.5", "--arg",    "int:1000", "--repeat",       "4",     "--json"});
  CAPTURE(ok.stderr_text);
  REQUIRE(ok.exit_code == 0);
  nlohmann::json result = nlohmann::json::parse(ok.stdout_text);
  CHECK(result["status"] == "ok");
  CHECK(result["timing"]["samples_ms"].size() == 4);
  CHECK(result["timing"]["median_ms"].get<double>() > 0);
  CHECK(result["build_ms"].get<double>() >= 0);
  CHECK(result["local"] == "64");
  CHECK_FALSE(result.contains("build_log"));

  // --build-log compiles past the cache (the kernel above is cached now) and returns the log.
  for (int time = 0; time < 2; ++time) {
    IsolatedResult logged = run_liftx(
        {"launch", file,       "--device",       device,  "--kernel",       "saxpy", "--global",
         "1024",   "--arg",    "buf:float:1024", "--arg", "buf:float:1024", "--arg", "float:2.5",
         "--arg",  "int:1000", "--repeat",       "1",     "--build-log",    "--json"});
    CAPTURE(logged.stderr_text);
    REQUIRE(logged.exit_code == 0);
    nlohmann::json with_log = nlohmann::json::parse(logged.stdout_text);
    CHECK(with_log["status"] == "ok");
    CHECK(with_log["cache_hit"] == false);
    CHECK(with_log["build_log"].is_string());
  }
  IsolatedResult table =
      run_liftx({"launch", file, "--device", device, "--kernel", "saxpy", "--global", "1024",
                 "--arg", "buf:float:1024", "--arg", "buf:float:1024", "--arg", "float:2.5",
                 "--arg", "int:1000", "--repeat", "1", "--build-log"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.stdout_text.find("\nbuild log ") != std::string::npos);

  // A kernel that dereferences a wild pointer takes down the worker, not liftx.
  IsolatedResult crash = run_liftx({"launch", file, "--device", device, "--kernel", "crash",
                                    "--global", "64", "--arg", "buf:float:4"});
  CHECK(crash.exit_code == 1);
  CHECK(crash.stdout_text.find("run_error") != std::string::npos);

  IsolatedResult hang =
      run_liftx({"launch", file, "--device", device, "--kernel", "spin", "--global", "1", "--arg",
                 "buf:float:4", "--timeout-ms", "2500"});
  CHECK(hang.exit_code == 1);
  CHECK(hang.stdout_text.find("timeout") != std::string::npos);
  CHECK(hang.wall_ms < 20000);

  std::string broken = (dir.path / "broken.cl").string();
  std::ofstream(broken) << "__kernel void f(__global float* y) {\n  y[0] = missing_name_q;\n}\n";
  IsolatedResult build = run_liftx({"launch", broken, "--device", device, "--kernel", "f",
                                    "--global", "1", "--arg", "buf:float:1"});
  CHECK(build.exit_code == 2);
  CHECK(build.stderr_text.find("missing_name_q") != std::string::npos);

  IsolatedResult too_large =
      run_liftx({"launch", file, "--device", device, "--kernel", "saxpy", "--global", "1048576",
                 "--local", "1048576", "--arg", "buf:float:16", "--arg", "buf:float:16", "--arg",
                 "float:1", "--arg", "int:16"});
  CHECK(too_large.exit_code == 1);
  CHECK(too_large.stdout_text.find("out_of_resources") != std::string::npos);

  IsolatedResult bad_arg = run_liftx({"launch", file, "--device", device, "--kernel", "saxpy",
                                      "--global", "16", "--arg", "buffer:16"});
  CHECK(bad_arg.exit_code == 2);
  CHECK(bad_arg.stderr_text.find("buf:float:N") != std::string::npos);

  IsolatedResult bad_device = run_liftx(
      {"launch", file, "--device", "no-such-device-q", "--kernel", "saxpy", "--global", "16"});
  CHECK(bad_device.exit_code == 2);
  CHECK(bad_device.stderr_text.find("available devices") != std::string::npos);
}
