// Opening the performance database: its schema (and the tables added since), the checks that
// refuse a file liftx cannot use before a byte is written, and creating a new one.
#include "perfdb/db_internal.hpp"

#include <cctype>
#include <cstdlib>

namespace liftx::perfdb {

using namespace detail;

namespace {

constexpr int kSchemaVersion = 1;

const char* const kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS devices(
  id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, name TEXT NOT NULL, profile_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS programs(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, source_hash TEXT NOT NULL UNIQUE, source TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS variants(
  id INTEGER PRIMARY KEY, program_id INTEGER NOT NULL REFERENCES programs(id),
  hash TEXT NOT NULL UNIQUE, printed TEXT NOT NULL, strategy TEXT NOT NULL,
  parameters_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS configurations(
  id INTEGER PRIMARY KEY, variant_id INTEGER NOT NULL REFERENCES variants(id),
  sizes_json TEXT NOT NULL, dims INTEGER NOT NULL, global_json TEXT NOT NULL,
  local_json TEXT NOT NULL, tied INTEGER NOT NULL,
  UNIQUE(variant_id, sizes_json, global_json, local_json, tied));
CREATE TABLE IF NOT EXISTS features(
  configuration_id INTEGER NOT NULL REFERENCES configurations(id), profile TEXT NOT NULL,
  json TEXT NOT NULL, PRIMARY KEY(configuration_id, profile));
CREATE TABLE IF NOT EXISTS measurements(
  id INTEGER PRIMARY KEY, configuration_id INTEGER NOT NULL REFERENCES configurations(id),
  device_id INTEGER NOT NULL REFERENCES devices(id), status TEXT NOT NULL,
  median_ms REAL, min_ms REAL, max_ms REAL, q1_ms REAL, q3_ms REAL, repetitions INTEGER,
  compile_ms REAL, message TEXT, timestamp TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS measurements_by_configuration
  ON measurements(configuration_id, device_id);
)sql";

/// Tables added after version 1 was first shipped; created in older files when they are opened
/// for writing.
constexpr const char* kAddedSchema = R"sql(
CREATE TABLE IF NOT EXISTS measurement_samples(
  measurement_id INTEGER PRIMARY KEY REFERENCES measurements(id), samples_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tuned_winners(
  key TEXT PRIMARY KEY, program_identity TEXT NOT NULL, program_name TEXT NOT NULL,
  sizes_json TEXT NOT NULL, device_key TEXT NOT NULL, liftx_version TEXT NOT NULL,
  lowered TEXT NOT NULL, launch_json TEXT NOT NULL, variant TEXT NOT NULL, median_ms REAL,
  timed_on TEXT NOT NULL, model TEXT NOT NULL, configuration_id INTEGER, timestamp TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS plans(
  id INTEGER PRIMARY KEY, program_id INTEGER NOT NULL REFERENCES programs(id),
  sizes_json TEXT NOT NULL, profile TEXT NOT NULL, selection TEXT NOT NULL,
  UNIQUE(program_id, sizes_json, profile, selection));
CREATE TABLE IF NOT EXISTS plan_configurations(
  plan_id INTEGER NOT NULL REFERENCES plans(id), position INTEGER NOT NULL,
  configuration_id INTEGER NOT NULL REFERENCES configurations(id),
  variant_index INTEGER NOT NULL, PRIMARY KEY(plan_id, position));
)sql";

constexpr RequiredTable kRequiredTables[] = {
    {"meta", "key, value", false},
    {"devices", "id, key, name, profile_json", false},
    {"programs", "id, name, source_hash, source", false},
    {"variants", "id, program_id, hash, printed, strategy, parameters_json", false},
    {"configurations", "id, variant_id, sizes_json, dims, global_json, local_json, tied", false},
    {"features", "configuration_id, profile, json", false},
    {"measurements",
     "id, configuration_id, device_id, status, median_ms, min_ms, max_ms, q1_ms, q3_ms, "
     "repetitions, compile_ms, message, timestamp",
     false},
    {"tuned_winners",
     "key, program_identity, program_name, sizes_json, device_key, liftx_version, lowered, "
     "launch_json, variant, median_ms, timed_on, model, configuration_id, timestamp",
     true},
    {"plans", "id, program_id, sizes_json, profile, selection", true},
    {"plan_configurations", "plan_id, position, configuration_id, variant_index", true},
    {"measurement_samples", "measurement_id, samples_json", true},
};

/// "file:" and the path with the characters a URI reserves percent-encoded.
std::string sqlite_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~')
      uri += static_cast<char>(c);
    else
      uri += fmt::format("%{:02X}", c);
  }
  return uri;
}

std::string clip(std::string text) {
  constexpr size_t kMax = 400;
  if (text.size() > kMax)
    text = text.substr(0, kMax) + " [...]";
  return text;
}

} // namespace

/// Refuses a file whose tables lack what liftx reads (see kRequiredTables).
void PerfDb::Impl::check_tables() const {
  for (const RequiredTable& table : kRequiredTables)
    check_table(table);
}

void PerfDb::Impl::check_table(const RequiredTable& table) const {
  if (!has_table(table.name)) {
    if (table.added)
      return;
    throw UserError(fmt::format("{} is not a usable liftx performance database: it has no "
                                "table '{}'",
                                path.string(), table.name));
  }
  const std::string probe = fmt::format("SELECT {} FROM {} LIMIT 0", table.columns, table.name);
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db, probe.c_str(), -1, &stmt, nullptr);
  sqlite3_finalize(stmt);
  LIFTX_USER_CHECK(rc == SQLITE_OK,
                   "{} is not a usable liftx performance database: table '{}' "
                   "({})",
                   path.string(), table.name, sqlite3_errmsg(db));
}

std::filesystem::path PerfDb::default_path() {
  if (const char* db = std::getenv("LIFTX_DB"); db && *db)
    return db;
  if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data)
    return std::filesystem::path(data) / "liftx" / "perf.db";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".local" / "share" / "liftx" /
         "perf.db";
}

PerfDb::PerfDb(const std::filesystem::path& path, Access access) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->access = access;
  const bool writing = access == Access::read_write;
  std::error_code ec;
  LIFTX_USER_CHECK(!(!writing && !std::filesystem::exists(path, ec)),
                   "no performance database at {}", path.string());
  if (writing && path.has_parent_path())
    std::filesystem::create_directories(path.parent_path(), ec);
  LIFTX_USER_CHECK(!ec, "cannot create the folder of {}: {}", path.string(), ec.message());
  // A reader of a database in WAL mode would leave -wal and -shm files beside it. When there is
  // no -wal file (no writer has uncommitted pages), the file is opened as immutable: no locks and
  // no side files, so reading leaves the folder as it was (a tracked database stays clean).
  std::string name = path.string();
  int flags = writing ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  if (!writing && !std::filesystem::exists(name + "-wal", ec)) {
    name = sqlite_uri(std::filesystem::absolute(path, ec).string()) + "?immutable=1";
    flags |= SQLITE_OPEN_URI;
  }
  if (sqlite3_open_v2(name.c_str(), &impl_->db, flags, nullptr) != SQLITE_OK) {
    std::string message = impl_->db ? sqlite3_errmsg(impl_->db) : "out of memory";
    sqlite3_close(impl_->db);
    throw UserError(
        fmt::format("cannot open the performance database {}: {}", path.string(), message));
  }
  try {
    sqlite3_busy_timeout(impl_->db, kBusyTimeoutMs);
    // Everything that decides whether the file may be written only reads: a corrupted file, a
    // file that is not SQLite or someone else's database is refused with not a byte changed
    // (switching the journal mode would already rewrite the header).
    impl_->exec("SELECT count(*) FROM sqlite_master"); // a file that is not SQLite fails here
    if (writing) {
      std::string problems;
      try {
        Statement check(impl_->db, "PRAGMA quick_check");
        while (check.step())
          if (const std::string line = check.text(0); line != "ok")
            problems += (problems.empty() ? "" : "; ") + line;
      } catch (const UserError&) {
        // A page too damaged to check ("database disk image is malformed"); anything else (a
        // lock held too long) is not corruption.
        const int code = sqlite3_errcode(impl_->db);
        if (code != SQLITE_CORRUPT && code != SQLITE_NOTADB)
          throw;
        problems = sqlite3_errmsg(impl_->db);
      }
      LIFTX_USER_CHECK(problems.empty(),
                       "{} is corrupted ({}): it was not written; restore it from a "
                       "copy or collect into another --db",
                       path.string(), clip(problems));
    }
    auto schema_version = [&] {
      int version = 0;
      if (impl_->has_table("meta")) {
        impl_->check_table(kRequiredTables[0]); // meta, read before the others are checked
        Statement meta(impl_->db, "SELECT value FROM meta WHERE key='schema_version'");
        if (meta.step())
          version = std::atoi(meta.text(0).c_str());
      }
      return version;
    };
    auto table_count = [&] {
      Statement tables(impl_->db, "SELECT count(*) FROM sqlite_master");
      tables.step();
      return tables.integer(0);
    };
    // An empty file is a new database only for a writer; a reader refuses it untouched.
    int version = schema_version();
    LIFTX_USER_CHECK(!(version == 0 && (!writing || table_count() != 0)),
                     "{} is not a liftx performance database", path.string());
    LIFTX_USER_CHECK(!(version != 0 && version != kSchemaVersion),
                     "{}: schema version {} is not supported (this liftx reads "
                     "version {})",
                     path.string(), version, kSchemaVersion);
    if (version != 0)
      impl_->check_tables(); // before a writer changes a byte
    if (writing) {
      impl_->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
      // Decided again inside the transaction: two writers creating one new file at once.
      impl_->exec("BEGIN IMMEDIATE");
      try {
        if (table_count() == 0) {
          impl_->exec(kSchema);
          Statement meta(impl_->db, "INSERT INTO meta(key, value) VALUES('schema_version', ?1), "
                                    "('application', 'liftx')");
          meta.bind(1, std::to_string(kSchemaVersion)).step();
        } else if (schema_version() != kSchemaVersion) {
          throw UserError(fmt::format("{} is not a liftx performance database", path.string()));
        }
        impl_->exec("COMMIT");
      } catch (...) {
        sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
      }
      impl_->exec(kAddedSchema);
    }
  } catch (...) {
    sqlite3_close(impl_->db);
    throw;
  }
}

const std::filesystem::path& PerfDb::path() const {
  return impl_->path;
}

PerfDb::~PerfDb() {
  sqlite3_close(impl_->db);
}

} // namespace liftx::perfdb
