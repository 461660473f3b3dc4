#pragma once
/// Building and timing one raw OpenCL kernel on random data (`liftx launch`). The launch is
/// described by text specs, as the command line spells them, because it runs in a child process:
/// the `launch-worker` command of this same executable, started through run_isolated with the
/// specs on its command line, so that a kernel that crashes or hangs gives a status instead of
/// taking the caller down.
#include "runtime/isolate.hpp"
#include "runtime/launch.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace liftx::runtime {

/// What to launch. Sizes and arguments stay text: the worker gets them back on its command line
/// and parses them itself (parse_kernel_launch).
struct KernelLaunchOptions {
  std::string file;   ///< the OpenCL C source file
  std::string device; ///< a select_device spec
  std::string kernel; ///< the kernel function to run
  std::string global; ///< "X[,Y[,Z]]"
  std::string local;  ///< "X[,Y[,Z]]" of as many dimensions as `global`; empty: the runtime chooses
  /// In the kernel's parameter order: buf:float:N (N random floats), int:V, long:V, float:V,
  /// local:BYTES.
  std::vector<std::string> args;
  std::string build_options; ///< for the OpenCL C compiler
  int warmup = 0;            ///< untimed launches first (warm_up)
  int repeat = 1;            ///< timed launches (>= 1)
  uint64_t seed = 1;         ///< of the random buffer contents
  /// Compile from source, past the build cache, and return the compiler's log ("build_log").
  bool build_log = false;
};

/// One kernel argument: a buffer of random floats, a scalar, or __local memory.
struct KernelArg {
  enum class Kind { float_buffer, int32, int64, float32, local } kind;
  uint64_t count = 0; ///< floats (buffer) or bytes (local)
  int64_t integer = 0;
  float real = 0;
};

/// The specs of a launch, parsed and checked.
struct KernelLaunch {
  cl::NDRange global;
  cl::NDRange local; ///< NullRange when the runtime chooses
  std::vector<KernelArg> args;
};

/// Parses the sizes and arguments of `options`. UserError naming the offending spec as its
/// option (`--global`, `--local`, `--arg SPEC`) for a malformed one, a size of 0, more than 3
/// dimensions, or a local size of other dimensions than the global one.
KernelLaunch parse_kernel_launch(const KernelLaunchOptions& options);

/// Times as JSON: median_ms, min_ms, max_ms, q1_ms, q3_ms, iqr_ms, samples_ms.
nlohmann::json timing_json(const Timing& timing);

/// The worker's side, everything that touches OpenCL: parses the specs, reads the source, opens
/// the device, builds the program (through the build cache), sets the arguments and times the
/// kernel. Never throws: the result is {"status": ...} with the Status's name (or "user_error"),
/// "error" (and "build_log" for a build_error) when it failed, and "device", "build_ms",
/// "cache_hit", "build_log" (with KernelLaunchOptions::build_log) and "timing" (timing_json) as
/// far as they became known.
nlohmann::json run_kernel_launch(const KernelLaunchOptions& options);

/// The text a worker prints last on its standard output: the result on a line of its own behind
/// a marker, so that kernel printf output cannot be mistaken for it.
std::string worker_result_line(const nlohmann::json& result);

/// The command line of this process's own executable, as `launch-worker`, for `options`.
std::vector<std::string> launch_worker_argv(const KernelLaunchOptions& options);

/// The result a worker printed (worker_result_line), with how the worker ended appended to its
/// error when it did not exit cleanly; otherwise a timeout or run_error result describing how it
/// ended (`timeout` is the limit it ran under, for the message).
nlohmann::json collect_worker_result(const IsolatedResult& run, std::chrono::milliseconds timeout);

/// A launch run in a worker child: the parsed specs, the worker's result (collect_worker_result)
/// and the wall time of the child.
struct IsolatedLaunch {
  KernelLaunch launch;
  nlohmann::json result;
  double wall_ms = 0;
};

/// Parses the specs and checks that the source is readable, so that bad options are reported (as
/// a UserError) before any process starts; then runs the launch in a `launch-worker` child that
/// is killed past `timeout`.
IsolatedLaunch launch_isolated(const KernelLaunchOptions& options,
                               std::chrono::milliseconds timeout);

} // namespace liftx::runtime
