// `liftx collect FILE... --device D --size ... [--size ...] [--check-size S] [--all | --sample N
// --seed S] [--where K=V...] [--warp-streams] [--db PATH] [--resume] [--repeat R] [--profile P]`:
// measures the variants of high-level stencils into the performance database, in a worker child
// (`collect-worker`, hidden); with `--mpi`, across the ranks of an MPI job (explore/mpi/).
//
// `liftx db [--db PATH] [--device-key KEY] [--csv FILE] [--t4 FILE]`: what the database holds, and
// its exports.
#include "cli/app.hpp"
#include "cli/mpi_options.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "explore/collect.hpp"
#include "explore/collect_targets.hpp"
#include "explore/mpi/collect_mpi.hpp"
#include "perfdb/db.hpp"
#include "perfdb/inspect.hpp"
#include "perfdb/refresh.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

namespace liftx::cli {

namespace {

/// `collect`'s options: those of the collection's own type bound to it as they are, the others
/// as given, converted by collect_options.
struct CollectCommandOptions {
  explore::CollectOptions collect;
  std::vector<std::string> files;
  std::string program;
  std::vector<std::string> sizes;
  std::string check_size;
  std::string ranked_by;
  std::vector<std::string> where;
  std::string db;
  int timeout_ms = 60000;
  int64_t reference_timeout_ms = explore::kDefaultReferenceTimeout.count();
  bool quiet = false;
  int time_limit_s = 0;
  std::string format = "table";
  MpiCommandOptions mpi;
};

std::filesystem::path db_path(const std::string& given) {
  return given.empty() ? perfdb::PerfDb::default_path() : std::filesystem::path(given);
}

void add_worker_command(CLI::App& app) {
  struct WorkerOptions {
    std::string jobs;
    int64_t from = 0;
    std::string device = "cpu";
  };
  auto o = std::make_shared<WorkerOptions>();
  CLI::App* cmd = app.add_subcommand("collect-worker", "measure collection jobs (internal)");
  cmd->group("");
  cmd->add_option("--jobs", o->jobs, "jobs file (JSON lines)")->required();
  cmd->add_option("--from", o->from, "first job to run");
  cmd->add_option("--device", o->device, "device spec");
  cmd->callback([o] {
    std::ifstream jobs(o->jobs);
    LIFTX_USER_CHECK(jobs, "cannot read {}", o->jobs);
    explore::run_worker(jobs, o->from, o->device, std::cout);
  });

  struct BuilderOptions {
    std::string jobs;
    int shard = 0;
    int shards = 1;
    std::string device = "cpu";
  };
  auto b = std::make_shared<BuilderOptions>();
  CLI::App* builder =
      app.add_subcommand("collect-builder", "build collection kernels ahead (internal)");
  builder->group("");
  builder->add_option("--jobs", b->jobs, "jobs file (JSON lines)")->required();
  builder->add_option("--shard", b->shard, "this builder's share");
  builder->add_option("--shards", b->shards, "builders in all");
  builder->add_option("--device", b->device, "device spec");
  builder->callback([b] {
    std::ifstream jobs(b->jobs);
    LIFTX_USER_CHECK(jobs, "cannot read {}", b->jobs);
    explore::run_builder(jobs, b->shard, b->shards, b->device);
  });
}

void add_collect_options(CLI::App* cmd, CollectCommandOptions& o) {
  cmd->add_option("files", o.files, "high-level .lift files")->required();
  cmd->add_option("--program", o.program, "definition (default: the last one of each file)");
  add_device_option(cmd, o.collect.device);
  add_profile_option(cmd, o.collect.profile, "detect");
  cmd->add_option("--size", o.sizes, "one size set, e.g. M=64,N=128 (repeat for several size sets)")
      ->required();
  cmd->add_option("--check-size", o.check_size,
                  "verify each variant at this size set (as --size; no larger) under the same "
                  "launch rule, then time it at --size unchecked: for programs whose "
                  "interpretation at --size takes minutes (64 steps at 8192²); the measurement's "
                  "message says where it was checked");
  cmd->add_flag("--all", o.collect.all, "measure every variant");
  cmd->add_option("--sample", o.collect.sample,
                  "a fixed-seed sample of N variants per program and size "
                  "set (default 100)");
  cmd->add_option("--seed", o.collect.seed, "seed of the sample (default 1)");
  cmd->add_flag("--stratify", o.collect.stratified,
                "spread the sample evenly over the kinds of kernel (a strategy with its set of "
                "parameters, tied or free launch) instead of uniformly over the space, whose "
                "large kinds crowd out the small ones (as `liftx calibrate` samples)")
      ->excludes("--all");
  cmd->add_option("--ranked-by", o.ranked_by,
                  "instead of a random sample, the --sample N variants this model file ranks best "
                  "(among the --where ones): data at the top of the space, where a ranking "
                  "matters")
      ->check(CLI::ExistingFile)
      ->excludes("--all")
      ->excludes("--stratify");
  add_warp_streams_flag(cmd, o.collect.warp_streams);
  cmd->add_option("--where", o.where,
                  "measure only variants with KEY=V1|V2 (as `liftx variants --where`: strategy, "
                  "tied, local, global or a parameter such as tile_x, vector); the sample is "
                  "drawn among them; repeatable, all must hold");
  add_db_option(cmd, o.db, "to record the runs in");
  cmd->add_flag("--resume", o.collect.resume, "skip configurations already measured on the device");
  add_timing_options(cmd, o.collect.warmup, o.collect.repeat);
  cmd->add_option("--timeout-ms", o.timeout_ms,
                  "per variant, its build included, not its program's reference (default 60000)")
      ->check(CLI::Range(100, 3600000));
  cmd->add_option("--reference-timeout-ms", o.reference_timeout_ms,
                  fmt::format("per program and size set: its reference interpretation; past it "
                              "the program's variants are recorded as timeouts (default {})",
                              explore::kDefaultReferenceTimeout.count()))
      ->check(CLI::Range(100, 86400000));
  cmd->add_flag("--quiet", o.quiet, "no progress bar");
  cmd->add_flag("--plan-only", o.collect.plan_only,
                "only enumerate, store the plans and features; open no device (needs a named "
                "--profile)");
  cmd->add_option("--build-jobs", o.collect.build_jobs,
                  "processes compiling kernels and interpreting references ahead of the "
                  "measurements (default 0)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--time-limit", o.time_limit_s,
                  "stop measuring after this many seconds; --resume continues (default: none)")
      ->check(CLI::Range(0, 10000000));
  cmd->add_option("--format", o.format,
                  "table (default), or json / csv: this run's measurements as data on stdout "
                  "(the columns of `liftx db --csv`), the report on stderr")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  add_mpi_options(cmd, o.mpi,
                  "under mpirun or srun: rank 0 plans and writes the database, every rank measures "
                  "batches on its own device (docs/mpi.md)",
                  true);
  cmd->add_option("--stop-after", o.collect.stop_after,
                  "exit abruptly after K measurements (testing)")
      ->group("");
}

explore::CollectOptions collect_options(const CollectCommandOptions& o) {
  explore::CollectOptions options = o.collect;
  options.targets = explore::collect_targets(o.files, o.program, o.sizes, o.check_size);
  options.db = db_path(o.db);
  options.ranked_by = o.ranked_by;
  for (const std::string& w : o.where)
    options.where.push_back(space::parse_variant_filter(w));
  options.timeout = std::chrono::milliseconds(o.timeout_ms);
  options.reference_timeout = std::chrono::milliseconds(o.reference_timeout_ms);
  options.time_limit = std::chrono::seconds(o.time_limit_s);
  options.worker_executable = std::filesystem::read_symlink("/proc/self/exe").string();
  return options;
}

/// What a collection reports: its summary, and under MPI each rank's share.
struct CollectReport {
  explore::CollectSummary summary;
  std::vector<explore::mpi::RankReport> ranks;
};

/// Runs the collection here, or across the ranks of an MPI job; nullopt on the ranks other than
/// rank 0, which reports for the job.
std::optional<CollectReport> run_collection(const CollectCommandOptions& o,
                                            const explore::CollectOptions& options) {
  ProgressPrinter printer;
  std::function<void(const explore::CollectProgress&)> progress;
  if (!o.quiet)
    progress = [&printer](const explore::CollectProgress& p) { printer.update(p); };
  CollectReport report;
  if (o.mpi.mpi) {
    explore::mpi::MpiCollectResult result =
        explore::mpi::collect(options, mpi_options(o.mpi, "collect"), progress);
    if (!result.summary)
      return std::nullopt;
    report.summary = std::move(*result.summary);
    report.ranks = std::move(result.rank_reports);
  } else {
    report.summary = explore::collect(options, progress);
  }
  printer.finish();
  return report;
}

void print_collect_report(std::FILE* out, const explore::CollectOptions& options,
                          const CollectReport& report) {
  const explore::CollectSummary& s = report.summary;
  fmt::print(out, "database  {}\n", options.db.string());
  fmt::print(out, "device    {} (features: profile {})\n",
             s.device_key.empty() ? "none (planning only)" : s.device_key, s.profile);
  fmt::print(out, "plans     {} targets, {} enumerated now, the others read from the database\n",
             options.targets.size(), s.targets_planned);
  fmt::print(out, "variants  {} planned, {} measured, {} already measured (skipped)\n", s.variants,
             s.measured, s.skipped);
  if (s.left)
    fmt::print(out,
               "left      {} not measured: the time limit was reached (run again with "
               "--resume)\n",
               s.left);
  if (s.features_failed)
    fmt::print(out, "features  {} variants without features\n", s.features_failed);
  std::string counts;
  for (const auto& [status, n] : s.statuses)
    counts += fmt::format(" {} {}", status, n);
  fmt::print(out, "status   {}\n", counts.empty() ? " (nothing measured)" : counts);
  if (s.worker_restarts)
    fmt::print(out, "workers   restarted {} times after a crash or timeout\n", s.worker_restarts);
  print_ranks(out, report.ranks);
}

} // namespace

void add_collect_command(CLI::App& app) {
  auto o = std::make_shared<CollectCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "collect", "Measure the variants of high-level stencils into the performance database");
  add_collect_options(cmd, *o);
  cmd->callback([o] {
    const explore::CollectOptions options = collect_options(*o);
    const bool data = o->format != "table";
    const int64_t measured_before = data ? explore::newest_measurement_id(options.db) : 0;
    const std::optional<CollectReport> report = run_collection(*o, options);
    if (!report)
      return;
    // With --format json or csv, standard output carries the data; the report goes to stderr.
    print_collect_report(data ? stderr : stdout, options, *report);
    if (!data || report->summary.device_key.empty())
      return;
    if (o->format == "csv")
      explore::write_collected_csv(std::cout, options.db, report->summary, measured_before);
    else
      std::cout << explore::collected_json(options.db, report->summary, measured_before).dump(2)
                << '\n';
    std::cout.flush();
  });
  add_worker_command(app);
}

namespace {

struct DbOptions {
  std::string db;
  std::string device;
  std::string csv;
  std::string t4;
  std::string refresh_profile;
};

void refresh_db_features(const DbOptions& o, const std::filesystem::path& path) {
  // Bad input is refused before the database is opened for writing.
  const std::optional<target::DeviceProfile> measured_on =
      perfdb::check_refresh(path, o.refresh_profile, o.device);
  perfdb::PerfDb db(path);
  ActivityPrinter activity(false);
  const perfdb::RefreshReport report = perfdb::refresh_features(
      db, o.refresh_profile,
      [&](int64_t done, int64_t total) {
        activity.update(fmt::format("refreshing the features ({} in all):", total), done);
      },
      measured_on ? &*measured_on : nullptr);
  activity.finish();
  fmt::print("{}: features of profile {} refreshed for {} of {} configurations ({} with a "
             "changed value); {} removed\n",
             path.string(), o.refresh_profile, report.refreshed, report.configurations,
             report.changed, report.removed);
  if (report.removed > 0)
    fmt::print("  removed: this liftx refuses them (their measurements stay), e.g. {}\n",
               report.first_removal);
}

/// The --csv and --t4 exports of the device `key`, each to a file or ("-") to stdout.
void export_db(const DbOptions& o, const perfdb::PerfDb& db, const std::string& key) {
  perfdb::refuse_export_over_database(db, o.csv, "--csv");
  perfdb::refuse_export_over_database(db, o.t4, "--t4");
  // Written to a file, an export says what it wrote (on standard output it is the data).
  if (!o.csv.empty()) {
    const int64_t rows =
        perfdb::write_export(db, key, perfdb::ExportFormat::csv, o.csv, "--csv", std::cout);
    if (o.csv != "-")
      fmt::print("exported  {} measurements of {} to {}\n", rows, key, o.csv);
  }
  if (!o.t4.empty()) {
    perfdb::write_export(db, key, perfdb::ExportFormat::t4, o.t4, "--t4", std::cout);
    if (o.t4 != "-")
      fmt::print("exported  the T4 results of {} to {}\n", key, o.t4);
  }
}

void print_db_summary(const perfdb::PerfDb& db, const std::vector<std::string>& keys) {
  fmt::print("database  {}\n", db.path().string());
  for (const std::string& key : keys) {
    fmt::print("device    {}\n", key);
    // A configuration with features of several profiles has one measurement: counted once.
    std::map<std::string, std::map<std::string, int64_t>> counts;
    for (const char* profile : perfdb::kSummaryProfiles) {
      perfdb::ProfileSummary summary = perfdb::summarize_profile(db, key, profile);
      if (summary.configurations == 0)
        continue;
      fmt::print("  features profile {}: {} configurations\n", profile, summary.configurations);
      if (!summary.missing_columns.empty())
        fmt::print("    rows stored by an older liftx lack {}: `liftx db --refresh-features {} "
                   "[--device-key KEY]` recomputes them\n",
                   fmt::join(summary.missing_columns, ", "), profile);
      if (counts.empty())
        counts = std::move(summary.statuses);
    }
    for (const auto& [program, statuses] : counts) {
      std::string line;
      int64_t total = 0;
      for (const auto& [status, n] : statuses) {
        line += fmt::format(" {} {}", status, n);
        total += n;
      }
      fmt::print("  {:<14} {:5}:{}\n", program, total, line);
    }
  }
}

} // namespace

void add_db_command(CLI::App& app) {
  auto o = std::make_shared<DbOptions>();
  CLI::App* cmd =
      app.add_subcommand("db", "Summarise the performance database; export it as CSV or T4 JSON");
  add_db_option(cmd, o->db, "to read");
  add_device_key_option(cmd, o->device, "device key (default: the only one)");
  cmd->add_option("--csv", o->csv, "write one row per measurement to FILE (- for stdout)");
  cmd->add_option("--t4", o->t4, "write the T4 results JSON to FILE (- for stdout)");
  cmd->add_option("--refresh-features", o->refresh_profile,
                  "recompute the features stored for PROFILE (nvidia, amd, cpu) with this liftx "
                  "and write them back (the only option that writes to the database); with "
                  "--device-key, for that device's stored profile (data collected with --profile "
                  "detect) instead of the named one")
      ->excludes("--csv")
      ->excludes("--t4");
  cmd->callback([o] {
    std::filesystem::path path = db_path(o->db);
    LIFTX_USER_CHECK(std::filesystem::exists(path), "{}: no such database", path.string());
    if (!o->refresh_profile.empty()) {
      refresh_db_features(*o, path);
      return;
    }
    perfdb::PerfDb db(path, perfdb::PerfDb::Access::read_only);
    const bool exporting = !o->csv.empty() || !o->t4.empty();
    // An export is of one device; the summary of the one asked for, or of all.
    std::vector<std::string> keys = perfdb::devices_to_report(db, o->device, exporting);
    if (exporting)
      export_db(*o, db, keys.front());
    else
      print_db_summary(db, keys);
  });
}

} // namespace liftx::cli
