// liftx::AdaptiveProgram on PoCL: an artifact made by the liftx executable (`liftx adapt` at two
// tiny training shapes) is loaded and run at the training shapes and at held-out ones, each
// result against a plain C++ loop; the choice is a portfolio member, a kernel is compiled once per
// shape, and every failure is a UserError that says what is wrong. Only the public headers are
// included.
#include <liftx/liftx.hpp>

#include "api_test_helpers.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace liftx;
using namespace liftx_api_test;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

/// The artifact of `liftx adapt` for stencils/jacobi2d5pt.lift at 32x64 and 64x32 on PoCL, made
/// once for the whole test program (a few seconds) in a folder removed at exit.
struct Artifact {
  fs::path dir;
  fs::path path;
  Artifact() {
    dir = fs::temp_directory_path() / ("liftx-test-adaptive-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    path = dir / "adaptive.json";
    // Its own performance database; few and short timings: the choice need not be stable, only
    // a member that runs and verifies.
    const std::string command =
        std::string("'") + LIFTX_BINARY + "' adapt '" + LIFTX_SOURCE_DIR +
        "/stencils/jacobi2d5pt.lift' --device cpu --shapes 32x64 64x32 --top 2 --portfolio 2 "
        "--repeat 2 --warmup 1 --quiet --db '" +
        (dir / "perf.db").string() + "' -o '" + path.string() + "' > '" +
        (dir / "adapt.log").string() + "' 2>&1";
    const int status = std::system(command.c_str());
    if (status != 0 || !fs::exists(path))
      FAIL("liftx adapt failed (", status, "):\n", read_text(dir / "adapt.log"));
  }
  ~Artifact() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const Artifact& artifact() {
  static const Artifact made;
  return made;
}

/// stencils/jacobi2d5pt.lift as a plain loop over an m x n row-major grid (clamped borders).
std::vector<float> jacobi_step(const std::vector<float>& g, int64_t m, int64_t n) {
  auto at = [&](int64_t y, int64_t x) {
    y = std::clamp<int64_t>(y, 0, m - 1);
    x = std::clamp<int64_t>(x, 0, n - 1);
    return g[size_t(y * n + x)];
  };
  std::vector<float> out(g.size());
  for (int64_t y = 0; y < m; ++y)
    for (int64_t x = 0; x < n; ++x)
      out[size_t(y * n + x)] = (5.0f * at(y - 1, x) + 12.0f * at(y, x - 1) + 15.0f * at(y, x) +
                                5.0f * at(y + 1, x) + 12.0f * at(y, x + 1)) /
                               118.0f;
  return out;
}

/// Runs `program` at m x n on a random grid and checks the result against the loop.
void check_run(const AdaptiveProgram& program, int64_t m, int64_t n) {
  CAPTURE(m);
  CAPTURE(n);
  const Sizes sizes = {{"M", m}, {"N", n}};
  const std::vector<float> grid = random_grid(size_t(m * n), uint32_t(m * 1000 + n));
  std::vector<float> out;
  program.run(sizes, {grid}, out);
  CHECK(max_difference(out, jacobi_step(grid, m, n)) < 1e-5);
  const AdaptiveChoice choice = program.choice(sizes);
  CHECK(program.applies(sizes));
  REQUIRE(choice.member < program.portfolio().size());
  // The member's description, and whether its work-group was fitted to these sizes.
  CHECK(choice.variant.rfind(program.portfolio()[choice.member], 0) == 0);
  CHECK(contains(program.kernel(sizes).variant(), choice.variant));
}

/// The artifact's text with its device replaced (name and key), for the other-device checks.
std::string with_device(const std::string& text, const DeviceInfo& here, const std::string& name,
                        const std::string& key) {
  std::string out = text;
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = out.find(from);
    REQUIRE(at != std::string::npos);
    out.replace(at, from.size(), to);
  };
  replace("\"device\": \"" + here.name + "\"", "\"device\": \"" + name + "\"");
  replace("\"profile\": \"" + here.key + "\"", "\"profile\": \"" + key + "\"");
  return out;
}

} // namespace

TEST_CASE("adaptive: the artifact of liftx adapt loads and runs at training and held-out shapes") {
  Context ctx("cpu");
  const AdaptiveProgram program = AdaptiveProgram::load(ctx, artifact().path.string());
  CHECK(program.program_name() == "jacobi2d5pt");
  CHECK(program.program().params.size() == 1);
  // Made from stencils/jacobi2d5pt.lift: that program, not another stencil.
  CHECK(program.is_for(load_program(std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift")));
  CHECK_FALSE(
      program.is_for(load_program(std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d9pt.lift")));
  CHECK(program.trained_on() == ctx.device().name);
  CHECK(program.notes().empty());
  CHECK(program.training_shapes() ==
        std::vector<Sizes>{{{"M", 32}, {"N", 64}}, {{"M", 64}, {"N", 32}}});
  REQUIRE_FALSE(program.portfolio().empty());
  CHECK(program.portfolio().size() <= 3); // --portfolio 2, and the shape-free fallback

  check_run(program, 32, 64); // the training shapes
  check_run(program, 64, 32);
  // Held out: multiples of 64, where the work-groups of the candidates `liftx adapt` ranks here
  // (up to 4 tiles of 16 across, 16 tiles of 4 down) divide the grid, whichever it keeps.
  check_run(program, 128, 128);
  check_run(program, 64, 256);

  // A second run at known sizes reuses the kernel: nothing compiled or checked again.
  const ContextStats before = ctx.stats();
  check_run(program, 128, 128);
  const ContextStats after = ctx.stats();
  CHECK(after.compiles == before.compiles);
  CHECK(after.verifications == before.verifications);
  CHECK(after.runs == before.runs + 1);

  // Device buffers through the cached kernel, and through run() itself.
  const int64_t m = 32, n = 64;
  const std::vector<float> grid = random_grid(size_t(m * n), 7);
  Buffer in = ctx.upload(grid), out = ctx.buffer<float>(grid.size());
  program.run({{"M", m}, {"N", n}}, {in}, out);
  CHECK(max_difference(out.read<float>(), jacobi_step(grid, m, n)) < 1e-5);
  Kernel k = program.kernel({{"M", m}, {"N", n}});
  k.run({out}, in);
  CHECK(max_difference(in.read<float>(), jacobi_step(jacobi_step(grid, m, n), m, n)) < 1e-5);
  CHECK(ctx.stats().compiles == after.compiles);
}

TEST_CASE("adaptive: threads asking for a new shape at once compile it once") {
  Context ctx("cpu");
  const AdaptiveProgram program = AdaptiveProgram::load(ctx, artifact().path.string());
  const int64_t compiles = ctx.stats().compiles;
  std::vector<std::thread> threads;
  std::vector<double> errors(3, 1.0);
  for (size_t t = 0; t < errors.size(); ++t)
    threads.emplace_back([&, t] {
      const std::vector<float> grid = random_grid(64 * 64, uint32_t(t));
      std::vector<float> out;
      program.run({{"M", 64}, {"N", 64}}, {grid}, out);
      errors[t] = max_difference(out, jacobi_step(grid, 64, 64));
    });
  for (std::thread& t : threads)
    t.join();
  for (double e : errors)
    CHECK(e < 1e-5);
  CHECK(ctx.stats().compiles == compiles + 1);
}

TEST_CASE("adaptive: missing, foreign and damaged files, bad sizes, and shapes no member fits") {
  Context ctx("cpu");
  const fs::path dir = artifact().dir;

  std::string message = message_of<UserError>(
      [&] { AdaptiveProgram::load(ctx, (dir / "no-such-file.json").string()); });
  CHECK(contains(message, "no-such-file.json: no such file"));
  CHECK(contains(message, "liftx adapt"));

  message = message_of<UserError>([&] { AdaptiveProgram::load(ctx, dir.string()); });
  CHECK(contains(message, "is a directory"));

  write_text(dir / "not-json.json", "def f(x: [float]N) = map(id, x)\n");
  message =
      message_of<UserError>([&] { AdaptiveProgram::load(ctx, (dir / "not-json.json").string()); });
  CHECK(contains(message, "not a liftx adaptive program"));
  CHECK(contains(message, "not JSON"));

  write_text(dir / "foreign.json", R"({"format": "kernel-tuner-t4", "results": []})");
  message =
      message_of<UserError>([&] { AdaptiveProgram::load(ctx, (dir / "foreign.json").string()); });
  CHECK(contains(message, "foreign.json: not a liftx adaptive program"));

  const std::string text = read_text(artifact().path);
  write_text(dir / "truncated.json", text.substr(0, text.size() / 2));
  message =
      message_of<UserError>([&] { AdaptiveProgram::load(ctx, (dir / "truncated.json").string()); });
  CHECK(contains(message, "not JSON"));

  const AdaptiveProgram program = AdaptiveProgram::load(ctx, artifact().path.string());
  std::vector<float> grid(32 * 64), out;
  message = message_of<UserError>([&] { program.run({{"M", 32}}, {grid}, out); });
  CHECK(contains(message, "missing size N"));
  message = message_of<UserError>([&] { program.run({{"M", 64}, {"N", 64}}, {grid}, out); });
  CHECK(contains(message, "needs 4096 float elements"));

  // Prime sizes: no tile divides them; the fallback member (with no tile: its work-group fitted,
  // or a fixed grid) runs there, and computes what the stencil means.
  CHECK(program.applies({{"M", 31}, {"N", 37}}));
  check_run(program, 31, 37);
  // Without the members that have no tile, split, chunk or vector (an artifact that names no
  // fallback, and whose selector never reaches them), a shape no tiled member divides is an
  // error that lists the members.
  nlohmann::json edited = nlohmann::json::parse(text);
  auto shape_free = [&](size_t member) {
    for (const auto& [key, value] : edited["portfolio"][member]["parameters"].items())
      if ((key.starts_with("tile_") || key == "split" || key == "chunk" || key == "vector") &&
          value.get<int64_t>() > 1)
        return false;
    return true;
  };
  edited["fallback"] = nullptr;
  for (nlohmann::json& row : edited["selector"]["order"]) {
    nlohmann::json kept = nlohmann::json::array();
    for (const nlohmann::json& member : row)
      if (!shape_free(member.get<size_t>()))
        kept.push_back(member);
    row = kept;
  }
  write_text(dir / "no-fallback.json", edited.dump(1));
  const AdaptiveProgram tiled_only =
      AdaptiveProgram::load(ctx, (dir / "no-fallback.json").string());
  const std::vector<std::string> members = tiled_only.portfolio();
  CHECK_FALSE(tiled_only.applies({{"M", 31}, {"N", 37}}));
  message = message_of<UserError>([&] { tiled_only.choice({{"M", 31}, {"N", 37}}); });
  CHECK(contains(message, "no member of the adaptive program jacobi2d5pt"));
  CHECK(contains(message, "M=31,N=37"));
  CHECK(contains(message, "#0 " + members[0]));
  std::vector<float> odd(31 * 37);
  CHECK_THROWS_AS(tiled_only.run({{"M", 31}, {"N", 37}}, {odd}, out), UserError);

  // A fixed-grid candidate of the training (liftx adapt keeps one per training shape) as the
  // only member: it runs with its own grid at every shape, odd and larger than the grid ones
  // too, and computes what the stencil means there.
  nlohmann::json fixed = nlohmann::json::parse(text);
  nlohmann::json grid_candidate;
  for (const nlohmann::json& c : fixed["training"]["candidates"])
    if (!c.value("global", nlohmann::json::array()).empty())
      grid_candidate = c;
  REQUIRE_FALSE(grid_candidate.is_null());
  fixed["portfolio"] = nlohmann::json::array({grid_candidate});
  fixed["fallback"] = 0;
  for (nlohmann::json& row : fixed["selector"]["order"])
    row = nlohmann::json::array({0});
  write_text(dir / "fixed-grid.json", fixed.dump(1));
  const AdaptiveProgram grid_only = AdaptiveProgram::load(ctx, (dir / "fixed-grid.json").string());
  CHECK(contains(grid_only.portfolio()[0], ", global "));
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{31, 37}, {32, 64}, {97, 130}}) {
    check_run(grid_only, m, n);
    CHECK(grid_only.choice({{"M", m}, {"N", n}}).variant == grid_only.portfolio()[0]);
  }

  message = message_of<UserError>([] { AdaptiveProgram().choice({{"M", 32}, {"N", 64}}); });
  CHECK(contains(message, "empty"));
}

TEST_CASE("adaptive: an artifact of another device is refused unless asked for; another driver "
          "is a note") {
  Context ctx("cpu");
  const DeviceInfo& here = ctx.device();
  const fs::path dir = artifact().dir;
  const std::string text = read_text(artifact().path);

  write_text(dir / "other-device.json",
             with_device(text, here, "Imaginary GPU 9000", "imaginary:gpu-9000:1-0"));
  const std::string other = (dir / "other-device.json").string();
  const std::string message = message_of<UserError>([&] { AdaptiveProgram::load(ctx, other); });
  CHECK(contains(message, "measured on Imaginary GPU 9000"));
  CHECK(contains(message, here.name));
  CHECK(contains(message, "allow_other_device"));

  AdaptiveOptions anyway;
  anyway.allow_other_device = true;
  const AdaptiveProgram program = AdaptiveProgram::load(ctx, other, anyway);
  REQUIRE(program.notes().size() == 1);
  CHECK(contains(program.notes()[0], "Imaginary GPU 9000"));
  check_run(program, 32, 64);

  write_text(dir / "other-driver.json", with_device(text, here, here.name, here.key + "-older"));
  const AdaptiveProgram driver = AdaptiveProgram::load(ctx, (dir / "other-driver.json").string());
  REQUIRE(driver.notes().size() == 1);
  CHECK(contains(driver.notes()[0], "another driver"));
}
