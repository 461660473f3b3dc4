#pragma once
#include <filesystem>
#include <string>

namespace liftx::perfdb {

/// One collection at a time per database: held by `collect` (and so `calibrate`) for as long as it
/// writes the file, so that a second collection on the same database is refused at once instead
/// of measuring the same configurations again, whichever name it is reached by. An flock on the
/// side file "DB.lock" beside the file its symbolic links lead to (holding the holder's pid, for
/// the message), and one on the database file itself where it exists (a hard link is another
/// name of it); the kernel releases both when the process ends however it ends, so a killed
/// collection never leaves a stale lock. UserError if another process holds it: "DB is being
/// written by another liftx collect (pid N)". Within one process the lock is shared: a second
/// CollectionLock of a database this process holds succeeds, and the file is released with the
/// last.
class CollectionLock {
public:
  explicit CollectionLock(const std::filesystem::path& db);
  ~CollectionLock();
  CollectionLock(const CollectionLock&) = delete;
  CollectionLock& operator=(const CollectionLock&) = delete;

  /// The side file of `db`.
  static std::filesystem::path path_for(const std::filesystem::path& db);

private:
  std::filesystem::path path_;
  std::string key_; ///< the lock file's absolute path: this process's table of held locks
  int fd_ = -1;
  int db_fd_ = -1; ///< the database itself, locked too where it exists (hard links)
};

} // namespace liftx::perfdb
