#include "runtime/kernel_launch.hpp"

#include "runtime/build_cache.hpp"
#include "runtime/device.hpp"
#include "runtime/status.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string_view>

#include <unistd.h>

namespace liftx::runtime {

namespace {

/// Marks the worker's result line, so kernel printf output on stdout cannot be mistaken for it.
constexpr std::string_view kResultMarker = "LIFTX-WORKER-RESULT ";

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

std::string read_source(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  LIFTX_USER_CHECK(in, "cannot read kernel file '{}'", file);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

/// Sets the kernel's arguments in order; the buffers go to `buffers`, which must outlive the runs.
void set_args(Device& device, Kernel& kernel, const std::vector<KernelArg>& args, uint64_t seed,
              std::vector<cl::Buffer>& buffers) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.001f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  for (const KernelArg& arg : args) {
    switch (arg.kind) {
    case KernelArg::Kind::float_buffer: {
      std::vector<float> data(static_cast<size_t>(arg.count));
      for (float& x : data)
        x = negative(rng) ? -magnitude(rng) : magnitude(rng);
      buffers.push_back(upload(device, data));
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
      kernel.arg(LocalMemory{static_cast<size_t>(arg.count)});
      break;
    }
  }
}

/// This process's executable, which `launch-worker` runs again.
std::string self_executable() {
  std::array<char, 4096> self{};
  ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  return n > 0 ? std::string(self.data(), static_cast<size_t>(n)) : "/proc/self/exe";
}

} // namespace

KernelLaunch parse_kernel_launch(const KernelLaunchOptions& o) {
  KernelLaunch v;
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

nlohmann::json timing_json(const Timing& t) {
  return {{"median_ms", t.median_ms},  {"min_ms", t.min_ms}, {"max_ms", t.max_ms},
          {"q1_ms", t.q1_ms},          {"q3_ms", t.q3_ms},   {"iqr_ms", t.iqr_ms()},
          {"samples_ms", t.samples_ms}};
}

nlohmann::json run_kernel_launch(const KernelLaunchOptions& o) {
  nlohmann::json result{{"status", "run_error"}};
  try {
    KernelLaunch v = parse_kernel_launch(o);
    std::string source = read_source(o.file);
    Device device = select_device(o.device);
    result["device"] = device.profile;
    BuildResult built;
    if (o.build_log) {
      // A cache with no folder, new for this launch: the program is compiled, so the log exists.
      BuildCache uncached{std::filesystem::path()};
      built = uncached.build(device, source, o.build_options);
      result["build_log"] = built.log;
    } else {
      build(device, source, o.build_options, &built);
    }
    result["build_ms"] = built.build_ms;
    result["cache_hit"] = built.cache_hit;
    Kernel kernel(built.program, o.kernel);
    std::vector<cl::Buffer> buffers;
    set_args(device, kernel, v.args, o.seed, buffers);
    Timing timing = time_kernel(device, kernel, v.global, v.local, o.warmup, o.repeat);
    result["timing"] = timing_json(timing);
    result["status"] = "ok";
  } catch (const BuildError& e) {
    result["status"] = to_string(Status::build_error);
    result["error"] = e.what();
    result["build_log"] = e.log();
  } catch (const LaunchError& e) {
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

std::string worker_result_line(const nlohmann::json& result) {
  // The leading newline ends any unterminated kernel printf output first.
  return fmt::format("\n{}{}\n", kResultMarker, result.dump());
}

std::vector<std::string> launch_worker_argv(const KernelLaunchOptions& o) {
  std::vector<std::string> argv{self_executable(),
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
  if (o.build_log)
    argv.push_back("--build-log");
  for (const std::string& arg : o.args)
    argv.insert(argv.end(), {"--arg", arg});
  return argv;
}

nlohmann::json collect_worker_result(const IsolatedResult& run, std::chrono::milliseconds timeout) {
  if (run.timed_out)
    return {{"status", to_string(Status::timeout)},
            {"error", fmt::format("the kernel did not finish within {} ms (worker killed)",
                                  timeout.count())}};
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

IsolatedLaunch launch_isolated(const KernelLaunchOptions& options,
                               std::chrono::milliseconds timeout) {
  IsolatedLaunch launched;
  launched.launch = parse_kernel_launch(options);
  read_source(options.file);
  IsolatedResult run = run_isolated(launch_worker_argv(options), timeout);
  launched.result = collect_worker_result(run, timeout);
  launched.wall_ms = run.wall_ms;
  return launched;
}

} // namespace liftx::runtime
