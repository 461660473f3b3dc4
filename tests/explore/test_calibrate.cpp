// Calibration's design (sizes, samples from the budget, the interleaved target order, the state
// file) and which model a device gets (find_model: its own, its kind's, or the closest shipped).
#include "explore/calibrate.hpp"
#include "explore/collect_targets.hpp"
#include "explore/models.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace liftx;

namespace {

/// A fresh folder per test, removed afterwards; XDG_DATA_HOME and LIFTX_MODEL_DIR point into it.
struct DataDir {
  fs::path path;
  explicit DataDir(const std::string& name) {
    path = fs::temp_directory_path() / fmt::format("liftx-test-calibrate-{}-{}", name, ::getpid());
    fs::remove_all(path);
    fs::create_directories(path / "models");
    setenv("XDG_DATA_HOME", (path / "data").c_str(), 1);
    setenv("LIFTX_MODEL_DIR", (path / "models").c_str(), 1);
  }
  ~DataDir() {
    unsetenv("LIFTX_MODEL_DIR");
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void touch(const fs::path& file) const {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "{}";
  }
};

target::DeviceProfile amd_gpu() {
  target::DeviceProfile p = runtime::named_profile("amd");
  p.device_name = "gfx1100";
  p.key = "amd:gfx1100:3625";
  return p;
}

} // namespace

TEST_CASE("calibrate: the design grows its sample with the budget, within 20 to 400") {
  const target::DeviceProfile gpu = runtime::named_profile("nvidia");
  const target::DeviceProfile cpu = runtime::named_profile("cpu");
  CHECK(explore::design_calibration(gpu, std::chrono::minutes(20), 16).sizes ==
        std::vector<int64_t>{2048, 4096});
  CHECK(explore::design_calibration(cpu, std::chrono::minutes(20), 16).sizes ==
        std::vector<int64_t>{256, 512, 1024, 2048});
  const int64_t small = explore::design_calibration(gpu, std::chrono::minutes(10), 16).sample;
  const int64_t large = explore::design_calibration(gpu, std::chrono::minutes(40), 16).sample;
  CHECK(small >= 20);
  CHECK(large > small);
  CHECK(explore::design_calibration(gpu, std::chrono::minutes(1), 16).sample == 20);
  CHECK(explore::design_calibration(gpu, std::chrono::hours(100), 16).sample == 400);
  // A slow device gets fewer variants for the same budget.
  CHECK(explore::design_calibration(cpu, std::chrono::minutes(40), 16).sample < large);
}

TEST_CASE("calibrate: targets alternate sizes so that every round has every program") {
  const std::vector<std::string> files = {"a.lift", "b.lift", "c.lift"};
  std::vector<Sizes> sizes; // size by size, one entry per file
  for (int64_t n : {16, 32})
    for (size_t f = 0; f < files.size(); ++f)
      sizes.push_back({{"N", n + int64_t(f)}});
  const std::vector<explore::CollectTarget> t = explore::calibration_targets(files, sizes);
  REQUIRE(t.size() == 6);
  // Round 0: a at 16, b at 32, c at 16; round 1: a at 32, b at 16, c at 32.
  const std::vector<std::pair<std::string, int64_t>> expected = {{"a.lift", 16}, {"b.lift", 33},
                                                                 {"c.lift", 18}, {"a.lift", 32},
                                                                 {"b.lift", 17}, {"c.lift", 34}};
  for (size_t i = 0; i < t.size(); ++i) {
    CAPTURE(i);
    CHECK(t[i].file == expected[i].first);
    CHECK(t[i].sizes.at("N") == expected[i].second);
  }
}

TEST_CASE("calibrate: a design size means about n² points for programs of every dimension") {
  // A 3D grid or a matrix product at n per extent would be n³ points: 2048³ floats are 32 GiB.
  const std::string root = LIFTX_SOURCE_DIR;
  const std::vector<std::string> files = {root + "/stencils/jacobi2d5pt.lift",
                                          root + "/stencils/3d/j3d7pt.lift",
                                          root + "/stencils/linalg/mm.lift"};
  explore::CalibrationDesign design;
  design.sizes = {1000, 2048}; // a 2D program keeps n as given, a power of two or not
  const std::vector<Sizes> sizes = explore::sizes_per_file(files, design);
  REQUIRE(sizes.size() == 6);
  const std::vector<int64_t> expected = {1000, 64, 64, 2048, 128, 128};
  for (size_t i = 0; i < sizes.size(); ++i) {
    CAPTURE(i);
    CHECK(sizes[i].size() == (i % 3 == 0 ? 2u : 3u));
    for (const auto& [name, extent] : sizes[i])
      CHECK(extent == expected[i]);
  }
}

TEST_CASE("calibrate: the state file round-trips and a corrupt one is refused") {
  DataDir dir("state");
  const fs::path file = dir.path / "state.json";
  CHECK(!explore::read_calibration_state(file).exists);
  explore::CalibrationState state;
  state.design = {{256, 512}, 37, 5};
  state.spent_s = 12.5;
  explore::write_calibration_state(file, state);
  const explore::CalibrationState back = explore::read_calibration_state(file);
  CHECK(back.exists);
  CHECK(back.design.sizes == std::vector<int64_t>{256, 512});
  CHECK(back.design.sample == 37);
  CHECK(back.design.seed == 5);
  CHECK(back.spent_s == 12.5);
  std::ofstream(file) << "{\"sizes\": [1,";
  CHECK_THROWS_AS(explore::read_calibration_state(file), UserError);
}

TEST_CASE("find_model: the device's calibrated model, then its kind's, then the closest shipped") {
  DataDir dir("find");
  const target::DeviceProfile amd = amd_gpu();
  // No model at all in the folders we control; the source tree's shipped ones are found, and
  // neither is for amd: the closest GPU model (nvidia), not the cpu one, with a note.
  const explore::FoundModel closest = explore::find_model("", amd);
  CHECK(!closest.for_this_device);
  CHECK(closest.path.filename() == "nvidia-model.json");
  REQUIRE(closest.notes.size() == 1);
  CHECK(closest.notes[0].find("liftx calibrate --device amd") != std::string::npos);

  // A model of the device's kind in LIFTX_MODEL_DIR is its own.
  dir.touch(dir.path / "models" / "amd-model.json");
  const explore::FoundModel kind = explore::find_model("", amd);
  CHECK(kind.for_this_device);
  CHECK(kind.path == dir.path / "models" / "amd-model.json");

  // A calibrated model of this very device comes first.
  dir.touch(explore::calibrated_model_path(amd));
  const explore::FoundModel own = explore::find_model("", amd);
  CHECK(own.for_this_device);
  CHECK(own.path == explore::calibrated_model_path(amd));
  CHECK(own.path.parent_path() == dir.path / "data" / "liftx" / "models");

  // A path given explicitly wins; a missing one is an error.
  CHECK(explore::find_model((dir.path / "models" / "amd-model.json").string(), amd).path ==
        dir.path / "models" / "amd-model.json");
  CHECK_THROWS_AS(explore::find_model((dir.path / "nope.json").string(), amd), UserError);
}

TEST_CASE("find_model: device distance puts the type first, then size and bandwidth") {
  const target::DeviceProfile nvidia = runtime::named_profile("nvidia");
  const target::DeviceProfile cpu = runtime::named_profile("cpu");
  const target::DeviceProfile amd = amd_gpu();
  CHECK(explore::device_distance(nvidia, nvidia) == 0);
  CHECK(explore::device_distance(amd, nvidia) < explore::device_distance(amd, cpu));
  CHECK(explore::device_distance(amd, nvidia) == explore::device_distance(nvidia, amd));
}
