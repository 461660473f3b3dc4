#pragma once
/// Recomputing the stored features of a performance database with this liftx's extractor: a
/// feature added after data was measured (or a fixed definition) then reaches every row without
/// measuring anything again. Each configuration's stored variant text is parsed back, its sizes
/// and launch read, and the features recomputed for the profile they were stored under.
#include "perfdb/db.hpp"
#include "runtime/device.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace liftx::perfdb {

struct RefreshReport {
  int64_t configurations = 0; ///< configurations with features of the profile
  int64_t refreshed = 0;      ///< rewritten with this liftx's columns
  /// This liftx refuses the stored variant or its launch (a check added since it was measured):
  /// its features are removed, so that every remaining row has the same columns; the
  /// measurement stays.
  int64_t removed = 0;
  /// Refreshed configurations where a column both versions have changed value (a definition
  /// changed since they were stored; new columns alone do not count).
  int64_t changed = 0;
  std::string first_removal; ///< why the first was removed, for the report
};

/// Recomputes the features of every configuration stored with features for `profile` and writes
/// them back in one transaction, removing the features of configurations this liftx refuses.
/// They are computed for the named profile `profile` (nvidia, amd, cpu: how `collect --profile
/// NAME` computed them), or for `computed_with` when given (a device's own profile: how
/// `collect --profile detect` computed them, storing them under its class name). `progress` is
/// called with (done, total) now and then.
RefreshReport refresh_features(PerfDb& db, const std::string& profile,
                               const std::function<void(int64_t, int64_t)>& progress = {},
                               const target::DeviceProfile* computed_with = nullptr);

} // namespace liftx::perfdb
