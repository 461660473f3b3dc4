#include "explore/dataset.hpp"

#include "explore/rank.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace liftx::explore {

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
                        : "the database holds several devices; choose one with --device:" + list);
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

model::Dataset load_dataset(const PerfDb& db, const std::string& device_key,
                            const std::string& profile) {
  model::Dataset data;
  std::vector<Row> rows = db.rows(device_key, profile);
  // Feature columns: this liftx's columns that every row has.
  std::vector<std::string> names;
  for (const std::string& name : feature_names()) {
    bool everywhere = !rows.empty();
    for (const Row& r : rows)
      if (!r.features.contains(name) || !r.features[name].is_number()) {
        everywhere = false;
        break;
      }
    if (everywhere)
      names.push_back(name);
  }
  data.feature_names = names;
  std::map<std::pair<std::string, std::string>, double> build_ms; // (sizes, variant) -> build
  for (const Row& r : rows) {
    if (!r.measurement)
      continue;
    const Measurement& m = *r.measurement;
    model::Sample s;
    s.program = r.program;
    s.input = r.sizes;
    for (const std::string& name : names)
      s.features.push_back(r.features[name].get<double>());
    const bool ok = m.status == runtime::Status::ok && m.median_ms > 0;
    if (ok)
      s.time_ms = m.median_ms;
    s.cost_ms = std::max(0.0, m.median_ms) * std::max(1, m.repetitions);
    // The kernel is built once per variant and size; its other launches record 0 (the cache).
    s.kernel = r.printed;
    double& build = build_ms[{r.sizes, r.printed}];
    build = std::max(build, m.compile_ms);
    data.samples.push_back(std::move(s));
  }
  for (model::Sample& s : data.samples)
    s.build_ms = build_ms.at({s.input, s.kernel});
  if (data.samples.empty())
    throw UserError(fmt::format("{}: no measurement of device {} with features for profile {}",
                                db.path().string(), device_key, profile));
  return data;
}

} // namespace liftx::explore
