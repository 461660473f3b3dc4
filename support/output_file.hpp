#pragma once
// Writing a command's output file so that no input and no earlier output is ever lost: a target
// that is one of the command's inputs (through any path, symlink or hard link) is refused, a
// regular file is written beside the target and renamed over it only once every byte is on disk,
// and a failed write or close is an error (a full disk, /dev/full), never a cut-off file.
#include "support/error.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace liftx {

/// Whether `a` and `b` name one existing file (same device and inode), however they are spelled.
inline bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  struct stat sa {};
  struct stat sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0)
    return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/// UserError when `target` is one of `inputs`: a command never writes over what it reads.
inline void refuse_overwriting_input(const std::filesystem::path& target,
                                     const std::vector<std::filesystem::path>& inputs,
                                     std::string_view option) {
  for (const std::filesystem::path& input : inputs)
    LIFTX_USER_CHECK(!same_file(target, input),
                     "{} {}{} is an input of this command: refusing to write over "
                     "it; choose another output file",
                     option, target.string(),
                     target == input ? "" : " (another name of " + input.string() + ")");
}

namespace output_file_detail {

inline void write_all(int fd, std::string_view bytes, const std::filesystem::path& shown) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    LIFTX_USER_CHECK(n > 0, "cannot write {}: {}", shown.string(),
                     n < 0 ? std::strerror(errno) : "nothing written");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

inline void close_checked(int fd, const std::filesystem::path& shown) {
  LIFTX_USER_CHECK(::close(fd) == 0, "cannot write {}: {}", shown.string(), std::strerror(errno));
}

} // namespace output_file_detail

/// Writes `bytes` to a temporary file beside `target` (unique per process and call) and renames
/// it over `target`: a reader sees the old file or the new one, never part of one. `durable`
/// syncs the bytes to disk first (a command's output; a cache entry can do without). UserError
/// naming `target` on failure, the temporary file removed and `target` untouched.
inline void replace_file(const std::filesystem::path& target, std::string_view bytes,
                         bool durable) {
  using namespace output_file_detail;
  static std::atomic<uint64_t> calls{0};
  std::filesystem::path temp = target;
  temp += fmt::format(".liftx-tmp-{}-{}", static_cast<long>(::getpid()), calls.fetch_add(1));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  LIFTX_USER_CHECK(fd >= 0, "cannot write {}: {}", target.string(), std::strerror(errno));
  bool open = true;
  try {
    write_all(fd, bytes, target);
    LIFTX_USER_CHECK(!(durable && ::fsync(fd) != 0), "cannot write {}: {}", target.string(),
                     std::strerror(errno));
    open = false; // close releases the descriptor even when it fails
    close_checked(fd, target);
  } catch (...) {
    if (open)
      ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    throw UserError(fmt::format("cannot write {}: {}", target.string(), std::strerror(error)));
  }
}

/// Writes `bytes` as `target` (see the top of this file); `inputs` are the files the command
/// read, `option` names the output in messages ("--csv").
inline void write_output_file(const std::filesystem::path& target, std::string_view bytes,
                              const std::vector<std::filesystem::path>& inputs,
                              std::string_view option) {
  using namespace output_file_detail;
  refuse_overwriting_input(target, inputs, option);
  struct stat existing {};
  if (::stat(target.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    // A device or a pipe (/dev/stdout, /dev/full) cannot be replaced by a rename: written in
    // place, its errors reported.
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    LIFTX_USER_CHECK(fd >= 0, "cannot write {}: {}", target.string(), std::strerror(errno));
    try {
      write_all(fd, bytes, target);
    } catch (...) {
      ::close(fd);
      throw;
    }
    close_checked(fd, target);
    return;
  }
  replace_file(target, bytes, /*durable=*/true);
}

} // namespace liftx
