// End-to-end tests of the commands that only read a performance database: they work on a
// read-only file in a read-only folder and leave it byte-identical, and refuse an empty file
// without writing a schema into it.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

using namespace cli_test;

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST_CASE("read commands work on a read-only database in a read-only folder, byte-identical") {
  TempDir dir("dbsafety_readonly");
  const fs::path folder = dir.path / "ro";
  fs::create_directories(folder);
  const std::string db = (folder / "pocl.db").string();
  fs::copy_file(fs::path(LIFTX_SOURCE_DIR) / "model/data/pocl.db", db);
  const std::string before = read_text(db);
  ::chmod(db.c_str(), 0444);
  ::chmod(folder.c_str(), 0555);
  const std::string quoted = "'" + db + "'";
  const std::string commands[] = {
      "db --db " + quoted,
      "db --db " + quoted + " --csv -",
      "db --db " + quoted + " --t4 -",
      "train --db " + quoted + " -o '" + dir / "m.json" + "'",
      "evaluate --db " + quoted + " --kind knn",
      "evaluate --db " + quoted + " --model '" + dir / "m.json" + "'",
      "route --db " + quoted + " --base '" + dir / "m.json" + "' -o '" + dir / "routed.json" + "'",
      "replay --db " + quoted + " --kind knn --strategies static --budget 3 --seeds 1",
      "replay --db " + quoted + " --prior-db " + quoted +
          " --kind knn --strategies static --budget 3 --seeds 1",
  };
  for (const std::string& command : commands) {
    CAPTURE(command);
    RunResult r = liftx(command);
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
  }
  // root writes a 0444 file all the same: the same reads as an unprivileged user, where one can.
  if (::geteuid() == 0 && fs::exists("/usr/bin/setpriv")) {
    ::chmod(dir.path.c_str(), 0755);
    const std::string as_nobody =
        "cd / && /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups env "
        "HOME=/nonexistent '" +
        std::string(LIFTX_BINARY) + "' db --db " + quoted + " >/dev/null 2>'" + dir / "nobody.err" +
        "'";
    const int status = std::system(as_nobody.c_str());
    CAPTURE(read_text(dir.path / "nobody.err"));
    CHECK(status == 0);
  }
  CHECK(read_text(db) == before);
  CHECK(names_in(folder) == std::vector<std::string>{"pocl.db"});
  ::chmod(folder.c_str(), 0755);
  ::chmod(db.c_str(), 0644);
}

TEST_CASE("read commands refuse an empty database file and leave it empty") {
  TempDir dir("dbsafety_empty");
  const std::string db = dir / "empty.db";
  { std::ofstream(db).close(); }
  const std::string commands[] = {
      "db --db '" + db + "'",
      "db --db '" + db + "' --csv -",
      "train --db '" + db + "' -o '" + dir / "m.json" + "'",
      "evaluate --db '" + db + "'",
      "replay --db '" + db + "'",
  };
  for (const std::string& command : commands) {
    CAPTURE(command);
    RunResult r = liftx(command);
    CAPTURE(r.err);
    check_user_error(r);
    CHECK(contains(r.err, db + " is not a liftx performance database"));
    CHECK(fs::file_size(db) == 0);
  }
  CHECK(names_in(dir.path) == std::vector<std::string>{"empty.db"});
}

TEST_CASE("a database missing a table or a column is a user error for every command") {
  // Found by the db fuzz target (fuzz/regressions/db/): once internal errors at the first query.
  TempDir dir("dbsafety_schema");
  const fs::path regressions = fs::path(LIFTX_SOURCE_DIR) / "fuzz/regressions/db";
  const std::pair<const char*, const char*> files[] = {
      {"meta-table-only.db", "it has no table 'devices'"},
      {"schema-missing-column.db", "no such column"},
      {"meta-without-value-column.db", "table 'meta'"},
  };
  for (const auto& [file, why] : files) {
    const std::string db = dir / file;
    fs::copy_file(regressions / file, db, fs::copy_options::overwrite_existing);
    const std::string before = read_text(db);
    for (const std::string& command :
         {"db --db '" + db + "'", "db --db '" + db + "' --t4 -", "evaluate --db '" + db + "'",
          "collect stencils/jacobi2d5pt.lift --device cpu --size 8 --sample 1 --db '" + db + "'"}) {
      CAPTURE(command);
      RunResult r = liftx(command);
      CAPTURE(r.err);
      check_user_error(r);
      // A writer's integrity check may find the hand-edited file corrupted first.
      const bool unusable = contains(r.err, db + " is not a usable liftx performance database") &&
                            contains(r.err, why);
      CHECK((unusable || contains(r.err, db + " is corrupted")));
    }
    CHECK(read_text(db) == before);
  }
}

TEST_CASE("the T4 export replaces text that is not UTF-8 instead of failing") {
  TempDir dir("dbsafety_utf8");
  const std::string db = dir / "odd.db";
  fs::copy_file(fs::path(LIFTX_SOURCE_DIR) / "fuzz/regressions/db/t4-export-invalid-utf8.db", db);
  RunResult r = liftx("db --db '" + db + "' --t4 -");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "\"device\": \"pocl:pthre\xEF\xBF\xBD"
                        "d-skylake"));
  CHECK(contains(r.out, "\"results\""));
}
