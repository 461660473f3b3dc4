#pragma once
/// Children that die with their parent. Every worker liftx starts runs in its own process group
/// (so that a timeout can kill it and everything it started), which also keeps it out of reach
/// of the signals that end the parent: a parent killed by SIGKILL, SIGTERM or Ctrl-C would leave
/// it running. So each child inherits the read end of a pipe whose only write end the parent
/// holds; a liftx child watches it from a thread (watch_parent) and, at end of file (the parent
/// is gone, however it ended), kills its own process group.
#include <spawn.h>

#include <string>
#include <vector>

namespace liftx::runtime {

/// What a spawner adds to a child's launch: the pipe's read end as descriptor
/// kParentWatchFd and the environment variable naming it.
class ParentWatchedSpawn {
public:
  ParentWatchedSpawn();
  /// Adds the duplication of the read end to `actions` (after the caller's own).
  void add_to(posix_spawn_file_actions_t& actions) const;
  /// The environment to pass to posix_spawn: the caller's, with the watch variable set.
  char* const* environment() { return pointers_.data(); }

private:
  std::vector<std::string> variables_;
  std::vector<char*> pointers_;
};

/// The descriptor a watched child finds the pipe on.
inline constexpr int kParentWatchFd = 3;
inline constexpr const char* kParentWatchVariable = "LIFTX_PARENT_WATCH_FD";

/// In a child started through ParentWatchedSpawn (the variable is set): starts the thread that
/// kills this process group once the parent is gone, and clears the variable so that this
/// process's own children are watched by it, not by its parent. Otherwise does nothing.
void watch_parent();

} // namespace liftx::runtime
