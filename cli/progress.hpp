#pragma once
// The progress lines of long commands on stderr: a bar where the total is known (collect,
// calibrate), a running count where it is not (ranking, enumerating).
#include "explore/collect.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace liftx::cli {

/// "01:02" or "1:02:03"; "--:--" for an unknown or absurd duration.
std::string format_duration(double seconds);

/// A bar redrawn in place on a terminal, else a line every few seconds (logs stay short).
class ProgressPrinter {
public:
  ProgressPrinter();
  void update(const explore::CollectProgress& p);
  /// Ends the line the bar was drawn on.
  void finish();

private:
  bool terminal_;
  bool drew_ = false;
  std::chrono::steady_clock::time_point last_print_{};
  std::string last_phase_;
};

/// Work with no known total ("ranking 122880 variants, 00:12"): redrawn in place on a terminal,
/// a line every 5 s otherwise; nothing during the first 2 s (quick commands stay quiet;
/// $LIFTX_PROGRESS_AFTER_MS changes the delay), nothing at all when `quiet`.
class ActivityPrinter {
public:
  explicit ActivityPrinter(bool quiet);
  void update(std::string_view what, int64_t count);
  /// Ends the line the count was drawn on.
  void finish();

private:
  bool quiet_;
  bool terminal_;
  bool drew_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_{};
  std::chrono::milliseconds silent_for_{2000};
};

/// The coarse steps of a long command ("evaluate  fold 2 of 8: leave out gradient, 00:41"), one
/// whole line each on stderr with the time since the command began; nothing when `quiet`.
std::function<void(const std::string& step)> step_lines(std::string command, bool quiet);

} // namespace liftx::cli
