#include "perfdb/dataset.hpp"

#include "features/derived.hpp"
#include "ir/parse/parser.hpp"
#include "rewrite/program_kind.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace liftx::perfdb {

std::string resolve_device(const PerfDb& db, const std::string& wanted) {
  const std::vector<std::string> keys = db.device_keys();
  std::string list;
  for (const std::string& k : keys)
    list += "\n  " + k;
  if (wanted.empty()) {
    if (keys.size() == 1)
      return keys[0];
    throw UserError(keys.empty()
                        ? std::string("the database holds no measurements")
                        : "the database holds several devices; choose one with --device-key:" + list);
  }
  for (const std::string& k : keys)
    if (k == wanted)
      return k;
  std::vector<std::string> matches;
  for (const std::string& k : keys)
    if (k.find(wanted) != std::string::npos)
      matches.push_back(k);
  if (matches.size() == 1)
    return matches[0];
  throw UserError(fmt::format("no device '{}' in the database; it holds:{}", wanted, list));
}

namespace {

/// A variant's coordinates by name: its parameters and its launch per dimension (what
/// explore::neighbours compares).
std::map<std::string, std::string> coordinates_of(const Row& r) {
  std::map<std::string, std::string> out;
  if (r.parameters.is_object())
    for (const auto& [name, value] : r.parameters.items())
      out[name] = value.dump();
  out["dims"] = r.launch.value("dims", nlohmann::json()).dump();
  out["tied"] = r.launch.value("tied", nlohmann::json()).dump();
  for (const char* side : {"global", "local"}) {
    const nlohmann::json sizes = r.launch.value(side, nlohmann::json::array());
    for (size_t d = 0; d < 3; ++d)
      out[fmt::format("{}{}", side, d)] =
          sizes.is_array() && d < sizes.size() ? sizes[d].dump() : "-";
  }
  return out;
}

/// The kind of each program name of `db`: of its sources (the layouts of one stencil share a
/// name) the kind first in precedence. A source this liftx no longer parses gives no kind.
std::map<std::string, std::string> program_kinds_of(const PerfDb& db) {
  std::map<std::string, rewrite::ProgramKind> kinds;
  for (const auto& [name, source] : db.program_sources()) {
    rewrite::ProgramKind kind;
    try {
      const ir::Module module = parse::parse_module(source, name);
      const ir::Program* program = module.find(name);
      kind = rewrite::program_kind(program ? *program : module.main());
    } catch (const UserError&) {
      continue;
    }
    auto [at, added] = kinds.emplace(name, kind);
    if (!added && int(kind) < int(at->second))
      at->second = kind;
  }
  std::map<std::string, std::string> out;
  for (const auto& [name, kind] : kinds)
    out.emplace(name, std::string(rewrite::kind_name(kind)));
  return out;
}

} // namespace

model::Dataset load_dataset(const PerfDb& db, const std::string& device_key,
                            const std::string& profile) {
  model::Dataset data;
  std::vector<Row> rows = db.rows(device_key, profile);
  // Feature columns: this liftx's columns that every row has, and the derived columns when every
  // row has what they are computed from.
  const size_t derived_count = features::derived_columns().size();
  const std::vector<std::string> all_names = features::all_names();
  const std::vector<std::string> stored(all_names.begin(),
                                        all_names.end() - ptrdiff_t(derived_count));
  std::vector<std::string> names;
  for (const std::string& name : stored) {
    bool everywhere = !rows.empty();
    for (const Row& r : rows)
      if (!r.features.contains(name) || !r.features[name].is_number()) {
        everywhere = false;
        break;
      }
    if (everywhere)
      names.push_back(name);
  }
  bool derivable = !rows.empty();
  for (const Row& r : rows)
    try {
      (void)features::features_from_columns(r.features);
    } catch (const UserError&) {
      derivable = false;
      break;
    }
  target::DeviceProfile::Throughput throughput;
  try {
    throughput = runtime::named_profile(profile).throughput();
  } catch (const UserError&) {
    derivable = false; // features stored for a profile without a name: no throughput to use
  }
  if (derivable)
    names.insert(names.end(), all_names.end() - ptrdiff_t(derived_count), all_names.end());
  data.feature_names = names;
  std::map<std::pair<std::string, std::string>, double> build_ms; // (sizes, variant) -> build
  for (const Row& r : rows) {
    if (!r.measurement)
      continue;
    const Measurement& m = *r.measurement;
    model::Sample s;
    s.program = r.program;
    s.input = r.sizes;
    for (size_t c = 0; c < names.size() - (derivable ? derived_count : 0); ++c)
      s.features.push_back(r.features[names[c]].get<double>());
    if (derivable)
      for (double v :
           features::derived_values(features::features_from_columns(r.features), throughput))
        s.features.push_back(v);
    const bool ok = m.status == runtime::Status::ok && m.median_ms > 0;
    if (ok)
      s.time_ms = m.median_ms;
    s.cost_ms = std::max(0.0, m.median_ms) * std::max(1, m.repetitions);
    // The kernel is built once per variant and size; its other launches record 0 (the cache).
    s.kernel = r.printed;
    s.strategy = r.strategy;
    s.coordinates = coordinates_of(r);
    double& build = build_ms[{r.sizes, r.printed}];
    build = std::max(build, m.compile_ms);
    data.samples.push_back(std::move(s));
  }
  for (model::Sample& s : data.samples)
    s.build_ms = build_ms.at({s.input, s.kernel});
  LIFTX_USER_CHECK(!data.samples.empty(),
                   "{}: no measurement of device {} with features for profile {}",
                   db.path().string(), device_key, profile);
  data.program_kinds = program_kinds_of(db);
  return data;
}

std::vector<std::string> feature_set(const std::string& name,
                                     const std::vector<std::string>& available) {
  std::set<std::string> wanted;
  if (name == "table1" || name == "all")
    for (const features::Column& c : features::columns())
      wanted.insert(c.name);
  if (name == "derived" || name == "size_free" || name == "all")
    for (const features::DerivedColumn& c : features::derived_columns())
      wanted.insert(c.name);
  if (name == "size_free")
    for (const char* c :
         {"local_size_0", "local_size_1", "local_size_2", "local_size_assumed",
          "local_memory_bytes", "private_memory_bytes", "cache_lines_per_warp_access",
          "line_segments_per_warp_access", "global_access_width", "bank_conflict_degree",
          "work_groups_per_cu", "occupancy_fraction"})
      wanted.insert(c);
  LIFTX_USER_CHECK(!wanted.empty(),
                   "unknown feature set '{}' (known: table1, derived, size_free, all)", name);
  std::vector<std::string> out;
  for (const std::string& a : available)
    if (wanted.count(a))
      out.push_back(a);
  return out;
}

std::vector<model::Setting> candidate_settings(const std::vector<model::Kind>& kinds,
                                               const std::vector<std::string>& available) {
  std::vector<model::Setting> out;
  for (model::Kind kind : kinds) {
    if (kind == model::Kind::knn) {
      for (model::Transform t : {model::Transform::log, model::Transform::log_relative})
        for (int k : {5, 10})
          for (bool weighted : {false, true}) {
            model::Setting s;
            s.name = fmt::format("knn {} k={}{}", model::to_string(t), k, weighted ? " 1/d" : "");
            s.kind = kind;
            s.train.transform = t;
            s.train.k = k;
            s.train.distance_weighted = weighted;
            s.features = feature_set("table1", available);
            out.push_back(std::move(s));
          }
    } else if (kind == model::Kind::boosted) {
      for (const char* set : {"size_free", "all"})
        for (int depth : {4, 6}) {
          model::Setting s;
          s.name = fmt::format("boosted log {} depth={}", set, depth);
          s.kind = kind;
          s.train.transform = model::Transform::log;
          s.train.boost_depth = depth;
          s.features = feature_set(set, available);
          out.push_back(std::move(s));
        }
    } else if (kind == model::Kind::tree) {
      for (int depth : {6, 10}) {
        model::Setting s;
        s.name = fmt::format("tree log depth={}", depth);
        s.kind = kind;
        s.train.transform = model::Transform::log;
        s.train.max_depth = depth;
        s.features = feature_set("all", available);
        out.push_back(std::move(s));
      }
    }
  }
  return out;
}

} // namespace liftx::perfdb
