// Workers and the collection lock against hostile use: a worker never outlives the liftx that
// started it, a slow reference is bounded, and one database is one collection however it is
// named.
#include "explore_test_env.hpp"
#include "perfdb/db.hpp"
#include "perfdb/lock.hpp"
#include "runtime/isolate.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

using namespace liftx;
using namespace explore_test;

namespace {

std::vector<std::string> collect_argv(const fs::path& db, std::vector<std::string> extra) {
  std::vector<std::string> argv = {
      LIFTX_BINARY, "collect",   std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift",
      "--size",     "M=16,N=32", "--sample",
      "3",          "--seed",    "5",
      "--repeat",   "2",         "--warmup",
      "0",          "--quiet",   "--db",
      db.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

/// The pids whose parent is `parent` (from /proc).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
    const size_t close = text.rfind(')');
    if (close == std::string::npos)
      continue;
    std::istringstream rest(text.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z')
      children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

/// Whether `pid` still runs (a zombie waiting for a reaper has ended).
bool running(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text;
  if (!std::getline(stat, text))
    return false;
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

pid_t spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

/// The children `parent` has started, once it has started one (it plans first).
std::vector<pid_t> wait_for_workers(pid_t parent) {
  std::vector<pid_t> workers;
  for (int wait = 0; wait < 3000 && workers.empty(); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    workers = children_of(parent);
  }
  REQUIRE(!workers.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(500)); // past the worker's start
  return workers;
}

/// Ends `parent` with `signal` and checks that each of its workers ends within 5 s.
void check_workers_end_with(pid_t parent, int signal, const std::vector<pid_t>& workers) {
  ::kill(parent, signal);
  int status = 0;
  ::waitpid(parent, &status, 0);
  for (const pid_t worker : workers) {
    bool gone = false;
    for (int wait = 0; wait < 100 && !gone; ++wait) {
      gone = !running(worker);
      if (!gone)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK_MESSAGE(gone, fmt::format("worker {} outlived its parent", worker));
    if (!gone)
      ::kill(-worker, SIGKILL);
  }
}

} // namespace

TEST_CASE("workers: a collect worker dies with its parent, whichever signal ends it") {
  for (const int signal : {SIGKILL, SIGTERM, SIGINT}) {
    CAPTURE(signal);
    TempDir dir(fmt::format("orphan-{}", signal));
    ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
    ScopedEnv hang("LIFTX_TEST_WORKER_HANG_AT", "0"); // the worker never finishes job 0
    const pid_t parent = spawn(collect_argv(dir.path / "o.db", {"--timeout-ms", "600000"}));
    check_workers_end_with(parent, signal, wait_for_workers(parent));
  }
}

TEST_CASE("workers: a run's worker dies with its parent") {
  TempDir dir("orphan-run");
  ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  // A long run: many repetitions of a large grid on the CPU.
  const pid_t parent =
      spawn({LIFTX_BINARY, "run",
             std::string(LIFTX_SOURCE_DIR) + "/stencils/variants/jacobi2d5pt/global2d.lift",
             "--device", "cpu", "--size", "M=1024,N=1024", "--repeat", "100000", "--no-roofline",
             "--timeout-ms", "600000"});
  check_workers_end_with(parent, SIGTERM, wait_for_workers(parent));
}

TEST_CASE("workers: a reference past --reference-timeout-ms records its target's variants as "
          "timeouts at once") {
  TempDir dir("reference-timeout");
  ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  ScopedEnv slow("LIFTX_TEST_WORKER_SLOW_REFERENCE_MS", "600000");
  const fs::path db_path = dir.path / "r.db";
  const auto start = std::chrono::steady_clock::now();
  runtime::IsolatedResult run = runtime::run_isolated(
      collect_argv(db_path, {"--reference-timeout-ms", "1500"}), std::chrono::milliseconds(300000));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(run.stderr_text);
  REQUIRE(run.succeeded());
  CHECK(seconds < 300); // one reference's wait (was 6 h per variant), however slow the build
  perfdb::PerfDb db(db_path);
  const std::vector<perfdb::Row> rows = db.rows(db.device_keys().at(0), "cpu");
  REQUIRE(rows.size() == 3);
  for (const perfdb::Row& r : rows) {
    CHECK(runtime::to_string(r.measurement->status) == "timeout");
    CHECK(r.measurement->message.find("--reference-timeout-ms") != std::string::npos);
  }
}

TEST_CASE("workers: the collection lock holds through a symbolic link and a hard link") {
  TempDir dir("lock-links");
  const fs::path db = dir.path / "real.db";
  { perfdb::PerfDb create(db); }
  fs::create_symlink(db, dir.path / "link.db");
  fs::create_hard_link(db, dir.path / "hard.db");
  const perfdb::CollectionLock held(db);
  for (const fs::path& other : std::vector<fs::path>{dir.path / "link.db", dir.path / "hard.db"}) {
    CAPTURE(other);
    runtime::IsolatedResult r = runtime::run_isolated(
        {LIFTX_BINARY, "collect", std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift",
         "--size", "M=16,N=32", "--sample", "2", "--plan-only", "--profile", "cpu", "--db",
         other.string()},
        std::chrono::milliseconds(120000));
    CHECK(r.exit_code == 2);
    CHECK(r.stderr_text.find("is being written by another liftx collect") != std::string::npos);
  }
  // Held through the hard link, the lock refuses the first name too.
  TempDir other_dir("lock-links-2");
  const fs::path second = other_dir.path / "b.db";
  { perfdb::PerfDb create(second); }
  fs::create_hard_link(second, other_dir.path / "b-hard.db");
  const perfdb::CollectionLock through_link(other_dir.path / "b-hard.db");
  runtime::IsolatedResult r = runtime::run_isolated(
      {LIFTX_BINARY, "collect", std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift",
       "--size", "M=16,N=32", "--sample", "2", "--plan-only", "--profile", "cpu", "--db",
       second.string()},
      std::chrono::milliseconds(120000));
  CHECK(r.exit_code == 2);
}
