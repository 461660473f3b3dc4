#pragma once
/// What the files of PerfDb share (db.cpp, db_schema.cpp, db_export.cpp): the prepared statement,
/// the column readers and PerfDb::Impl. Internal to perfdb/: nothing outside the folder includes
/// it.
#include "perfdb/db.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace liftx::perfdb {

namespace detail {

/// The columns liftx reads from each table: a file with the right schema version but a table or
/// column missing (edited by hand, or another tool's) is refused when opened, not at the first
/// query that needs it. `added`: absent from files written before the table existed.
struct RequiredTable {
  const char* name;
  const char* columns;
  bool added;
};

/// A prepared statement, finalized on scope exit.
class Statement {
public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (int rc = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); rc != SQLITE_OK) {
      // Preparing reads the schema: a corrupted or locked file is the user's problem, bad SQL ours.
      if ((rc & 0xff) != SQLITE_ERROR) {
        const char* file = sqlite3_db_filename(db, "main");
        throw UserError(
            fmt::format("performance database {}: {}", file ? file : "", sqlite3_errmsg(db)));
      }
      LIFTX_UNREACHABLE("sqlite: cannot prepare '{}': {}", sql, sqlite3_errmsg(db));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, int64_t value) {
    sqlite3_bind_int64(stmt_, i, value);
    return *this;
  }
  Statement& bind(int i, double value) {
    sqlite3_bind_double(stmt_, i, value);
    return *this;
  }
  /// Steps once: true if a row is available.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW)
      return true;
    if (rc == SQLITE_DONE)
      return false;
    const char* file = sqlite3_db_filename(db_, "main");
    LIFTX_USER_CHECK((rc & 0xff) != SQLITE_BUSY,
                     "performance database {}: still locked by another process "
                     "after {} s ({})",
                     file ? file : "", PerfDb::kBusyTimeoutMs / 1000, sqlite3_errmsg(db_));
    throw UserError(
        fmt::format("performance database {}: {}", file ? file : "", sqlite3_errmsg(db_)));
  }
  /// Makes the statement ready to be bound and stepped again.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string text(int column) const {
    const unsigned char* t = sqlite3_column_text(stmt_, column);
    return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
  }

private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

inline nlohmann::json parse_json(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("performance database: unreadable JSON '{}': {}", text, e.what()));
  }
}

/// The launch of a configuration from four columns of a query from `first` on (dims, global,
/// local, tied).
inline nlohmann::json launch_at(const Statement& s, int first = 5) {
  return {{"dims", s.integer(first)},
          {"global", parse_json(s.text(first + 1))},
          {"local", parse_json(s.text(first + 2))},
          {"tied", s.integer(first + 3) != 0}};
}

/// The measurement in columns `first`.. of a row: status, median, min, max, q1, q3 (ms),
/// repetitions, compile_ms, message (the order of the measurements table).
inline Measurement measurement_at(const Statement& s, int first = 9) {
  Measurement m;
  std::optional<runtime::Status> status = runtime::parse_status(s.text(first));
  LIFTX_USER_CHECK(status, "performance database: unknown status '{}'", s.text(first));
  m.status = *status;
  m.median_ms = s.real(first + 1);
  m.min_ms = s.real(first + 2);
  m.max_ms = s.real(first + 3);
  m.q1_ms = s.real(first + 4);
  m.q3_ms = s.real(first + 5);
  m.repetitions = static_cast<int>(s.integer(first + 6));
  m.compile_ms = s.real(first + 7);
  m.message = s.text(first + 8);
  return m;
}

} // namespace detail

struct PerfDb::Impl {
  sqlite3* db = nullptr;
  std::filesystem::path path;
  Access access = Access::read_write;

  /// Does the file have this table? (Read-only opens of older files may lack added tables.)
  bool has_table(const char* name) const {
    detail::Statement s(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1");
    s.bind(1, std::string(name)).step();
    return s.integer(0) == 1;
  }

  /// Refuses a file whose tables lack what liftx reads (see kRequiredTables).
  void check_tables() const;
  void check_table(const detail::RequiredTable& table) const;

  void exec(const char* sql) {
    char* error = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error ? error : "unknown error";
      sqlite3_free(error);
      throw UserError(
          fmt::format("{}: not a usable liftx performance database: {}", path.string(), message));
    }
  }

  /// A measurement row joined with everything that describes it, for rows() and the exports.
  static constexpr const char* kJoined = R"sql(
    SELECT c.id, p.name, c.sizes_json, v.strategy, v.printed, c.dims, c.global_json,
           c.local_json, c.tied, m.status, m.median_ms, m.min_ms, m.max_ms, m.q1_ms, m.q3_ms,
           m.repetitions, m.compile_ms, m.message, m.timestamp, v.hash, v.parameters_json, m.id
    FROM measurements m
    JOIN devices d ON d.id = m.device_id
    JOIN configurations c ON c.id = m.configuration_id
    JOIN variants v ON v.id = c.variant_id
    JOIN programs p ON p.id = v.program_id
    WHERE d.key = ?1 )sql";
};

} // namespace liftx::perfdb
