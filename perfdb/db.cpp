// The performance database on SQLite. Each put is one autocommitted statement (or a small
// transaction), and the journal is in WAL mode, so a process killed at any point leaves every
// committed row readable and the file consistent.
#include "perfdb/db.hpp"
#include "support/csv.hpp"

#include "features/features.hpp"
#include "support/error.hpp"
#include "support/hash.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

namespace liftx::perfdb {

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

/// The columns liftx reads from each table: a file with the right schema version but a table or
/// column missing (edited by hand, or another tool's) is refused when opened, not at the first
/// query that needs it. `added`: absent from files written before the table existed.
struct RequiredTable {
  const char* name;
  const char* columns;
  bool added;
};
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

/// FNV-1a as 16 hex digits: the same key for the same text on every machine.
std::string stable_hash(std::string_view text) {
  return fmt::format("{:016x}", fnv1a(text));
}

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

nlohmann::json parse_json(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("performance database: unreadable JSON '{}': {}", text, e.what()));
  }
}

std::string dims_json(const nlohmann::json& launch, const char* key) {
  int dims = launch.value("dims", 1);
  nlohmann::json values = nlohmann::json::array();
  if (launch.contains(key))
    for (int d = 0; d < dims && d < static_cast<int>(launch.at(key).size()); ++d)
      values.push_back(launch.at(key).at(d).get<int64_t>());
  return values.dump();
}

/// The launch of a configuration from four columns of a query from `first` on (dims, global,
/// local, tied).
nlohmann::json launch_at(const Statement& s, int first = 5) {
  return {{"dims", s.integer(first)},
          {"global", parse_json(s.text(first + 1))},
          {"local", parse_json(s.text(first + 2))},
          {"tied", s.integer(first + 3) != 0}};
}

} // namespace

std::string t4_invalidity(runtime::Status status) {
  switch (status) {
  case runtime::Status::ok:
    return "correct";
  case runtime::Status::build_error:
    return "compile";
  case runtime::Status::run_error:
    return "runtime";
  case runtime::Status::out_of_resources:
    return "runtime"; // as Kernel Tuner files CL_OUT_OF_RESOURCES: the launch failed
  case runtime::Status::timeout:
    return "timeout";
  case runtime::Status::wrong_result:
    return "correctness";
  }
  return "runtime";
}

std::string utc_timestamp() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

struct PerfDb::Impl {
  sqlite3* db = nullptr;
  std::filesystem::path path;
  Access access = Access::read_write;

  /// Does the file have this table? (Read-only opens of older files may lack added tables.)
  bool has_table(const char* name) const {
    Statement s(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1");
    s.bind(1, std::string(name)).step();
    return s.integer(0) == 1;
  }

  /// Refuses a file whose tables lack what liftx reads (see kRequiredTables).
  void check_tables() const {
    for (const RequiredTable& table : kRequiredTables)
      check_table(table);
  }

  void check_table(const RequiredTable& table) const {
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

int64_t PerfDb::device(const target::DeviceProfile& profile) {
  nlohmann::json json = profile;
  Statement insert(impl_->db,
                   "INSERT INTO devices(key, name, profile_json) VALUES(?1, ?2, ?3) "
                   "ON CONFLICT(key) DO UPDATE SET profile_json = excluded.profile_json");
  insert.bind(1, profile.key).bind(2, profile.device_name).bind(3, json.dump()).step();
  Statement select(impl_->db, "SELECT id FROM devices WHERE key = ?1");
  select.bind(1, profile.key);
  LIFTX_INTERNAL_CHECK(select.step(), "device row missing after insert");
  return select.integer(0);
}

std::optional<target::DeviceProfile> PerfDb::device_profile(const std::string& device_key) const {
  Statement select(impl_->db, "SELECT profile_json FROM devices WHERE key = ?1");
  select.bind(1, device_key);
  if (!select.step())
    return std::nullopt;
  try {
    return parse_json(select.text(0)).get<target::DeviceProfile>();
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: the stored profile of device {} is unreadable: {}",
                                impl_->path.string(), device_key, e.what()));
  }
}

int64_t PerfDb::program(const std::string& name, const std::string& source) {
  std::string hash = stable_hash(name + '\n' + source);
  Statement insert(impl_->db, "INSERT INTO programs(name, source_hash, source) VALUES(?1, ?2, ?3) "
                              "ON CONFLICT(source_hash) DO NOTHING");
  insert.bind(1, name).bind(2, hash).bind(3, source).step();
  Statement select(impl_->db, "SELECT id FROM programs WHERE source_hash = ?1");
  select.bind(1, hash);
  LIFTX_INTERNAL_CHECK(select.step(), "program row missing after insert");
  return select.integer(0);
}

int64_t PerfDb::variant(int64_t program_id, const std::string& printed, const std::string& strategy,
                        const nlohmann::json& parameters) {
  // The same lowered program reached by two strategies is one variant (the first name stays).
  std::string hash = stable_hash(fmt::format("{}\n{}", program_id, printed));
  Statement insert(impl_->db,
                   "INSERT INTO variants(program_id, hash, printed, strategy, parameters_json) "
                   "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(hash) DO NOTHING");
  insert.bind(1, program_id).bind(2, hash).bind(3, printed).bind(4, strategy);
  insert.bind(5, parameters.dump()).step();
  Statement select(impl_->db, "SELECT id FROM variants WHERE hash = ?1");
  select.bind(1, hash);
  LIFTX_INTERNAL_CHECK(select.step(), "variant row missing after insert");
  return select.integer(0);
}

int64_t PerfDb::configuration(int64_t variant_id, const nlohmann::json& sizes,
                              const nlohmann::json& launch) {
  std::string sizes_json = sizes.dump();
  int64_t dims = launch.value("dims", 1);
  std::string global = dims_json(launch, "global");
  std::string local = dims_json(launch, "local");
  int64_t tied = launch.value("tied", true) ? 1 : 0;
  Statement insert(impl_->db,
                   "INSERT INTO configurations(variant_id, sizes_json, dims, global_json, "
                   "local_json, tied) VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING");
  insert.bind(1, variant_id).bind(2, sizes_json).bind(3, dims).bind(4, global).bind(5, local);
  insert.bind(6, tied).step();
  Statement select(impl_->db, "SELECT id FROM configurations WHERE variant_id = ?1 AND "
                              "sizes_json = ?2 AND global_json = ?3 AND local_json = ?4 AND "
                              "tied = ?5");
  select.bind(1, variant_id).bind(2, sizes_json).bind(3, global).bind(4, local).bind(5, tied);
  LIFTX_INTERNAL_CHECK(select.step(), "configuration row missing after insert");
  return select.integer(0);
}

void PerfDb::put_features(int64_t configuration_id, const std::string& profile,
                          const nlohmann::json& features) {
  Statement insert(impl_->db, "INSERT INTO features(configuration_id, profile, json) "
                              "VALUES(?1, ?2, ?3) ON CONFLICT(configuration_id, profile) DO "
                              "UPDATE SET json = excluded.json");
  insert.bind(1, configuration_id).bind(2, profile).bind(3, features.dump()).step();
}

bool PerfDb::has_features(const std::string& profile) const {
  Statement select(impl_->db, "SELECT 1 FROM features WHERE profile = ?1 LIMIT 1");
  select.bind(1, profile);
  return select.step();
}

std::vector<Row> PerfDb::feature_rows(const std::string& profile) const {
  Statement select(impl_->db,
                   "SELECT c.id, p.name, c.sizes_json, v.strategy, v.printed, c.dims, "
                   "c.global_json, c.local_json, c.tied, v.parameters_json, f.json FROM features f "
                   "JOIN configurations c ON c.id = f.configuration_id "
                   "JOIN variants v ON v.id = c.variant_id JOIN programs p ON p.id = v.program_id "
                   "WHERE f.profile = ?1 ORDER BY c.id");
  select.bind(1, profile);
  std::vector<Row> rows;
  while (select.step()) {
    Row r;
    r.configuration_id = select.integer(0);
    r.program = select.text(1);
    r.sizes = select.text(2);
    r.strategy = select.text(3);
    r.printed = select.text(4);
    r.launch = launch_at(select);
    r.parameters = parse_json(select.text(9));
    r.features = parse_json(select.text(10));
    rows.push_back(std::move(r));
  }
  return rows;
}

void PerfDb::replace_features(const std::string& profile,
                              const std::vector<std::pair<int64_t, nlohmann::json>>& features,
                              const std::vector<int64_t>& removed) {
  impl_->exec("BEGIN IMMEDIATE");
  try {
    for (const auto& [configuration_id, json] : features)
      put_features(configuration_id, profile, json);
    Statement drop(impl_->db, "DELETE FROM features WHERE configuration_id = ?1 AND profile = ?2");
    for (int64_t configuration_id : removed) {
      drop.bind(1, configuration_id).bind(2, profile).step();
      drop.reset();
    }
    impl_->exec("COMMIT");
  } catch (...) {
    impl_->exec("ROLLBACK");
    throw;
  }
}

void PerfDb::put_measurement(int64_t configuration_id, int64_t device_id, const Measurement& m) {
  Statement insert(impl_->db,
                   "INSERT INTO measurements(configuration_id, device_id, status, median_ms, "
                   "min_ms, max_ms, q1_ms, q3_ms, repetitions, compile_ms, message, timestamp) "
                   "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  insert.bind(1, configuration_id).bind(2, device_id);
  insert.bind(3, std::string(runtime::to_string(m.status)));
  insert.bind(4, m.median_ms).bind(5, m.min_ms).bind(6, m.max_ms).bind(7, m.q1_ms);
  insert.bind(8, m.q3_ms).bind(9, int64_t{m.repetitions}).bind(10, m.compile_ms);
  insert.bind(11, m.message).bind(12, utc_timestamp()).step();
  if (!m.samples_ms.empty()) {
    Statement samples(impl_->db, "INSERT INTO measurement_samples(measurement_id, samples_json) "
                                 "VALUES(last_insert_rowid(), ?1)");
    samples.bind(1, nlohmann::json(m.samples_ms).dump()).step();
  }
}

std::optional<TunedWinner> PerfDb::winner(const std::string& key) const {
  if (!impl_->has_table("tuned_winners"))
    return std::nullopt;
  Statement s(impl_->db, "SELECT program_identity, program_name, sizes_json, device_key, "
                         "liftx_version, lowered, launch_json, variant, median_ms, timed_on, "
                         "model, configuration_id FROM tuned_winners WHERE key = ?1");
  s.bind(1, key);
  if (!s.step())
    return std::nullopt;
  TunedWinner w;
  w.key = key;
  try {
    w.sizes = nlohmann::json::parse(s.text(2));
    w.launch = nlohmann::json::parse(s.text(6));
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  w.program_identity = s.text(0);
  w.program_name = s.text(1);
  w.device_key = s.text(3);
  w.liftx_version = s.text(4);
  w.lowered = s.text(5);
  w.variant = s.text(7);
  w.median_ms = s.real(8);
  w.timed_on = s.text(9);
  w.model = s.text(10);
  w.configuration_id = s.integer(11);
  return w;
}

void PerfDb::put_winner(const TunedWinner& w) {
  Statement s(impl_->db, "INSERT OR REPLACE INTO tuned_winners(key, program_identity, "
                         "program_name, sizes_json, device_key, liftx_version, lowered, "
                         "launch_json, variant, median_ms, timed_on, model, configuration_id, "
                         "timestamp) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                         "?13, ?14)");
  s.bind(1, w.key).bind(2, w.program_identity).bind(3, w.program_name).bind(4, w.sizes.dump());
  s.bind(5, w.device_key).bind(6, w.liftx_version).bind(7, w.lowered).bind(8, w.launch.dump());
  s.bind(9, w.variant).bind(10, w.median_ms).bind(11, w.timed_on).bind(12, w.model);
  s.bind(13, w.configuration_id).bind(14, utc_timestamp()).step();
}

bool PerfDb::has_measurement(int64_t configuration_id, int64_t device_id) const {
  Statement select(impl_->db, "SELECT 1 FROM measurements WHERE configuration_id = ?1 AND "
                              "device_id = ?2 LIMIT 1");
  select.bind(1, configuration_id).bind(2, device_id);
  return select.step();
}

namespace {

/// The measurement in columns `first`.. of a row: status, median, min, max, q1, q3 (ms),
/// repetitions, compile_ms, message (the order of the measurements table).
Measurement measurement_at(const Statement& s, int first = 9) {
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

} // namespace

std::optional<Measurement> PerfDb::latest_measurement(int64_t configuration_id,
                                                      int64_t device_id) const {
  Statement select(impl_->db,
                   "SELECT status, median_ms, min_ms, max_ms, q1_ms, q3_ms, repetitions, "
                   "compile_ms, message FROM measurements WHERE configuration_id = ?1 AND "
                   "device_id = ?2 ORDER BY id DESC LIMIT 1");
  select.bind(1, configuration_id).bind(2, device_id);
  if (!select.step())
    return std::nullopt;
  return measurement_at(select, 0);
}

std::optional<std::vector<PlannedConfiguration>> PerfDb::plan(int64_t program_id,
                                                              const nlohmann::json& sizes,
                                                              const std::string& profile,
                                                              const std::string& selection) const {
  if (!impl_->has_table("plans"))
    return std::nullopt;
  Statement find(impl_->db, "SELECT id FROM plans WHERE program_id = ?1 AND sizes_json = ?2 AND "
                            "profile = ?3 AND selection = ?4");
  find.bind(1, program_id).bind(2, sizes.dump()).bind(3, profile).bind(4, selection);
  if (!find.step())
    return std::nullopt;
  Statement select(impl_->db, R"sql(
    SELECT pc.configuration_id, pc.variant_index, v.strategy, v.printed, c.dims, c.global_json,
           c.local_json, c.tied
    FROM plan_configurations pc
    JOIN configurations c ON c.id = pc.configuration_id
    JOIN variants v ON v.id = c.variant_id
    WHERE pc.plan_id = ?1 ORDER BY pc.position)sql");
  select.bind(1, find.integer(0));
  std::vector<PlannedConfiguration> planned;
  while (select.step()) {
    PlannedConfiguration p;
    p.configuration_id = select.integer(0);
    p.variant_index = select.integer(1);
    p.strategy = select.text(2);
    p.printed = select.text(3);
    p.launch = launch_at(select, 4);
    planned.push_back(std::move(p));
  }
  return planned;
}

void PerfDb::put_plan(int64_t program_id, const nlohmann::json& sizes, const std::string& profile,
                      const std::string& selection,
                      const std::vector<std::pair<int64_t, int64_t>>& configurations_and_indices) {
  impl_->exec("BEGIN IMMEDIATE");
  try {
    Statement old(impl_->db, "SELECT id FROM plans WHERE program_id = ?1 AND sizes_json = ?2 AND "
                             "profile = ?3 AND selection = ?4");
    old.bind(1, program_id).bind(2, sizes.dump()).bind(3, profile).bind(4, selection);
    if (old.step()) {
      Statement drop(impl_->db, "DELETE FROM plan_configurations WHERE plan_id = ?1");
      drop.bind(1, old.integer(0)).step();
      Statement drop_plan(impl_->db, "DELETE FROM plans WHERE id = ?1");
      drop_plan.bind(1, old.integer(0)).step();
    }
    Statement insert(impl_->db, "INSERT INTO plans(program_id, sizes_json, profile, selection) "
                                "VALUES(?1, ?2, ?3, ?4)");
    insert.bind(1, program_id).bind(2, sizes.dump()).bind(3, profile).bind(4, selection).step();
    const int64_t plan_id = sqlite3_last_insert_rowid(impl_->db);
    Statement add(impl_->db, "INSERT INTO plan_configurations(plan_id, position, "
                             "configuration_id, variant_index) VALUES(?1, ?2, ?3, ?4)");
    int64_t position = 0;
    for (const auto& [configuration_id, index] : configurations_and_indices) {
      add.bind(1, plan_id).bind(2, position++).bind(3, configuration_id).bind(4, index);
      add.step();
      add.reset();
    }
    impl_->exec("COMMIT");
  } catch (...) {
    sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

namespace {

/// A configuration as Kernel Tuner keeps one: a flat map from parameter name to value. A size or
/// strategy parameter whose name is taken already gets a `size_` or `param_` prefix rather than
/// hiding the other.
nlohmann::json flat_t4_configuration(const Statement& s) {
  nlohmann::json flat = {{"program", s.text(1)}, {"strategy", s.text(3)}, {"variant", s.text(19)}};
  auto add_all = [&](const nlohmann::json& values, const char* prefix) {
    if (values.is_object())
      for (const auto& [name, value] : values.items())
        flat[flat.contains(name) ? prefix + name : name] = value;
  };
  add_all(parse_json(s.text(2)), "size_");
  add_all(parse_json(s.text(20)), "param_");
  const nlohmann::json launch = launch_at(s);
  const char* const axes[] = {"x", "y", "z"};
  for (const char* what : {"global", "local"}) {
    const nlohmann::json& sizes_of = launch.at(what);
    for (size_t d = 0; d < 3; ++d)
      flat[fmt::format("{}_size_{}", what, axes[d])] =
          sizes_of.is_array() && d < sizes_of.size() ? sizes_of[d] : nlohmann::json(1);
  }
  flat["threads_tied"] = launch.at("tied").get<bool>() ? 1 : 0;
  return flat;
}

} // namespace

std::vector<Row> PerfDb::rows(const std::string& device_key, const std::string& profile) const {
  std::string sql = std::string(Impl::kJoined) +
                    " AND m.id = (SELECT max(m2.id) FROM measurements m2 WHERE "
                    "m2.configuration_id = m.configuration_id AND m2.device_id = m.device_id) "
                    "ORDER BY c.id";
  Statement s(impl_->db, sql.c_str());
  s.bind(1, device_key);
  std::vector<Row> rows;
  while (s.step()) {
    Row row;
    row.configuration_id = s.integer(0);
    Statement f(impl_->db,
                "SELECT json FROM features WHERE configuration_id = ?1 AND profile = ?2");
    f.bind(1, row.configuration_id).bind(2, profile);
    if (!f.step())
      continue;
    row.features = parse_json(f.text(0));
    row.program = s.text(1);
    row.sizes = s.text(2);
    row.strategy = s.text(3);
    row.printed = s.text(4);
    row.parameters = parse_json(s.text(20));
    row.launch = launch_at(s);
    row.measurement = measurement_at(s);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> PerfDb::device_keys() const {
  Statement s(impl_->db, "SELECT key FROM devices ORDER BY key");
  std::vector<std::string> keys;
  while (s.step())
    keys.push_back(s.text(0));
  return keys;
}

std::vector<std::pair<std::string, std::string>> PerfDb::program_sources() const {
  Statement s(impl_->db, "SELECT name, source FROM programs ORDER BY id");
  std::vector<std::pair<std::string, std::string>> out;
  while (s.step())
    out.emplace_back(s.text(0), s.text(1));
  return out;
}

int64_t PerfDb::export_csv(std::ostream& out, const std::string& device_key,
                           int64_t after_measurement_id) const {
  std::string sql = std::string(Impl::kJoined) + " AND m.id > ?2 ORDER BY m.id";
  Statement s(impl_->db, sql.c_str());
  s.bind(1, device_key).bind(2, after_measurement_id);
  const std::vector<features::Column>& columns = features::columns();
  out << "measurement_id,program,sizes,variant,strategy,parameters,dims,global,local,tied,status,"
         "median_ms,min_ms,max_ms,q1_ms,q3_ms,repetitions,compile_ms,timestamp,message,"
         "feature_profile";
  for (const features::Column& c : columns)
    out << ',' << c.name;
  out << '\n';
  int64_t rows = 0;
  while (s.step()) {
    // Launch sizes are stored as JSON arrays of integers; a damaged cell is named, not an
    // internal error.
    auto join = [&](const nlohmann::json& values) {
      std::string text;
      LIFTX_USER_CHECK(values.is_array(),
                       "performance database: measurement {}: launch sizes {} are "
                       "not a list of whole numbers",
                       s.integer(21), values.dump());
      for (const auto& v : values) {
        LIFTX_USER_CHECK(v.is_number_integer(),
                         "performance database: measurement {}: launch sizes {} are "
                         "not a list of whole numbers",
                         s.integer(21), values.dump());
        text += (text.empty() ? "" : "x") + std::to_string(v.get<int64_t>());
      }
      return text;
    };
    out << s.integer(21) << ',' << csv_quote(s.text(1)) << ',' << csv_quote(s.text(2)) << ','
        << s.text(19) << ',' << csv_quote(s.text(3)) << ',' << csv_quote(s.text(20)) << ','
        << s.integer(5) << ',' << join(parse_json(s.text(6))) << ',' << join(parse_json(s.text(7)))
        << ',' << (s.integer(8) ? "true" : "false") << ',' << s.text(9);
    // A failed run has no times: empty fields, so that a reader's minimum is never a failure.
    const bool timed = s.text(9) == runtime::to_string(runtime::Status::ok);
    for (int column = 10; column <= 14; ++column)
      out << ',' << (timed ? fmt::format("{:.6g}", s.real(column)) : std::string());
    out << ',' << s.integer(15) << ',' << fmt::format("{:.6g}", s.real(16)) << ',' << s.text(18)
        << ',' << csv_quote(s.text(17));
    // Features of the first profile (alphabetically) computed for the configuration.
    Statement f(impl_->db, "SELECT profile, json FROM features WHERE configuration_id = ?1 "
                           "ORDER BY profile LIMIT 1");
    f.bind(1, s.integer(0));
    nlohmann::json values;
    if (f.step()) {
      out << ',' << csv_quote(f.text(0));
      values = parse_json(f.text(1));
    } else {
      out << ',';
    }
    for (const features::Column& c : columns) {
      out << ',';
      if (values.is_object() && values.contains(c.name) && values.at(c.name).is_number())
        out << fmt::format("{:.10g}", values.at(c.name).get<double>());
    }
    out << '\n';
    ++rows;
  }
  return rows;
}

int64_t PerfDb::last_measurement_id() const {
  Statement s(impl_->db, "SELECT COALESCE(MAX(id), 0) FROM measurements");
  return s.step() ? s.integer(0) : 0;
}

nlohmann::json PerfDb::measurements_json(const std::string& device_key,
                                         int64_t after_measurement_id) const {
  std::string sql = std::string(Impl::kJoined) + " AND m.id > ?2 ORDER BY m.id";
  Statement s(impl_->db, sql.c_str());
  s.bind(1, device_key).bind(2, after_measurement_id);
  nlohmann::json rows = nlohmann::json::array();
  while (s.step()) {
    const Measurement m = measurement_at(s);
    nlohmann::json row = {{"measurement_id", s.integer(21)},
                          {"program", s.text(1)},
                          {"sizes", parse_json(s.text(2))},
                          {"strategy", s.text(3)},
                          {"parameters", parse_json(s.text(20))},
                          {"configuration", flat_t4_configuration(s)},
                          {"status", std::string(runtime::to_string(m.status))},
                          {"timestamp", s.text(18)}};
    if (m.status == runtime::Status::ok)
      row.update({{"median_ms", m.median_ms},
                  {"q1_ms", m.q1_ms},
                  {"q3_ms", m.q3_ms},
                  {"min_ms", m.min_ms},
                  {"max_ms", m.max_ms},
                  {"repetitions", m.repetitions}});
    else
      row["message"] = m.message;
    rows.push_back(std::move(row));
  }
  return rows;
}

void PerfDb::export_t4(std::ostream& out, const std::string& device_key) const {
  std::string sql = std::string(Impl::kJoined) + " ORDER BY m.id";
  Statement s(impl_->db, sql.c_str());
  s.bind(1, device_key);
  // Each timed run where the database kept them (a table written since liftx keeps them).
  std::optional<Statement> samples;
  if (impl_->has_table("measurement_samples"))
    samples.emplace(impl_->db,
                    "SELECT samples_json FROM measurement_samples WHERE measurement_id = ?1");
  nlohmann::json results = nlohmann::json::array();
  while (s.step()) {
    Measurement m = measurement_at(s);
    bool ok = m.status == runtime::Status::ok;
    const nlohmann::json configuration = flat_t4_configuration(s);
    nlohmann::json runtimes = nlohmann::json::array();
    if (ok && samples) {
      samples->reset();
      samples->bind(1, s.integer(21));
      if (samples->step()) {
        const nlohmann::json kept = parse_json(samples->text(0));
        if (kept.is_array())
          for (const nlohmann::json& t : kept)
            if (t.is_number())
              runtimes.push_back(t.get<double>());
      }
    }
    if (ok && runtimes.empty())
      runtimes.push_back(m.median_ms); // an older row: its median stands for its runs
    nlohmann::json result = {
        {"timestamp", s.text(18)},
        {"configuration", configuration},
        {"objectives", {"time"}},
        {"times", {{"compilation_time", m.compile_ms}, {"runtimes", runtimes}}},
        {"invalidity", t4_invalidity(m.status)},
        {"correctness", ok ? 1 : 0},
        {"status", ok ? "ok" : "failed"},
        {"liftx_status", std::string(runtime::to_string(m.status))},
        {"measurements", nlohmann::json::array()}};
    if (ok) {
      result["measurements"].push_back({{"name", "time"}, {"value", m.median_ms}, {"unit", "ms"}});
      result["measurements"].push_back({{"name", "time_min"}, {"value", m.min_ms}, {"unit", "ms"}});
      result["measurements"].push_back({{"name", "time_max"}, {"value", m.max_ms}, {"unit", "ms"}});
      result["measurements"].push_back({{"name", "time_q1"}, {"value", m.q1_ms}, {"unit", "ms"}});
      result["measurements"].push_back({{"name", "time_q3"}, {"value", m.q3_ms}, {"unit", "ms"}});
      result["measurements"].push_back(
          {{"name", "repetitions"}, {"value", m.repetitions}, {"unit", ""}});
    }
    if (!m.message.empty())
      result["message"] = m.message;
    results.push_back(std::move(result));
  }
  std::string device_name;
  {
    Statement d(impl_->db, "SELECT name FROM devices WHERE key = ?1");
    d.bind(1, device_key);
    if (d.step())
      device_name = d.text(0);
  }
  nlohmann::json document = {
      {"schema_version", "1.0.0"},
      {"device", device_key},
      {"metadata",
       {{"tool", "liftx"},
        {"liftx_version", LIFTX_TOOL_VERSION},
        {"device", {{"key", device_key}, {"name", device_name}}},
        {"time_unit", "ms"},
        {"runtimes", "times.runtimes holds every timed run (a database written before liftx "
                     "kept each run gives their median alone); measurements add time_min, "
                     "time_q1, time_q3, time_max and repetitions"},
        {"configuration",
         "flat: program, each size, strategy, each strategy parameter, global_size_x/y/z, "
         "local_size_x/y/z (0 = left to the runtime), threads_tied (1 = one work-item per "
         "output element), variant (the variant's hash)"}}},
      {"results", std::move(results)}};
  // Text in the file is whatever its writers stored (a device name, a kernel's message): bytes
  // that are not UTF-8 become U+FFFD rather than failing the whole export.
  out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

} // namespace liftx::perfdb
