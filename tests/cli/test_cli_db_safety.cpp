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
      "evaluate --db " + quoted + " --model knn",
      "replay --db " + quoted + " --model knn --strategies static --budget 3 --seeds 1",
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
