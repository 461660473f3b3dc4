#include "cli/options.hpp"

#include "exec/program_binding.hpp"
#include "ir/interp/interp.hpp"
#include "runtime/launch.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <limits>

namespace liftx::cli {

std::vector<int64_t> parse_dims(const std::string& text, const char* what) {
  std::vector<int64_t> values;
  if (text.empty())
    return values;
  for (const std::string& part : exec::split_on(text, ','))
    values.push_back(exec::parse_integer(part, fmt::format("--{}", what), 1, int64_t{1} << 31));
  LIFTX_USER_CHECK(values.size() <= 3, "--{}: at most 3 dimensions", what);
  return values;
}

std::pair<std::string, arith::Range> parse_range_option(const std::string& text) {
  const std::string what = fmt::format("--range {}", text);
  size_t eq = text.find('=');
  size_t colon = text.find(':', eq == std::string::npos ? 0 : eq);
  LIFTX_USER_CHECK(eq != std::string::npos && colon != std::string::npos,
                   "{}: expected NAME=LO:HI (HI exclusive; either bound may be empty)", what);
  std::string name = text.substr(0, eq);
  LIFTX_USER_CHECK(exec::is_identifier(name), "{}: '{}' is not a name", what, name);
  std::string lo = text.substr(eq + 1, colon - eq - 1);
  std::string hi = text.substr(colon + 1);
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  arith::Range range;
  if (!lo.empty())
    range.start = arith::cst(exec::parse_integer(lo, what, kMin, kMax));
  if (!hi.empty())
    range.stop = arith::cst(exec::parse_integer(hi, what, kMin, kMax));
  LIFTX_USER_CHECK(
      !(range.start && range.stop && !(*range.start->as_constant() < *range.stop->as_constant())),
      "{}: the range is empty (HI is exclusive)", what);
  return {name, range};
}

void add_max_memory_option(CLI::App* cmd) {
  cmd->add_option_function<std::string>(
      "--max-memory",
      [](const std::string& text) {
        interp::parse_memory_size(text, "--max-memory"); // refuses bad text here, located
        ::setenv("LIFTX_MAX_MEMORY", text.c_str(), 1);
      },
      "host memory the run may plan for, e.g. 512M or 8G (default: half the physical memory)");
}

void add_db_option(CLI::App* cmd, std::string& db, const char* role) {
  cmd->add_option("--db", db,
                  fmt::format("performance database {} (default: $LIFTX_DB, else "
                              "$XDG_DATA_HOME/liftx/perf.db, else ~/.local/share/liftx/perf.db)",
                              role));
}

void add_device_option(CLI::App* cmd, std::string& device, bool required) {
  CLI::Option* option = cmd->add_option(
      "--device", device,
      fmt::format("OpenCL device: cpu, gpu, pocl, nvidia, amd, intel, P:D (platform:device, as "
                  "`liftx devices` lists them) or part of a device name{}",
                  required ? "" : " (default cpu)"));
  if (required)
    option->required();
}

void add_profile_option(CLI::App* cmd, std::string& profile, const char* default_text) {
  cmd->add_option("--profile,--device-profile", profile,
                  fmt::format("device profile of the variant space and the features: nvidia, amd, "
                              "cpu or detect (the first OpenCL device's own; default {})",
                              default_text));
}

namespace {

/// A flag's older name: sets the same flag, hidden from --help (documented command lines and
/// scripts keep working; the help and the docs show one name).
void add_older_flag_spelling(CLI::App* cmd, const char* older_spelling, bool& target) {
  if (older_spelling)
    cmd->add_flag(older_spelling, target, "")->group("");
}

} // namespace

void add_device_key_option(CLI::App* cmd, std::string& key, const char* help) {
  CLI::Option* device_key = cmd->add_option("--device-key", key, help);
  cmd->add_option_function<std::string>(
         "--device",
         [&key, device_key](const std::string& value) {
           if (device_key->count() > 0)
             throw CLI::ValidationError("--device",
                                        "the older spelling of --device-key: give one of them");
           key = value;
         },
         "")
      ->group("");
}

void add_report_format_option(CLI::App* cmd, bool& json) {
  cmd->add_option_function<std::string>(
         "--format", [&json](const std::string& format) { json = format == "json"; },
         "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  add_older_flag_spelling(cmd, "--json", json);
}

void add_remeasure_flag(CLI::App* cmd, bool& remeasure, const char* help,
                        const char* older_spelling) {
  cmd->add_flag("--remeasure", remeasure, help);
  add_older_flag_spelling(cmd, older_spelling, remeasure);
}

void add_warp_streams_flag(CLI::App* cmd, bool& warp_streams) {
  cmd->add_flag("--warp-streams", warp_streams,
                "also stream iterated 2D stencils by sub-groups of at most 32 work-items, each "
                "owning adjacent columns of every fused step's rows (the variants say \"warp\": "
                "1, \"lanes\" and \"columns\"); in the default space where sub-groups "
                "shuffle (profile nvidia: the rows stay in registers, read across lanes by "
                "shfl.sync), so this adds them elsewhere (their rows in local memory)");
}

void add_print_kernel_flag(CLI::App* cmd, bool& print_kernel, const char* help,
                           const char* older_spelling) {
  cmd->add_flag("--print-kernel", print_kernel, help);
  add_older_flag_spelling(cmd, older_spelling, print_kernel);
}

void add_timing_options(CLI::App* cmd, int& warmup, int& repeat) {
  cmd->add_option("--warmup", warmup,
                  fmt::format("untimed runs first, for at least {:g} ms when > 0 (default {})",
                              runtime::kMinWarmupMs, warmup))
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--repeat", repeat,
                  fmt::format("timed runs; the median counts (default {})", repeat))
      ->check(CLI::Range(1, 100000));
}

} // namespace liftx::cli
