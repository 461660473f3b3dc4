#pragma once
/// Parsing of option values shared by subcommands.
#include "exec/run.hpp"
#include "ir/arith/expr.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace liftx::cli {

/// `NAME=LO:HI` (HI exclusive), `NAME=LO:` or `NAME=:HI`. UserError on malformed text.
std::pair<std::string, arith::Range> parse_range_option(const std::string& text);

/// "bandwidth 60.08 GB/s = 93.1% of the float4-copy roofline (64.50 GB/s)" (with the newline); past
/// 105% of the roofline, a DRAM copy's, the fraction is explained instead of printed as if it
/// were one: the kernel's working set is served from the cache.
std::string bandwidth_line(const exec::RunReport& report);

/// `--size` values (repeatable, comma separated): `M=48,N=64` (named), a bare `64` that sets every
/// size variable, or `48x64` (the program's sizes in the order of their names, as `adapt` writes
/// shapes). Returns the explicit bindings, the default for unnamed sizes and the ordered ones.
struct SizeOptions {
  std::map<std::string, int64_t, std::less<>> named;
  std::optional<int64_t> all;
  std::vector<int64_t> ordered;
};
SizeOptions parse_size_options(const std::vector<std::string>& values);

/// `X[,Y[,Z]]` thread counts for --global/--local (`what` names the option); empty text gives an
/// empty list. UserError for non-integers, values below 1 or more than 3 dimensions.
/// "a,,b" -> {"a", "", "b"}: every part, empty ones included (the caller refuses them).
std::vector<std::string> split_on(const std::string& text, char separator);

std::vector<int64_t> parse_dims(const std::string& text, const char* what);

/// A decimal integer in [lo, hi]; UserError naming `what` otherwise.
int64_t parse_integer(const std::string& text, const std::string& what, int64_t lo, int64_t hi);

/// Adds `--max-memory SIZE` to `cmd`: the host-memory budget of the runs it starts, set as
/// LIFTX_MAX_MEMORY so that worker processes share it (interp::host_memory_limit).
void add_max_memory_option(CLI::App* cmd);

/// The options every command spells the same way (docs/cli.md, "One vocabulary").
///
/// `--db FILE`: the performance database; `role` says what the command does with it. Unset, it is
/// perfdb::PerfDb::default_path().
void add_db_option(CLI::App* cmd, std::string& db, const char* role);
/// `--device D`: the OpenCL device to run on (cpu, gpu, pocl, nvidia, amd, intel, P:D or part of
/// its name); `required` for commands with no default, else the default is cpu.
void add_device_option(CLI::App* cmd, std::string& device, bool required = false);
/// `--profile P`: the device profile of the variant space and the features (nvidia, amd, cpu, or
/// detect: the first OpenCL device's own). `--device-profile` is its older spelling.
void add_profile_option(CLI::App* cmd, std::string& profile, const char* default_text);
/// `--device-key K`: a device of a database by its key (`train`, `evaluate`, `replay`, `route`,
/// `db`), so that `--device` always names an OpenCL device. There `--device` is its older
/// spelling, hidden from --help.
void add_device_key_option(CLI::App* cmd, std::string& key, const char* help);
/// `--format table|json` for a command that prints one report: sets `json` for json. `--json` is
/// its older spelling, hidden from --help.
void add_report_format_option(CLI::App* cmd, bool& json);
/// `--remeasure`: measure again what a database or a cache holds, rather than reuse it (one word
/// for that in every command). `older_spelling` (hidden from --help) still works where given.
void add_remeasure_flag(CLI::App* cmd, bool& remeasure, const char* help,
                        const char* older_spelling = nullptr);
/// `--print-kernel`: print the generated OpenCL kernel too. `older_spelling` as above.
void add_print_kernel_flag(CLI::App* cmd, bool& print_kernel, const char* help,
                           const char* older_spelling = nullptr);
/// `--warmup N` and `--repeat N`, with the defaults of explore::ExploreOptions::Measure (and of
/// liftx::TuneOptions).
void add_timing_options(CLI::App* cmd, int& warmup, int& repeat);

} // namespace liftx::cli
