#include "explore/rank_report.hpp"

#include "codegen/launch.hpp"
#include "explore/collect.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>

#include <chrono>
#include <fstream>

namespace liftx::explore {

namespace fs = std::filesystem;

target::DeviceProfile saved_device_profile(const std::string& path) {
  std::ifstream in(path);
  LIFTX_USER_CHECK(in.good(), "{}: cannot read the device profile", path);
  nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  LIFTX_USER_CHECK(!json.is_discarded(), "{}: not JSON (expected `liftx devices --json`)", path);
  if (json.is_array()) {
    LIFTX_USER_CHECK(json.size() == 1,
                     "{}: {} device profiles; keep the one to rank for (`liftx devices --json` "
                     "lists every device)",
                     path, json.size());
    json = json.front();
  }
  try {
    return json.get<target::DeviceProfile>();
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", path, e.what()));
  }
}

void set_rank_profile(RankOptions& options, const std::string& profile) {
  options.profile = profile;
  if (profile.ends_with(".json")) {
    // A device that is not attached here, as `liftx devices --json` described it there: the
    // ranking then sees its measured bandwidth, clock and registers, as explore on it would.
    options.device = saved_device_profile(profile);
    options.profile = profile_name_for(*options.device);
  }
}

std::string rank_profile_description(const RankOptions& options, const model::Model& model,
                                     const std::string& requested) {
  if (options.device)
    return fmt::format("{} of {}", options.profile, options.device->device_name);
  return requested.empty() ? model.profile : requested;
}

RankReport timed_rank(const ir::Program& program, const model::Model& model,
                      const RankOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RankReport report;
  report.result = rank(program, model, options);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

void write_ranked_variants(const fs::path& folder, const std::vector<ir::UserFunPtr>& userfuns,
                           const std::vector<RankedVariant>& ranked, const Sizes& sizes) {
  fs::create_directories(folder);
  for (const RankedVariant& r : ranked) {
    const std::string stem =
        fmt::format("{:03}-{}-{}", r.rank, r.variant.index, r.variant.strategy);
    write_output_file(folder / (stem + ".lift"), ir::print(ir::Module{userfuns, {*r.program}}), {},
                      "the output");
    write_output_file(folder / (stem + ".json"), space::sidecar_json(r.variant, sizes), {},
                      "the output");
  }
}

nlohmann::json rank_document(const std::string& program_name, const RankResult& result,
                             const std::string& model_path, double prune_traffic) {
  nlohmann::json rows = nlohmann::json::array();
  for (const RankedVariant& r : result.ranked) {
    nlohmann::json reasons = nlohmann::json::array();
    for (const model::Explanation& e : r.reasons)
      reasons.push_back({{"feature", e.feature}, {"value", e.value}, {"z", e.standardised}});
    rows.push_back({{"rank", r.rank},
                    {"predicted", r.predicted},
                    {"index", r.variant.index},
                    {"strategy", r.variant.strategy},
                    {"parameters", r.variant.parameters},
                    {"launch", launch_json(r.variant.launch)},
                    {"features", reasons}});
  }
  nlohmann::json document{{"program", program_name},
                          {"variants", result.variants},
                          {"model", model_path},
                          {"ranked", rows}};
  if (prune_traffic > 0)
    document["pruning"] = {{"factor", prune_traffic},
                           {"least_traffic", result.least_traffic},
                           {"bound", result.traffic_bound},
                           {"pruned", result.pruned}};
  return document;
}

std::string rank_csv_row(const RankedVariant& r) {
  return fmt::format("{},{:.6f},{},{},\"{}\",\"{}\",\"{}\"", r.rank, r.predicted, r.variant.index,
                     r.variant.strategy, describe_parameters(r.variant),
                     codegen::describe(r.variant.launch), describe_reasons(r.reasons));
}

} // namespace liftx::explore
