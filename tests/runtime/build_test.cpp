#include "helpers.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/launch.hpp"

#include <fstream>

using namespace liftx;
using namespace liftx::runtime;

namespace {
const std::string kScaleSource = R"CL(
__kernel void scale(__global float* data, float factor) {
  size_t i = get_global_id(0);
  data[i] = data[i] * factor;
}
)CL";

/// Runs `scale` from `program` on a small buffer and checks it really multiplies.
void check_scale_works(Device& device, const cl::Program& program) {
  std::vector<float> data{1.5f, -2.0f, 3.25f, 0.5f};
  cl::Buffer buffer = upload(device, data);
  Kernel kernel(program, "scale");
  kernel.arg(buffer).arg(2.0f);
  run_kernel(device, kernel, cl::NDRange(4), cl::NullRange);
  std::vector<float> result = download(device, buffer, 4);
  for (size_t i = 0; i < 4; ++i)
    CHECK(result[i] == data[i] * 2.0f);
}
} // namespace

TEST_CASE("builds are cached in memory and on disk") {
  LIFTX_REQUIRE_DEVICE(device);
  testing::TempDir dir("build");
  // Unique options make this build independent of anything cached earlier in the process.
  const std::string options = "-cl-fast-relaxed-math -DLIFTX_TEST_BUILD=1";
  BuildCache cache(dir.path);
  BuildResult first = cache.build(*device, kScaleSource, options);
  CHECK_FALSE(first.cache_hit);
  CHECK(first.build_ms > 0);
  CHECK(first.hash.size() == 32);
  CHECK(std::filesystem::exists(cache.binary_path(first.hash)));
  check_scale_works(*device, first.program);

  BuildResult second = cache.build(*device, kScaleSource, options);
  CHECK(second.cache_hit);
  CHECK_FALSE(second.from_disk);
  CHECK(second.program() == first.program());

  // A fresh cache object on the same folder loads the binary from disk.
  BuildCache fresh(dir.path);
  BuildResult from_disk = fresh.build(*device, kScaleSource, options);
  CHECK(from_disk.cache_hit);
  CHECK(from_disk.from_disk);
  check_scale_works(*device, from_disk.program);

  // Different options or source: a different key.
  CHECK(BuildCache::key(*device, kScaleSource, options) == first.hash);
  CHECK(BuildCache::key(*device, kScaleSource, "") != first.hash);
  CHECK(BuildCache::key(*device, kScaleSource + " ", options) != first.hash);
}

TEST_CASE("a corrupt cache file is ignored and rewritten") {
  LIFTX_REQUIRE_DEVICE(device);
  testing::TempDir dir("corrupt");
  const std::string options = "-DLIFTX_TEST_CORRUPT=1";
  std::string hash = BuildCache::key(*device, kScaleSource, options);
  std::filesystem::path path = BuildCache(dir.path).binary_path(hash);
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << "LIFTXBIN1\n" << hash << "\nnot a checksum\ngarbage";

  BuildCache cache(dir.path);
  BuildResult result = cache.build(*device, kScaleSource, options);
  CHECK_FALSE(result.cache_hit);
  check_scale_works(*device, result.program);
  // The rebuilt binary replaced the garbage and loads in a fresh cache.
  std::optional<std::string> bytes = read_file_bytes(path);
  REQUIRE(bytes.has_value());
  CHECK(bytes->find("garbage") == std::string::npos);
  BuildResult reloaded = BuildCache(dir.path).build(*device, kScaleSource, options);
  CHECK(reloaded.from_disk);
}

TEST_CASE("a build error carries the compiler log") {
  LIFTX_REQUIRE_DEVICE(device);
  BuildCache cache(""); // memory only
  const std::string broken = "__kernel void broken(__global float* x) {\n"
                             "  x[0] = undeclared_variable_q;\n"
                             "}\n";
  try {
    cache.build(*device, broken, "");
    FAIL("expected a BuildError");
  } catch (const BuildError& e) {
    CHECK(e.log().find("undeclared_variable_q") != std::string::npos);
    CHECK(std::string(e.what()).find("undeclared_variable_q") != std::string::npos);
    CHECK(std::string(e.what()).find(device->profile.device_name) != std::string::npos);
  }
  // BuildError is a UserError, so the CLI reports it as bad input.
  CHECK_THROWS_AS(cache.build(*device, broken, ""), UserError);
  CHECK(std::filesystem::path(cache.binary_path("x")).empty());
}

TEST_CASE("an unknown kernel name is a user error naming the kernels") {
  LIFTX_REQUIRE_DEVICE(device);
  cl::Program program = build(*device, kScaleSource);
  try {
    Kernel kernel(program, "scael");
    FAIL("expected a UserError");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("scale") != std::string::npos);
  }
}
