#pragma once
/// Running a command in a child process, so that a kernel that crashes or hangs the driver takes
/// down the child, not the caller.
#include <chrono>
#include <string>
#include <vector>

namespace liftx::runtime {

struct IsolatedResult {
  int exit_code = -1;     ///< the child's exit status; -1 if it was killed by a signal
  int signal = 0;         ///< the signal that ended the child (SIGKILL after a timeout); 0 if none
  bool timed_out = false; ///< the child ran past the timeout and its process group was killed
  std::string stdout_text;
  std::string stderr_text;
  bool output_truncated = false; ///< more than kMaxCapturedBytes on a stream; the rest was dropped
  double wall_ms = 0;

  bool succeeded() const { return !timed_out && signal == 0 && exit_code == 0; }
  /// "exit code 3", "killed by signal 11 (Segmentation fault)", "timed out after 500 ms".
  std::string describe() const;
};

/// Output kept per stream; a child that writes more is still drained, the excess discarded.
inline constexpr size_t kMaxCapturedBytes = 16u << 20;

/// Runs argv[0] (a path; not searched in PATH) with arguments argv[1..] in a new process group
/// (spawned, never forked without exec, so it is safe after OpenCL initialisation and with
/// threads), stdin from /dev/null, stdout and stderr captured. On timeout the whole process group
/// gets SIGKILL. UserError if argv is empty or the program cannot be started.
IsolatedResult run_isolated(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout);

} // namespace liftx::runtime
