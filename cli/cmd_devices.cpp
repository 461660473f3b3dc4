// Device-facing subcommands:
//   `liftx devices [--format json]`                  every OpenCL platform/device and its profile
//   `liftx roofline --device D [--remeasure] [--format json]` the float4-copy bandwidth (cached)
//   `liftx launch KERNEL.cl --device D --kernel NAME --global X[,Y[,Z]] [--local X[,Y[,Z]]]
//        --arg buf:float:N | int:V | long:V | float:V | local:BYTES ... [--repeat R] [--warmup W]
//        [--timeout-ms T] [--build-options S] [--build-log] [--seed S] [--format json]`
// `launch` does the OpenCL work in a child (`liftx launch-worker`, hidden) through run_isolated,
// so a kernel that crashes or hangs gives a status instead of a dead command line; the launch
// itself is runtime/kernel_launch.hpp's.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "exec/run.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_launch.hpp"
#include "runtime/roofline.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace liftx::cli {

namespace {

constexpr int kExitRunFailure = 1;

/// Ends the command with `code` after flushing: the shared error handling only knows exit code 2
/// (user errors) and 3 (bugs), and a failed run is neither.
[[noreturn]] void exit_with(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::exit(code);
}

/// `launch`'s options: the launch itself, and how the command bounds and reports it.
struct LaunchCommandOptions {
  runtime::KernelLaunchOptions launch{.warmup = exec::kDefaultWarmup,
                                      .repeat = exec::kDefaultRepeat};
  int timeout_ms = 60000;
  bool json = false;
};

/// The options `launch` and its worker share: the worker gets them back on its command line
/// (runtime::launch_worker_argv).
void add_launch_options(CLI::App* cmd, runtime::KernelLaunchOptions& o) {
  cmd->add_option("file", o.file, "OpenCL C source file")->required();
  add_device_option(cmd, o.device, true);
  cmd->add_option("--kernel", o.kernel, "kernel function to run")->required();
  cmd->add_option("--global", o.global, "global size X[,Y[,Z]]")->required();
  cmd->add_option("--local", o.local, "work-group size X[,Y[,Z]] (default: the runtime chooses)");
  cmd->add_option("--arg", o.args,
                  "kernel argument, in order: buf:float:N (random floats), int:V, long:V, "
                  "float:V, local:BYTES");
  cmd->add_option("--build-options", o.build_options, "options for the OpenCL C compiler");
  cmd->add_flag("--build-log", o.build_log,
                "compile past the build cache and print the compiler's log (with NVIDIA's "
                "--build-options -cl-nv-verbose: registers and spills per kernel)");
  add_timing_options(cmd, o.warmup, o.repeat);
  cmd->add_option("--seed", o.seed, "seed of the random buffer contents (default 1)");
}

void print_launch_table(const LaunchCommandOptions& o, const runtime::IsolatedLaunch& launched,
                        const std::string& status) {
  const runtime::KernelLaunchOptions& l = o.launch;
  const nlohmann::json& r = launched.result;
  fmt::print("kernel    {} ({})\n", l.kernel, l.file);
  if (r.contains("device"))
    fmt::print("device    {}:{} {} ({})\n", r["device"].value("platform_index", 0),
               r["device"].value("device_index", 0), r["device"].value("device_name", ""),
               r["device"].value("platform_name", ""));
  fmt::print("launch    global {}  local {}\n", runtime::to_string(launched.launch.global),
             runtime::to_string(launched.launch.local));
  if (r.contains("build_ms"))
    fmt::print("build     {:.1f} ms{}\n", r["build_ms"].get<double>(),
               r.value("cache_hit", false) ? " (cache hit)" : "");
  if (r.contains("build_log")) {
    const std::string log = r["build_log"].get<std::string>();
    fmt::print("build log {}\n", log.empty() ? "(empty)" : "");
    if (!log.empty())
      fmt::print("{}\n", log);
  }
  if (r.contains("timing")) {
    const nlohmann::json& t = r["timing"];
    fmt::print(
        "time      median {:.4f} ms  min {:.4f}  max {:.4f}  IQR {:.4f} ms ({} runs after {} "
        "warm-ups)\n",
        t["median_ms"].get<double>(), t["min_ms"].get<double>(), t["max_ms"].get<double>(),
        t["iqr_ms"].get<double>(), l.repeat, l.warmup);
  }
  fmt::print("status    {}\n", status);
}

/// Prints the result, and ends the command with the exit code of a failure.
void print_launch_result(const LaunchCommandOptions& o, const runtime::IsolatedLaunch& launched) {
  const nlohmann::json& r = launched.result;
  std::string status = r.value("status", "run_error");
  if (o.json) {
    nlohmann::json out = r;
    out["kernel"] = o.launch.kernel;
    out["file"] = o.launch.file;
    out["global"] = runtime::to_string(launched.launch.global);
    out["local"] = runtime::to_string(launched.launch.local);
    out["wall_ms"] = launched.wall_ms;
    fmt::print("{}\n", out.dump(2));
  } else {
    print_launch_table(o, launched, status);
  }
  if (status == "ok")
    return;
  std::string error = r.value("error", "");
  if (status == "build_error" || status == "user_error") {
    // what() of a BuildError already holds the whole log.
    fmt::print(stderr, "{}\n", error);
    exit_with(kExitUserError);
  }
  fmt::print(stderr, "error: {}: {}\n", status, error);
  exit_with(kExitRunFailure);
}

std::string kib(uint64_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) : fmt::format("{:.1f}", bytes / 1024.0);
}

} // namespace

void add_devices_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("devices", "List OpenCL platforms and devices");
  add_report_format_option(cmd, *json);
  cmd->callback([json] {
    std::vector<target::DeviceProfile> devices = runtime::list_devices();
    if (*json) {
      fmt::print("{}\n", nlohmann::json(devices).dump(2));
      return;
    }
    if (devices.empty()) {
      fmt::print(
          "no OpenCL devices found. Install a driver (e.g. pocl-opencl-icd) or register one: "
          "a folder with NAME.icd files naming driver libraries, in OCL_ICD_VENDORS.\n");
      return;
    }
    std::vector<std::vector<std::string>> rows{{"P:D", "type", "vendor", "name", "CUs", "local KiB",
                                                "max WG", "warp", "cache line", "driver"}};
    for (const target::DeviceProfile& p : devices)
      rows.push_back({p.index_spec(), std::string(to_string(p.type)), p.vendor, p.device_name,
                      std::to_string(p.compute_units), kib(p.local_mem_bytes),
                      std::to_string(p.max_work_group_size), std::to_string(p.warp_width),
                      p.cache_line_bytes ? std::to_string(p.cache_line_bytes) : "?",
                      p.driver_version});
    std::vector<size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows)
      for (size_t c = 0; c < row.size(); ++c)
        widths[c] = std::max(widths[c], row[c].size());
    for (const auto& row : rows) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c)
        line += fmt::format("{:<{}}{}", row[c], c + 1 < row.size() ? widths[c] : 0,
                            c + 1 < row.size() ? "  " : "");
      fmt::print("{}\n", line);
    }
    for (const target::DeviceProfile& p : devices)
      fmt::print("{}  {} | {} | {} | key {}\n", p.index_spec(), p.platform_name, p.platform_version,
                 p.opencl_c_version, p.key);
  });
}

void add_roofline_command(CLI::App& app) {
  struct Options {
    std::string device;
    bool refresh = false;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("roofline", "Measure (once per device) the float4-copy bandwidth in GB/s");
  add_device_option(cmd, options->device, true);
  add_remeasure_flag(cmd, options->refresh, "measure again instead of using the cached value",
                     "--refresh");
  add_report_format_option(cmd, options->json);
  cmd->callback([options] {
    runtime::Device device = runtime::select_device(options->device);
    bool cached =
        !options->refresh && runtime::cached_copy_roofline(device.profile.key).has_value();
    double gb_per_s = runtime::measure_copy_roofline(device, options->refresh);
    if (options->json) {
      fmt::print("{}\n", nlohmann::json{{"device", device.profile.device_name},
                                        {"key", device.profile.key},
                                        {"gb_per_s", gb_per_s},
                                        {"cached", cached}}
                             .dump(2));
      return;
    }
    fmt::print("device    {} {} ({})\n", device.profile.index_spec(), device.profile.device_name,
               device.profile.platform_name);
    fmt::print("roofline  {:.1f} GB/s (float4 copy, 1 read + 1 write per element; {})\n", gb_per_s,
               cached ? "cached, --remeasure to measure again" : "measured");
  });
}

void add_launch_command(CLI::App& app) {
  auto options = std::make_shared<LaunchCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "launch", "Build and time one OpenCL kernel on random data (in a child process)");
  add_launch_options(cmd, options->launch);
  cmd->add_option("--timeout-ms", options->timeout_ms,
                  "time limit of the whole run (default 60000)")
      ->check(CLI::Range(1, 86400000));
  add_report_format_option(cmd, options->json);
  cmd->callback([options] {
    print_launch_result(
        *options,
        runtime::launch_isolated(options->launch, std::chrono::milliseconds(options->timeout_ms)));
  });

  auto worker_options = std::make_shared<LaunchCommandOptions>();
  CLI::App* worker = app.add_subcommand("launch-worker", "internal: the child process of launch");
  worker->group(""); // hidden from --help
  add_launch_options(worker, worker_options->launch);
  worker->callback([worker_options] {
    nlohmann::json result = runtime::run_kernel_launch(worker_options->launch);
    std::fflush(stdout); // kernel printf output first, the result line last
    fmt::print("{}", runtime::worker_result_line(result));
    std::fflush(stdout);
  });
}

} // namespace liftx::cli
