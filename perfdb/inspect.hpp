#pragma once
/// What `liftx db` does with a performance database apart from printing: its summary per device
/// and features profile, its exports written to a file or to standard output, and the checks
/// made before its stored features are refreshed (refresh.hpp).
#include "perfdb/db.hpp"
#include "target/profile.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::perfdb {

/// The features profiles a summary covers, in the order it reports them.
inline constexpr std::array<const char*, 4> kSummaryProfiles{"cpu", "nvidia", "amd", "gpu"};

/// The configurations measured on one device that have features of one profile.
struct ProfileSummary {
  int64_t configurations = 0;
  /// The feature columns (features::columns()) that some of them lack: rows stored by an older
  /// liftx lack the columns added since, which training leaves out until the features are
  /// recomputed (refresh_features).
  std::vector<std::string> missing_columns;
  /// Program name -> status name -> measurements (the latest of each configuration).
  std::map<std::string, std::map<std::string, int64_t>> statuses;
};

/// The summary of the configurations measured on the device `device_key` with features of
/// `profile` (PerfDb::rows).
ProfileSummary summarize_profile(const PerfDb& db, const std::string& device_key,
                                 const std::string& profile);

/// The devices a summary or an export is of: every device of the database, unless `one_device`
/// (an export is of one device) or a device is `wanted`; then the one resolve_device picks.
std::vector<std::string> devices_to_report(const PerfDb& db, const std::string& wanted,
                                           bool one_device);

enum class ExportFormat {
  csv, ///< PerfDb::export_csv
  t4,  ///< PerfDb::export_t4
};

/// UserError when `target` (an export's file; "-" is standard output) is the database itself,
/// under any name: checked for every export before any is written. `option` names the export in
/// the message ("--csv").
void refuse_export_over_database(const PerfDb& db, const std::string& target,
                                 std::string_view option);

/// Writes the export in `format` of the device `device_key` to `target`: with "-" to
/// `standard_output`, flushed (UserError naming `option` when that fails), otherwise as a file
/// through write_output_file (support/output_file.hpp: never over the database, never cut off).
/// Returns the measurements a CSV export wrote (0 for T4).
int64_t write_export(const PerfDb& db, const std::string& device_key, ExportFormat format,
                     const std::string& target, std::string_view option,
                     std::ostream& standard_output);

/// Checks a refresh of the features of `profile` on the database at `path`, opened read-only so
/// that bad input is refused before it is opened for writing: features of `profile` must be
/// stored, and `profile` must be a named one (runtime::named_profile) unless `device_wanted`
/// names a device of the database (resolve_device). Returns that device's stored profile, to
/// compute the features with (refresh_features' `computed_with`); nullopt without
/// `device_wanted`. UserError otherwise.
std::optional<target::DeviceProfile> check_refresh(const std::filesystem::path& path,
                                                   const std::string& profile,
                                                   const std::string& device_wanted);

} // namespace liftx::perfdb
