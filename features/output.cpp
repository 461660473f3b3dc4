/// Feature columns: names, units and CSV/JSON output (docs/features.md documents each column).
#include "features/features.hpp"
#include "support/csv.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace liftx::features {

namespace {

Column integer_column(std::string name, std::string unit, std::string description,
                      std::function<double(const Features&)> value) {
  return {std::move(name), std::move(unit), std::move(description), std::move(value), true};
}
Column real_column(std::string name, std::string unit, std::string description,
                   std::function<double(const Features&)> value) {
  return {std::move(name), std::move(unit), std::move(description), std::move(value), false};
}

std::vector<Column> make_columns() {
  std::vector<Column> c;
  for (int d = 0; d < 3; ++d)
    c.push_back(integer_column(fmt::format("global_size_{}", d), "work-items",
                               fmt::format("global size in dimension {}", d),
                               [d](const Features& f) { return f.global_size[size_t(d)]; }));
  for (int d = 0; d < 3; ++d)
    c.push_back(integer_column(fmt::format("local_size_{}", d), "work-items",
                               fmt::format("local size in dimension {}", d),
                               [d](const Features& f) { return f.local_size[size_t(d)]; }));
  c.push_back(integer_column("local_size_assumed", "0/1",
                             "1 when the local size was left to the runtime and assumed",
                             [](const Features& f) { return f.local_size_assumed ? 1 : 0; }));
  c.push_back(integer_column("work_items", "work-items", "launched work-items",
                             [](const Features& f) { return f.work_items; }));
  c.push_back(integer_column("work_groups", "work-groups", "launched work-groups",
                             [](const Features& f) { return f.work_groups; }));
  c.push_back(integer_column("local_memory_bytes", "bytes", "local memory per work-group",
                             [](const Features& f) { return f.local_memory_bytes; }));
  c.push_back(integer_column("private_memory_bytes", "bytes", "private arrays per work-item",
                             [](const Features& f) { return f.private_memory_bytes; }));
  c.push_back(real_column("global_loads_per_thread", "loads/work-item", "global loads",
                          [](const Features& f) { return f.global_loads_per_thread; }));
  c.push_back(real_column("global_stores_per_thread", "stores/work-item", "global stores",
                          [](const Features& f) { return f.global_stores_per_thread; }));
  c.push_back(real_column("local_loads_per_thread", "loads/work-item", "local loads",
                          [](const Features& f) { return f.local_loads_per_thread; }));
  c.push_back(real_column("local_stores_per_thread", "stores/work-item", "local stores",
                          [](const Features& f) { return f.local_stores_per_thread; }));
  c.push_back(real_column("private_loads_per_thread", "loads/work-item", "private-array loads",
                          [](const Features& f) { return f.private_loads_per_thread; }));
  c.push_back(real_column("private_stores_per_thread", "stores/work-item", "private-array stores",
                          [](const Features& f) { return f.private_stores_per_thread; }));
  c.push_back(real_column("cache_lines_per_warp_access", "cache lines",
                          "distinct cache lines a warp touches per global access",
                          [](const Features& f) { return f.cache_lines_per_warp_access; }));
  c.push_back(real_column("line_segments_per_warp_access", "segments",
                          "runs of consecutive cache lines among those a warp touches per access",
                          [](const Features& f) { return f.line_segments_per_warp_access; }));
  c.push_back(real_column("global_access_width", "elements",
                          "elements per global load/store (vector width), execution-weighted",
                          [](const Features& f) { return f.global_access_width; }));
  c.push_back(real_column("bank_conflict_degree", "requests/bank",
                          "local-memory bank-conflict degree per local access (0: none)",
                          [](const Features& f) { return f.bank_conflict_degree; }));
  c.push_back(integer_column("bytes_moved", "bytes", "inputs read once + output written once",
                             [](const Features& f) { return f.bytes_moved; }));
  c.push_back(integer_column("working_set_bytes", "bytes", "all global buffers",
                             [](const Features& f) { return f.working_set_bytes; }));
  c.push_back(real_column("barriers_per_thread", "barriers/work-item", "barriers executed",
                          [](const Features& f) { return f.barriers_per_thread; }));
  c.push_back(real_column("if_statements_per_thread", "ifs/work-item", "if statements reached",
                          [](const Features& f) { return f.if_statements_per_thread; }));
  c.push_back(real_column("if_bodies_per_thread", "bodies/work-item", "if bodies entered",
                          [](const Features& f) { return f.if_bodies_per_thread; }));
  c.push_back(real_column("for_bodies_per_thread", "iterations/work-item",
                          "for-loop bodies executed",
                          [](const Features& f) { return f.for_bodies_per_thread; }));
  c.push_back(real_column("arith_ops_per_thread", "operations/work-item",
                          "user-function arithmetic operations",
                          [](const Features& f) { return f.arith_ops_per_thread; }));
  c.push_back(integer_column("work_groups_per_cu", "work-groups",
                             "resident work-groups per compute unit (estimate)",
                             [](const Features& f) { return f.work_groups_per_cu; }));
  c.push_back(real_column("occupancy_fraction", "fraction",
                          "resident work-items per compute unit / its maximum (estimate)",
                          [](const Features& f) { return f.occupancy; }));
  return c;
}

std::string format_value(const Column& column, const Features& f) {
  double v = column.value(f);
  if (column.integer)
    return fmt::format("{}", static_cast<int64_t>(std::llround(v)));
  return fmt::format("{:.6g}", v);
}

} // namespace

const std::vector<Column>& columns() {
  static const std::vector<Column> all = make_columns();
  return all;
}

std::string csv_header() {
  std::string out = "program";
  for (const Column& c : columns())
    out += "," + c.name;
  return out;
}

std::string csv_row(const std::string& program, const Features& features) {
  std::string out = csv_quote(program);
  for (const Column& c : columns())
    out += "," + format_value(c, features);
  return out;
}

nlohmann::json to_json(const Features& features) {
  nlohmann::json j = nlohmann::json::object();
  for (const Column& c : columns()) {
    double v = c.value(features);
    if (c.integer)
      j[c.name] = static_cast<int64_t>(std::llround(v));
    else
      j[c.name] = v;
  }
  return j;
}

nlohmann::json to_stored_json(const Features& features) {
  nlohmann::json j = nlohmann::json::object();
  for (const Column& c : columns())
    j[c.name] = c.value(features);
  return j;
}

} // namespace liftx::features
