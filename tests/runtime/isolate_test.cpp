#include "runtime/isolate.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <csignal>

using namespace liftx;
using namespace liftx::runtime;
using namespace std::chrono_literals;

TEST_CASE("run_isolated reports the exit code and captures both streams") {
  IsolatedResult r = run_isolated({"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3"}, 10s);
  CHECK(r.exit_code == 3);
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.succeeded());
  CHECK(r.stdout_text == "to-out\n");
  CHECK(r.stderr_text == "to-err\n");
  CHECK(r.describe() == "exit code 3");

  IsolatedResult ok = run_isolated({"/bin/sh", "-c", "printf 'a b'"}, 10s);
  CHECK(ok.succeeded());
  CHECK(ok.stdout_text == "a b");
}

TEST_CASE("run_isolated drains large output on both streams without deadlock") {
  IsolatedResult r = run_isolated(
      {"/bin/sh", "-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2; echo done"}, 10s);
  CHECK(r.succeeded());
  CHECK(r.stdout_text.size() == 300005);
  CHECK(r.stderr_text.size() == 200000);
}

TEST_CASE("a child that runs past the timeout is killed quickly") {
  IsolatedResult r = run_isolated({"/bin/sh", "-c", "echo started; sleep 20"}, 300ms);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK_FALSE(r.succeeded());
  CHECK(r.wall_ms >= 250);
  CHECK(r.wall_ms < 5000);
  CHECK(r.stdout_text == "started\n"); // output before the kill is kept
  CHECK(r.describe().find("timed out") != std::string::npos);

  // A child that closes its output and keeps running is still caught by the deadline.
  IsolatedResult quiet = run_isolated({"/bin/sh", "-c", "exec >&- 2>&-; sleep 20"}, 300ms);
  CHECK(quiet.timed_out);
  CHECK(quiet.wall_ms < 5000);
}

TEST_CASE("a child that crashes reports its signal") {
  IsolatedResult r = run_isolated({"/bin/sh", "-c", "kill -SEGV $$"}, 10s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == SIGSEGV);
  CHECK(r.exit_code == -1);
  CHECK(r.describe().find("signal 11") != std::string::npos);
}

TEST_CASE("run_isolated rejects what it cannot start") {
  CHECK_THROWS_AS(run_isolated({}, 1s), UserError);
  CHECK_THROWS_AS(run_isolated({"/nonexistent/liftx-program"}, 1s), UserError);
}
