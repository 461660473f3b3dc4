#include "features/derived.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace liftx::features {

namespace {

/// Bytes of one element of a global, local or private access: the features count accesses, not
/// bytes, and liftx's stencils are float.
constexpr double kElementBytes = 4;

} // namespace

const std::vector<DerivedColumn>& derived_columns() {
  static const std::vector<DerivedColumn> all = {
      {"line_bytes_per_byte", "bytes/byte",
       "cache-line bytes of all warp accesses per byte moved (traffic seen by the caches)"},
      {"useful_bytes_per_byte", "bytes/byte",
       "bytes the global loads and stores ask for per byte moved (redundant loads)"},
      {"coalescing_efficiency", "fraction", "useful bytes / cache-line bytes of global accesses"},
      {"ops_per_byte", "operations/byte", "user-function operations per byte moved"},
      {"local_bytes_per_byte", "bytes/byte",
       "local-memory bytes per byte moved, times the bank-conflict degree"},
      {"private_bytes_per_byte", "bytes/byte", "private-array bytes per byte moved"},
      {"work_items_per_byte", "work-items/byte", "launched work-items per byte moved"},
      {"work_groups_per_byte", "work-groups/byte", "launched work-groups per byte moved"},
      {"barriers_per_byte", "barriers/byte", "work-item barriers per byte moved"},
      {"control_per_byte", "iterations/byte",
       "loop iterations and if statements of all work-items per byte moved"},
      {"waves", "waves", "work-groups / (resident work-groups per compute unit x compute units)"},
      {"wave_efficiency", "fraction", "waves / waves rounded up (the last wave's idle share)"},
      {"cu_fill", "fraction", "compute units with a work-group / compute units"},
      {"parallel_efficiency", "fraction", "occupancy x wave efficiency x compute-unit fill"},
      {"bandwidth_saturation", "fraction",
       "bytes in flight of the resident work-items / what hides the memory latency"},
      {"cache_time", "ideal times", "cache-line traffic at cache bandwidth / ideal time"},
      {"local_time", "ideal times", "local-memory traffic at local bandwidth / ideal time"},
      {"compute_time", "ideal times", "operations at the arithmetic rate / ideal time"},
      {"issue_time", "ideal times",
       "operations, accesses, iterations and branches issued, at the arithmetic rate / ideal time"},
      {"roofline_time", "ideal times",
       "max(1, cache, local, compute, issue time) / parallel efficiency: the analytic estimate"},
  };
  return all;
}

std::vector<double> derived_values(const Features& f,
                                   const target::DeviceProfile::Throughput& device) {
  std::vector<double> values;
  append_derived_values(f, device, values);
  return values;
}

void append_derived_values(const Features& f, const target::DeviceProfile::Throughput& device,
                           std::vector<double>& out) {
  const double bytes = std::max<double>(double(f.bytes_moved), 1);
  const double items = double(f.work_items);
  const double warp = double(std::max<int64_t>(device.warp_width, 1));
  const double global_accesses = items * (f.global_loads_per_thread + f.global_stores_per_thread);
  const double line_bytes =
      global_accesses / warp * f.cache_lines_per_warp_access * double(device.cache_line_bytes);
  const double useful_bytes = global_accesses * f.global_access_width * kElementBytes;
  const double local_bytes = items * (f.local_loads_per_thread + f.local_stores_per_thread) *
                             kElementBytes * std::max(1.0, f.bank_conflict_degree);
  const double private_bytes =
      items * (f.private_loads_per_thread + f.private_stores_per_thread) * kElementBytes;
  const double ops = items * f.arith_ops_per_thread;
  const double control = items * (f.for_bodies_per_thread + f.if_statements_per_thread);
  const double units = double(std::max<int64_t>(device.compute_units, 1));

  const double resident_groups = double(std::max<int64_t>(f.work_groups_per_cu, 1)) * units;
  const double waves = double(f.work_groups) / resident_groups;
  const double wave_efficiency = waves > 0 ? waves / std::ceil(waves) : 0;
  const double cu_fill = std::min(1.0, double(f.work_groups) / units);
  const double parallel = std::max(f.occupancy, 1e-3) * wave_efficiency * cu_fill;

  // Little's law: the bytes in flight that keep DRAM busy are bandwidth x latency; each resident
  // work-item has about one access of its width in flight.
  const double in_flight_needed = device.memory_gbs * device.memory_latency_ns; // GB/s x ns = B
  const double resident_items =
      std::min(items, f.occupancy * double(device.resident_work_items_per_cu) * double(units));
  const double saturation =
      std::min(1.0, resident_items * f.global_access_width * kElementBytes / in_flight_needed);

  // Each time in units of the ideal time bytes / memory bandwidth.
  const double per_ideal = device.memory_gbs / bytes;
  const double cache_time = line_bytes / device.cache_gbs * per_ideal;
  const double local_time = local_bytes / device.local_gbs * per_ideal;
  const double compute_time = ops / device.gops * per_ideal;
  const double issued = ops + global_accesses + control +
                        items * (f.local_loads_per_thread + f.local_stores_per_thread +
                                 f.private_loads_per_thread + f.private_stores_per_thread);
  const double issue_time = issued / device.gops * per_ideal;
  const double bound = std::max({1.0, cache_time, local_time, compute_time, issue_time});
  const double values[] = {
      line_bytes / bytes,
      useful_bytes / bytes,
      line_bytes > 0 ? std::min(1.0, useful_bytes / line_bytes) : 1.0,
      ops / bytes,
      local_bytes / bytes,
      private_bytes / bytes,
      items / bytes,
      double(f.work_groups) / bytes,
      items * f.barriers_per_thread / bytes,
      control / bytes,
      waves,
      wave_efficiency,
      cu_fill,
      parallel,
      saturation,
      cache_time,
      local_time,
      compute_time,
      issue_time,
      bound / std::max(parallel * std::max(saturation, 1e-3), 1e-6),
  };
  out.insert(out.end(), std::begin(values), std::end(values));
}

std::vector<std::string> all_names() {
  std::vector<std::string> names;
  for (const Column& c : columns())
    names.push_back(c.name);
  for (const DerivedColumn& c : derived_columns())
    names.push_back(c.name);
  return names;
}

void all_values_into(const Features& f, const target::DeviceProfile::Throughput& device,
                     std::vector<double>& out) {
  out.clear();
  for (const Column& c : columns())
    out.push_back(c.value(f));
  append_derived_values(f, device, out);
}

std::vector<double> all_values(const Features& f, const target::DeviceProfile::Throughput& device) {
  std::vector<double> values;
  values.reserve(columns().size() + derived_columns().size());
  all_values_into(f, device, values);
  return values;
}

double modelled_traffic_per_byte(const Features& f,
                                 const target::DeviceProfile::Throughput& device) {
  const double warp = double(std::max<int64_t>(device.warp_width, 1));
  const double group =
      double(std::max<int64_t>(f.work_items / std::max<int64_t>(f.work_groups, 1), 1));
  const double warps = double(f.work_groups) * std::ceil(group / warp);
  const double accesses = warps * (f.global_loads_per_thread + f.global_stores_per_thread);
  const double lines = accesses * std::max(f.cache_lines_per_warp_access, 1.0);
  return lines * double(device.cache_line_bytes) / std::max<double>(double(f.bytes_moved), 1);
}

Features features_from_columns(const nlohmann::json& columns) {
  auto get = [&](const char* name) {
    auto it = columns.find(name);
    LIFTX_USER_CHECK(it != columns.end() && it->is_number(),
                     "the features lack a numeric '{}' column", name);
    return it->get<double>();
  };
  auto count = [&](const char* name) { return static_cast<int64_t>(std::llround(get(name))); };
  Features f;
  for (int d = 0; d < 3; ++d) {
    f.global_size[size_t(d)] = count(fmt::format("global_size_{}", d).c_str());
    f.local_size[size_t(d)] = count(fmt::format("local_size_{}", d).c_str());
  }
  f.local_size_assumed = count("local_size_assumed") != 0;
  f.work_items = count("work_items");
  f.work_groups = count("work_groups");
  f.local_memory_bytes = count("local_memory_bytes");
  f.private_memory_bytes = count("private_memory_bytes");
  f.global_loads_per_thread = get("global_loads_per_thread");
  f.global_stores_per_thread = get("global_stores_per_thread");
  f.local_loads_per_thread = get("local_loads_per_thread");
  f.local_stores_per_thread = get("local_stores_per_thread");
  f.private_loads_per_thread = get("private_loads_per_thread");
  f.private_stores_per_thread = get("private_stores_per_thread");
  f.cache_lines_per_warp_access = get("cache_lines_per_warp_access");
  // Databases measured before vector accesses existed have no width column: every access scalar.
  f.global_access_width = columns.contains("global_access_width") ? get("global_access_width") : 1;
  f.bank_conflict_degree = get("bank_conflict_degree");
  f.bytes_moved = count("bytes_moved");
  f.working_set_bytes = count("working_set_bytes");
  f.barriers_per_thread = get("barriers_per_thread");
  f.if_statements_per_thread = get("if_statements_per_thread");
  f.if_bodies_per_thread = get("if_bodies_per_thread");
  f.for_bodies_per_thread = get("for_bodies_per_thread");
  f.arith_ops_per_thread = get("arith_ops_per_thread");
  f.work_groups_per_cu = count("work_groups_per_cu");
  f.occupancy = get("occupancy_fraction");
  return f;
}

} // namespace liftx::features
