#pragma once
// The progress line of long commands (collect, calibrate) on stderr.
#include "explore/collect.hpp"

#include <chrono>
#include <string>

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

} // namespace liftx::cli
