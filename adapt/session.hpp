#pragma once
/// The input-adaptive tuning of `liftx adapt`, in the steps the command runs one after another
/// and prints between: rank the space at each training shape for candidates, measure every
/// candidate at every training shape (each run verified and recorded in the performance
/// database), choose a portfolio and fit its selector, write them as an artifact, and optionally
/// evaluate the selector at held-out shapes against a broad search there, the portfolio's best
/// single member and the variant tuned at one typical shape. The steps report their progress
/// through a SessionObserver and return what the caller shows.
#include "adapt/adapt.hpp"
#include "exec/run.hpp"
#include "explore/collect.hpp"
#include "explore/models.hpp"
#include "explore/rank.hpp"
#include "ir/expr.hpp"
#include "model/model.hpp"
#include "perfdb/db.hpp"
#include "runtime/device.hpp"
#include "support/device_limits.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::adapt {

/// The evaluation's second measurement measures its variants this many times, one after
/// another, each round with SessionOptions::confirm_repeat / kConfirmRounds timed runs.
inline constexpr int kConfirmRounds = 3;

struct SessionOptions {
  std::string file;                  ///< the program's file: named in messages, never written
  std::vector<std::string> shapes;   ///< training shapes, as parse_shape reads them
  std::vector<std::string> evaluate; ///< held-out shapes; empty: no evaluation
  /// The training shape whose tuned variant the evaluation compares; empty: the one nearest
  /// 2048 per size.
  std::string typical;
  size_t top = 4;             ///< best-ranked tied variants taken from each training shape
  size_t fixed_grids = 1;     ///< shape-free free-thread launches taken from each, grids fixed
  size_t portfolio = 4;       ///< at most this many members
  size_t evaluate_top = 16;   ///< variants ranked best at a held-out shape measured there
  std::string device = "cpu"; ///< runtime::select_device's spec, also the workers'
  std::string model;          ///< a model file; empty: the shipped one for the device kind
  std::string db;             ///< the performance database; empty: PerfDb::default_path()
  std::string output;         ///< where write_output writes; empty: nowhere
  bool emit_header = false;   ///< write_output writes the C++ header, not the JSON artifact
  /// The caller charts the held-out shapes: refused without any.
  bool plot = false;
  int warmup = exec::kDefaultWarmup;
  int repeat = exec::kDefaultRepeat;
  int64_t timeout_ms = 60000; ///< per variant, build included
  int build_jobs = 0;         ///< processes building kernels ahead of each shape's measurements
  /// Timed runs of the evaluation's second measurement of each held-out shape; 0: none.
  int confirm_repeat = 30;
  std::string worker_executable; ///< the liftx program whose worker children measure
};

/// A training shape measured: how many of the candidates ran there.
struct TrainingShapeMeasured {
  Sizes shape;
  size_t ran = 0;
  size_t candidates = 0;
};

/// The comparison at one held-out shape: fractions of the best known time there (0: it does not
/// run there).
struct HeldOutRow {
  Sizes shape;
  std::optional<double> best_ms; ///< the best known time; nullopt when nothing ran
  std::optional<AdaptiveArtifact::Pick> pick;
  double adaptive = 0; ///< the selector's pick
  double single = 0;   ///< the portfolio's best single member
  double typical = 0;  ///< the variant tuned at the typical training shape
  /// The single member or the typical variant ran fitted to the shape, not as measured.
  bool single_fitted = false;
  bool typical_fitted = false;
};

/// What the session reports as it works, for the caller to show; any member may be left empty.
struct SessionObserver {
  /// A coarse step begins: a training or a held-out shape is measured.
  std::function<void(const std::string& step)> step;
  /// A ranking of the space begins, has walked `count` variants (`phase`: how), and is over;
  /// ranking_finished does not follow a ranking whose error ends the step.
  std::function<void()> ranking_started;
  std::function<void(std::string_view phase, int64_t count)> ranking_counted;
  std::function<void()> ranking_finished;
  std::function<void(const TrainingShapeMeasured&)> training_shape_measured;
  std::function<void(const HeldOutRow&)> held_out_shape_evaluated;
};

/// The portfolio and its selector, chosen over the training shapes.
struct PortfolioResult {
  AdaptiveArtifact artifact;
  /// The candidates (positions in the training table) the portfolio lists: its members, then the
  /// fallback where it is no member.
  std::vector<size_t> listed;
  /// Shapes near the training shapes that fewer tiles divide, estimated from them, which the
  /// portfolio was also chosen over (with_coverage_probes).
  size_t nearby_shapes = 0;
};

/// What the held-out shapes are compared with.
struct EvaluationPlan {
  size_t typical = 0; ///< the training shape whose tuned variant is compared
  /// That variant: the fastest candidate there (a position in the training table), if any ran.
  std::optional<size_t> typical_candidate;
  /// The portfolio's best single member: the highest mean fraction over the training shapes.
  size_t single = 0;
  int confirm_round_repeat = 0; ///< timed runs per round of the second measurement
};

/// The evaluation at every held-out shape, and over them.
struct HeldOutSummary {
  std::vector<HeldOutRow> rows; ///< one per held-out shape, in their order
  double adaptive_sum = 0;      ///< of the pick's fractions
  double adaptive_worst = 1;
  /// The typical variant's worst fraction where it runs, and at which shape; nullopt when it
  /// runs at none.
  std::optional<double> typical_worst;
  std::string typical_worst_shape;
  size_t typical_missing = 0; ///< held-out shapes it does not run at, fitted or not

  /// The pick's mean fraction over the held-out shapes, in percent.
  double adaptive_mean_percent() const {
    return 100 * adaptive_sum / double(std::max<size_t>(rows.size(), 1));
  }
};

/// One `liftx adapt` run. Its steps are called in the order they are declared in, write_output
/// and the evaluation only where wanted; a step called out of that order throws InternalError.
class Session {
public:
  /// Checks the program and the options, reads the shapes, opens the device, loads the model
  /// and opens the database: what can be refused is refused before the tuning, which may take
  /// long. UserError for a lowered program, a bad shape or option, a missing device or model.
  Session(const ir::Module& module, const ir::Program& program, SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const target::DeviceProfile& device() const { return device_.profile; }
  const explore::FoundModel& found_model() const { return found_; }
  const std::vector<Sizes>& training_shapes() const { return shapes_; }
  /// The candidates, and after measure_training_shapes their times at the training shapes.
  const AdaptiveTable& training() const { return table_; }

  /// Ranks the space at each training shape for candidates (the best-ranked tied variants, for
  /// shapes nearby that fewer tiles divide the best-ranked that runs there, and fixed grids),
  /// and keeps a shape-free fallback; returns how many candidates there are.
  size_t gather_candidates(const SessionObserver& observer);
  /// Measures every candidate at every training shape where it applies.
  void measure_training_shapes(const SessionObserver& observer);
  /// Chooses the portfolio and its fallback and fits the selector. UserError when no candidate
  /// ran at any training shape.
  const PortfolioResult& build_portfolio();
  /// Writes the portfolio to SessionOptions::output, as JSON or as a C++ header.
  void write_output() const;

  bool evaluates() const { return !held_out_.empty(); }
  /// The typical shape (UserError for a --typical that is no training shape) and the single
  /// member the held-out shapes compare with.
  const EvaluationPlan& plan_evaluation();
  /// At each held-out shape, the selector's pick against a broad search there.
  HeldOutSummary evaluate_held_out(const SessionObserver& observer);

private:
  enum class Stage { opened, gathered, measured, built, planned, evaluated };
  class ShapeMeasure;
  struct HeldOutBatch;

  void advance(Stage from, Stage to, std::string_view step);
  std::optional<AdaptiveCandidate>
  add_ranked_candidates(const Sizes& shape, size_t top, size_t fixed_grids,
                        const SessionObserver& observer, std::vector<AdaptiveCandidate>& into,
                        std::vector<space::Variant>* free_threads = nullptr) const;
  void add_fixed_grids(const explore::RankOptions& ranked, size_t missing,
                       const SessionObserver& observer, std::vector<AdaptiveCandidate>& into) const;
  void choose_fallback();
  double mean_fraction(size_t candidate) const;
  HeldOutRow evaluate_held_out_shape(const Sizes& shape, const SessionObserver& observer);
  HeldOutBatch held_out_batch(const Sizes& shape, const std::optional<AdaptiveArtifact::Pick>& pick,
                              const std::vector<AdaptiveCandidate>& broad,
                              std::vector<space::Variant> broad_free) const;
  void confirm_fastest(const Sizes& shape, const std::vector<size_t>& fastest, HeldOutBatch& batch);

  SessionOptions options_;
  ir::Module module_;
  ir::Program program_;
  std::vector<Sizes> shapes_;
  std::vector<Sizes> held_out_;
  runtime::Device device_;
  std::string kind_; ///< the device kind the features and the model are for
  explore::FoundModel found_;
  std::optional<model::Model> model_;
  DeviceLimits limits_;
  std::optional<perfdb::PerfDb> db_;
  std::optional<explore::LocalMeasurer> measurer_;
  std::vector<target::DeviceProfile> measured_on_;
  Stage stage_ = Stage::opened;

  AdaptiveTable table_;
  /// The last resort of shapes no other member runs at (a position in table_).
  std::optional<size_t> fallback_candidate_;
  std::vector<size_t> members_; ///< the portfolio, as positions in table_
  PortfolioResult portfolio_;
  EvaluationPlan plan_;
};

} // namespace liftx::adapt
