#include "perfdb/refresh.hpp"

#include "features/features.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/record.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace liftx::perfdb {

namespace {

/// True when a column both feature sets hold has a different value (beyond rounding).
bool columns_differ(const nlohmann::json& before, const nlohmann::json& after) {
  for (const auto& [name, value] : before.items()) {
    auto it = after.find(name);
    if (it == after.end() || !value.is_number() || !it->is_number())
      continue;
    const double a = value.get<double>(), b = it->get<double>();
    if (std::abs(a - b) > 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}))
      return true;
  }
  return false;
}

} // namespace

RefreshReport refresh_features(PerfDb& db, const std::string& profile,
                               const std::function<void(int64_t, int64_t)>& progress,
                               const target::DeviceProfile* computed_with) {
  const target::DeviceProfile device =
      computed_with != nullptr ? *computed_with : runtime::named_profile(profile);
  std::vector<Row> rows = db.feature_rows(profile);
  RefreshReport report;
  report.configurations = int64_t(rows.size());
  std::vector<std::pair<int64_t, nlohmann::json>> updated;
  updated.reserve(rows.size());
  std::vector<int64_t> removed;
  auto remove = [&](const Row& r, const std::string& why) {
    if (removed.empty())
      report.first_removal =
          fmt::format("configuration {} ({}): {}", r.configuration_id, r.program, why);
    removed.push_back(r.configuration_id);
  };
  for (size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    if (progress && k % 500 == 0)
      progress(int64_t(k), report.configurations);
    try {
      const ir::Module module =
          parse::parse_module(r.printed, fmt::format("configuration {}", r.configuration_id));
      const auto sizes = nlohmann::json::parse(r.sizes).get<Sizes>();
      nlohmann::json features = features::to_stored_json(features::compute(
          module.main(), sizes,
          run_options_for(r.launch, fmt::format("configuration {}", r.configuration_id)).request(),
          device));
      report.changed += columns_differ(r.features, features);
      updated.emplace_back(r.configuration_id, std::move(features));
    } catch (const UserError& e) {
      remove(r, e.what());
    } catch (const nlohmann::json::exception& e) {
      remove(r, fmt::format("unreadable sizes: {}", e.what()));
    }
  }
  db.replace_features(profile, updated, removed);
  report.refreshed = int64_t(updated.size());
  report.removed = int64_t(removed.size());
  if (progress)
    progress(report.configurations, report.configurations);
  return report;
}

} // namespace liftx::perfdb
