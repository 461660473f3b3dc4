#pragma once
/// Building OpenCL programs once: an in-memory map per context plus an on-disk cache of program
/// binaries, both keyed by a hash of (source, build options, device key).
#include "runtime/cache_dir.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace liftx::runtime {

/// The OpenCL C compiler rejected a kernel. what() holds a summary and the whole build log.
class BuildError : public UserError {
public:
  BuildError(const std::string& summary, std::string log)
      : UserError(summary + (log.empty() ? std::string() : ":\n" + log)), log_(std::move(log)) {}
  /// The compiler's complete build log (may be empty if the driver gave none).
  const std::string& log() const { return log_; }

private:
  std::string log_;
};

struct BuildResult {
  cl::Program program;
  double build_ms = 0;    ///< wall time of this call: compiling, or loading a cached binary
  bool cache_hit = false; ///< true when no compilation from source was needed
  bool from_disk = false; ///< the hit came from a binary on disk (not from memory)
  /// How long compiling the source took: this call's build, or, for a binary from disk, the time
  /// the build that stored it took (0 if not recorded). An in-memory hit reports 0.
  double compile_ms = 0;
  std::string hash; ///< the cache key (32 hex digits)
  /// The compiler's log of this call's build from source (warnings; with NVIDIA's
  /// `-cl-nv-verbose`, ptxas's registers and spills); empty when the program came from a cache.
  std::string log;
};

class BuildCache {
public:
  /// `dir` holds kernels/<hash>.bin; an empty path keeps the cache in memory only.
  explicit BuildCache(std::filesystem::path dir = default_cache_dir());

  /// The program for `source` built with `options` on `device` (its context). Throws BuildError
  /// when the source does not compile. A cache file that is corrupt or that the driver refuses is
  /// ignored and replaced. Thread-safe.
  BuildResult build(Device& device, const std::string& source, const std::string& options = "");

  /// The cache key of a build: depends on the source, the options and the device key only.
  static std::string key(const Device& device, const std::string& source,
                         const std::string& options);

  const std::filesystem::path& dir() const { return dir_; }
  /// kernels/<hash>.bin, or empty when there is no disk cache. Beside it, <hash>.ms holds the
  /// milliseconds its compilation took (a collection's exploration cost counts them).
  std::filesystem::path binary_path(const std::string& hash) const;

private:
  std::filesystem::path dir_;
  std::mutex mutex_;
  /// Programs belong to one context, so the context handle is part of the in-memory key; the
  /// stored program retains its context, so the handle cannot be reused while it is here.
  std::map<std::pair<std::string, cl_context>, cl::Program> programs_;
};

/// The process-wide cache (in default_cache_dir(), read at first use).
BuildCache& default_build_cache();

/// default_build_cache().build(...): the program, and optionally how it was obtained.
cl::Program build(Device& device, const std::string& source, const std::string& options = "",
                  BuildResult* info = nullptr);

} // namespace liftx::runtime
