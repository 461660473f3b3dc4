#include "cli/options.hpp"

#include "ir/interp/interp.hpp"
#include "runtime/launch.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>

namespace liftx::cli {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

} // namespace

std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos)
      return parts;
    start = end + 1;
  }
}

int64_t parse_integer(const std::string& text, const std::string& what, int64_t lo, int64_t hi) {
  int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, value);
  LIFTX_USER_CHECK(!text.empty() && ec == std::errc() && end == last, "{}: '{}' is not an integer",
                   what, text);
  LIFTX_USER_CHECK(value >= lo && value <= hi, "{}: {} is out of range [{}, {}]", what, value, lo,
                   hi);
  return value;
}

std::vector<int64_t> parse_dims(const std::string& text, const char* what) {
  std::vector<int64_t> values;
  if (text.empty())
    return values;
  for (const std::string& part : split_on(text, ','))
    values.push_back(parse_integer(part, fmt::format("--{}", what), 1, int64_t{1} << 31));
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
  LIFTX_USER_CHECK(is_identifier(name), "{}: '{}' is not a name", what, name);
  std::string lo = text.substr(eq + 1, colon - eq - 1);
  std::string hi = text.substr(colon + 1);
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  arith::Range range;
  if (!lo.empty())
    range.start = arith::cst(parse_integer(lo, what, kMin, kMax));
  if (!hi.empty())
    range.stop = arith::cst(parse_integer(hi, what, kMin, kMax));
  LIFTX_USER_CHECK(
      !(range.start && range.stop && !(*range.start->as_constant() < *range.stop->as_constant())),
      "{}: the range is empty (HI is exclusive)", what);
  return {name, range};
}

namespace {
std::string replace_x(std::string text) {
  std::replace(text.begin(), text.end(), 'X', 'x');
  return text;
}
} // namespace

std::string bandwidth_line(const exec::RunReport& report) {
  if (!report.gb_per_s)
    return "";
  std::string line = fmt::format("bandwidth {:.2f} GB/s", *report.gb_per_s);
  if (report.roofline_fraction && report.roofline_gb_per_s) {
    constexpr double kCacheResident = 1.05; // past the copy's own run-to-run spread
    if (*report.roofline_fraction > kCacheResident)
      line += fmt::format(", {:.1f}x the float4-copy roofline ({:.2f} GB/s, a copy larger than "
                          "the caches): its working set of {} is served from the cache, which "
                          "the roofline does not bound",
                          *report.roofline_fraction, *report.roofline_gb_per_s,
                          interp::format_bytes(static_cast<int64_t>(report.bytes_moved)));
    else
      line += fmt::format(" = {:.1f}% of the float4-copy roofline ({:.2f} GB/s)",
                          *report.roofline_fraction * 100, *report.roofline_gb_per_s);
  }
  return line + "\n";
}

SizeOptions parse_size_options(const std::vector<std::string>& values) {
  SizeOptions sizes;
  constexpr int64_t kMaxSize = int64_t{1} << 40;
  for (const std::string& value : values) {
    for (const std::string& item : split_on(value, ',')) {
      size_t eq = item.find('=');
      if (eq == std::string::npos && item.find_first_of("xX") != std::string::npos) {
        LIFTX_USER_CHECK(sizes.ordered.empty(), "--size {}: sizes in order are given twice", item);
        for (const std::string& part : split_on(replace_x(item), 'x'))
          sizes.ordered.push_back(parse_integer(part, "--size", 1, kMaxSize));
        continue;
      }
      if (eq == std::string::npos) {
        LIFTX_USER_CHECK(!sizes.all, "--size {}: a size for every variable is given twice", item);
        sizes.all = parse_integer(item, "--size", 1, kMaxSize);
        continue;
      }
      std::string name = item.substr(0, eq);
      LIFTX_USER_CHECK(is_identifier(name), "--size {}: '{}' is not a size name", item, name);
      int64_t size =
          parse_integer(item.substr(eq + 1), fmt::format("--size {}", name), 1, kMaxSize);
      LIFTX_USER_CHECK(sizes.named.emplace(name, size).second, "--size: {} is given twice", name);
    }
  }
  return sizes;
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
