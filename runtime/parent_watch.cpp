#include "runtime/parent_watch.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

extern char** environ;

namespace liftx::runtime {

namespace {

/// The process's one watch pipe: children share its read end; the write end stays open, unused,
/// until the process ends (both ends close on exec, so no other program holds the write end).
int watch_read_end() {
  static std::once_flag once;
  static int read_end = -1;
  std::call_once(once, [] {
    int fds[2];
    LIFTX_USER_CHECK(::pipe2(fds, O_CLOEXEC) == 0, "cannot create a pipe: {}",
                     std::strerror(errno));
    read_end = fds[0];
    // fds[1] is deliberately never closed: its closing at exit is the signal.
  });
  return read_end;
}

} // namespace

ParentWatchedSpawn::ParentWatchedSpawn() {
  const std::string prefix = std::string(kParentWatchVariable) + "=";
  for (char** variable = environ; variable && *variable; ++variable)
    if (std::strncmp(*variable, prefix.c_str(), prefix.size()) != 0)
      variables_.emplace_back(*variable);
  variables_.push_back(prefix + std::to_string(kParentWatchFd));
  for (std::string& v : variables_)
    pointers_.push_back(v.data());
  pointers_.push_back(nullptr);
}

void ParentWatchedSpawn::add_to(posix_spawn_file_actions_t& actions) const {
  // dup2 clears close-on-exec on the copy, so the child keeps it across exec.
  posix_spawn_file_actions_adddup2(&actions, watch_read_end(), kParentWatchFd);
}

void watch_parent() {
  const char* text = std::getenv(kParentWatchVariable);
  if (!text || std::strcmp(text, std::to_string(kParentWatchFd).c_str()) != 0)
    return;
  ::unsetenv(kParentWatchVariable);
  if (::fcntl(kParentWatchFd, F_GETFD) < 0)
    return; // not open: a stale variable, not a watched launch
  ::fcntl(kParentWatchFd, F_SETFD, FD_CLOEXEC);
  std::thread([] {
    char byte;
    while (true) {
      const ssize_t n = ::read(kParentWatchFd, &byte, 1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break; // end of file: every write end closed, the parent is gone
    }
    // The group this child leads holds what it started (compilers, its own helpers).
    if (::getpgrp() == ::getpid())
      ::kill(0, SIGKILL);
    ::_exit(128 + SIGKILL);
  }).detach();
}

} // namespace liftx::runtime
