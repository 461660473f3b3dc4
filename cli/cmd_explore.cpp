// `liftx explore FILE [--device D] [--model M] [--budget K|auto] [--strategy S] [--size ...]
// [--db DB] [--format table|json|csv] [--out DIR]`: rank the variants with a cost model, then run,
// verify and time the most promising ones. Each variant runs in a worker child (`liftx run
// --worker`), as `liftx run` does, so a kernel that crashes or hangs the driver is recorded with a
// status and exploration goes on. With `--mpi` (under mpirun or srun) rank 0 ranks, re-ranks and
// reports, and every rank measures the variants of each batch on its own device (explore/mpi/).
#include "cli/app.hpp"
#include "cli/model_options.hpp"
#include "cli/mpi_options.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "codegen/launch.hpp"
#include "exec/program_binding.hpp"
#include "exec/report_text.hpp"
#include "exec/run.hpp"
#include "explore/collect.hpp"
#include "explore/explore.hpp"
#include "explore/explore_report.hpp"
#include "explore/models.hpp"
#include "explore/mpi/rank_farm.hpp"
#include "explore/rank.hpp"
#include "explore/session.hpp"
#include "explore/winner.hpp"
#include "ir/host_iteration.hpp"
#include "ir/parse/parser.hpp"
#include "model/online.hpp"
#include "perfdb/db.hpp"
#include "space/default_lowering.hpp"
#include "space/space.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

struct ExploreCommandOptions {
  std::string file;
  std::string program;
  int64_t steps = 0;
  std::string device = "cpu";
  std::string model;
  std::string budget = "10"; ///< runs, or "auto"
  int64_t batch = 4;
  std::string acquisition = "mean";
  double launch_spread = model::OnlineOptions{}.launch_spread;
  std::string strategy = "online";
  std::vector<std::string> sizes;
  std::string db;
  uint64_t seed = 1;
  int64_t sample = -1; // -1: the device's default (explore::defaults_for: the whole space)
  int warmup = exec::kDefaultWarmup;
  int repeat = exec::kDefaultRepeat;
  int timeout_ms = 60000;
  std::string format = "table";
  bool quiet = false;
  bool print_kernel = false;
  bool layouts = false;
  bool warp_streams = false;
  bool remeasure = false;
  bool no_baseline = false;
  bool full_check = false; ///< check every step, at the full sizes, however long
  std::string out;
  MpiCommandOptions mpi;
};

/// `--budget auto`'s hard cap on runs.
constexpr int64_t kAutoBudgetCap = 50;

/// What the command explores: the parsed program and sizes, the device, and where runs go.
struct ExploreTarget {
  ir::Module module;
  ir::Program program;
  target::DeviceProfile device;
  Sizes sizes;
  fs::path db_path;
};

/// --mpi: every rank but 0 only measures what rank 0 hands it, one variant at a time; `farm`
/// stays empty without --mpi.
void start_farm(const ExploreCommandOptions& o, std::optional<explore::mpi::RankFarm>& farm) {
  if (!o.mpi.mpi)
    return;
  explore::CollectOptions measuring;
  measuring.device = o.device;
  measuring.worker_executable = fs::read_symlink("/proc/self/exe").string();
  measuring.timeout = std::chrono::milliseconds(o.timeout_ms);
  explore::mpi::MpiOptions mpi = mpi_options(o.mpi, "explore");
  mpi.batch = 1;
  farm.emplace(measuring, mpi);
}

ExploreTarget load_target(const ExploreCommandOptions& o,
                          const std::optional<target::DeviceProfile>& farm_device) {
  // Refused before the exploration, which may take long: never written over its input.
  if (!o.out.empty())
    explore::refuse_winner_over_input(o.out, o.file);
  ir::Module module = parse::parse_file(o.file);
  ir::Program program =
      exec::iterate_steps(exec::select_program(module, o.program, o.file), o.steps, o.file);
  explore::refuse_lowered(program, o.file, "explore");
  target::DeviceProfile device =
      farm_device ? *farm_device : runtime::select_device(o.device).profile;
  const explore::DeviceDefaults defaults = explore::defaults_for(device);
  Sizes sizes =
      exec::bind_sizes(program, o.sizes.empty() ? std::vector{std::to_string(defaults.extent(size_t(
                                                      rewrite::grid_rank(program.result_type()))))}
                                                : o.sizes);
  fs::path db_path = o.db.empty() ? perfdb::PerfDb::default_path() : fs::path(o.db);
  return {std::move(module), std::move(program), std::move(device), std::move(sizes),
          std::move(db_path)};
}

explore::SessionOptions session_options(const ExploreCommandOptions& o, const Sizes& sizes,
                                        int64_t budget, bool across_ranks) {
  explore::SessionOptions session;
  session.sizes = sizes;
  session.model = o.model;
  session.sample = o.sample;
  session.sample_seed = o.seed;
  session.layouts = o.layouts;
  session.warp_streams = o.warp_streams;
  // Reasons for the first budget's worth; a variant measured from further down gets its own
  // when it is reported (TreeSHAP of a thousand rows costs seconds on a small machine).
  session.explain_top = size_t(budget);
  explore::ExploreOptions& options = session.explore;
  options.strategy = explore::parse_strategy(o.strategy);
  options.budget = budget;
  options.batch = o.batch;
  if (o.acquisition == "ei")
    options.online.acquisition = model::OnlineAcquisition::expected_improvement;
  options.online.launch_spread = o.launch_spread;
  options.auto_budget = o.budget == "auto";
  options.seed = o.seed;
  if (across_ranks) // each batch at once, across the ranks
    options.parallel = std::numeric_limits<int64_t>::max();
  return session;
}

void print_header(std::FILE* report, const ExploreCommandOptions& o, const ExploreTarget& t,
                  const explore::Session& session, int64_t budget) {
  const model::Model& m = *session.model();
  const std::vector<explore::RankedVariant>& ranked = session.candidates();
  fmt::print(report, "program   {} ({}), sizes {}\n", t.program.name, o.file,
             exec::format_sizes(t.sizes));
  fmt::print(report, "device    {} ({})\n", t.device.device_name, t.device.key);
  const std::string route = explore::route_of(m, t.program);
  fmt::print(report, "model     {} ({}, trained for profile {}{})\n",
             session.found_model().path.string(),
             model::to_string(explore::model_for(m, t.program).kind()), m.profile,
             route.empty() ? "" : fmt::format("; its route for {} programs", route));
  for (const std::string& note : session.notes())
    fmt::print(report, "note      {}\n", note);
  const int64_t variants = session.ranking().variants;
  const bool all_kept = static_cast<int64_t>(ranked.size()) == variants;
  fmt::print(report, "space     {} variants ranked{}{}; strategy {}{}, budget {}\n", variants,
             session.rank_options().sample > 0
                 ? fmt::format(" (a uniform sample, seed {}; --sample 0 ranks all)", o.seed)
                 : "",
             all_kept ? "" : fmt::format(", the best {} kept", ranked.size()), o.strategy,
             o.strategy == "online"
                 ? fmt::format(" (batches of {}{}{})", o.batch,
                               o.acquisition == "ei" ? ", expected improvement first" : "",
                               o.launch_spread > 0
                                   ? fmt::format(", launch shapes spread within {:g}%",
                                                 o.launch_spread * 100)
                                   : "")
                 : "",
             o.strategy == "exhaustive" ? fmt::format("{}", ranked.size())
             : o.budget == "auto"       ? fmt::format("auto (at most {})", budget)
                                        : fmt::format("{}", budget));
}

/// What the runs say as a whole: where they were recorded, per rank under --mpi, how noisy they
/// were and how well the model and the online re-ranking predicted them.
void print_run_summary(std::FILE* report, const explore::ExploreResult& result,
                       const explore::Session& session,
                       const explore::RecordingWorkerMeasure& measure, const fs::path& db_path,
                       const std::vector<explore::mpi::RankReport>& rank_reports) {
  const int64_t stored_runs = measure.stored_count();
  if (stored_runs == 0)
    fmt::print(report, "\nrecorded  {} measurements in {}\n", result.attempts.size(),
               db_path.string());
  else
    fmt::print(
        report,
        "\nrecorded  {} measurements in {}; {} of the runs (marked stored) were measured before "
        "and taken from it (--remeasure runs them again)\n",
        int64_t(result.attempts.size()) - stored_runs, db_path.string(), stored_runs);
  print_ranks(report, rank_reports);
  const auto noisy_runs =
      std::count_if(result.attempts.begin(), result.attempts.end(), [](const explore::Attempt& a) {
        return a.report.timing && explore::noisy(*a.report.timing);
      });
  if (noisy_runs > 0)
    fmt::print(report,
               "warning   {} of {} runs spread widely (interquartile range above {:.0f}% of the "
               "median): the device was busy or the kernels are short; more --repeat "
               "steadies the medians\n",
               noisy_runs, result.attempts.size(), explore::kNoisySpread * 100);
  if (result.model_spearman)
    fmt::print(report,
               "model     Spearman {:.3f} between predicted and measured throughput on the {} "
               "variants run\n",
               *result.model_spearman, result.attempts.size());
  else
    fmt::print(report, "model     rank correlation not computed (it needs two successful runs with "
                       "different predictions)\n");
  const explore::ExploreOptions& options = session.options().explore;
  if (options.strategy == explore::Strategy::online)
    fmt::print(report, "online    {}; re-ranked scores when chosen vs measured: {}\n",
               explore::describe_online_stop(result, options),
               result.online_spearman ? fmt::format("Spearman {:.3f}", *result.online_spearman)
                                      : std::string("Spearman not computed (fewer than two "
                                                    "successful runs with different scores)"));
}

/// The answer, last: the winner, its time (per step for iterated programs), its bandwidth and
/// arithmetic rate (the bound one first), the untuned kernel it is compared with, and why the
/// model liked it.
void print_best(std::FILE* report, const ExploreCommandOptions& o, const ExploreTarget& t,
                const explore::Session& session, explore::RecordingWorkerMeasure& measure,
                const explore::Attempt& best, const explore::Baseline& baseline) {
  const explore::RankedVariant& r = session.candidates()[best.ranked_index];
  const exec::RunReport& rep = best.report;
  fmt::print(report, "\nbest      rank {} (predicted {:.3f}): {}\n", r.rank, r.predicted,
             explore::describe_parameters(r.variant));
  fmt::print(report, "launch    {}\n", codegen::describe(r.variant.launch));
  const perfdb::Measurement* best_stored = measure.stored(r);
  fmt::print(report,
             "time      {:.4f} ms median of {} runs (interquartile range {:.4f}-{:.4f} ms){}\n",
             rep.timing->median_ms,
             best_stored ? size_t(best_stored->repetitions) : rep.timing->samples_ms.size(),
             rep.timing->q1_ms, rep.timing->q3_ms,
             best_stored ? ", measured by an earlier run (stored)" : "");
  if (std::optional<ir::HostIteration> launches = ir::host_iteration(*r.program)) {
    // A fused launch (temporal blocking) computes several steps; a remainder launch the rest.
    const int64_t per_launch = space::steps_per_launch(r.variant);
    const int64_t remainder = space::remainder_steps(r.variant);
    fmt::print(
        report,
        "per step  {:.4f} ms ({} launch{} of {} step{} each{}, two buffers "
        "swapped)\n",
        rep.timing->median_ms / static_cast<double>(launches->count * per_launch + remainder),
        launches->count, launches->count == 1 ? "" : "es", per_launch, per_launch == 1 ? "" : "s",
        remainder > 0 ? fmt::format(", then one of {}", remainder) : "");
  }
  fmt::print(report, "{}", exec::rate_lines(rep));
  if (const std::string line = explore::baseline_line(baseline, rep); !line.empty())
    fmt::print(report, "{}", line);
  fmt::print(report, "why       {}\n",
             explore::describe_reasons(explore::reasons_of(r, session, measure, t.program)));
  if (!o.out.empty())
    fmt::print(report, "written   {}, best.cl and best.json\n",
               (fs::path(o.out) / explore::kWinnerFiles[0]).string());
}

/// `--print-kernel` (before the summary: the answer is what a terminal ends on) and `--out`.
void emit_winner(std::FILE* report, const ExploreCommandOptions& o, const ExploreTarget& t,
                 const explore::Session& session, const explore::Attempt& best) {
  const explore::RankedVariant& r = session.candidates()[best.ranked_index];
  const std::string lowered = ir::print(ir::Module{t.module.userfuns, {*r.program}});
  const std::string kernel = explore::winner_kernel(r, best);
  if (o.print_kernel) {
    fmt::print(report, "\n--- {}.lift ---\n{}\n", t.program.name, lowered);
    fmt::print(report, "--- kernel ---\n{}\n", kernel);
  }
  if (!o.out.empty())
    explore::write_winner(o.out, lowered, kernel, space::sidecar_json(r.variant, session.sizes()),
                          o.file);
}

/// The exploration itself: rank, then run the budget's variants with a table row per run.
void run_explore(const ExploreCommandOptions& o, std::optional<explore::mpi::RankFarm>& farm) {
  // With --format json|csv, stdout carries the data alone and the report goes to stderr.
  std::FILE* const report = o.format == "table" ? stdout : stderr;
  const int64_t budget = o.budget == "auto" ? kAutoBudgetCap : std::stoll(o.budget);
  std::vector<target::DeviceProfile> farm_devices;
  if (farm)
    farm_devices = farm->measurer().devices(); // rank 0's first, as it measures on it
  const ExploreTarget t = load_target(o, farm ? std::optional(farm_devices.front())
                                              : std::optional<target::DeviceProfile>());
  ActivityPrinter ranking_progress(o.quiet);
  explore::SessionOptions settings = session_options(o, t.sizes, budget, farm.has_value());
  settings.on_rank_progress = [&](std::string_view phase, int64_t n) {
    ranking_progress.update(phase, n);
  };
  explore::Session session(t.program, t.device, std::move(settings));
  // The measuring side before ranking: it interprets the reference on its own thread while the
  // space is ranked (at 8192² both take tens of seconds).
  perfdb::PerfDb db(t.db_path);
  const int64_t check_launches =
      o.full_check || farm ? 0 : explore::check_launches_for(t.program, t.sizes);
  const bool check_smaller =
      !o.full_check && !farm && explore::checks_at_smaller_sizes(t.program, t.sizes);
  explore::RecordingWorkerMeasure measure(
      db, t.device, t.module, t.program, t.sizes, session.profile_name(),
      {fs::read_symlink("/proc/self/exe").string(), o.device, o.warmup, o.repeat,
       std::chrono::milliseconds(o.timeout_ms), o.remeasure, check_launches, check_smaller});
  if (farm)
    measure.measure_through(farm->measurer(), farm_devices);
  session.rank();
  ranking_progress.finish();
  print_header(report, o, t, session, budget);
  if (check_launches > 0)
    fmt::print(report,
               "check     each variant on the full grid with one launch of its kernel and its "
               "remainder, against as many interpreted steps, or, where those take long to "
               "interpret (deep fused launches), with every step at smaller sizes; then timed "
               "over every step (interpreting all would take long; --full-check checks every "
               "step)\n");
  if (check_smaller)
    fmt::print(report,
               "check     each variant's kernel at smaller sizes, all halved together to about "
               "512³ as far as its tiles divide them, under the same launch rule, against the "
               "interpreter; then timed at the full sizes (interpreting those would take "
               "minutes; --full-check checks at them)\n");

  // The table: one row per run, in the order they ran.
  const std::vector<explore::RankedVariant>& ranked = session.candidates();
  const size_t planned_runs =
      o.strategy == "exhaustive" ? ranked.size() : static_cast<size_t>(budget);
  const size_t run_width = fmt::format("[{:>3}/{}]", planned_runs, planned_runs).size();
  fmt::print(report, "\n  {:<{}} {:>6} {:>9}  {:<32} {:<30} {}\n", "run", run_width, "rank",
             "predicted", "parameters", "launch", "median ± interquartile range");
  auto on_attempt = [&](const explore::Attempt& a, int64_t done, int64_t planned) {
    const explore::RankedVariant& r = ranked[a.ranked_index];
    const std::string run = fmt::format("[{:>3}/{}]", done, planned);
    fmt::print(report, "  {:<{}} {:>6} {:>9.3f}  {:<32} {:<30} {}\n", run, run_width, r.rank,
               r.predicted, explore::describe_parameters(r.variant),
               codegen::describe(r.variant.launch),
               explore::describe_time(a.report) + (measure.stored(r) ? " stored" : ""));
    std::fflush(report);
  };
  const explore::ExploreResult result = session.measure(
      [&](const std::vector<const explore::RankedVariant*>& variants) {
        return measure.measure_batch(variants);
      },
      on_attempt);
  std::vector<explore::mpi::RankReport> rank_reports;
  if (farm)
    rank_reports = farm->finish(); // the other ranks end while rank 0 reports
  // Under --mpi the ranks have ended: rank 0 does not start a worker of its own afterwards.
  const explore::Baseline baseline =
      o.no_baseline || farm ? explore::Baseline{} : explore::measure_baseline(session, measure);
  print_run_summary(report, result, session, measure, t.db_path, rank_reports);

  // The data, before a failure is reported: what was measured is never lost.
  const nlohmann::json rows = explore::attempt_rows(result, ranked, measure);
  if (o.format == "csv")
    fmt::print("{}", explore::explore_csv(rows, result.best));
  if (o.format == "json")
    fmt::print("{}\n", explore::explore_document(o.file, t.program, t.sizes, t.device, o.strategy,
                                                 t.db_path, session, result, rows, baseline)
                           .dump(2));
  if (!result.best) {
    fmt::print(report, "best      none of the {} variants run succeeded\n", result.attempts.size());
    const bool ill_conditioned =
        std::any_of(result.attempts.begin(), result.attempts.end(),
                    [](const auto& a) { return a.report.verification.reference_ill_conditioned; });
    if (ill_conditioned)
      fmt::print(
          report,
          "check     the reference is ill-conditioned at the check's sizes and steps: inputs "
          "moved by one ulp move it beyond the tolerance, so no kernel can be verified "
          "against it (its iteration amplifies rounding); explore fewer --steps\n");
    throw RunFailed();
  }
  emit_winner(report, o, t, session, result.attempts[*result.best]);
  print_best(report, o, t, session, measure, result.attempts[*result.best], baseline);
}

} // namespace

void add_explore_command(CLI::App& app) {
  auto o = std::make_shared<ExploreCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "explore", "Rank the variants with a model, then run and verify the most promising ones");
  cmd->add_option("file", o->file, "high-level .lift stencil")->required();
  cmd->add_option("--program", o->program, "definition (default: the last one)");
  cmd->add_option("--steps", o->steps,
                  "iterate the program T times (a step function: its result has the type of one "
                  "of its parameters; runs as T launches)");
  add_device_option(cmd, o->device);
  cmd->add_option("--model", o->model, "model file (default: the shipped one for the device kind)");
  cmd->add_option("--budget", o->budget,
                  fmt::format("variants to run (default 10), or auto: online, stop once the "
                              "expected gain of the best unmeasured variant is under {:.0f}% "
                              "(at most {} runs)",
                              model::kAutoStopGain * 100, kAutoBudgetCap))
      ->check(CLI::IsMember({"auto"}) | CLI::Range(1, 1000000));
  cmd->add_option("--batch", o->batch, "online: variants run between re-rankings (default 4)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--acquisition", o->acquisition,
                  "online: run the best posterior mean first (mean, the default) or the largest "
                  "expected improvement over the best run (ei: also tries where the runs say "
                  "little)")
      ->check(CLI::IsMember({"mean", "ei"}));
  add_launch_spread_option(cmd, o->launch_spread);
  cmd->add_option("--strategy", o->strategy,
                  "online (default: the model's ranking, re-ranked by the runs so far), model "
                  "(the static ranking), random, hillclimb or exhaustive")
      ->check(CLI::IsMember({"online", "model", "random", "hillclimb", "exhaustive"}));
  cmd->add_option("--size", o->sizes,
                  "sizes (default: 1024x1024 points on CPUs, 2048x2048 on GPUs; as many points on "
                  "a 1D or 3D grid, a power of two per dimension)");
  add_db_option(cmd, o->db, "to record every run in");
  cmd->add_option("--seed", o->seed, "seed of the random strategy and of --sample (default 1)");
  cmd->add_option("--sample", o->sample,
                  "rank a fixed-seed uniform sample of this many variants (default 0 = the whole "
                  "space)")
      ->check(CLI::Range(int64_t{0}, int64_t{100000000}));
  add_timing_options(cmd, o->warmup, o->repeat);
  cmd->add_option("--timeout-ms", o->timeout_ms, "per variant, build included (default 60000)");
  cmd->add_flag("--quiet", o->quiet, "no progress line while the space is ranked");
  cmd->add_flag("--layouts", o->layouts,
                "also try the grids of one type stored together: AoS and AoSoA(32) (MATOG's "
                "layouts; the variants say \"aos\"/\"aosoa\" in their parameters)");
  add_warp_streams_flag(cmd, o->warp_streams);
  add_remeasure_flag(cmd, o->remeasure,
                     "run every variant chosen, also those the database has measured on this "
                     "device (by default their latest measurement stands for the run)");
  cmd->add_option("--format", o->format,
                  "table (default), or json / csv: the runs as data on stdout, the report on "
                  "stderr")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--out", o->out,
                  "write the winner to DIR: best.lift (the lowered program), best.cl (its "
                  "kernel) and best.json (its launch, for `liftx run --launch`)");
  cmd->add_flag("--full-check", o->full_check,
                "check an iterated program's every step, and any program at the sizes it runs "
                "at, also where interpreting them takes long (by default each variant is then "
                "checked on one launch of its kernel and its remainder, or at smaller sizes)");
  cmd->add_flag("--no-baseline", o->no_baseline,
                "do not run the default lowering (the untuned kernel) that the summary compares "
                "the best with (not run under --mpi)");
  add_print_kernel_flag(
      cmd, o->print_kernel,
      "print the winner's lowered program and OpenCL kernel (before the summary)");
  add_mpi_options(cmd, o->mpi,
                  "under mpirun or srun: rank 0 ranks, re-ranks, reports and writes the "
                  "database; each batch's variants (--batch with online, the whole budget with "
                  "model, random and exhaustive) are measured across the ranks, each on its own "
                  "device (docs/mpi.md)",
                  false);
  cmd->callback([o] {
    LIFTX_USER_CHECK(o->budget != "auto" || o->strategy == "online",
                     "--budget auto goes with --strategy online, not {}", o->strategy);
    LIFTX_USER_CHECK(o->acquisition == "mean" || o->strategy == "online",
                     "--acquisition {} goes with --strategy online, not {}", o->acquisition,
                     o->strategy);
    LIFTX_USER_CHECK(o->launch_spread == model::OnlineOptions{}.launch_spread ||
                         o->strategy == "online",
                     "--launch-spread goes with --strategy online, not {}", o->strategy);
    std::optional<explore::mpi::RankFarm> farm;
    start_farm(*o, farm);
    if (farm && farm->rank() != 0) {
      farm->serve(); // rank 0 reports for the job
      return;
    }
    run_explore(*o, farm);
  });
}

} // namespace liftx::cli
