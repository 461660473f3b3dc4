// Traffic pruning (issue 28, seed 004) judged on measured data: for each program and input of a
// performance database, the share of the measured variants whose modelled global-memory traffic
// exceeds F x the least, and whether the fastest measured variant survives (or one within 2% of
// it). F is chosen leaving each program out: the smallest F of the grid that keeps the best within
// 2% on every input of the other programs.
//
//   traffic_prune DB [DEVICE] [PROFILE] [MODEL] [LINE] [EVERY]
//     DEVICE  a substring of the device key (default: the only one)
//     PROFILE the features' profile (default nvidia)
//     MODEL   warp (default): the stored features' per-warp line count
//             (features::modelled_traffic_per_byte, what `liftx rank --prune-traffic` applies);
//             group: the work-group's distinct lines (KernelModel::group_traffic),
//             recomputed from each stored variant;
//             memory_time: the traffic of every level at its bandwidth, max(1, cache_time,
//             local_time) of the derived columns (DRAM, cache lines, local memory; ideal times)
//     LINE    the group model's line bytes (0, the default: the profile's cache line)
//     EVERY   only the configurations whose id is a multiple of EVERY (default 1: all); the group
//             model costs 0.13-0.17 s per variant on average on the development machine
// Opens DB read-only. Prints one table row per program and input, then the grid.
#include "codegen/launch.hpp"
#include "features/derived.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/dataset.hpp"
#include "perfdb/record.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace liftx;

namespace {

const std::vector<double> kGrid = {1.25, 1.5, 2, 2.5, 3, 4, 6, 8, 12, 16};
constexpr double kNearBest = 0.98; // "the best, or one within 2% of it"

struct Group {
  std::string program, input;
  std::vector<double> traffic;              ///< every measured variant, failed ones included
  std::vector<std::optional<double>> times; ///< median ms; nullopt where the run failed
  double least = std::numeric_limits<double>::infinity();
  double best_ms = std::numeric_limits<double>::infinity();

  /// The fastest kept time over the fastest time (1: the best survives) at bound F.
  double kept_best(double factor) const {
    double best_kept = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < traffic.size(); ++i)
      if (times[i] && traffic[i] <= factor * least)
        best_kept = std::min(best_kept, *times[i]);
    return std::isfinite(best_kept) ? best_ms / best_kept : 0;
  }
  double removed(double factor) const {
    return double(std::count_if(traffic.begin(), traffic.end(),
                                [&](double t) { return t > factor * least; })) /
           double(traffic.size());
  }
};

/// The smallest F of the grid keeping the best within 2% on every group not of `left_out`.
double choose_factor(const std::vector<Group>& groups, const std::string& left_out) {
  for (double factor : kGrid) {
    bool keeps = true;
    for (const Group& g : groups)
      if (g.program != left_out && g.kept_best(factor) < kNearBest)
        keeps = false;
    if (keeps)
      return factor;
  }
  return kGrid.back();
}

} // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    fmt::print(stderr, "usage: traffic_prune DB [DEVICE] [PROFILE]\n");
    return 2;
  }
  const std::string profile = argc > 3 ? argv[3] : "nvidia";
  const std::string model = argc > 4 ? argv[4] : "warp";
  const int64_t line_bytes = argc > 5 ? std::stoll(argv[5]) : 0;
  const int64_t every = argc > 6 ? std::stoll(argv[6]) : 1;
  LIFTX_USER_CHECK(every >= 1, "EVERY must be at least 1, got {}", every);
  LIFTX_USER_CHECK(!(model != "warp" && model != "group" && model != "memory_time"),
                   "unknown traffic model '{}' (warp, group, memory_time)", model);
  auto derived_column = [](const std::string& name) {
    const auto& all = features::derived_columns();
    for (size_t c = 0; c < all.size(); ++c)
      if (all[c].name == name)
        return c;
    throw UserError(fmt::format("no derived column '{}'", name));
  };
  const size_t cache_time = derived_column("cache_time"), local_time = derived_column("local_time");
  const perfdb::PerfDb db(argv[1], perfdb::PerfDb::Access::read_only);
  const std::string device = perfdb::resolve_device(db, argc > 2 ? argv[2] : "");
  const target::DeviceProfile device_profile = runtime::named_profile(profile);
  const target::DeviceProfile::Throughput throughput = device_profile.throughput();

  std::map<std::pair<std::string, std::string>, Group> by_input;
  int64_t extrapolated = 0, rows = 0, refused = 0;
  for (const perfdb::Row& row : db.rows(device, profile)) {
    if (row.configuration_id % every != 0)
      continue;
    double traffic = 0;
    if (model == "warp") {
      traffic = features::modelled_traffic_per_byte(features::features_from_columns(row.features),
                                                    throughput);
    } else if (model == "memory_time") {
      const std::vector<double> derived =
          features::derived_values(features::features_from_columns(row.features), throughput);
      traffic = std::max({1.0, derived[cache_time], derived[local_time]});
    } else
      try {
        const std::string origin = fmt::format("configuration {}", row.configuration_id);
        const ir::Module module = parse::parse_module(row.printed, origin);
        const auto sizes = nlohmann::json::parse(row.sizes).get<Sizes>();
        const codegen::PreparedLaunch prepared = codegen::prepare_launch(
            module.main(), sizes, perfdb::run_options_for(row.launch, origin).request(),
            device_profile.limits());
        const auto modelled =
            features::KernelModel(prepared.kernel)
                .group_traffic(prepared.launch, sizes, device_profile, line_bytes);
        traffic = modelled.per_byte;
        extrapolated += modelled.extrapolated;
      } catch (const UserError&) {
        ++refused; // a check added since it was measured (refresh_features removes these too)
        continue;
      }
    ++rows;
    Group& g = by_input[{row.program, row.sizes}];
    g.program = row.program;
    g.input = row.sizes;
    g.traffic.push_back(traffic);
    const bool ok = row.measurement && row.measurement->status == runtime::Status::ok;
    g.times.push_back(ok ? std::optional<double>(row.measurement->median_ms) : std::nullopt);
    g.least = std::min(g.least, traffic);
    if (ok)
      g.best_ms = std::min(g.best_ms, row.measurement->median_ms);
  }
  std::vector<Group> groups;
  for (auto& [key, g] : by_input)
    if (std::isfinite(g.best_ms))
      groups.push_back(std::move(g));

  fmt::print("device {}, profile {}, {} model, every {}: {} inputs of {} measured variants ({} "
             "extrapolated, {} refused by this liftx)\n\n",
             device, profile, model, every, groups.size(), rows, extrapolated, refused);
  fmt::print("| program | input | measured | least traffic | F (chosen without it) | removed | "
             "best kept / best |\n|---|---|---:|---:|---:|---:|---:|\n");
  int survived = 0, pruned_90 = 0;
  double removed_sum = 0;
  for (const Group& g : groups) {
    const double factor = choose_factor(groups, g.program);
    const double kept = g.kept_best(factor), removed = g.removed(factor);
    survived += kept >= kNearBest;
    pruned_90 += removed >= 0.9;
    removed_sum += removed;
    fmt::print("| {} | {} | {} | {:.2f} | {} | {:.1f}% | {:.1f}% |\n", g.program, g.input,
               g.traffic.size(), g.least, factor, 100 * removed, 100 * kept);
  }
  fmt::print("\nleaving each program out: the best (or one within 2%) kept on {} of {} inputs; "
             ">= 90% removed on {}; mean removed {:.1f}%\n\n",
             survived, groups.size(), pruned_90, 100 * removed_sum / double(groups.size()));

  fmt::print("| F | inputs whose best (within 2%) survives | mean removed | min removed |\n"
             "|---:|---:|---:|---:|\n");
  for (double factor : kGrid) {
    int kept = 0;
    double sum = 0, least_removed = 1;
    for (const Group& g : groups) {
      kept += g.kept_best(factor) >= kNearBest;
      sum += g.removed(factor);
      least_removed = std::min(least_removed, g.removed(factor));
    }
    fmt::print("| {} | {} of {} | {:.1f}% | {:.1f}% |\n", factor, kept, groups.size(),
               100 * sum / double(groups.size()), 100 * least_removed);
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "traffic_prune: {}\n", e.what());
  return 2;
}
