// The performance database's whole-table reads: the training rows, the device and program lists,
// and the CSV, JSON and Kernel Tuner T4 exports of the measurements.
#include "perfdb/db_internal.hpp"
#include "support/csv.hpp"

#include "features/features.hpp"

#include <optional>

namespace liftx::perfdb {

using namespace detail;

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
