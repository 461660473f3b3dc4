#include "explore/collect.hpp"
#include "explore/rank.hpp"
#include "perfdb/lock.hpp"
#include "perfdb/record.hpp"

#include "codegen/kernel.hpp"
#include "exec/run.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/cache_dir.hpp"
#include "runtime/parent_watch.hpp"
#include "space/space.hpp"
#include "support/error.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <poll.h>
#include <set>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace liftx::explore {

namespace {

using Clock = std::chrono::steady_clock;

/// The line a worker writes once its device is open, before any result.
constexpr const char* kWorkerReady = "{\"ready\":true}";
/// How long a worker may take to open the device (a GPU context can take seconds; after a killed
/// kernel the driver may need more).
constexpr std::chrono::milliseconds kDeviceOpenAllowance{60000};
/// The worker draws a target's inputs and interprets its reference before the target's first
/// job, between a "preparing" and a "prepared" line: that is the target's cost, not the job's
/// (at 512^3 the interpreter takes minutes where a kernel takes a millisecond), so the job's
/// timeout starts after it, and CollectOptions::reference_timeout bounds it.
/// The target a job belongs to: its reference program, sizes and seed (defined below).
std::string target_key(const nlohmann::json& job);

/// How often a wait for a reference looks at the collection's time limit.
constexpr std::chrono::milliseconds kTimeLimitPoll{1000};

std::string format_sizes(const Sizes& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes)
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
  return text;
}

// ---- the worker child ---------------------------------------------------------------------------

/// A running worker: its process (group) and the read end of its stdout.
class WorkerProcess {
public:
  WorkerProcess(const std::vector<std::string>& argv, const std::filesystem::path& stderr_path) {
    int fds[2];
    LIFTX_USER_CHECK(::pipe2(fds, O_CLOEXEC) == 0, "cannot create a pipe: {}",
                     std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    runtime::ParentWatchedSpawn watched; // the worker dies with this process
    watched.add_to(actions);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int rc = posix_spawn(&pid_, args[0], &actions, &attributes, args.data(), watched.environment());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      throw UserError(fmt::format("cannot start the worker {}: {}", argv[0], std::strerror(rc)));
    }
    fd_ = fds[0];
  }
  ~WorkerProcess() { stop(); }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  enum class Read { line, timeout, eof };
  /// The next line of the worker's stdout, waiting at most until `deadline`.
  Read read_line(std::string& line, Clock::time_point deadline) {
    while (true) {
      if (size_t newline = buffer_.find('\n'); newline != std::string::npos) {
        line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return Read::line;
      }
      if (eof_)
        return Read::eof;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0)
        return Read::timeout;
      pollfd p{fd_, POLLIN, 0};
      int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      LIFTX_INTERNAL_CHECK(!(ready < 0 && errno != EINTR), "poll: {}", std::strerror(errno));
      if (ready <= 0)
        continue;
      char chunk[65536];
      ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno != EINTR && errno != EAGAIN)
        eof_ = true;
      else if (n == 0)
        eof_ = true;
      else if (n > 0)
        buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  /// Kills the process group (if still running) and reaps the worker; its wait status.
  int stop() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      status_ = status;
      pid_ = -1;
    }
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    return status_;
  }

  /// Waits for a worker that closed its output to exit (it crashed or gave up), then reaps it.
  int wait_exit(std::chrono::milliseconds grace) {
    auto deadline = Clock::now() + grace;
    while (pid_ > 0 && Clock::now() < deadline) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        status_ = status;
        ::kill(-pid_, SIGKILL); // children it may have left
        pid_ = -1;
        break;
      }
      ::usleep(10000);
    }
    return stop();
  }

private:
  pid_t pid_ = -1;
  int fd_ = -1;
  int status_ = 0;
  std::string buffer_;
  bool eof_ = false;
};

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("worker killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  if (WIFEXITED(status))
    return fmt::format("worker exited with code {}", WEXITSTATUS(status));
  return "worker ended";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

/// The `options.sample` variants `options.ranked_by` ranks best (among the --where ones), best
/// first, each with its lowered program.
std::vector<space::Variant> top_ranked(const ir::Program& program, const Sizes& sizes,
                                       const target::DeviceProfile& feature_profile,
                                       const std::string& profile_name,
                                       const CollectOptions& options) {
  const model::Model model = model::Model::load(options.ranked_by);
  LIFTX_USER_CHECK(model.profile == profile_name,
                   "collect: the model {} is for profile {}, the collection's features "
                   "are for profile {}",
                   options.ranked_by.string(), model.profile, profile_name);
  RankOptions ranking;
  ranking.sizes = sizes;
  ranking.profile = profile_name;
  ranking.device = feature_profile;
  ranking.keep = static_cast<size_t>(std::max<int64_t>(options.sample, 0));
  ranking.explain_top = 0;
  if (!options.where.empty())
    ranking.keep_if = [&](const std::string& strategy,
                          const std::map<std::string, int64_t>& parameters,
                          const codegen::Launch& launch) {
      return space::matches(strategy, parameters, launch, options.where);
    };
  RankResult ranked = rank(program, model, ranking);
  std::vector<space::Variant> variants;
  for (RankedVariant& r : ranked.ranked) {
    r.variant.program = *r.program;
    variants.push_back(std::move(r.variant));
  }
  return variants;
}

/// Streams a target's variant space (all of it or the sample), stores every variant,
/// configuration and its features, and returns the configurations in stream order.
std::vector<perfdb::PlannedConfiguration>
plan_target(perfdb::PerfDb& db, const ir::Program& program, const ir::Module& module,
            int64_t program_id, const Sizes& sizes, const DeviceLimits& limits,
            const target::DeviceProfile& feature_profile, const std::string& profile_name,
            const CollectOptions& options, int64_t& features_failed) {
  space::SpaceOptions space_options;
  space_options.sizes = sizes;
  space_options.device = limits;
  space::VariantStream stream(program, space_options);
  std::vector<space::Variant> variants;
  if (options.all) {
    space::Variant v;
    while (stream.next(v))
      if (space::matches(v, options.where))
        variants.push_back(std::move(v));
  } else if (!options.ranked_by.empty()) {
    variants = top_ranked(program, sizes, feature_profile, profile_name, options);
  } else {
    variants = space::sample(stream, options.sample, options.seed, [&](const space::Variant& v) {
      return space::matches(v, options.where);
    });
  }
  LIFTX_USER_CHECK(!(variants.empty() && !options.where.empty()),
                   "collect: no variant of {} at {} has --where {}", program.name,
                   nlohmann::json(sizes).dump(), space::describe(options.where));
  const nlohmann::json sizes_json(sizes);
  std::vector<perfdb::PlannedConfiguration> planned;
  for (const space::Variant& v : variants) {
    perfdb::PlannedConfiguration p;
    p.printed = ir::print(ir::Module{module.userfuns, {v.program}});
    p.strategy = v.strategy;
    p.variant_index = v.index;
    p.launch = launch_json(v.launch);
    std::optional<nlohmann::json> features;
    try {
      features = features::to_stored_json(features::compute(
          v.program, sizes, perfdb::run_options_for(p.launch).request(), feature_profile));
    } catch (const UserError&) {
      ++features_failed; // measured all the same; rows() skips it
    }
    p.configuration_id = perfdb::record_configuration(
        db, program_id, sizes_json, {p.printed, v.strategy, nlohmann::json(v.parameters), p.launch},
        profile_name, features);
    planned.push_back(std::move(p));
  }
  return planned;
}

} // namespace

std::string profile_name_for(const target::DeviceProfile& device) {
  if (device.type == target::DeviceType::cpu)
    return "cpu";
  if (contains_nocase(device.vendor, "nvidia") || contains_nocase(device.platform_name, "nvidia"))
    return "nvidia";
  if (contains_nocase(device.vendor, "amd") || contains_nocase(device.vendor, "advanced micro") ||
      contains_nocase(device.platform_name, "amd"))
    return "amd";
  return std::string(target::to_string(device.type));
}

LocalMeasurer::LocalMeasurer(const CollectOptions& options)
    : executable_(options.worker_executable), device_(options.device), timeout_(options.timeout),
      reference_timeout_(options.reference_timeout), build_jobs_(options.build_jobs) {
  LIFTX_INTERNAL_CHECK(!executable_.empty(), "collect: no worker executable");
}

std::vector<target::DeviceProfile> LocalMeasurer::devices() {
  return {runtime::select_device(device_).profile};
}

void LocalMeasurer::measure(const std::vector<CollectJob>& jobs, const Record& record,
                            const std::function<bool()>& out_of_time) {
  if (jobs.empty())
    return;
  const perfdb::ScratchDir scratch("liftx-collect-");
  const std::filesystem::path jobs_path = scratch.path() / "jobs.jsonl";
  {
    std::ofstream out(jobs_path);
    for (const CollectJob& job : jobs)
      out << job.json.dump() << '\n';
    LIFTX_USER_CHECK(out, "cannot write {}", jobs_path.string());
  }
  const std::filesystem::path stderr_path = scratch.path() / "worker.stderr";

  // Builders run ahead of the worker; they are killed when measuring ends (scope exit).
  std::vector<std::unique_ptr<WorkerProcess>> builders;
  for (int b = 0; b < build_jobs_; ++b)
    builders.push_back(std::make_unique<WorkerProcess>(
        std::vector<std::string>{executable_, "collect-builder", "--jobs", jobs_path.string(),
                                 "--shard", std::to_string(b), "--shards",
                                 std::to_string(build_jobs_), "--device", device_},
        scratch.path() / fmt::format("builder-{}.stderr", b)));

  size_t next = 0;
  bool first_worker = true;
  while (next < jobs.size() && !out_of_time()) {
    if (!first_worker)
      ++restarts_;
    const size_t first_job = next;
    WorkerProcess worker({executable_, "collect-worker", "--jobs", jobs_path.string(), "--from",
                          std::to_string(next), "--device", device_},
                         stderr_path);
    // Opening the device is the worker's, not a job's: the first job's deadline starts when the
    // worker says it is ready, and opening has its own bound.
    const auto open_deadline = Clock::now() + kDeviceOpenAllowance;
    bool worker_alive = true;
    while (true) {
      std::string line;
      const WorkerProcess::Read r = worker.read_line(line, open_deadline);
      if (r == WorkerProcess::Read::line) {
        if (line == kWorkerReady)
          break;
        continue; // a driver writing to stdout
      }
      const int status = r == WorkerProcess::Read::timeout
                             ? worker.stop()
                             : worker.wait_exit(std::chrono::milliseconds(5000));
      const std::string err = perfdb::clip_message(read_text(stderr_path));
      LIFTX_USER_CHECK(r != WorkerProcess::Read::timeout,
                       "the collect worker did not open the device '{}' within {} s; "
                       "what is measured is stored (--resume continues){}",
                       device_, kDeviceOpenAllowance.count() / 1000, err.empty() ? "" : ": " + err);
      throw UserError(fmt::format("the collect worker failed before measuring ({}){}",
                                  describe_wait_status(status), err.empty() ? "" : ": " + err));
    }
    // The job being waited for, its deadline, and whether the worker is preparing its target.
    size_t timed_job = jobs.size();
    Clock::time_point deadline;
    bool preparing = false;
    while (worker_alive && next < jobs.size() && !out_of_time()) {
      const CollectJob& job = jobs[next];
      if (timed_job != next) {
        timed_job = next;
        deadline = Clock::now() + timeout_;
        preparing = false;
      }
      std::string line;
      // While a reference is interpreted, the time limit is looked at every second: a run cut
      // there stores nothing for the job, which --resume measures.
      WorkerProcess::Read r = worker.read_line(
          line, preparing ? std::min(deadline, Clock::now() + kTimeLimitPoll) : deadline);
      if (r == WorkerProcess::Read::timeout && preparing && Clock::now() < deadline)
        continue;
      if (r == WorkerProcess::Read::line) {
        nlohmann::json result;
        try {
          result = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception&) {
          continue; // not a result line (a driver writing to stdout)
        }
        if (!result.is_object())
          continue;
        if (result.value("preparing", int64_t{-1}) == job.configuration_id) {
          preparing = true;
          deadline = Clock::now() + reference_timeout_;
          continue;
        }
        if (result.value("prepared", int64_t{-1}) == job.configuration_id) {
          preparing = false;
          deadline = Clock::now() + timeout_;
          continue;
        }
        if (result.value("id", int64_t{-1}) != job.configuration_id)
          continue;
        const perfdb::Measurement m = perfdb::measurement_from(result);
        record(next++, 0, m);
        // A kernel that failed at run time can leave the context unusable (the NVIDIA driver then
        // fails every later build and launch with CL_ERROR(-9999)): measure on in a new worker.
        if (m.status == runtime::Status::run_error) {
          worker.stop();
          worker_alive = false;
        }
      } else if (r == WorkerProcess::Read::timeout) {
        worker.stop();
        perfdb::Measurement m;
        m.status = runtime::Status::timeout;
        if (preparing) {
          // Every job of the target needs that reference: the next worker would only prepare it
          // again, so they all are recorded with the reason.
          m.message = fmt::format("the reference of its target took over {} ms "
                                  "(--reference-timeout-ms); worker killed",
                                  reference_timeout_.count());
          const std::string target = target_key(job.json);
          while (next < jobs.size() && target_key(jobs[next].json) == target)
            record(next++, 0, m);
        } else {
          m.message = fmt::format("no result within {} ms; worker killed", timeout_.count());
          record(next++, 0, m);
        }
        worker_alive = false;
      } else {
        int status = worker.wait_exit(std::chrono::milliseconds(5000));
        std::string err = perfdb::clip_message(read_text(stderr_path));
        // A worker that cannot read its jobs would fail for every job.
        LIFTX_USER_CHECK(!(next == first_job && WIFEXITED(status) && WEXITSTATUS(status) == 2),
                         "the collect worker failed: {}", err);
        perfdb::Measurement m;
        m.status = runtime::Status::run_error;
        m.message = describe_wait_status(status) + (err.empty() ? "" : ": " + err);
        record(next++, 0, m);
        worker_alive = false;
      }
    }
    first_worker = false;
  }
}

CollectSummary collect(const CollectOptions& options,
                       const std::function<void(const CollectProgress&)>& progress,
                       Measurer* measurer) {
  LIFTX_USER_CHECK(!options.targets.empty(), "collect: no programs to collect");
  LIFTX_USER_CHECK(!(!options.all && options.sample <= 0),
                   "collect: --sample must be positive (or use --all)");
  std::optional<LocalMeasurer> local;
  if (!measurer && !options.plan_only)
    measurer = &local.emplace(options);
  const Clock::time_point start = Clock::now();
  // Every target parsed once, up front. A lowered program has no variant space: collecting it
  // would measure nothing. Checked for every target before the database is opened, so that
  // nothing is written.
  std::vector<ir::Module> modules;
  modules.reserve(options.targets.size()); // `programs` points into them: no reallocation
  std::vector<const ir::Program*> programs;
  for (const CollectTarget& target : options.targets) {
    const ir::Module& module = modules.emplace_back(parse::parse_file(target.file));
    const ir::Program* program =
        target.program.empty() ? &module.main() : module.find(target.program);
    LIFTX_USER_CHECK(program, "{}: no definition named '{}'", target.file, target.program);
    programs.push_back(program);
    refuse_lowered(*program, target.file, "collect");
  }
  // One collection per database at a time (before the device is opened: refused at once).
  const perfdb::CollectionLock lock(options.db);

  CollectSummary summary;
  CollectProgress state;
  std::optional<Clock::time_point> measuring_start;
  auto report = [&] {
    state.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    if (measuring_start)
      state.measuring_s = std::chrono::duration<double>(Clock::now() - *measuring_start).count();
    if (progress)
      progress(state);
  };

  // The devices measured on (the first one is what `detect` means), and the profile that limits
  // the space and computes features.
  target::DeviceProfile feature_profile;
  DeviceLimits limits;
  std::vector<target::DeviceProfile> devices;
  if (!options.plan_only)
    devices = measurer->devices();
  if (options.profile == "detect") {
    LIFTX_USER_CHECK(!devices.empty(),
                     "collect: planning without a device needs a named --profile (cpu, nvidia "
                     "or amd), not detect");
    feature_profile = devices.front();
    limits = devices.front().limits();
    summary.profile = profile_name_for(devices.front());
  } else {
    feature_profile = runtime::named_profile(options.profile);
    limits = feature_profile.limits();
    summary.profile = options.profile;
  }

  perfdb::PerfDb db(options.db);
  std::vector<int64_t> device_ids;
  for (const target::DeviceProfile& device : devices)
    device_ids.push_back(db.device(device));
  if (!devices.empty())
    summary.device_key = devices.front().key;
  auto measured_before = [&](int64_t configuration_id) {
    for (int64_t device_id : device_ids)
      if (db.has_measurement(configuration_id, device_id))
        return true;
    return false;
  };
  // The plan's name: another selection is another plan (a retrained model ranks anew).
  std::string selection = options.all ? std::string("all")
                          : !options.ranked_by.empty()
                              ? fmt::format("top {} ranked by {}", options.sample,
                                            runtime::content_hash(read_text(options.ranked_by)))
                              : fmt::format("sample {} seed {}", options.sample, options.seed);
  if (!options.where.empty())
    selection += " where " + space::describe(options.where);

  // Phase 1: every target's plan, enumerated (with features) unless the database has it.
  state.phase = "enumerating";
  std::vector<CollectJob> jobs;
  for (size_t t = 0; t < options.targets.size(); ++t) {
    const CollectTarget& target = options.targets[t];
    const ir::Module& module = modules[t];
    const ir::Program* program = programs[t];
    const std::string source = ir::print(ir::Module{module.userfuns, {*program}});
    const int64_t program_id = db.program(program->name, source);
    const nlohmann::json sizes_json(target.sizes);
    std::optional<std::vector<perfdb::PlannedConfiguration>> planned =
        db.plan(program_id, sizes_json, summary.profile, selection);
    if (!planned) { // said only when it happens: a stored plan is read in an instant
      state.current = fmt::format("{} {}", program->name, format_sizes(target.sizes));
      report();
      ++summary.targets_planned;
      planned = plan_target(db, *program, module, program_id, target.sizes, limits, feature_profile,
                            summary.profile, options, summary.features_failed);
      std::vector<std::pair<int64_t, int64_t>> ids;
      for (const perfdb::PlannedConfiguration& p : *planned)
        ids.emplace_back(p.configuration_id, p.variant_index);
      db.put_plan(program_id, sizes_json, summary.profile, selection, ids);
    }
    summary.variants += static_cast<int64_t>(planned->size());
    if (options.plan_only)
      continue;
    for (perfdb::PlannedConfiguration& p : *planned) {
      if (options.resume && measured_before(p.configuration_id)) {
        ++summary.skipped;
        continue;
      }
      CollectJob job;
      job.configuration_id = p.configuration_id;
      job.label = fmt::format("{} {} #{} {}", program->name, format_sizes(target.sizes),
                              p.variant_index, p.strategy);
      job.json = {{"id", p.configuration_id},
                  {"module", std::move(p.printed)},
                  {"reference_file", std::filesystem::absolute(target.file).string()},
                  {"reference_program", program->name},
                  {"sizes", sizes_json},
                  {"launch", std::move(p.launch)},
                  {"repeat", options.repeat},
                  {"warmup", options.warmup},
                  {"seed", options.input_seed}};
      jobs.push_back(std::move(job));
    }
  }
  summary.skipped = state.skipped = summary.skipped;
  state.total = static_cast<int64_t>(jobs.size());

  // Phase 2: measure. Each job is recorded once, as its result arrives (committed at once), so
  // that a run cut off anywhere loses nothing measured and a resumed one measures nothing twice.
  if (jobs.empty()) // nothing to measure: no bar (the summary says what was skipped)
    return summary;
  state.phase = "measuring";
  measuring_start = Clock::now();
  report();
  auto out_of_time = [&] {
    return options.time_limit.count() > 0 && Clock::now() - start >= options.time_limit;
  };
  std::vector<bool> recorded(jobs.size(), false);
  int64_t stored = 0;
  auto record = [&](size_t job_index, size_t device, const perfdb::Measurement& m) {
    LIFTX_INTERNAL_CHECK(job_index < jobs.size() && device < device_ids.size(),
                         "collect: a result for job {} on device {} of {} jobs and "
                         "{} devices",
                         job_index, device, jobs.size(), device_ids.size());
    if (recorded[job_index])
      return; // a second answer (a rank given up for lost came back): the first one stands
    recorded[job_index] = true;
    const CollectJob& job = jobs[job_index];
    db.put_measurement(job.configuration_id, device_ids[device], m);
    ++summary.measured;
    ++stored;
    std::string status(runtime::to_string(m.status));
    ++summary.statuses[status];
    ++state.statuses[status];
    ++state.done;
    state.current = job.label;
    report();
    if (options.stop_after > 0 && stored >= options.stop_after)
      std::_Exit(75); // simulates an interrupted run: nothing flushed beyond what is committed
  };
  measurer->measure(jobs, record, out_of_time);
  summary.worker_restarts = measurer->worker_restarts();
  summary.left = static_cast<int64_t>(jobs.size()) - stored;
  return summary;
}

namespace {

/// The high-level stencils jobs are checked against, parsed once per file (`reference_file`) or
/// text (`reference_module`: explore's jobs carry the program itself, e.g. iterated by --steps).
class References {
public:
  const ir::Program& of(const nlohmann::json& job) {
    const bool inline_text = job.contains("reference_module");
    const std::string key = inline_text ? "\n" + job.at("reference_module").get<std::string>()
                                        : job.at("reference_file").get<std::string>();
    auto it = modules_.find(key);
    if (it == modules_.end())
      it = modules_
               .emplace(key, inline_text ? parse::parse_module(key.substr(1), "<reference>")
                                         : parse::parse_file(key))
               .first;
    const ir::Program* reference = it->second.find(job.at("reference_program").get<std::string>());
    LIFTX_USER_CHECK(reference, "the reference program is missing");
    return *reference;
  }

private:
  std::map<std::string, ir::Module> modules_;
};

/// What identifies a job's inputs and expected result: the stencil, the sizes and the seed.
std::string target_key(const nlohmann::json& job) {
  return fmt::format("{}\n{}\n{}\n{}",
                     job.contains("reference_module")
                         ? job.at("reference_module").get<std::string>()
                         : job.at("reference_file").get<std::string>(),
                     job.at("reference_program").get<std::string>(), job.at("sizes").dump(),
                     job.value("seed", uint64_t{1}));
}

/// The inputs and the interpreter's result of the current target, kept while consecutive jobs
/// share it (a collection's jobs come target by target): drawing and checking against them once
/// per target, not per variant, is what makes large inputs affordable.
struct TargetData {
  std::string key;
  std::vector<interp::HostArray> inputs;
  interp::HostArray expected;
  exec::UploadedInputs uploaded;
};

} // namespace

void run_worker(std::istream& jobs, int64_t from, const std::string& device_spec,
                std::ostream& out) {
  // Testing hooks: the job numbers (comma-separated) at which the worker crashes, hangs (as a
  // kernel that never ends) or whose kernel fails, as a broken driver would; a slow device; a
  // slow reference (milliseconds added to each target's preparation).
  auto job_numbers = [](const char* variable) {
    std::set<int64_t> numbers;
    const char* value = std::getenv(variable);
    for (const char* p = value; p && *p;) {
      char* end = nullptr;
      numbers.insert(std::strtoll(p, &end, 10));
      p = *end == ',' ? end + 1 : "";
    }
    return numbers;
  };
  const std::set<int64_t> crash_at = job_numbers("LIFTX_TEST_WORKER_CRASH_AT");
  const std::set<int64_t> hang_at = job_numbers("LIFTX_TEST_WORKER_HANG_AT");
  const std::set<int64_t> kernel_fails_at = job_numbers("LIFTX_TEST_WORKER_KERNEL_FAILS_AT");
  const std::set<int64_t> open_delay_ms = job_numbers("LIFTX_TEST_WORKER_OPEN_DELAY_MS");
  const std::set<int64_t> slow_reference_ms = job_numbers("LIFTX_TEST_WORKER_SLOW_REFERENCE_MS");

  runtime::Device device = runtime::select_device(device_spec);
  if (!open_delay_ms.empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(*open_delay_ms.begin()));
  out << kWorkerReady << '\n';
  out.flush();
  References references;
  TargetData target;
  std::string line;
  for (int64_t index = 0; std::getline(jobs, line); ++index) {
    if (index < from || line.empty())
      continue;
    if (crash_at.count(index)) {
      std::signal(SIGSEGV, SIG_DFL); // the OpenCL runtime may have its own handler
      std::raise(SIGSEGV);
    }
    while (hang_at.count(index))
      ::pause();
    nlohmann::json job = nlohmann::json::parse(line);
    nlohmann::json result = {{"id", job.at("id")}};
    if (kernel_fails_at.count(index)) {
      result["status"] = "run_error";
      result["message"] = "the kernel failed (test hook)";
      out << result.dump() << '\n';
      out.flush();
      continue;
    }
    try {
      const ir::Program& reference = references.of(job);
      ir::Module module = parse::parse_module(job.at("module").get<std::string>(), "<variant>");
      Sizes sizes = job.at("sizes").get<Sizes>();
      exec::RunOptions options = perfdb::run_options_for(job.at("launch"));
      options.repeat = job.value("repeat", 10);
      options.warmup = job.value("warmup", 3);
      options.seed = job.value("seed", uint64_t{1});
      options.roofline = false;
      options.reference = &reference;
      if (const std::string key = target_key(job); key != target.key) {
        out << nlohmann::json{{"preparing", job.at("id")}}.dump() << '\n';
        out.flush();
        if (!slow_reference_ms.empty())
          std::this_thread::sleep_for(std::chrono::milliseconds(*slow_reference_ms.begin()));
        interp::check_sizes(reference, sizes);
        target = TargetData{};
        target.inputs = exec::draw_inputs(reference, sizes, options.seed);
        target.expected = exec::reference_result(reference, options, target.inputs, sizes);
        target.key = key;
        out << nlohmann::json{{"prepared", job.at("id")}}.dump() << '\n';
        out.flush();
      }
      options.inputs = &target.inputs;
      options.expected = &target.expected;
      options.uploaded = &target.uploaded;
      exec::RunReport report = exec::run_program(device, module.main(), sizes, options);
      result.update(to_json(perfdb::measurement_of(report)));
    } catch (const UserError& e) {
      // A launch the device cannot take, or a program the generator refuses.
      result["status"] = "out_of_resources";
      result["message"] = perfdb::clip_message(e.what());
    } catch (const std::exception& e) {
      result["status"] = "run_error";
      result["message"] = perfdb::clip_message(e.what());
    }
    out << result.dump() << '\n';
    out.flush();
  }
}

void run_builder(std::istream& jobs, int shard, int shards, const std::string& device_spec) {
  LIFTX_USER_CHECK(shards >= 1 && shard >= 0 && shard < shards,
                   "collect-builder: shard {} of {} does not exist", shard, shards);
  std::vector<nlohmann::json> all;
  for (std::string line; std::getline(jobs, line);)
    if (!line.empty())
      all.push_back(nlohmann::json::parse(line));
  runtime::Device device = runtime::select_device(device_spec);
  References references;

  // References first (the worker needs them before any kernel of their target), one target per
  // builder in turn; then the kernels, job by job in the worker's order. Not the first target's:
  // the worker interprets it at once itself, and a builder doing the same would only halve the
  // cores both have.
  std::vector<size_t> first_of_target;
  std::string last_key;
  for (size_t i = 0; i < all.size(); ++i)
    if (std::string key = target_key(all[i]); key != last_key) {
      first_of_target.push_back(i);
      last_key = key;
    }
  for (size_t t = 1 + static_cast<size_t>(shard); t < first_of_target.size();
       t += static_cast<size_t>(shards)) {
    const nlohmann::json& job = all[first_of_target[t]];
    try {
      const ir::Program& reference = references.of(job);
      Sizes sizes = job.at("sizes").get<Sizes>();
      exec::RunOptions options;
      options.seed = job.value("seed", uint64_t{1});
      options.reference = &reference;
      exec::reference_result(reference, options, exec::draw_inputs(reference, sizes, options.seed),
                             sizes);
    } catch (const std::exception&) {
      // The worker meets the same problem and reports it.
    }
  }
  for (size_t i = static_cast<size_t>(shard); i < all.size(); i += static_cast<size_t>(shards)) {
    try {
      ir::Module module = parse::parse_module(all[i].at("module").get<std::string>(), "<variant>");
      Sizes sizes = all[i].at("sizes").get<Sizes>();
      codegen::PreparedLaunch launch = codegen::prepare_launch(
          module.main(), sizes, perfdb::run_options_for(all[i].at("launch")).request(),
          device.profile.limits());
      // A cache of its own per kernel: the builder needs the binary on disk, not thousands of
      // programs held in memory.
      runtime::BuildCache(runtime::default_cache_dir()).build(device, launch.kernel.source);
    } catch (const std::exception&) {
      // Likewise: refused programs and build errors are the worker's to report.
    }
  }
}

int64_t newest_measurement_id(const std::filesystem::path& db) {
  if (!std::filesystem::exists(db))
    return 0;
  return perfdb::PerfDb(db, perfdb::PerfDb::Access::read_only).last_measurement_id();
}

void write_collected_csv(std::ostream& out, const std::filesystem::path& db,
                         const CollectSummary& summary, int64_t measured_before) {
  const perfdb::PerfDb reader(db, perfdb::PerfDb::Access::read_only);
  reader.export_csv(out, summary.device_key, measured_before);
}

nlohmann::json collected_json(const std::filesystem::path& db, const CollectSummary& summary,
                              int64_t measured_before) {
  const perfdb::PerfDb reader(db, perfdb::PerfDb::Access::read_only);
  nlohmann::json statuses = nlohmann::json::object();
  for (const auto& [status, n] : summary.statuses)
    statuses[status] = n;
  return {{"database", db.string()},
          {"device", summary.device_key},
          {"profile", summary.profile},
          {"planned", summary.variants},
          {"measured", summary.measured},
          {"skipped", summary.skipped},
          {"left", summary.left},
          {"statuses", statuses},
          {"measurements", reader.measurements_json(summary.device_key, measured_before)}};
}

} // namespace liftx::explore
