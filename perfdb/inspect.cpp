#include "perfdb/inspect.hpp"

#include "features/features.hpp"
#include "perfdb/dataset.hpp"
#include "runtime/device.hpp"
#include "runtime/status.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <algorithm>
#include <sstream>

namespace liftx::perfdb {

ProfileSummary summarize_profile(const PerfDb& db, const std::string& device_key,
                                 const std::string& profile) {
  ProfileSummary summary;
  std::vector<Row> rows = db.rows(device_key, profile);
  summary.configurations = static_cast<int64_t>(rows.size());
  for (const features::Column& c : features::columns())
    if (std::any_of(rows.begin(), rows.end(),
                    [&](const Row& r) { return !r.features.contains(c.name); }))
      summary.missing_columns.push_back(c.name);
  for (const Row& r : rows)
    ++summary.statuses[r.program][std::string(runtime::to_string(r.measurement->status))];
  return summary;
}

std::vector<std::string> devices_to_report(const PerfDb& db, const std::string& wanted,
                                           bool one_device) {
  std::vector<std::string> keys = db.device_keys();
  if (!wanted.empty() || one_device)
    keys = {resolve_device(db, wanted)};
  return keys;
}

void refuse_export_over_database(const PerfDb& db, const std::string& target,
                                 std::string_view option) {
  if (!target.empty() && target != "-")
    refuse_overwriting_input(target, {db.path()}, option);
}

int64_t write_export(const PerfDb& db, const std::string& device_key, ExportFormat format,
                     const std::string& target, std::string_view option,
                     std::ostream& standard_output) {
  int64_t rows = 0;
  auto write = [&](std::ostream& out) {
    if (format == ExportFormat::csv)
      rows = db.export_csv(out, device_key);
    else
      db.export_t4(out, device_key);
  };
  if (target == "-") {
    write(standard_output);
    standard_output.flush();
    LIFTX_USER_CHECK(standard_output, "{}: cannot write to the standard output", option);
    return rows;
  }
  // Written whole before the file is replaced, so that a failed export leaves no cut-off file.
  std::ostringstream text;
  write(text);
  write_output_file(target, std::move(text).str(), {db.path()}, option);
  return rows;
}

std::optional<target::DeviceProfile> check_refresh(const std::filesystem::path& path,
                                                   const std::string& profile,
                                                   const std::string& device_wanted) {
  std::optional<target::DeviceProfile> measured_on;
  PerfDb reader(path, PerfDb::Access::read_only);
  if (device_wanted.empty())
    (void)runtime::named_profile(profile);
  else
    measured_on = reader.device_profile(resolve_device(reader, device_wanted));
  LIFTX_USER_CHECK(reader.has_features(profile), "{}: no features stored for profile {}",
                   path.string(), profile);
  return measured_on;
}

} // namespace liftx::perfdb
