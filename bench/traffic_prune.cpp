// Traffic pruning (issue 28, seed 004) judged on measured data: for each program and input of a
// performance database, the share of the measured variants whose modelled global-memory traffic
// (features::modelled_traffic_per_byte) exceeds F x the least, and whether the fastest measured
// variant survives (or one within 2% of it). F is chosen leaving each program out: the smallest F
// of the grid that keeps the best within 2% on every input of the other programs.
//
//   traffic_prune DB [DEVICE] [PROFILE]   (DEVICE: a substring of the device key; PROFILE: the
//                                          features' profile, default nvidia)
// Opens DB read-only. Prints one table row per program and input, then the grid.
#include "explore/dataset.hpp"
#include "features/derived.hpp"
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
  const explore::PerfDb db(argv[1], explore::PerfDb::Access::read_only);
  const std::string device = explore::resolve_device(db, argc > 2 ? argv[2] : "");
  const model::Dataset data = explore::load_dataset(db, device, profile);
  const runtime::DeviceProfile::Throughput throughput =
      runtime::named_profile(profile).throughput();

  std::map<std::pair<std::string, std::string>, Group> by_input;
  for (const model::Sample& s : data.samples) {
    nlohmann::json columns = nlohmann::json::object();
    for (size_t c = 0; c < data.feature_names.size(); ++c)
      columns[data.feature_names[c]] = s.features[c];
    const double traffic =
        features::modelled_traffic_per_byte(features::features_from_columns(columns), throughput);
    Group& g = by_input[{s.program, s.input}];
    g.program = s.program;
    g.input = s.input;
    g.traffic.push_back(traffic);
    g.times.push_back(s.time_ms);
    g.least = std::min(g.least, traffic);
    if (s.time_ms)
      g.best_ms = std::min(g.best_ms, *s.time_ms);
  }
  std::vector<Group> groups;
  for (auto& [key, g] : by_input)
    if (std::isfinite(g.best_ms))
      groups.push_back(std::move(g));

  fmt::print("device {}, profile {}: {} inputs of {} measured variants\n\n", device, profile,
             groups.size(), data.samples.size());
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
