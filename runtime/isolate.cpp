#include "runtime/isolate.hpp"
#include "runtime/parent_watch.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace liftx::runtime {

namespace {

/// Closes its descriptor once.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int value) : fd(value) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd(other.fd) { other.fd = -1; }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
};

struct Pipe {
  Fd read_end, write_end;
};

Pipe make_pipe() {
  int fds[2];
  LIFTX_USER_CHECK(::pipe2(fds, O_CLOEXEC) == 0, "cannot create a pipe: {}", std::strerror(errno));
  Pipe pipe;
  pipe.read_end.fd = fds[0];
  pipe.write_end.fd = fds[1];
  return pipe;
}

/// Owns the spawn attributes and file actions (both need explicit destruction).
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

} // namespace

std::string IsolatedResult::describe() const {
  if (timed_out)
    return fmt::format("timed out after {:.0f} ms", wall_ms);
  if (signal != 0)
    return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit code {}", exit_code);
}

IsolatedResult run_isolated(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout) {
  LIFTX_USER_CHECK(!argv.empty(), "run_isolated: no program given");
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + timeout;

  Pipe out = make_pipe();
  Pipe err = make_pipe();
  SpawnSetup setup;
  // The child's ends become its stdout/stderr; dup2 clears O_CLOEXEC on the new descriptors, and
  // the originals (and the parent's ends) close on exec.
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, out.write_end.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions, err.write_end.fd, STDERR_FILENO);
  ParentWatchedSpawn watched; // the child dies with this process (parent_watch.hpp)
  watched.add_to(setup.actions);
  // Own process group, so a timeout can kill the child and anything it started. Default signal
  // handling and an empty mask, whatever the caller changed.
  posix_spawnattr_setpgroup(&setup.attributes, 0);
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&setup.attributes, &signals);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
  posix_spawnattr_setflags(&setup.attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = -1;
  int spawn_error = ::posix_spawn(&pid, argv[0].c_str(), &setup.actions, &setup.attributes,
                                  args.data(), watched.environment());
  LIFTX_USER_CHECK(spawn_error == 0, "cannot run '{}': {}", argv[0], std::strerror(spawn_error));
  out.write_end.reset();
  err.write_end.reset();

  IsolatedResult result;
  std::array<Fd*, 2> streams{&out.read_end, &err.read_end};
  std::array<std::string*, 2> texts{&result.stdout_text, &result.stderr_text};
  std::array<char, 65536> buffer;
  // Drain both pipes until the child (and everything holding the pipes) closes them, or the
  // deadline passes; reading both at once means a child filling one pipe never blocks.
  while (streams[0]->fd >= 0 || streams[1]->fd >= 0) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    auto wait_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    std::array<pollfd, 2> fds{};
    for (size_t i = 0; i < 2; ++i)
      fds[i] = pollfd{streams[i]->fd, POLLIN, 0}; // fd -1: ignored
    int ready =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(wait_ms, 1000)));
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (size_t i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0)
        continue;
      ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n > 0) {
        size_t room = kMaxCapturedBytes - std::min(kMaxCapturedBytes, texts[i]->size());
        size_t keep = std::min(room, static_cast<size_t>(n));
        texts[i]->append(buffer.data(), keep);
        if (keep < static_cast<size_t>(n))
          result.output_truncated = true;
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        streams[i]->reset();
      }
    }
  }
  // A child may close its output and keep running: poll for its exit until the deadline too.
  int status = 0;
  bool reaped = false;
  while (!result.timed_out) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      reaped = true;
      break;
    }
    LIFTX_USER_CHECK(!(done < 0 && errno != EINTR), "waitpid failed: {}", std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline)
      result.timed_out = true;
    else
      ::usleep(2000);
  }
  if (result.timed_out)
    ::kill(-pid, SIGKILL);
  while (!reaped && ::waitpid(pid, &status, 0) < 0) {
    LIFTX_USER_CHECK(errno == EINTR, "waitpid failed: {}", std::strerror(errno));
  }
  result.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

} // namespace liftx::runtime
