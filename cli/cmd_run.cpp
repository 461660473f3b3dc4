// `liftx run FILE --device D --size ... [--global X,Y] [--local X,Y] [--repeat R] [--check]`:
// generates the kernel of a lowered program, runs it on the device, checks the result against
// the reference interpreter and times it. The kernel runs in a child process (`--worker`), so a
// kernel that crashes or hangs the driver is reported with a status instead of taking liftx down.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "exec/program_binding.hpp"
#include "exec/report_text.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/launch_file.hpp"
#include "runtime/isolate.hpp"
#include "space/bank_padding.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace liftx::cli {

namespace {

struct RunCommandOptions {
  std::string file;
  std::string program;
  int64_t steps = 0;
  std::string device = "cpu";
  std::vector<std::string> sizes;
  std::string global;
  std::string local;
  int repeat = exec::kDefaultRepeat;
  int warmup = exec::kDefaultWarmup;
  bool no_check = false;
  bool no_roofline = false;
  bool pad_local = false; ///< pad local arrays' rows first (space::choose_bank_padding)
  bool one_copy = false;  ///< no copy of a tile's code for interior tiles (exec::RunOptions)
  uint64_t seed = 1;
  double tolerance = 1e-4;
  int64_t check_launches = 0;           ///< exec::RunOptions::check_launches
  int64_t steps_per_launch = 0;         ///< exec::RunOptions::steps_per_launch
  std::vector<std::string> check_sizes; ///< exec::RunOptions::check_sizes, as --size spells them
  int timeout_ms = 120000;
  bool json = false;
  bool print_kernel = false;
  bool worker = false;
  std::string launch;    ///< a variant sidecar (liftx variants --out): its global/local sizes
  std::string reference; ///< verify against this program (e.g. the high-level stencil)
  std::string output;    ///< write the kernel's result here (float32)
};

/// Reads a variant sidecar's launch into --global/--local, and its sizes into --size (given
/// ones win): `explore --out DIR` and `variants --out` write the sizes the launch was made for.
/// A tied launch run at sizes given here keeps only its local size: its global size was the
/// launch rule's at the file's sizes, and the rule gives it again at these (the file's would
/// launch another size's grid of work-groups as free threads: 256 times the work of a 512²
/// check from an 8192² launch).
void apply_launch_file(RunCommandOptions& o) {
  if (o.launch.empty()) {
    LIFTX_USER_CHECK(!o.sizes.empty(),
                     "--size is required (or --launch FILE.json, whose sizes are used)");
    return;
  }
  const perfdb::LaunchFile file = perfdb::read_launch_file(o.launch);
  const bool rule_gives_global = file.tied && !o.sizes.empty();
  if (o.global.empty() && !rule_gives_global)
    o.global = fmt::format("{}", fmt::join(file.launch.global, ","));
  if (o.local.empty())
    o.local = fmt::format("{}", fmt::join(file.launch.local, ","));
  if (o.sizes.empty()) {
    LIFTX_USER_CHECK(!file.sizes.empty(), "{}: no sizes in this launch file; give --size",
                     o.launch);
    o.sizes = {fmt::format("{}", fmt::join(file.sizes, ","))};
  }
}

exec::RunReport run_here(const RunCommandOptions& o) {
  ir::Module module = parse::parse_file(o.file);
  const ir::Program program =
      exec::iterate_steps(exec::select_program(module, o.program, o.file), o.steps, o.file);
  Sizes sizes = exec::bind_sizes(program, o.sizes);
  exec::RunOptions options;
  options.global = parse_dims(o.global, "global");
  options.local = parse_dims(o.local, "local");
  options.repeat = o.repeat;
  options.warmup = o.warmup;
  options.check = !o.no_check;
  options.roofline = !o.no_roofline;
  options.seed = o.seed;
  options.tolerance = o.tolerance;
  options.check_launches = o.check_launches;
  options.steps_per_launch = o.steps_per_launch;
  if (!o.check_sizes.empty())
    options.check_sizes = exec::bind_sizes(program, o.check_sizes);
  options.output_file = o.output;
  if (o.one_copy)
    options.interior_tiles = false;
  std::optional<ir::Module> reference_module;
  if (!o.reference.empty()) {
    reference_module = parse::parse_file(o.reference);
    options.reference = &reference_module->main();
  }
  runtime::Device device = runtime::select_device(o.device);
  if (o.pad_local)
    return exec::run_program(
        device,
        space::choose_bank_padding(program, sizes, {options.global, options.local}, device.profile)
            .program,
        sizes, options);
  return exec::run_program(device, program, sizes, options);
}

std::vector<std::string> worker_argv(const RunCommandOptions& o) {
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "run",
                                   o.file,
                                   "--device",
                                   o.device,
                                   "--worker"};
  auto add = [&argv](const std::string& flag, const std::string& value) {
    argv.push_back(flag);
    argv.push_back(value);
  };
  if (!o.program.empty())
    add("--program", o.program);
  if (o.steps != 0)
    add("--steps", std::to_string(o.steps));
  for (const std::string& s : o.sizes)
    add("--size", s);
  if (!o.global.empty())
    add("--global", o.global);
  if (!o.local.empty())
    add("--local", o.local);
  add("--repeat", std::to_string(o.repeat));
  add("--warmup", std::to_string(o.warmup));
  add("--seed", std::to_string(o.seed));
  add("--tolerance", fmt::format("{}", o.tolerance));
  if (o.check_launches > 0)
    add("--check-launches", std::to_string(o.check_launches));
  if (o.steps_per_launch > 0)
    add("--steps-per-launch", std::to_string(o.steps_per_launch));
  for (const std::string& s : o.check_sizes)
    add("--check-size", s);
  if (!o.reference.empty())
    add("--reference", o.reference);
  if (!o.output.empty())
    add("--output", o.output);
  if (o.no_check)
    argv.push_back("--no-check");
  if (o.no_roofline)
    argv.push_back("--no-roofline");
  if (o.pad_local)
    argv.push_back("--pad-local");
  if (o.one_copy)
    argv.push_back("--one-copy");
  if (o.print_kernel)
    argv.push_back("--print-kernel");
  return argv;
}

void print_report(const exec::RunReport& r, const std::string& file, bool print_kernel) {
  if (print_kernel)
    fmt::print("{}\n", r.kernel_source);
  std::vector<std::string> sizes;
  for (const auto& [name, value] : r.sizes)
    sizes.push_back(fmt::format("{}={}", name, value));
  auto dims = [&](const std::array<int64_t, 3>& v) {
    std::vector<std::string> parts;
    for (int d = 0; d < r.launch.dims; ++d)
      parts.push_back(v[d] ? std::to_string(v[d]) : "auto");
    return fmt::format("{}", fmt::join(parts, " x "));
  };
  fmt::print("program   {} ({})\n", r.program, file);
  fmt::print("device    {}\n", r.device);
  fmt::print("sizes     {}\n", fmt::join(sizes, " "));
  fmt::print("launch    global {}, local {} ({}), local memory {} bytes\n", dims(r.launch.global),
             dims(r.launch.local),
             r.launch.tied ? "threads tied to the mapped lengths" : "free threads", r.local_bytes);
  if (r.launches > 1)
    fmt::print("launches  {} (an iterated program: each launch reads the previous one's result, "
               "two buffers swapped; the time covers all of them)\n",
               r.launches);
  if (r.build_ms > 0 || r.cache_hit)
    fmt::print("build     {:.1f} ms{}\n", r.build_ms, r.cache_hit ? " (cached)" : "");
  const exec::Verification& v = r.verification;
  const std::string what_was_checked = exec::describe_check(v);
  if (v.checked)
    fmt::print("check     {}: {} of {} elements match the reference interpreter (max abs error "
               "{:.3g}){}{}\n",
               v.passed ? "passed" : "FAILED", v.elements - v.mismatches, v.elements,
               v.max_abs_error, what_was_checked.empty() ? "" : "; " + what_was_checked,
               v.passed ? "" : "; " + v.first_mismatch);
  if (r.timing)
    fmt::print("time      {:.4f} ms median of {} runs (min {:.4f}, max {:.4f}, IQR {:.4f})\n",
               r.timing->median_ms, r.timing->samples_ms.size(), r.timing->min_ms, r.timing->max_ms,
               r.timing->q3_ms - r.timing->q1_ms);
  if (r.timing && r.launches > 1)
    fmt::print("per step  {:.4f} ms median\n",
               r.timing->median_ms / static_cast<double>(r.launches));
  fmt::print("{}", exec::rate_lines(r));
  if (!r.output_files.empty())
    fmt::print("output    {}\n", fmt::join(r.output_files, " "));
  fmt::print("status    {}{}\n", runtime::to_string(r.status),
             r.message.empty() || r.status == runtime::Status::ok ? "" : ": " + r.message);
}

} // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCommandOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Generate, run, verify and time a lowered program");
  cmd->add_option("file", o->file, ".lift source file")->required();
  cmd->add_option("--program", o->program, "definition to run (default: the last one)");
  cmd->add_option("--steps", o->steps, "iterate the program T times (see explore)");
  add_device_option(cmd, o->device);
  cmd->add_option("--size", o->sizes,
                  "sizes: N=64,M=48, or 64 for every size (default: those of --launch's file)");
  cmd->add_option("--check-size", o->check_sizes,
                  "verify at these sizes (as --size) with the same launch rule, then time at "
                  "--size unchecked: for programs whose interpretation at --size takes minutes");
  cmd->add_option("--global", o->global, "global size X[,Y[,Z]] (default: tied to the lengths)");
  cmd->add_option("--local", o->local, "local size X[,Y[,Z]] (default: the kernel's or auto)");
  add_timing_options(cmd, o->warmup, o->repeat);
  cmd->add_flag("--no-check", o->no_check, "skip the verification against the interpreter");
  cmd->add_flag(
      "--check", [o](int64_t) { o->no_check = false; }, "verify (the default)");
  cmd->add_flag("--no-roofline", o->no_roofline, "do not compare with the float4-copy roofline");
  cmd->add_flag("--one-copy", o->one_copy,
                "one copy of each tile's code: on a GPU, interior tiles otherwise run a copy "
                "without boundary repairs (codegen.md, \"Interior tiles\"); to compare the two");
  cmd->add_flag("--pad-local", o->pad_local,
                "pad the rows of local arrays against the device's bank conflicts first (seed "
                "004's Algorithm 2; `liftx codegen --pad-local` shows the choice)");
  cmd->add_option("--seed", o->seed, "seed of the random inputs (default 1)");
  cmd->add_option("--tolerance", o->tolerance,
                  "relative tolerance: |kernel - interpreter| <= t * max(s, |interpreter|), s the "
                  "output's largest |interpreter|, at most 1")
      ->check(CLI::Validator(
          [](std::string& text) {
            char* end = nullptr;
            const double t = std::strtod(text.c_str(), &end);
            return *end == '\0' && std::isfinite(t) && t >= 0
                       ? std::string()
                       : "expected a finite tolerance >= 0, got " + text;
          },
          "TOLERANCE"));
  cmd->add_option("--check-launches", o->check_launches,
                  "an iterated program: check it with its step kernel launched this many times "
                  "(and its remainder) on the full grid, then time every step unchecked (default "
                  "0: check every step)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--steps-per-launch", o->steps_per_launch,
                  "--check-launches of a fused variant with a remainder launch: the steps one "
                  "launch of its kernel computes (its steps_per_launch parameter)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--timeout-ms", o->timeout_ms, "kill the run after this long (default 120000)")
      ->check(CLI::Range(1, 86400000));
  add_max_memory_option(cmd);
  cmd->add_option("--reference", o->reference,
                  "verify against this program's interpretation (e.g. the high-level stencil; "
                  "cached per sizes and seed)");
  cmd->add_option("-o,--output", o->output,
                  "write the kernel's result as float32 binary (a tuple result: one file per "
                  "output, FILE.0.ext, FILE.1.ext, ...)");
  add_report_format_option(cmd, o->json);
  add_print_kernel_flag(cmd, o->print_kernel, "print the generated kernel too", "--show-kernel");
  cmd->add_option("--launch", o->launch,
                  "a variant's .json sidecar: run with its global/local (a tied launch at --size: "
                  "its local, the global of its launch rule)");
  cmd->add_flag("--worker", o->worker, "run in this process (used internally)")->group("");
  cmd->callback([o] {
    apply_launch_file(*o);
    // The kernel's text travels from the worker only when it is to be printed (explore's and
    // collect's workers share exec::to_json and have no use for it).
    auto report_json = [o](const exec::RunReport& report) {
      nlohmann::json json = exec::to_json(report);
      if (o->print_kernel)
        json["kernel_source"] = report.kernel_source;
      return json;
    };
    if (o->worker) {
      fmt::print("{}\n", report_json(run_here(*o)).dump());
      return;
    }
    runtime::IsolatedResult child =
        runtime::run_isolated(worker_argv(*o), std::chrono::milliseconds(o->timeout_ms));
    exec::RunReport report;
    if (child.succeeded()) {
      try {
        const nlohmann::json json = nlohmann::json::parse(child.stdout_text);
        report = exec::report_from_json(json);
        report.kernel_source = json.value("kernel_source", "");
      } catch (const nlohmann::json::exception& e) {
        LIFTX_UNREACHABLE("unreadable worker report: {}", e.what());
      }
    } else if (!child.timed_out && child.signal == 0 && child.exit_code == kExitUserError) {
      // The worker found bad input: its message is the user's.
      std::cerr << child.stderr_text;
      throw UserErrorAlreadyReported();
    } else {
      report.status = child.timed_out ? runtime::Status::timeout : runtime::Status::run_error;
      report.message =
          child.describe() + (child.stderr_text.empty() ? "" : ": " + child.stderr_text);
      report.program = o->program.empty() ? o->file : o->program;
      report.device = o->device;
    }
    if (o->json)
      fmt::print("{}\n", report_json(report).dump(2));
    else
      print_report(report, o->file, o->print_kernel);
    if (report.status != runtime::Status::ok)
      throw RunFailed();
  });
}

} // namespace liftx::cli
