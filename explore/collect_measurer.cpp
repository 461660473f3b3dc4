// The LocalMeasurer of `liftx collect`: it runs the worker and builder child processes on this
// machine, bounds each by its timeouts, and records a result for every job, whether the worker
// answered, hung or crashed.
#include "explore/collect.hpp"
#include "explore/collect_internal.hpp"
#include "perfdb/record.hpp"

#include "runtime/parent_watch.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace liftx::explore {

using namespace detail;

namespace {

/// How long a worker may take to open the device (a GPU context can take seconds; after a killed
/// kernel the driver may need more).
constexpr std::chrono::milliseconds kDeviceOpenAllowance{60000};

/// How often a wait for a reference looks at the collection's time limit.
constexpr std::chrono::milliseconds kTimeLimitPoll{1000};

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

} // namespace

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

} // namespace liftx::explore
