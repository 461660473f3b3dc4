// Device-facing subcommands:
//   `liftx devices [--format json]`                  every OpenCL platform/device and its profile
//   `liftx roofline --device D [--remeasure] [--format json]` the float4-copy bandwidth (cached)
//   `liftx launch KERNEL.cl --device D --kernel NAME --global X[,Y[,Z]] [--local X[,Y[,Z]]]
//        --arg buf:float:N | int:V | long:V | float:V | local:BYTES ... [--repeat R] [--warmup W]
//        [--timeout-ms T] [--build-options S] [--seed S] [--format json]`
// `launch` does the OpenCL work in a child (`liftx launch-worker`, hidden) through run_isolated,
// so a kernel that crashes or hangs gives a status instead of a dead command line.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "exec/run.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/device.hpp"
#include "runtime/isolate.hpp"
#include "runtime/launch.hpp"
#include "runtime/roofline.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

namespace liftx::cli {

namespace {

using runtime::Status;

constexpr int kExitRunFailure = 1;
/// Marks the worker's result line, so kernel printf output on stdout cannot be mistaken for it.
constexpr std::string_view kResultMarker = "LIFTX-WORKER-RESULT ";

/// Ends the command with `code` after flushing: the shared error handling only knows exit code 2
/// (user errors) and 3 (bugs), and a failed run is neither.
[[noreturn]] void exit_with(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::exit(code);
}

template <class T>
T parse_number(std::string_view text, std::string_view what) {
  T value{};
  const char* end = text.data() + text.size();
  std::from_chars_result parsed = std::from_chars(text.data(), end, value);
  LIFTX_USER_CHECK(!text.empty() && parsed.ec == std::errc() && parsed.ptr == end,
                   "{}: '{}' is not a valid number", what, text);
  return value;
}

/// "X", "X,Y" or "X,Y,Z" of positive sizes.
std::vector<size_t> parse_sizes(const std::string& text, std::string_view what) {
  std::vector<size_t> sizes;
  std::string_view rest = text;
  while (true) {
    size_t comma = rest.find(',');
    uint64_t value = parse_number<uint64_t>(rest.substr(0, comma), what);
    LIFTX_USER_CHECK(value != 0, "{}: sizes must be positive (got '{}')", what, text);
    sizes.push_back(static_cast<size_t>(value));
    if (comma == std::string_view::npos)
      break;
    rest = rest.substr(comma + 1);
  }
  LIFTX_USER_CHECK(sizes.size() <= 3, "{}: at most 3 dimensions (got '{}')", what, text);
  return sizes;
}

cl::NDRange to_range(const std::vector<size_t>& sizes) {
  switch (sizes.size()) {
  case 1:
    return cl::NDRange(sizes[0]);
  case 2:
    return cl::NDRange(sizes[0], sizes[1]);
  case 3:
    return cl::NDRange(sizes[0], sizes[1], sizes[2]);
  default:
    return cl::NullRange;
  }
}

/// One `--arg`: a random float buffer, a scalar, or local memory.
struct KernelArg {
  enum class Kind { float_buffer, int32, int64, float32, local } kind;
  uint64_t count = 0; ///< floats (buffer) or bytes (local)
  int64_t integer = 0;
  float real = 0;
};

KernelArg parse_arg(const std::string& text) {
  std::string what = fmt::format("--arg {}", text);
  auto starts = [&](std::string_view prefix) { return text.rfind(prefix, 0) == 0; };
  std::string_view value = std::string_view(text).substr(text.find(':') + 1);
  KernelArg arg{};
  if (starts("buf:float:")) {
    arg.kind = KernelArg::Kind::float_buffer;
    arg.count = parse_number<uint64_t>(std::string_view(text).substr(10), what);
    LIFTX_USER_CHECK(arg.count != 0 && arg.count <= (uint64_t{1} << 40),
                     "{}: the buffer size must be positive", what);
  } else if (starts("int:")) {
    arg.kind = KernelArg::Kind::int32;
    arg.integer = parse_number<int32_t>(value, what);
  } else if (starts("long:")) {
    arg.kind = KernelArg::Kind::int64;
    arg.integer = parse_number<int64_t>(value, what);
  } else if (starts("float:")) {
    arg.kind = KernelArg::Kind::float32;
    arg.real = parse_number<float>(value, what);
  } else if (starts("local:")) {
    arg.kind = KernelArg::Kind::local;
    arg.count = parse_number<uint64_t>(value, what);
    LIFTX_USER_CHECK(arg.count != 0, "{}: local memory must be positive", what);
  } else {
    throw UserError(
        fmt::format("{}: expected buf:float:N, int:V, long:V, float:V or local:BYTES", what));
  }
  return arg;
}

struct LaunchOptions {
  std::string file;
  std::string device;
  std::string kernel;
  std::string global;
  std::string local;
  std::vector<std::string> args;
  std::string build_options;
  int repeat = exec::kDefaultRepeat;
  int warmup = exec::kDefaultWarmup;
  int timeout_ms = 60000;
  uint64_t seed = 1;
  bool json = false;
};

void add_launch_options(CLI::App* cmd, LaunchOptions& o) {
  cmd->add_option("file", o.file, "OpenCL C source file")->required();
  add_device_option(cmd, o.device, true);
  cmd->add_option("--kernel", o.kernel, "kernel function to run")->required();
  cmd->add_option("--global", o.global, "global size X[,Y[,Z]]")->required();
  cmd->add_option("--local", o.local, "work-group size X[,Y[,Z]] (default: the runtime chooses)");
  cmd->add_option("--arg", o.args,
                  "kernel argument, in order: buf:float:N (random floats), int:V, long:V, "
                  "float:V, local:BYTES");
  cmd->add_option("--build-options", o.build_options, "options for the OpenCL C compiler");
  add_timing_options(cmd, o.warmup, o.repeat);
  cmd->add_option("--seed", o.seed, "seed of the random buffer contents (default 1)");
}

struct Validated {
  cl::NDRange global;
  cl::NDRange local;
  std::vector<KernelArg> args;
};

Validated validate(const LaunchOptions& o) {
  Validated v;
  std::vector<size_t> global = parse_sizes(o.global, "--global");
  v.global = to_range(global);
  v.local = cl::NullRange;
  if (!o.local.empty()) {
    std::vector<size_t> local = parse_sizes(o.local, "--local");
    LIFTX_USER_CHECK(local.size() == global.size(),
                     "--local {} has {} dimensions but --global {} has {}", o.local, local.size(),
                     o.global, global.size());
    v.local = to_range(local);
  }
  for (const std::string& arg : o.args)
    v.args.push_back(parse_arg(arg));
  return v;
}

std::string read_source(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  LIFTX_USER_CHECK(in, "cannot read kernel file '{}'", file);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

nlohmann::json timing_json(const runtime::Timing& t) {
  return {{"median_ms", t.median_ms},  {"min_ms", t.min_ms}, {"max_ms", t.max_ms},
          {"q1_ms", t.q1_ms},          {"q3_ms", t.q3_ms},   {"iqr_ms", t.iqr_ms()},
          {"samples_ms", t.samples_ms}};
}

/// The worker: everything that touches OpenCL. Always ends by printing one result line.
nlohmann::json run_launch_worker(const LaunchOptions& o) {
  nlohmann::json result{{"status", "run_error"}};
  try {
    Validated v = validate(o);
    std::string source = read_source(o.file);
    runtime::Device device = runtime::select_device(o.device);
    result["device"] = device.profile;
    runtime::BuildResult built;
    runtime::build(device, source, o.build_options, &built);
    result["build_ms"] = built.build_ms;
    result["cache_hit"] = built.cache_hit;
    runtime::Kernel kernel(built.program, o.kernel);

    std::mt19937_64 rng(o.seed);
    std::uniform_real_distribution<float> magnitude(0.001f, 1.0f);
    std::bernoulli_distribution negative(0.5);
    std::vector<cl::Buffer> buffers; // kept alive until the runs are done
    for (const KernelArg& arg : v.args) {
      switch (arg.kind) {
      case KernelArg::Kind::float_buffer: {
        std::vector<float> data(static_cast<size_t>(arg.count));
        for (float& x : data)
          x = negative(rng) ? -magnitude(rng) : magnitude(rng);
        buffers.push_back(runtime::upload(device, data));
        kernel.arg(buffers.back());
        break;
      }
      case KernelArg::Kind::int32:
        kernel.arg(static_cast<int32_t>(arg.integer));
        break;
      case KernelArg::Kind::int64:
        kernel.arg(arg.integer);
        break;
      case KernelArg::Kind::float32:
        kernel.arg(arg.real);
        break;
      case KernelArg::Kind::local:
        kernel.arg(runtime::LocalMemory{static_cast<size_t>(arg.count)});
        break;
      }
    }
    runtime::Timing timing =
        runtime::time_kernel(device, kernel, v.global, v.local, o.warmup, o.repeat);
    result["timing"] = timing_json(timing);
    result["status"] = "ok";
  } catch (const runtime::BuildError& e) {
    result["status"] = to_string(Status::build_error);
    result["error"] = e.what();
    result["build_log"] = e.log();
  } catch (const runtime::LaunchError& e) {
    result["status"] = to_string(e.status());
    result["error"] = e.what();
  } catch (const UserError& e) {
    result["status"] = "user_error";
    result["error"] = e.what();
  } catch (const std::exception& e) {
    result["status"] = to_string(Status::run_error);
    result["error"] = e.what();
  }
  return result;
}

std::vector<std::string> worker_argv(const LaunchOptions& o) {
  std::array<char, 4096> self{};
  ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  std::string exe = n > 0 ? std::string(self.data(), static_cast<size_t>(n)) : "/proc/self/exe";
  std::vector<std::string> argv{exe,
                                "launch-worker",
                                o.file,
                                "--device",
                                o.device,
                                "--kernel",
                                o.kernel,
                                "--global",
                                o.global,
                                "--repeat",
                                std::to_string(o.repeat),
                                "--warmup",
                                std::to_string(o.warmup),
                                "--seed",
                                std::to_string(o.seed)};
  if (!o.local.empty())
    argv.insert(argv.end(), {"--local", o.local});
  if (!o.build_options.empty())
    argv.push_back("--build-options=" + o.build_options);
  for (const std::string& arg : o.args)
    argv.insert(argv.end(), {"--arg", arg});
  return argv;
}

/// The worker's result line, or a run_error/timeout result describing how the worker ended.
nlohmann::json collect_worker_result(const runtime::IsolatedResult& run, int timeout_ms) {
  if (run.timed_out)
    return {{"status", to_string(Status::timeout)},
            {"error",
             fmt::format("the kernel did not finish within {} ms (worker killed)", timeout_ms)}};
  std::string_view out = run.stdout_text;
  size_t at = out.rfind(kResultMarker);
  if (at != std::string_view::npos && (at == 0 || out[at - 1] == '\n')) {
    std::string_view line = out.substr(at + kResultMarker.size());
    line = line.substr(0, line.find('\n'));
    nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
    if (json.is_object() && json.contains("status")) {
      if (!run.succeeded())
        json["error"] = json.value("error", "") + fmt::format(" (worker {})", run.describe());
      return json;
    }
  }
  std::string detail = run.stderr_text;
  while (!detail.empty() && detail.back() == '\n')
    detail.pop_back();
  return {{"status", to_string(Status::run_error)},
          {"error", fmt::format("the worker running the kernel ended without a result: {}{}",
                                run.describe(), detail.empty() ? "" : ":\n" + detail)}};
}

void print_launch_result(const LaunchOptions& o, const Validated& v, const nlohmann::json& r,
                         double wall_ms) {
  std::string status = r.value("status", "run_error");
  if (o.json) {
    nlohmann::json out = r;
    out["kernel"] = o.kernel;
    out["file"] = o.file;
    out["global"] = runtime::to_string(v.global);
    out["local"] = runtime::to_string(v.local);
    out["wall_ms"] = wall_ms;
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("kernel    {} ({})\n", o.kernel, o.file);
    if (r.contains("device"))
      fmt::print("device    {}:{} {} ({})\n", r["device"].value("platform_index", 0),
                 r["device"].value("device_index", 0), r["device"].value("device_name", ""),
                 r["device"].value("platform_name", ""));
    fmt::print("launch    global {}  local {}\n", runtime::to_string(v.global),
               runtime::to_string(v.local));
    if (r.contains("build_ms"))
      fmt::print("build     {:.1f} ms{}\n", r["build_ms"].get<double>(),
                 r.value("cache_hit", false) ? " (cache hit)" : "");
    if (r.contains("timing")) {
      const nlohmann::json& t = r["timing"];
      fmt::print(
          "time      median {:.4f} ms  min {:.4f}  max {:.4f}  IQR {:.4f} ms ({} runs after {} "
          "warm-ups)\n",
          t["median_ms"].get<double>(), t["min_ms"].get<double>(), t["max_ms"].get<double>(),
          t["iqr_ms"].get<double>(), o.repeat, o.warmup);
    }
    fmt::print("status    {}\n", status);
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
  auto options = std::make_shared<LaunchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "launch", "Build and time one OpenCL kernel on random data (in a child process)");
  add_launch_options(cmd, *options);
  cmd->add_option("--timeout-ms", options->timeout_ms,
                  "time limit of the whole run (default 60000)")
      ->check(CLI::Range(1, 86400000));
  add_report_format_option(cmd, options->json);
  cmd->callback([options] {
    Validated v = validate(*options); // bad options are reported before any process starts
    read_source(options->file);
    runtime::IsolatedResult run = runtime::run_isolated(
        worker_argv(*options), std::chrono::milliseconds(options->timeout_ms));
    print_launch_result(*options, v, collect_worker_result(run, options->timeout_ms), run.wall_ms);
  });

  auto worker_options = std::make_shared<LaunchOptions>();
  CLI::App* worker = app.add_subcommand("launch-worker", "internal: the child process of launch");
  worker->group(""); // hidden from --help
  add_launch_options(worker, *worker_options);
  worker->callback([worker_options] {
    nlohmann::json result = run_launch_worker(*worker_options);
    std::fflush(stdout); // kernel printf output first, the result line last
    fmt::print("\n{}{}\n", kResultMarker, result.dump());
    std::fflush(stdout);
  });
}

} // namespace liftx::cli
