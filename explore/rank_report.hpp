#pragma once
/// `liftx rank` as data: the device a ranking is for (a named profile or a device's saved
/// profile), the timed ranking, the ranked variants written out as files, and the report's rows
/// in CSV and JSON. The CLI parses the options and prints.
#include "explore/rank.hpp"
#include "ir/expr.hpp"
#include "model/model.hpp"
#include "target/profile.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace liftx::explore {

/// The one device profile of a JSON file: an object, or the array `liftx devices --json` prints
/// when it holds exactly one device. UserError (naming the file) otherwise.
target::DeviceProfile saved_device_profile(const std::string& path);

/// Sets the device `options` ranks for from `--profile`: a named profile (or "" for the model's),
/// or FILE.json, a device's own profile saved by `liftx devices --json` on its machine.
void set_rank_profile(RankOptions& options, const std::string& profile);

/// The device of a ranking as its report names it: "PROFILE of DEVICE" for a saved device,
/// else `requested` (--profile), else the model's profile.
std::string rank_profile_description(const RankOptions& options, const model::Model& model,
                                     const std::string& requested);

struct RankReport {
  RankResult result;
  double seconds = 0; ///< the ranking's wall-clock time
};

/// rank(), timed.
RankReport timed_rank(const ir::Program& program, const model::Model& model,
                      const RankOptions& options);

/// Writes each ranked variant as `folder`/<rank>-<index>-<strategy>.lift (a module of `userfuns`
/// and its lowered program) and a .json sidecar at `sizes`; creates `folder`.
void write_ranked_variants(const std::filesystem::path& folder,
                           const std::vector<ir::UserFunPtr>& userfuns,
                           const std::vector<RankedVariant>& ranked, const Sizes& sizes);

/// `liftx rank --format json`: the program, the variants ranked, the model file, the rows and
/// (with traffic pruning, `prune_traffic` > 0) what the pruning left out.
nlohmann::json rank_document(const std::string& program_name, const RankResult& result,
                             const std::string& model_path, double prune_traffic);

/// `liftx rank --format csv`: its columns and one ranked variant's row, without a line end.
inline constexpr const char* kRankCsvHeader =
    "rank,predicted,index,strategy,parameters,launch,features";
std::string rank_csv_row(const RankedVariant& ranked);

} // namespace liftx::explore
