// The performance database on SQLite. Each put is one autocommitted statement (or a small
// transaction), and the journal is in WAL mode, so a process killed at any point leaves every
// committed row readable and the file consistent.
#include "perfdb/db_internal.hpp"

#include "support/hash.hpp"

#include <chrono>
#include <ctime>
#include <optional>

namespace liftx::perfdb {

using namespace detail;

namespace {

/// FNV-1a as 16 hex digits: the same key for the same text on every machine.
std::string stable_hash(std::string_view text) {
  return fmt::format("{:016x}", fnv1a(text));
}

std::string dims_json(const nlohmann::json& launch, const char* key) {
  int dims = launch.value("dims", 1);
  nlohmann::json values = nlohmann::json::array();
  if (launch.contains(key))
    for (int d = 0; d < dims && d < static_cast<int>(launch.at(key).size()); ++d)
      values.push_back(launch.at(key).at(d).get<int64_t>());
  return values.dump();
}

} // namespace

std::string utc_timestamp() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
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

} // namespace liftx::perfdb
