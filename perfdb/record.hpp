#pragma once
/// One path from a measured variant to the performance database, shared by `liftx collect`,
/// `liftx explore` and liftx::tune(): the rows of a configuration (variant, configuration,
/// features), the measurement a run report gives, and the launch as stored and read back.
#include "exec/run.hpp"
#include "perfdb/db.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace liftx::perfdb {

/// A variant as the database stores it.
struct RecordedVariant {
  std::string printed; ///< the lowered program as a .lift module
  std::string strategy;
  nlohmann::json parameters = nlohmann::json::object();
  nlohmann::json launch; ///< launch_json()
};

/// Inserts (or finds) the variant and its configuration at `sizes`, stores `features` for
/// `profile` when given, and returns the configuration id.
int64_t record_configuration(PerfDb& db, int64_t program_id, const nlohmann::json& sizes,
                             const RecordedVariant& variant, const std::string& profile,
                             const std::optional<nlohmann::json>& features);

/// A scratch folder (jobs, variants, worker logs) under the system's temporary directory, named
/// PREFIX<pid>-XXXXXX and removed on scope exit. A process that is killed cannot remove it: the
/// folder holds an flock on its file "lock" while its owner lives, and making a folder first
/// removes the folders of the same prefix whose lock nobody holds (the pid in the name is for
/// people; the lock also speaks for a live process of another pid namespace sharing /tmp).
class ScratchDir {
public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

  /// Removes the folders PREFIX* of `parent` whose lock nobody holds; folders without a lock
  /// file (another program's, or one being made) are left alone.
  static void sweep(const std::filesystem::path& parent, const std::string& prefix);

private:
  std::filesystem::path path_;
  int lock_fd_ = -1;
};

/// Failure messages longer than this are clipped (a build log can be megabytes).
constexpr size_t kMaxMessageBytes = 2000;
std::string clip_message(std::string text);

/// The measurement of a run: status, times, the compile time of its kernel from source (the
/// recorded time when the binary came from the disk cache), and the message of a failure.
Measurement measurement_of(const exec::RunReport& report);

/// A measurement as a collect worker sends it to its parent, and back (unknown status:
/// InternalError).
nlohmann::json to_json(const Measurement& m);
Measurement measurement_from(const nlohmann::json& json);

/// The run options that launch a stored configuration (launch_json's inverse): its global size,
/// and its local size unless the runtime chooses it (no local size, or one with a 0). UserError
/// naming `origin` unless "global" holds 1 to 3 integers in [1, 2^31] and "local", if present and
/// not empty, as many in [0, 2^31].
exec::RunOptions run_options_for(const nlohmann::json& launch,
                                 const std::string& origin = "stored launch");
/// A launch sidecar's text (`liftx variants --out` writes one beside each variant; `liftx run
/// --launch`) read as run options: UserError naming `origin` if it is not JSON or not a launch.
exec::RunOptions read_launch_sidecar(std::string_view text, const std::string& origin);

} // namespace liftx::perfdb
