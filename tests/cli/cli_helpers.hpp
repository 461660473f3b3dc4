#pragma once
// Helpers of the end-to-end tests of the `liftx` executable: run it from the source directory and
// capture its exit code, standard output and standard error.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace cli_test {

/// tests/sanitized.hpp's kPlainBuildOnly, restated: these tests call the executable `liftx(...)`
/// unqualified, so they cannot see a namespace named liftx.
#ifdef LIFTX_SANITIZED
inline constexpr bool kPlainBuildOnly = true;
#else
inline constexpr bool kPlainBuildOnly = false;
#endif

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// This test process's scratch directory under the system's temporary directory.
inline fs::path scratch_dir() {
  fs::path dir = fs::temp_directory_path() / ("liftx_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

/// Runs `liftx ARGS` (ARGS already shell-quoted) from the source directory.
inline RunResult liftx(const std::string& args) {
  fs::path dir = scratch_dir();
  std::string command = std::string("cd '") + LIFTX_SOURCE_DIR + "' && '" + LIFTX_BINARY + "' " +
                        args + " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() +
                        "'";
  int status = std::system(command.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(dir / "out");
  r.err = read_text(dir / "err");
  return r;
}

/// Writes `text` to a file of the scratch directory and returns its path.
inline fs::path write_file(const std::string& name, const std::string& text) {
  fs::path path = scratch_dir() / name;
  std::ofstream(path) << text;
  return path;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---- helpers of the command tests (test_cli_model.cpp, test_cli_data.cpp) ----

/// A fresh folder of the scratch directory, removed when the test is done with it. Every test
/// that writes a database, a model or variants does so here, and sets LIFTX_DB, LIFTX_CACHE_DIR
/// and XDG_DATA_HOME under it so that no command touches the user's database, build cache or
/// calibrated models.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(scratch_dir() / name) {
    fs::remove_all(path);
    fs::create_directories(path);
    setenv("LIFTX_DB", (path / "default.db").c_str(), 1);
    setenv("LIFTX_CACHE_DIR", (scratch_dir() / "cache").c_str(), 1);
    // Calibrated models and calibration state live in the user data folder: a test's own.
    setenv("XDG_DATA_HOME", (path / "data").c_str(), 1);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

/// A copy of the shipped PoCL dataset (model/data/pocl.db: 800 measurements, 8 stencils, 2 size
/// sets, one device), so that no test opens the tracked file itself.
inline std::string copy_of_pocl_db(const TempDir& dir) {
  const fs::path copy = dir.path / "pocl.db";
  fs::copy_file(fs::path(LIFTX_SOURCE_DIR) / "model/data/pocl.db", copy);
  return copy.string();
}

/// Runs one SQL statement on a database the test owns (to stage what a busy device, or another
/// device, would have recorded).
inline void execute_sql(const std::string& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &handle) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(handle);
  CAPTURE(message);
  REQUIRE(rc == SQLITE_OK);
}

/// The rows of a query on a database, opened read-only (NULL as "").
inline std::vector<std::vector<std::string>> query_rows(const std::string& db,
                                                        const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  std::vector<std::vector<std::string>> rows;
  auto collect = [](void* into, int columns, char** values, char**) {
    std::vector<std::string> row;
    for (int c = 0; c < columns; ++c)
      row.emplace_back(values[c] ? values[c] : "");
    static_cast<std::vector<std::vector<std::string>>*>(into)->push_back(std::move(row));
    return 0;
  };
  char* error = nullptr;
  const int rc = sqlite3_exec(handle, sql.c_str(), collect, &rows, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(handle);
  CAPTURE(message);
  REQUIRE(rc == SQLITE_OK);
  return rows;
}

constexpr const char* kPoclDevice =
    "pocl:pthread-skylake-avx512-intel-r-xeon-r-processor:3-1-debian";
const std::vector<std::string> kStencils = {"gaussian",    "gradient", "hotspot2d", "jacobi2d5pt",
                                            "jacobi2d9pt", "srad1",    "srad2",     "stencil2d"};

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

/// The lines of `text` that start with `prefix`.
inline std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& line : lines_of(text))
    if (line.rfind(prefix, 0) == 0)
      out.push_back(line);
  return out;
}

/// The one line of `text` that starts with `prefix`, without the prefix; "" (and a failed check)
/// if there is none.
inline std::string field(const std::string& text, const std::string& prefix) {
  std::vector<std::string> found = lines_starting(text, prefix);
  CHECK_MESSAGE(found.size() == 1, "expected one line starting with '", prefix, "' in:\n", text);
  return found.empty() ? "" : found.front().substr(prefix.size());
}

/// The fields of one CSV line; double quotes enclose fields with commas ("" is a quote).
inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

/// The cells of a markdown table row `| a | b |`, trimmed.
inline std::vector<std::string> table_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] != '|') {
      cell += row[i];
      continue;
    }
    const size_t first = cell.find_first_not_of(' ');
    const size_t last = cell.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    cell.clear();
  }
  return cells;
}

/// The feature columns the "Columns" table of docs/features.md documents (`program` and the
/// features; `global_size_0..2` stands for three columns).
inline std::set<std::string> documented_feature_columns() {
  const std::string doc = read_text(fs::path(LIFTX_SOURCE_DIR) / "docs/features.md");
  const size_t section = doc.find("\n## Columns\n");
  REQUIRE(section != std::string::npos);
  std::set<std::string> names;
  bool in_table = false;
  for (const std::string& line : lines_of(doc.substr(section + 1))) {
    if (line.rfind("| `", 0) != 0) {
      if (in_table)
        break;
      continue;
    }
    in_table = true;
    const std::string first_cell = line.substr(1, line.find('|', 1) - 1);
    for (size_t at = first_cell.find('`'); at != std::string::npos;) {
      const size_t end = first_cell.find('`', at + 1);
      std::string name = first_cell.substr(at + 1, end - at - 1);
      if (name.size() > 5 && name.substr(name.size() - 5) == "_0..2") {
        for (int d = 0; d < 3; ++d)
          names.insert(name.substr(0, name.size() - 4) + std::to_string(d));
      } else {
        names.insert(name);
      }
      at = first_cell.find('`', end + 1);
    }
  }
  return names;
}

/// A row of the `rank` table: rank, predicted, variant index.
struct RankRow {
  int rank = 0;
  double predicted = 0;
  long index = 0;
};

inline std::vector<RankRow> rank_table_rows(const std::string& out) {
  std::vector<RankRow> rows;
  bool after_header = false;
  for (const std::string& line : lines_of(out)) {
    if (after_header) {
      std::istringstream in(line);
      RankRow r;
      in >> r.rank >> r.predicted >> r.index;
      CHECK_MESSAGE(!in.fail(), "not a rank row: ", line);
      rows.push_back(r);
    }
    after_header |= line.rfind(" rank predicted  index  strategy and parameters", 0) == 0;
  }
  CHECK(after_header);
  return rows;
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

inline std::string replace_all(std::string s, char from, char to) {
  std::replace(s.begin(), s.end(), from, to);
  return s;
}

inline size_t files_with_extension(const fs::path& dir, const std::string& extension) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    n += e.path().extension() == extension;
  return n;
}

inline void check_user_error(const RunResult& r) {
  CHECK(r.exit_code == 2);
  CHECK_FALSE(contains(r.err, "internal error"));
  CHECK_FALSE(contains(r.err, "terminate"));
  CHECK_FALSE(contains(r.err, "bug in liftx"));
}

/// A user error (exit 2, no internal error) whose message says `message`.
inline void check_user_error(const RunResult& r, const std::string& message) {
  CAPTURE(r.out);
  CAPTURE(r.err);
  check_user_error(r);
  CHECK(contains(r.err, message));
}

const std::string kDbCsvPrefix =
    "measurement_id,program,sizes,variant,strategy,parameters,dims,global,local,tied,status,"
    "median_ms,min_ms,max_ms,q1_ms,q3_ms,repetitions,compile_ms,timestamp,message,"
    "feature_profile";

} // namespace cli_test
