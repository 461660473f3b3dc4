// perfdb::refresh_features: a database's stored features recomputed with this liftx, on a copy
// of the shipped PoCL dataset.
#include "perfdb/db.hpp"
#include "perfdb/refresh.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace liftx;

namespace {

struct CopiedDb {
  fs::path path;
  CopiedDb() {
    path = fs::temp_directory_path() / ("liftx-refresh-" + std::to_string(getpid()) + ".db");
    fs::remove(path);
    fs::copy_file(fs::path(LIFTX_SOURCE_DIR) / "model/data/pocl.db", path);
  }
  ~CopiedDb() {
    for (const char* suffix : {"", "-wal", "-shm"})
      fs::remove(path.string() + suffix);
  }
};

} // namespace

TEST_CASE("refresh_features adds new columns, corrects stale values and is idempotent") {
  CopiedDb copy;
  int64_t tampered = 0;
  double original_ops = 0;
  {
    perfdb::PerfDb db(copy.path);
    std::vector<perfdb::Row> rows = db.feature_rows("cpu");
    REQUIRE(rows.size() == 800);
    CHECK(db.has_features("cpu"));
    CHECK_FALSE(db.has_features("nvidia"));
    // Rows measured before a column existed lack it; a value may be out of date.
    tampered = rows.back().configuration_id;
    nlohmann::json stale = rows.back().features;
    original_ops = stale.at("arith_ops_per_thread").get<double>();
    stale.erase("line_segments_per_warp_access");
    stale["arith_ops_per_thread"] = original_ops + 12345;
    db.put_features(tampered, "cpu", stale);
  }
  perfdb::PerfDb db(copy.path);
  const perfdb::RefreshReport first = perfdb::refresh_features(db, "cpu");
  CHECK(first.configurations == 800);
  CHECK(first.refreshed + first.removed == 800);
  CHECK(first.refreshed > 700);
  CHECK(first.changed >= 1);
  CHECK(first.removed == int64_t(800 - db.feature_rows("cpu").size()));
  for (const perfdb::Row& row : db.feature_rows("cpu")) {
    CHECK(row.features.contains("line_segments_per_warp_access"));
    if (row.configuration_id == tampered)
      CHECK(row.features.at("arith_ops_per_thread").get<double>() == original_ops);
  }
  // The measurements stay: the removed rows only lose their features.
  CHECK(db.measurements_json(db.device_keys().front()).size() == 800);

  const perfdb::RefreshReport second = perfdb::refresh_features(db, "cpu");
  CHECK(second.configurations == first.refreshed);
  CHECK(second.refreshed == first.refreshed);
  CHECK(second.changed == 0);
  CHECK(second.removed == 0);

  CHECK_THROWS_AS(perfdb::refresh_features(db, "no-such-profile"), UserError);
}

TEST_CASE("refresh_features recomputes detected-profile data with the measuring device's profile") {
  // pocl.db was collected with --profile detect: its features are PoCL's own (its local memory,
  // compute units), stored under the class name "cpu". Recomputed with that device's stored
  // profile, the profile-dependent columns keep their values; with the named "cpu" profile some
  // change.
  auto occupancy_changes = [](bool as_measured) {
    CopiedDb copy;
    perfdb::PerfDb db(copy.path);
    std::map<int64_t, nlohmann::json> before;
    for (const perfdb::Row& row : db.feature_rows("cpu"))
      before[row.configuration_id] = row.features;
    const std::optional<target::DeviceProfile> device = db.device_profile(db.device_keys().front());
    REQUIRE(device.has_value());
    perfdb::refresh_features(db, "cpu", {}, as_measured ? &*device : nullptr);
    int changes = 0;
    for (const perfdb::Row& row : db.feature_rows("cpu"))
      for (const char* column : {"occupancy_fraction", "work_groups_per_cu"})
        changes += row.features.at(column) != before.at(row.configuration_id).at(column);
    return changes;
  };
  CHECK(occupancy_changes(true) == 0);
  CHECK(occupancy_changes(false) > 0);
  CopiedDb copy;
  perfdb::PerfDb db(copy.path, perfdb::PerfDb::Access::read_only);
  CHECK_FALSE(db.device_profile("no-such-device").has_value());
}
