// explore::refresh_features: a database's stored features recomputed with this liftx, on a copy
// of the shipped PoCL dataset.
#include "explore/db.hpp"
#include "explore/refresh.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
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
    explore::PerfDb db(copy.path);
    std::vector<explore::Row> rows = db.feature_rows("cpu");
    REQUIRE(rows.size() == 800);
    // Rows measured before a column existed lack it; a value may be out of date.
    tampered = rows.back().configuration_id;
    nlohmann::json stale = rows.back().features;
    original_ops = stale.at("arith_ops_per_thread").get<double>();
    stale.erase("line_segments_per_warp_access");
    stale["arith_ops_per_thread"] = original_ops + 12345;
    db.put_features(tampered, "cpu", stale);
  }
  explore::PerfDb db(copy.path);
  const explore::RefreshReport first = explore::refresh_features(db, "cpu");
  CHECK(first.configurations == 800);
  CHECK(first.refreshed + first.removed == 800);
  CHECK(first.refreshed > 700);
  CHECK(first.changed >= 1);
  CHECK(first.removed == int64_t(800 - db.feature_rows("cpu").size()));
  for (const explore::Row& row : db.feature_rows("cpu")) {
    CHECK(row.features.contains("line_segments_per_warp_access"));
    if (row.configuration_id == tampered)
      CHECK(row.features.at("arith_ops_per_thread").get<double>() == original_ops);
  }
  // The measurements stay: the removed rows only lose their features.
  CHECK(db.measurements_json(db.device_keys().front()).size() == 800);

  const explore::RefreshReport second = explore::refresh_features(db, "cpu");
  CHECK(second.configurations == first.refreshed);
  CHECK(second.refreshed == first.refreshed);
  CHECK(second.changed == 0);
  CHECK(second.removed == 0);

  CHECK_THROWS_AS(explore::refresh_features(db, "no-such-profile"), UserError);
}
