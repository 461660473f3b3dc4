// CollectionLock: one collection at a time per database, through flock on a side file and on the
// database itself.
#include "perfdb/lock.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace liftx::perfdb {

namespace {

/// The file `db` names once every symbolic link on the way is followed, also when the file it
/// ends at does not exist yet: one side file for every spelling of one database.
std::filesystem::path resolved(const std::filesystem::path& db) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(db, ec);
  if (ec)
    p = db;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec)
      break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  const fs::path canonical = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : canonical;
}

} // namespace

std::filesystem::path CollectionLock::path_for(const std::filesystem::path& db) {
  return std::filesystem::path(resolved(db).string() + ".lock");
}

namespace {

/// The locks this process holds, by lock file, with how many CollectionLocks share each: flock
/// would refuse a second description of the file even in the process that holds it (calibrate
/// holds the lock across the collections it runs).
struct HeldLock {
  int fd;
  int db_fd; ///< the database file's own lock, -1 when it did not exist yet
  int holders;
};
std::mutex held_locks_mutex;
std::map<std::string, HeldLock>& held_locks() {
  static std::map<std::string, HeldLock> locks;
  return locks;
}

} // namespace

CollectionLock::CollectionLock(const std::filesystem::path& db) : path_(path_for(db)) {
  std::error_code ec;
  key_ = std::filesystem::absolute(path_, ec).lexically_normal().string();
  const std::lock_guard<std::mutex> guard(held_locks_mutex);
  if (auto held = held_locks().find(key_); held != held_locks().end()) {
    ++held->second.holders;
    return;
  }
  if (db.has_parent_path())
    std::filesystem::create_directories(db.parent_path(), ec);
  // The file is removed when the lock is released; a process that opened it just before may then
  // lock a file no longer at the path, so the lock counts only when the path still names it.
  for (int attempt = 0;; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    LIFTX_USER_CHECK(fd_ >= 0, "cannot create the lock file {}: {}", path_.string(),
                     std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      std::string pid;
      // The holder writes its pid just after locking: give it a moment.
      for (int wait = 0; wait < 20 && pid.empty(); ++wait) {
        char buffer[32] = {};
        const ssize_t n = ::pread(fd_, buffer, sizeof buffer - 1, 0);
        pid = n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
        while (!pid.empty() && !std::isdigit(static_cast<unsigned char>(pid.back())))
          pid.pop_back();
        if (pid.empty())
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      ::close(fd_);
      fd_ = -1;
      LIFTX_USER_CHECK(error == EWOULDBLOCK, "cannot lock {}: {}", path_.string(),
                       std::strerror(error));
      throw UserError(fmt::format("{} is being written by another liftx collect (pid {}); wait for "
                                  "it to finish, or collect into another --db",
                                  db.string(), pid.empty() ? "unknown" : pid));
    }
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino)
      break;
    ::close(fd_);
    fd_ = -1;
    LIFTX_USER_CHECK(attempt != 100, "cannot lock {}: the file keeps changing", path_.string());
  }
  // A hard link is another path to the same file, and so another side file: an existing
  // database is locked itself too (flock, which SQLite's own fcntl locks do not see), by its
  // device and inode.
  if (const int db_fd = ::open(db.c_str(), O_RDONLY | O_CLOEXEC); db_fd >= 0) {
    if (::flock(db_fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(db_fd);
      ::unlink(path_.c_str());
      ::close(fd_);
      fd_ = -1;
      LIFTX_USER_CHECK(error == EWOULDBLOCK, "cannot lock {}: {}", db.string(),
                       std::strerror(error));
      throw UserError(fmt::format("{} is being written by another liftx collect (through another "
                                  "name of the same file); wait for it to finish, or collect "
                                  "into another --db",
                                  db.string()));
    }
    db_fd_ = db_fd;
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds without the pid; only the message of a refused collection lacks it.
  }
  held_locks()[key_] = HeldLock{fd_, db_fd_, 1};
}

CollectionLock::~CollectionLock() {
  const std::lock_guard<std::mutex> guard(held_locks_mutex);
  auto held = held_locks().find(key_);
  if (held == held_locks().end() || --held->second.holders > 0)
    return;
  ::unlink(path_.c_str());
  ::close(held->second.fd);
  if (held->second.db_fd >= 0)
    ::close(held->second.db_fd);
  held_locks().erase(held);
}

} // namespace liftx::perfdb
