// `liftx collect FILE... --device D --size ... [--size ...] [--all | --sample N --seed S]
// [--where K=V...] [--db PATH] [--resume] [--repeat R] [--profile P]`: measures the variants of
// high-level stencils into the performance database, in a worker child (`collect-worker`,
// hidden); with `--mpi`, across the ranks of an MPI job (explore/mpi/).
// `liftx db [--db PATH] [--device-key KEY] [--csv FILE] [--t4 FILE]`: what the database holds, and
// its exports.
#include "cli/app.hpp"
#include "cli/mpi_options.hpp"
#include "cli/options.hpp"
#include "cli/program_options.hpp"
#include "cli/progress.hpp"
#include "explore/collect.hpp"
#include "explore/mpi/collect_mpi.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/dataset.hpp"
#include "perfdb/db.hpp"
#include "perfdb/refresh.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace liftx::cli {

namespace {

struct CollectCommandOptions {
  std::vector<std::string> files;
  std::string program;
  std::string device = "cpu";
  std::string profile = "detect";
  std::vector<std::string> sizes;
  bool all = false;
  int64_t sample = 100;
  uint64_t seed = 1;
  std::string ranked_by;
  std::vector<std::string> where;
  std::string db;
  bool resume = false;
  int repeat = exec::kDefaultRepeat;
  int warmup = exec::kDefaultWarmup;
  int timeout_ms = 60000;
  int64_t reference_timeout_ms = explore::kDefaultReferenceTimeout.count();
  int64_t stop_after = 0;
  bool quiet = false;
  bool plan_only = false;
  int build_jobs = 0;
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

} // namespace

void add_collect_command(CLI::App& app) {
  auto o = std::make_shared<CollectCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "collect", "Measure the variants of high-level stencils into the performance database");
  cmd->add_option("files", o->files, "high-level .lift files")->required();
  cmd->add_option("--program", o->program, "definition (default: the last one of each file)");
  add_device_option(cmd, o->device);
  add_profile_option(cmd, o->profile, "detect");
  cmd->add_option("--size", o->sizes,
                  "one size set, e.g. M=64,N=128 (repeat for several size sets)")
      ->required();
  cmd->add_flag("--all", o->all, "measure every variant");
  cmd->add_option("--sample", o->sample,
                  "a fixed-seed sample of N variants per program and size "
                  "set (default 100)");
  cmd->add_option("--seed", o->seed, "seed of the sample (default 1)");
  cmd->add_option("--ranked-by", o->ranked_by,
                  "instead of a random sample, the --sample N variants this model file ranks best "
                  "(among the --where ones): data at the top of the space, where a ranking "
                  "matters")
      ->check(CLI::ExistingFile)
      ->excludes("--all");
  cmd->add_option("--where", o->where,
                  "measure only variants with KEY=V1|V2 (as `liftx variants --where`: strategy, "
                  "tied, local, global or a parameter such as tile_x, vector); the sample is "
                  "drawn among them; repeatable, all must hold");
  add_db_option(cmd, o->db, "to record the runs in");
  cmd->add_flag("--resume", o->resume, "skip configurations already measured on the device");
  add_timing_options(cmd, o->warmup, o->repeat);
  cmd->add_option("--timeout-ms", o->timeout_ms,
                  "per variant, its build included, not its program's reference (default 60000)")
      ->check(CLI::Range(100, 3600000));
  cmd->add_option("--reference-timeout-ms", o->reference_timeout_ms,
                  fmt::format("per program and size set: its reference interpretation; past it "
                              "the program's variants are recorded as timeouts (default {})",
                              explore::kDefaultReferenceTimeout.count()))
      ->check(CLI::Range(100, 86400000));
  cmd->add_flag("--quiet", o->quiet, "no progress bar");
  cmd->add_flag("--plan-only", o->plan_only,
                "only enumerate, store the plans and features; open no device (needs a named "
                "--profile)");
  cmd->add_option("--build-jobs", o->build_jobs,
                  "processes compiling kernels and interpreting references ahead of the "
                  "measurements (default 0)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--time-limit", o->time_limit_s,
                  "stop measuring after this many seconds; --resume continues (default: none)")
      ->check(CLI::Range(0, 10000000));
  cmd->add_option("--format", o->format,
                  "table (default), or json / csv: this run's measurements as data on stdout "
                  "(the columns of `liftx db --csv`), the report on stderr")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  add_mpi_options(cmd, o->mpi,
                  "under mpirun or srun: rank 0 plans and writes the database, every rank measures "
                  "batches on its own device (docs/mpi.md)",
                  true);
  cmd->add_option("--stop-after", o->stop_after, "exit abruptly after K measurements (testing)")
      ->group("");
  cmd->callback([o] {
    explore::CollectOptions options;
    // Size set by size set, so that a run cut short has every stencil at the first sizes.
    std::vector<std::pair<std::string, ir::Module>> modules;
    for (const std::string& file : o->files)
      modules.emplace_back(file, parse::parse_file(file));
    for (const std::string& size_set : o->sizes) {
      for (const auto& [file, module] : modules) {
        const ir::Program& program = select_program(module, o->program, file);
        explore::CollectTarget target;
        target.file = file;
        target.program = program.name;
        target.sizes = bind_sizes(program, {size_set});
        options.targets.push_back(std::move(target));
      }
    }
    options.db = db_path(o->db);
    options.device = o->device;
    options.profile = o->profile;
    options.all = o->all;
    options.sample = o->sample;
    options.seed = o->seed;
    options.ranked_by = o->ranked_by;
    for (const std::string& w : o->where)
      options.where.push_back(space::parse_variant_filter(w));
    options.resume = o->resume;
    options.repeat = o->repeat;
    options.warmup = o->warmup;
    options.timeout = std::chrono::milliseconds(o->timeout_ms);
    options.reference_timeout = std::chrono::milliseconds(o->reference_timeout_ms);
    options.stop_after = o->stop_after;
    options.plan_only = o->plan_only;
    options.build_jobs = o->build_jobs;
    options.time_limit = std::chrono::seconds(o->time_limit_s);
    options.worker_executable = std::filesystem::read_symlink("/proc/self/exe").string();
    // What this run adds is what comes after the newest measurement the database holds now.
    int64_t measured_before = 0;
    if (o->format != "table" && std::filesystem::exists(options.db))
      measured_before =
          perfdb::PerfDb(options.db, perfdb::PerfDb::Access::read_only).last_measurement_id();
    ProgressPrinter printer;
    std::function<void(const explore::CollectProgress&)> progress;
    if (!o->quiet)
      progress = [&printer](const explore::CollectProgress& p) { printer.update(p); };
    explore::CollectSummary s;
    std::vector<explore::mpi::RankReport> ranks;
    if (o->mpi.mpi) {
      explore::mpi::MpiCollectResult result =
          explore::mpi::collect(options, mpi_options(o->mpi, "collect"), progress);
      if (!result.summary) // not rank 0: rank 0 reports for the job
        return;
      s = std::move(*result.summary);
      ranks = std::move(result.rank_reports);
    } else {
      s = explore::collect(options, progress);
    }
    printer.finish();
    std::FILE* report = o->format == "table" ? stdout : stderr;
    fmt::print(report, "database  {}\n", options.db.string());
    fmt::print(report, "device    {} (features: profile {})\n",
               s.device_key.empty() ? "none (planning only)" : s.device_key, s.profile);
    fmt::print(report,
               "plans     {} targets, {} enumerated now, the others read from the database\n",
               options.targets.size(), s.targets_planned);
    fmt::print(report, "variants  {} planned, {} measured, {} already measured (skipped)\n",
               s.variants, s.measured, s.skipped);
    if (s.left)
      fmt::print(report,
                 "left      {} not measured: the time limit was reached (run again with "
                 "--resume)\n",
                 s.left);
    if (s.features_failed)
      fmt::print(report, "features  {} variants without features\n", s.features_failed);
    std::string counts;
    for (const auto& [status, n] : s.statuses)
      counts += fmt::format(" {} {}", status, n);
    fmt::print(report, "status   {}\n", counts.empty() ? " (nothing measured)" : counts);
    if (s.worker_restarts)
      fmt::print(report, "workers   restarted {} times after a crash or timeout\n",
                 s.worker_restarts);
    print_ranks(report, ranks);
    if (o->format != "table" && !s.device_key.empty()) {
      const perfdb::PerfDb db(options.db, perfdb::PerfDb::Access::read_only);
      if (o->format == "csv") {
        db.export_csv(std::cout, s.device_key, measured_before);
      } else {
        nlohmann::json statuses = nlohmann::json::object();
        for (const auto& [status, n] : s.statuses)
          statuses[status] = n;
        const nlohmann::json document = {
            {"database", options.db.string()},
            {"device", s.device_key},
            {"profile", s.profile},
            {"planned", s.variants},
            {"measured", s.measured},
            {"skipped", s.skipped},
            {"left", s.left},
            {"statuses", statuses},
            {"measurements", db.measurements_json(s.device_key, measured_before)}};
        std::cout << document.dump(2) << '\n';
      }
      std::cout.flush();
    }
  });
  add_worker_command(app);
}

void add_db_command(CLI::App& app) {
  struct DbOptions {
    std::string db;
    std::string device;
    std::string csv;
    std::string t4;
    std::string refresh_profile;
  };
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
      // Bad input is refused before the database is opened for writing.
      std::optional<target::DeviceProfile> measured_on;
      {
        perfdb::PerfDb reader(path, perfdb::PerfDb::Access::read_only);
        if (o->device.empty())
          (void)runtime::named_profile(o->refresh_profile);
        else
          measured_on = reader.device_profile(perfdb::resolve_device(reader, o->device));
        LIFTX_USER_CHECK(reader.has_features(o->refresh_profile),
                         "{}: no features stored for profile {}", path.string(),
                         o->refresh_profile);
      }
      perfdb::PerfDb db(path);
      ActivityPrinter activity(false);
      const perfdb::RefreshReport report = perfdb::refresh_features(
          db, o->refresh_profile,
          [&](int64_t done, int64_t total) {
            activity.update(fmt::format("refreshing the features ({} in all):", total), done);
          },
          measured_on ? &*measured_on : nullptr);
      activity.finish();
      fmt::print("{}: features of profile {} refreshed for {} of {} configurations ({} with a "
                 "changed value); {} removed\n",
                 path.string(), o->refresh_profile, report.refreshed, report.configurations,
                 report.changed, report.removed);
      if (report.removed > 0)
        fmt::print("  removed: this liftx refuses them (their measurements stay), e.g. {}\n",
                   report.first_removal);
      return;
    }
    perfdb::PerfDb db(path, perfdb::PerfDb::Access::read_only);
    std::vector<std::string> keys = db.device_keys();
    // An export is of one device; the summary of the one asked for, or of all.
    if (!o->device.empty() || !o->csv.empty() || !o->t4.empty())
      keys = {perfdb::resolve_device(db, o->device)};
    for (const auto& [target, option] : {std::pair{o->csv, "--csv"}, {o->t4, "--t4"}})
      if (!target.empty() && target != "-")
        refuse_overwriting_input(target, {path}, option);
    int64_t exported_rows = 0;
    auto write = [&](const std::string& target, const char* option, auto&& exporter) {
      if (target == "-") {
        exporter(std::cout);
        std::cout.flush();
        LIFTX_USER_CHECK(std::cout, "{}: cannot write to the standard output", option);
        return;
      }
      std::ostringstream text;
      exporter(text);
      const std::string bytes = std::move(text).str();
      write_output_file(target, bytes, {path}, option);
      // Written to a file, the export says what it wrote (on standard output it is the data).
      if (std::string_view(option) == "--csv")
        fmt::print("exported  {} measurements of {} to {}\n", exported_rows, keys.front(), target);
      else
        fmt::print("exported  the T4 results of {} to {}\n", keys.front(), target);
    };
    if (!o->csv.empty())
      write(o->csv, "--csv",
            [&](std::ostream& out) { exported_rows = db.export_csv(out, keys.front()); });
    if (!o->t4.empty())
      write(o->t4, "--t4", [&](std::ostream& out) { db.export_t4(out, keys.front()); });
    if (!o->csv.empty() || !o->t4.empty())
      return;
    fmt::print("database  {}\n", path.string());
    for (const std::string& key : keys) {
      fmt::print("device    {}\n", key);
      std::map<std::string, std::map<std::string, int64_t>> counts; // program -> status -> n
      for (const char* profile : {"cpu", "nvidia", "amd", "gpu"}) {
        std::vector<perfdb::Row> rows = db.rows(key, profile);
        if (rows.empty())
          continue;
        fmt::print("  features profile {}: {} configurations\n", profile, rows.size());
        // Rows stored by an older liftx lack the columns added since: training leaves those
        // columns out until the features are recomputed.
        std::vector<std::string> missing;
        for (const features::Column& c : features::columns())
          if (std::any_of(rows.begin(), rows.end(),
                          [&](const perfdb::Row& r) { return !r.features.contains(c.name); }))
            missing.push_back(c.name);
        if (!missing.empty())
          fmt::print("    rows stored by an older liftx lack {}: `liftx db --refresh-features {} "
                     "[--device-key KEY]` recomputes them\n",
                     fmt::join(missing, ", "), profile);
        if (!counts.empty())
          continue;
        for (const perfdb::Row& r : rows)
          ++counts[r.program][std::string(runtime::to_string(r.measurement->status))];
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
  });
}

} // namespace liftx::cli
