#include "cli/progress.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>

namespace liftx::cli {

std::string format_duration(double seconds) {
  if (seconds < 0 || seconds > 360000)
    return "--:--";
  int64_t s = static_cast<int64_t>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{:02}:{:02}", s / 60, s % 60);
}

namespace {

/// A progress line on stderr: redrawn in place on a terminal, a whole line otherwise.
void draw_line(bool terminal, const std::string& line) {
  if (terminal)
    fmt::print(stderr, "\r\033[K{}", line);
  else
    fmt::print(stderr, "{}\n", line);
  std::fflush(stderr);
}

} // namespace

ProgressPrinter::ProgressPrinter() : terminal_(::isatty(2) != 0) {}

void ProgressPrinter::update(const explore::CollectProgress& p) {
  auto now = std::chrono::steady_clock::now();
  bool final = p.phase == "measuring" && p.done == p.total;
  if (!terminal_ && !final && p.phase == last_phase_ && now - last_print_ < std::chrono::seconds(5))
    return;
  if (terminal_ && !final && now - last_print_ < std::chrono::milliseconds(100))
    return;
  last_print_ = now;
  last_phase_ = p.phase;
  std::string line;
  if (p.phase == "enumerating") {
    line = fmt::format("enumerating {}", p.current);
  } else {
    constexpr int kWidth = 30;
    double fraction = p.total > 0 ? static_cast<double>(p.done) / p.total : 1.0;
    int filled = static_cast<int>(fraction * kWidth);
    double eta = p.done > 0 ? p.measuring_s / p.done * (p.total - p.done) : -1;
    std::string counts;
    for (const auto& [status, n] : p.statuses)
      counts += fmt::format(" {} {}", status, n);
    line = fmt::format("[{}{}] {}/{} {:3.0f}% elapsed {} ETA {}{}{}", std::string(filled, '#'),
                       std::string(kWidth - filled, '.'), p.done, p.total, fraction * 100,
                       format_duration(p.elapsed_s), format_duration(eta),
                       p.skipped ? fmt::format(" (skipped {})", p.skipped) : "", counts);
  }
  draw_line(terminal_, line);
  drew_ = true;
}

ActivityPrinter::ActivityPrinter(bool quiet)
    : quiet_(quiet), terminal_(::isatty(2) != 0), start_(std::chrono::steady_clock::now()) {
  // Tests set the delay to 0 to see the lines of commands that finish in under 2 s.
  if (const char* after = std::getenv("LIFTX_PROGRESS_AFTER_MS"); after && *after)
    silent_for_ = std::chrono::milliseconds(std::strtoll(after, nullptr, 10));
}

void ActivityPrinter::update(std::string_view what, int64_t count) {
  const auto now = std::chrono::steady_clock::now();
  if (quiet_ || now - start_ < silent_for_)
    return;
  if (drew_ && now - last_print_ <
                   (terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000)))
    return;
  last_print_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const std::string line = fmt::format("{} {} variants, {}", what, count, format_duration(elapsed));
  draw_line(terminal_, line);
  drew_ = true;
}

void ActivityPrinter::finish() {
  if (terminal_ && drew_)
    fmt::print(stderr, "\r\033[K");
  drew_ = false;
}

std::function<void(const std::string&)> step_lines(std::string command, bool quiet) {
  if (quiet)
    return {};
  const auto start = std::chrono::steady_clock::now();
  command.resize(std::max<size_t>(command.size(), 9), ' ');
  return [command, start](const std::string& step) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "{} {}, {}\n", command, step, format_duration(elapsed));
    std::fflush(stderr);
  };
}

void ProgressPrinter::finish() {
  if (terminal_ && drew_)
    fmt::print(stderr, "\n");
}

} // namespace liftx::cli
