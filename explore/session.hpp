#pragma once
/// The one tuning pipeline that `liftx explore` and the library's tune() both run: find the
/// model, rank the variant space, try the variants in a strategy's order within a budget, and
/// pick the fastest correct one. Measuring (and recording) stays the caller's: the command line
/// runs each variant in a worker child, an application in its own context. Both therefore rank
/// the same variants in the same order and choose among their runs by the same rule.
#include "explore/explore.hpp"
#include "explore/models.hpp"
#include "explore/rank.hpp"
#include "model/model.hpp"

#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::explore {

struct SessionOptions {
  Sizes sizes;
  /// A model file; empty: the shipped model for the device's kind (find_model).
  std::string model;
  /// Searched for shipped models after $LIFTX_MODEL_DIR (an application's data folder).
  std::vector<std::filesystem::path> model_folders;
  int64_t sample = -1; ///< variants sampled for ranking; -1: the device's default (defaults_for)
  uint64_t sample_seed = 1;
  bool layouts = false;
  bool warp_streams = false;  ///< RankOptions::warp_streams
  int64_t max_variants = 0;   ///< RankOptions::max_variants (0: the whole space)
  size_t explain_top = 0;     ///< ranked rows that get their reasons
  bool default_first = false; ///< try the default lowering first (rank 0), outside the budget
  /// Past the budget, while no run has succeeded, go on up to four budgets of ranked variants
  /// (an application that tunes needs a kernel that works).
  bool until_success = false;
  /// Strategy, budget (ranked variants to run), batch, online settings, parallelism.
  ExploreOptions explore;
  std::function<void(std::string_view phase, int64_t variants)> on_rank_progress;
};

/// The untuned kernel: the default lowering (what compile() gives) at the launch the driver
/// chooses, as a candidate of rank 0; or why there is none.
struct DefaultCandidate {
  std::optional<RankedVariant> candidate;
  std::string strategy; ///< e.g. "global2d_10", or "as written"
  std::string why_not;  ///< no default lowering, or it does not fit the device
};

class Session {
public:
  /// Finds and loads the model (unless the program is already lowered: it is then its own only
  /// candidate) and prepares the default lowering; UserError for a missing or unreadable model.
  Session(const ir::Program& program, const target::DeviceProfile& device, SessionOptions options);

  /// Ranks the space; the candidates are then the default lowering (with `default_first`) and
  /// the ranked variants, best predicted first.
  void rank();
  /// Tries the candidates in the strategy's order (`measure` runs, checks and times them) and
  /// returns the attempts and the best of them; attempts index candidates().
  ExploreResult measure(const MeasureBatch& measure, const OnAttempt& on_attempt = {}) const;

  /// The device kind the features and the model are for ("cpu", "nvidia", ...).
  const std::string& profile_name() const { return profile_name_; }
  const target::DeviceProfile& device() const { return device_; }
  const Sizes& sizes() const { return options_.sizes; }
  const SessionOptions& options() const { return options_; }
  /// Null when the program is already lowered (no space, no model).
  const model::Model* model() const { return model_ ? &*model_ : nullptr; }
  const FoundModel& found_model() const { return found_; }
  const RankOptions& rank_options() const { return rank_options_; }
  /// After rank(): the variants walked and those kept.
  const RankResult& ranking() const { return ranking_; }
  const std::vector<RankedVariant>& candidates() const { return candidates_; }
  const DefaultCandidate& default_lowering() const { return default_; }
  bool as_written() const { return default_.strategy == "as written"; }
  /// What the user should know about the choices made (a model for another device, a default
  /// lowering that does not apply, ...), in the order they were made.
  const std::vector<std::string>& notes() const { return notes_; }

private:
  void prepare_default();

  ir::Program program_;
  target::DeviceProfile device_;
  SessionOptions options_;
  std::string profile_name_;
  FoundModel found_;
  std::optional<model::Model> model_;
  RankOptions rank_options_;
  RankResult ranking_;
  std::vector<RankedVariant> candidates_;
  size_t first_ranked_ = 0; ///< 1 when the default lowering comes first
  DefaultCandidate default_;
  /// Why the default lowering cannot be a candidate, to rethrow when nothing else can be.
  std::exception_ptr default_error_;
  std::vector<std::string> notes_;
};

} // namespace liftx::explore
