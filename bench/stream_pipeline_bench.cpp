// stream_pipeline_bench: fused time steps of the Jacobi 2D stencils (clamp) and heat 2D (wrap)
// written by hand in AN5D's N.5D form (bench/handwritten/stream2d.cl: a work-group per strip, one
// or more adjacent columns per work-item, each fused step a ring of rows in local memory, one
// barrier per row for all the steps), against the copy-bound rate of the same device measured in
// the same process. It answers what the scheme reaches before the code generator builds it (issue
// 63's targets at 8192^2 x 64 steps: 3x the copy-bound rate for the 5-point Jacobi and heat
// 2D, 2.5x for the 9-point Jacobi). A configuration ending in `l` runs bench/handwritten/
// stream2d_lanes.cl instead: liftx's register pipeline with the halo shared between a warp's lanes
// (`lU` or `lUpA`: the row loop unrolled by U, input rows loaded A iterations ahead).
//
// Every configuration (fused steps x work-group width x rows per group x columns per work-item)
// is checked twice before it is timed, each time element by element against the reference
// interpreter's `iterate` of the stencil's .lift step on random inputs: all T steps at
// --check-size, then one launch of its fused steps (and the remainder's kernel, when it fuses
// fewer) at --launch-check-size (default: the timed size; the kernel takes the grid's extents as
// arguments, so no code depends on them). Then T / t launches of the fused kernel and one of the T
// mod t left over run as one sequence; the median of --repeat sequences (first start to last end,
// profiling events) is the figure. The exit status is 1 when a configuration did not build, run or
// verify (CI runs small ones on PoCL).
//
// Usage:
//   stream_pipeline_bench [--device SPEC] [--size MxN] [--steps T] [--check-size MxN]
//                         [--launch-check-size MxN]
//                         [--stencil jacobi2d5pt|jacobi2d9pt|heat2d]...
//                         [--config TxBXxCHUNK[xCOLS][r|l[U][pA]]]...
//                         [--repeat R] [--warmup W] [--seed S] [--source-dir DIR]
//                         [--lane-exchange auto|shuffle|local]
// Example (NVIDIA; register the driver as ../shared/guides/gpu.md says):
//   build/stream_pipeline_bench --device nvidia --size 8192 --steps 64 --config 4x256x256
//       --config 8x256x512 --stencil jacobi2d5pt --stencil jacobi2d9pt --stencil heat2d
#include "bench/handwritten.hpp"
#include "exec/program_binding.hpp"
#include "exec/run.hpp"
#include "exec/verify.hpp"
#include "ir/host_iteration.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/cache_dir.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/roofline.hpp"
#include "support/error.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace liftx;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::string device = "cpu";
  std::string size = "8192";
  std::string check_size = "512x1024";
  std::string launch_check_size; // empty: the timed size
  int64_t steps = 64;
  std::vector<std::string> stencils{"jacobi2d5pt", "jacobi2d9pt"};
  std::vector<std::string> configs{"4x256x256"};
  int repeat = 10;
  int warmup = 3;
  uint64_t seed = 1;
  std::string source_dir = LIFTX_BENCH_SOURCE_DIR;
  std::string lane_exchange = "auto"; // stream2d_lanes.cl: shuffle, local, or auto (by vendor)
};

struct Grid {
  int64_t rows = 0, columns = 0;
  int64_t points() const { return rows * columns; }
  std::string text() const { return fmt::format("{}x{}", rows, columns); }
};

/// A configuration of the hand-written kernel: fused steps, work-items per group, rows per group,
/// columns per work-item.
struct Config {
  int64_t steps = 0, width = 0, chunk = 0, columns = 1;
  bool registers = false; ///< a work-item's own columns from registers (AN5D), not local memory
  /// stream2d_lanes.cl instead: a register pipeline per warp, lanes sharing their halo columns;
  /// `unroll` rows per iteration of its loop, input rows loaded `ahead` iterations early.
  bool lanes = false;
  int64_t unroll = 1, ahead = 1;
  int64_t strip() const { return width * columns; } ///< a group's columns, halo included
  std::string text() const {
    return fmt::format("t={} bx={} rows={}{}{}{}", steps, width, chunk,
                       columns > 1 ? fmt::format(" cols={}", columns) : "",
                       registers ? " own=registers" : "",
                       lanes ? fmt::format(" lanes unroll={} ahead={}", unroll, ahead) : "");
  }
};

constexpr int64_t kLanes = 32; // stream2d_lanes.cl's LANES

/// stream2d_lanes.cl's HALO: the steps rounded up to a multiple of the columns per work-item.
int64_t lane_halo(int64_t steps, int64_t columns) {
  return (steps + columns - 1) / columns * columns;
}

std::vector<int64_t> numbers(const std::string& text, char separator, const char* option) {
  std::vector<int64_t> values;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    const std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::logic_error&) { // invalid_argument, out_of_range
      used = 0;
    }
    LIFTX_USER_CHECK(used == part.size() && v >= 1,
                     "{}: expected positive numbers separated "
                     "by '{}', got '{}'",
                     option, separator, text);
    values.push_back(v);
    if (end == std::string::npos)
      return values;
    start = end + 1;
  }
}

Grid parse_grid(const std::string& text, const char* option) {
  std::vector<int64_t> v = numbers(text, 'x', option);
  if (v.size() == 1)
    v.push_back(v.front());
  LIFTX_USER_CHECK(v.size() == 2 && v[0] * v[1] <= INT32_MAX,
                   "{}: expected N or MxN (at most 2^31 - 1 points), got '{}'", option, text);
  return {v[0], v[1]};
}

Config parse_config(const std::string& text) {
  const bool registers = !text.empty() && text.back() == 'r';
  const size_t lanes_at = text.find('l');
  const bool lanes = lanes_at != std::string::npos;
  std::string sizes = registers ? text.substr(0, text.size() - 1) : text;
  int64_t unroll = 1, ahead = 1;
  if (lanes) {
    sizes = text.substr(0, lanes_at);
    // l[U][pA]: unrolled by U, A rows ahead.
    const std::string rest = text.substr(lanes_at + 1);
    const size_t ahead_at = rest.find('p');
    if (ahead_at > 0 && !rest.empty())
      unroll = numbers(rest.substr(0, ahead_at), 'x', "--config").front();
    if (ahead_at != std::string::npos)
      ahead = numbers(rest.substr(ahead_at + 1), 'x', "--config").front();
  }
  const std::vector<int64_t> v = numbers(sizes, 'x', "--config");
  LIFTX_USER_CHECK(v.size() == 3 || v.size() == 4,
                   "--config: expected TxBXxCHUNK[xCOLS][r|l[U][pA]], got '{}'", text);
  const Config c{v[0], v[1], v[2], v.size() == 4 ? v[3] : 1, registers, lanes, unroll, ahead};
  if (lanes) {
    LIFTX_USER_CHECK(c.width % kLanes == 0 && c.columns % 4 == 0 &&
                         kLanes * c.columns > 2 * lane_halo(c.steps, c.columns),
                     "--config {}: lanes need work-groups of a multiple of {} work-items, a "
                     "multiple of 4 columns each, and columns left after {} halo columns on "
                     "either side",
                     text, kLanes, lane_halo(c.steps, c.columns));
    return c;
  }
  LIFTX_USER_CHECK(c.strip() > 2 * c.steps,
                   "--config {}: a strip of {} columns has none left after {} steps' halo on "
                   "either side",
                   text, c.strip(), c.steps);
  return c;
}

/// A stencil stream2d.cl computes: its name, its .lift file, and its STENCIL code (the position).
struct KnownStencil {
  std::string_view name, file;
};
constexpr KnownStencil kStencils[] = {{"jacobi2d5pt", "stencils/jacobi2d5pt.lift"},
                                      {"jacobi2d9pt", "stencils/jacobi2d9pt.lift"},
                                      {"heat2d", "stencils/iterated/heat2d.lift"}};

/// One stencil at one grid size: the iterated program's inputs and reference result.
struct Case {
  interp::HostArray input;
  interp::HostArray reference;
};

Case load_case(const ir::Program& step, const std::string& file, const Grid& grid, int64_t steps,
               uint64_t seed) {
  const ir::Program iterated = exec::iterate_steps(step, steps, file);
  const Sizes sizes{{"M", grid.rows}, {"N", grid.columns}};
  Case c;
  std::vector<interp::HostArray> inputs = exec::draw_inputs(iterated, sizes, seed);
  LIFTX_USER_CHECK(inputs.size() == 1, "{}: a stencil step has one parameter", file);
  exec::RunOptions reference_options;
  reference_options.seed = seed;
  reference_options.reference = &iterated;
  c.reference = exec::reference_result(iterated, reference_options, inputs, sizes);
  c.input = std::move(inputs.front());
  return c;
}

/// The fused kernel of `steps` steps, and the launch that covers `grid` with it.
struct FusedKernel {
  runtime::Kernel kernel;
  cl::NDRange global, local;
};

/// The two hand-written kernels' sources (each after stream2d_stencils.cl), and how the warp
/// pipelines' lanes pass columns (Options::lane_exchange).
struct HandwrittenKernels {
  std::string pipeline, lanes;
  std::string lane_exchange;
};

FusedKernel build_lanes(runtime::Device& device, const std::string& source, int stencil,
                        const Config& config, int64_t steps, const Grid& grid,
                        const std::string& exchange) {
  // A warp shuffle where the device is NVIDIA's (inline PTX), local memory elsewhere.
  const bool shuffle =
      exchange == "shuffle" ||
      (exchange == "auto" && device.profile.vendor.find("NVIDIA") != std::string::npos);
  const std::string options =
      fmt::format("-DBX={} -DSTEPS={} -DCHUNK={} -DSTENCIL={} -DCOLS={} -DUNROLL={} -DAHEAD={} "
                  "-DLANE_SHUFFLE={}",
                  config.width, steps, config.chunk, stencil, config.columns, config.unroll,
                  config.ahead, shuffle ? 1 : 0);
  runtime::BuildResult built = runtime::default_build_cache().build(device, source, options);
  const int64_t outputs_per_unit = kLanes * config.columns - 2 * lane_halo(steps, config.columns);
  const int64_t units = (grid.columns + outputs_per_unit - 1) / outputs_per_unit;
  const int64_t groups_x = (units * kLanes + config.width - 1) / config.width;
  const int64_t groups_y = (grid.rows + config.chunk - 1) / config.chunk;
  return {runtime::Kernel(built.program, "stream2d_lanes"),
          cl::NDRange(size_t(groups_x * config.width), size_t(groups_y)),
          cl::NDRange(size_t(config.width), 1)};
}

FusedKernel build_fused(runtime::Device& device, const HandwrittenKernels& sources, int stencil,
                        const Config& config, int64_t steps, const Grid& grid) {
  if (config.lanes)
    return build_lanes(device, sources.lanes, stencil, config, steps, grid, sources.lane_exchange);
  const std::string& source = sources.pipeline;
  const std::string options =
      fmt::format("-DBX={} -DSTEPS={} -DCHUNK={} -DSTENCIL={} -DREGS={} -DCOLS={}", config.width,
                  steps, config.chunk, stencil, config.registers ? 1 : 0, config.columns);
  runtime::BuildResult built = runtime::default_build_cache().build(device, source, options);
  const int64_t outputs_per_group = config.strip() - 2 * steps;
  const int64_t groups_x = (grid.columns + outputs_per_group - 1) / outputs_per_group;
  const int64_t groups_y = (grid.rows + config.chunk - 1) / config.chunk;
  return {runtime::Kernel(built.program, "stream2d"),
          cl::NDRange(size_t(groups_x * config.width), size_t(groups_y)),
          cl::NDRange(size_t(config.width), 1)};
}

/// `total` steps over `grid`: launches of the `config.steps`-step kernel, then one of the
/// remainder's. Buffers alternate; `result()` is the one the last launch wrote.
struct Sequence {
  std::vector<FusedKernel> kernels; // the fused one, then the remainder's (if any)
  std::vector<int64_t> launches;
  cl::Buffer buffers[2];
  int64_t total_launches = 0;

  /// `guard` floats after each buffer's grid (checks poison them and look for writes there).
  Sequence(runtime::Device& device, const HandwrittenKernels& source, int stencil,
           const Config& config, int64_t total, const Grid& grid, size_t guard = 0) {
    const int64_t fused = std::min(config.steps, total);
    kernels.push_back(build_fused(device, source, stencil, config, fused, grid));
    launches.push_back(total / fused);
    if (total % fused != 0) {
      kernels.push_back(build_fused(device, source, stencil, config, total % fused, grid));
      launches.push_back(1);
    }
    for (int64_t n : launches)
      total_launches += n;
    for (cl::Buffer& b : buffers)
      b = runtime::allocate(device, (size_t(grid.points()) + guard) * sizeof(float));
  }

  std::vector<runtime::LaunchStage> stages() {
    std::vector<runtime::LaunchStage> s;
    for (size_t i = 0; i < kernels.size(); ++i)
      s.push_back({&kernels[i].kernel.get(), kernels[i].global, kernels[i].local, launches[i]});
    return s;
  }

  /// Sets launch k's arguments: its kernel reads one buffer and writes the other.
  void bind(int64_t k, const Grid& grid) {
    cl::Kernel& kernel = kernels[k < launches.front() ? 0 : 1].kernel.get();
    kernel.setArg(0, buffers[k % 2]);
    kernel.setArg(1, buffers[(k + 1) % 2]);
    kernel.setArg(2, static_cast<cl_int>(grid.rows));
    kernel.setArg(3, static_cast<cl_int>(grid.columns));
  }

  const cl::Buffer& result() const { return buffers[total_launches % 2]; }
};

/// Runs `total` steps once from `c`'s input and checks the result against its reference.
exec::Verification check(runtime::Device& device, const HandwrittenKernels& source, int stencil,
                         const Config& config, int64_t total, const Grid& grid, const Case& c) {
  // Two rows of poison after each buffer's grid: a kernel that writes past the grid (a row below
  // it, say) fails the check even where the write lands nowhere that is compared.
  const size_t points = size_t(grid.points());
  const size_t guard = 2 * size_t(grid.columns);
  Sequence sequence(device, source, stencil, config, total, grid, guard);
  std::vector<float> input(c.input.data.begin(), c.input.data.end());
  input.resize(points + guard, std::bit_cast<float>(runtime::kPoisonBits));
  runtime::upload(device, sequence.buffers[0], input);
  runtime::poison(device, sequence.buffers[1], (points + guard) * sizeof(float));
  runtime::run_launch_stages(device, sequence.stages(), [&](int64_t k) { sequence.bind(k, grid); });
  for (const cl::Buffer& buffer : sequence.buffers) {
    const std::vector<float> all = runtime::download(device, buffer, points + guard);
    for (size_t i = points; i < all.size(); ++i)
      if (!runtime::is_poison(all[i])) {
        exec::Verification wrote_past;
        wrote_past.checked = true;
        wrote_past.first_mismatch =
            fmt::format("a write past the grid, {} floats after its last point", i - points + 1);
        return wrote_past;
      }
  }
  std::vector<float> got = runtime::download(device, sequence.result(), points);
  return bench::verify_output(got, c.reference); // the check of every liftx variant
}

int run(const Options& o) {
  const Grid grid = parse_grid(o.size, "--size");
  const Grid check_grid = parse_grid(o.check_size, "--check-size");
  const Grid launch_grid =
      o.launch_check_size.empty() ? grid : parse_grid(o.launch_check_size, "--launch-check-size");
  LIFTX_USER_CHECK(o.steps >= 1, "--steps: expected at least 1, got {}", o.steps);
  std::vector<Config> configs;
  for (const std::string& text : o.configs)
    configs.push_back(parse_config(text));
  LIFTX_USER_CHECK(o.lane_exchange == "auto" || o.lane_exchange == "shuffle" ||
                       o.lane_exchange == "local",
                   "--lane-exchange: auto, shuffle or local, got '{}'", o.lane_exchange);
  auto read_kernel_source = [&](const char* name) {
    std::optional<std::string> read =
        runtime::read_file_bytes(fs::path(o.source_dir) / "bench/handwritten" / name);
    LIFTX_USER_CHECK(read, "cannot read bench/handwritten/{} under {}", name, o.source_dir);
    return std::move(*read);
  };
  // Both kernels compute the stencils of stream2d_stencils.cl.
  const std::string stencils = read_kernel_source("stream2d_stencils.cl");
  HandwrittenKernels sources;
  sources.lane_exchange = o.lane_exchange;
  sources.pipeline = stencils + read_kernel_source("stream2d.cl");
  sources.lanes = stencils + read_kernel_source("stream2d_lanes.cl");

  runtime::Device device = runtime::select_device(o.device);
  const size_t copy_floats = size_t((grid.points() + 3) / 4 * 4);
  const runtime::CopyBandwidth copy =
      runtime::measure_copy_bandwidth(device, copy_floats, o.warmup, o.repeat);
  // One read and one write of every point per step at the copy's bandwidth.
  const double copy_step_ms = 2.0 * 4.0 * double(grid.points()) / (copy.gb_per_s * 1e6);
  fmt::print("device: {}\ngrid {} x {} steps; float4 copy {:.1f} GB/s, copy-bound {:.4f} ms per "
             "step\n\n",
             device.profile.device_name, grid.text(), o.steps, copy.gb_per_s, copy_step_ms);
  fmt::print("| stencil | configuration | checked | ms per {} steps (median of {}) | ms per step | "
             "x copy-bound rate |\n|---|---|---|---|---|---|\n",
             o.steps, o.repeat);

  int failed = 0; // configurations that did not build, run or verify
  for (const std::string& stencil : o.stencils) {
    const auto known = std::find_if(std::begin(kStencils), std::end(kStencils),
                                    [&](const KnownStencil& k) { return k.name == stencil; });
    LIFTX_USER_CHECK(known != std::end(kStencils),
                     "--stencil: jacobi2d5pt, jacobi2d9pt or heat2d, got '{}'", stencil);
    const int code = int(known - std::begin(kStencils)); // stream2d.cl's STENCIL
    const std::string file = (fs::path(o.source_dir) / known->file).string();
    const ir::Module module = parse::parse_file(file);
    // heat2d.lift iterates its step itself: the bench iterates the step it names.
    const std::optional<ir::HostIteration> iterated = ir::host_iteration(module.main());
    const ir::Program step = iterated ? iterated->step : module.main();
    const Case all_steps = load_case(step, file, check_grid, o.steps, o.seed);
    // The launch checks' references by step count: configurations that fuse as many steps share
    // one, since the interpreter's steps at a large grid cost more than the GPU's whole sequence.
    std::map<int64_t, Case> launch_cases;
    auto launch_case = [&](int64_t steps) -> const Case& {
      auto it = launch_cases.find(steps);
      if (it == launch_cases.end())
        it = launch_cases.emplace(steps, load_case(step, file, launch_grid, steps, o.seed)).first;
      return it->second;
    };
    for (const Config& config : configs) {
      const int64_t fused = std::min(config.steps, o.steps);
      std::string checked, timing = "-", per_step = "-", rate = "-";
      bool timed = false;
      try {
        exec::Verification v = check(device, sources, code, config, o.steps, check_grid, all_steps);
        if (v.passed) {
          // One fused launch at --launch-check-size, then the remainder's kernel alone where it
          // fuses fewer steps.
          std::vector<int64_t> launches{fused};
          if (o.steps % fused != 0)
            launches.push_back(o.steps % fused);
          for (int64_t steps : launches) {
            Config alone = config;
            alone.steps = steps;
            v = check(device, sources, code, alone, steps, launch_grid, launch_case(steps));
            if (!v.passed)
              break;
          }
        }
        checked = v.passed ? fmt::format("{} steps at {}, {} at {}", o.steps, check_grid.text(),
                                         o.steps % fused
                                             ? fmt::format("{} and {}", fused, o.steps % fused)
                                             : fmt::format("{}", fused),
                                         launch_grid.text())
                           : "WRONG: " + v.first_mismatch;
        if (v.passed) {
          Sequence sequence(device, sources, code, config, o.steps, grid);
          runtime::upload(device, sequence.buffers[0],
                          std::vector<float>(size_t(grid.points()), 1.0f));
          const runtime::Timing t = runtime::time_launch_stages(
              device, sequence.stages(), [&](int64_t k) { sequence.bind(k, grid); }, o.warmup,
              o.repeat);
          const double step_ms = t.median_ms / double(o.steps);
          timing = fmt::format("{:.4f}", t.median_ms);
          per_step = fmt::format("{:.5f}", step_ms);
          rate = fmt::format("{:.2f}", copy_step_ms / step_ms);
          timed = true;
        }
      } catch (const runtime::BuildError& e) {
        checked = fmt::format("build failed: {}", e.what());
      } catch (const runtime::LaunchError& e) {
        checked = fmt::format("launch failed: {}", e.what());
      }
      if (!timed)
        ++failed;
      fmt::print("| {} | {} | {} | {} | {} | {} |\n", stencil, config.text(), checked, timing,
                 per_step, rate);
      std::fflush(stdout);
    }
  }
  if (failed > 0)
    fmt::print(stderr, "{} configuration(s) did not build, run or verify\n", failed);
  return failed > 0 ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Hand-written N.5D streamed pipelines of 2D stencils against the "
               "copy-bound rate"};
  app.add_option("--device", o.device, "OpenCL device (as liftx --device; default cpu)");
  app.add_option("--size", o.size, "timed grid: N or MxN (default 8192)");
  app.add_option("--check-size", o.check_size, "grid checked with every step (default 512x1024)");
  app.add_option("--launch-check-size", o.launch_check_size,
                 "grid checked with one launch of the fused kernel and one of the remainder's "
                 "(default: the timed size)");
  app.add_option("--steps", o.steps, "time steps T (default 64)");
  app.add_option("--stencil", o.stencils,
                 "jacobi2d5pt, jacobi2d9pt, heat2d (default the two Jacobis)");
  app.add_option("--config", o.configs,
                 "fused steps x work-items per group x rows per group [x columns per work-item], "
                 "then r to keep a work-item's own columns in registers, or l[U][pA] for "
                 "stream2d_lanes.cl's warp pipeline unrolled by U rows, loading A rows ahead "
                 "(default 4x256x256)");
  app.add_option("--repeat", o.repeat, "timed sequences (default 10)");
  app.add_option("--warmup", o.warmup, "untimed sequences first (default 3)");
  app.add_option("--seed", o.seed, "seed of the random inputs (default 1)");
  app.add_option("--source-dir", o.source_dir, "the liftx source tree");
  app.add_option("--lane-exchange", o.lane_exchange,
                 "how stream2d_lanes.cl's lanes pass columns: shuffle (NVIDIA's PTX), local "
                 "(memory and barriers) or auto: shuffle on NVIDIA devices (default)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const liftx::UserError& e) {
    std::cerr << e.what() << "\n"; // says "error: ..." (and where) itself
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
}
