#pragma once
/// Parsing of option values shared by subcommands.
#include "ir/arith/expr.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace liftx::cli {

/// `NAME=LO:HI` (HI exclusive), `NAME=LO:` or `NAME=:HI`. UserError on malformed text.
std::pair<std::string, arith::Range> parse_range_option(const std::string& text);

/// `X[,Y[,Z]]` thread counts for --global/--local (`what` names the option); empty text gives an
/// empty list. UserError for non-integers, values below 1 or more than 3 dimensions.
std::vector<int64_t> parse_dims(const std::string& text, const char* what);

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
/// `--warp-streams`: the space also holds the warp streams of iterated 2D stencils
/// (space::SpaceOptions::warp_streams).
void add_warp_streams_flag(CLI::App* cmd, bool& warp_streams);

} // namespace liftx::cli
