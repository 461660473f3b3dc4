#pragma once
/// What the files of `liftx collect` share (collect.cpp, collect_measurer.cpp, collect_worker.cpp):
/// the clock, the worker's protocol and its targets. Internal to explore/: nothing outside the
/// folder includes it.
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <string>

namespace liftx::explore::detail {

using Clock = std::chrono::steady_clock;

/// The line a worker writes once its device is open, before any result.
inline constexpr const char* kWorkerReady = "{\"ready\":true}";
/// The worker draws a target's inputs and interprets its reference before the target's first
/// job, between a "preparing" and a "prepared" line: that is the target's cost, not the job's
/// (at 512^3 the interpreter takes minutes where a kernel takes a millisecond), so the job's
/// timeout starts after it, and CollectOptions::reference_timeout bounds it.
/// The target a job belongs to: its reference program, sizes and seed (defined in
/// collect_worker.cpp).
std::string target_key(const nlohmann::json& job);

/// The text of a file without its trailing line breaks (a worker's stderr, a model).
std::string read_text(const std::filesystem::path& path);

} // namespace liftx::explore::detail
