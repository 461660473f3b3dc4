#pragma once
/// Model-guided exploration: rank the variants, then measure them in an order chosen by a
/// strategy until a budget of runs, and report the best. Measuring is a callback, so that the
/// command line can run each variant isolated in a worker child (and tests can fake it).
#include "exec/run.hpp"
#include "explore/rank.hpp"
#include "model/online.hpp"
#include "perfdb/db.hpp"
#include "perfdb/record.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace liftx::explore {

class Measurer; // explore/collect.hpp

/// model: the ranked order; online: the ranked order re-ranked after each batch by what the runs
/// so far measured (model::OnlineRanker); random; hillclimb (seed 000); exhaustive.
enum class Strategy { model, online, random, hillclimb, exhaustive };
/// "model", "online", "random", "hillclimb", "exhaustive"; UserError otherwise.
Strategy parse_strategy(const std::string& text);
std::string to_string(Strategy strategy);

struct ExploreOptions {
  Strategy strategy = Strategy::model;
  int64_t budget = 10; ///< runs; exhaustive ignores it (every variant, stream order)
  uint64_t seed = 1;   ///< of the random order
  /// While no run has succeeded, go on past the budget up to this many runs in all (0: stop at
  /// the budget): an application that tunes needs a working variant.
  int64_t until_success_limit = 0;
  // Online strategy.
  int64_t batch = 4; ///< variants measured between re-rankings
  /// Stop before the budget (then a hard cap) once the expected relative gain of the best
  /// unmeasured variant over the best run falls under `stop_gain` (`--budget auto`).
  bool auto_budget = false;
  double stop_gain = model::kAutoStopGain;
  model::OnlineOptions online;
  /// How many variants explore_batches() may hand its measure at once (so that it can measure
  /// them in parallel: `explore --mpi`). 1: one at a time, each attempt reported as it ends. More:
  /// the online strategy hands over each batch whole; model, random and exhaustive this many of
  /// the budget at a time (past the budget, while no run has succeeded, one at a time);
  /// hillclimb always one. The variants chosen, the attempts' order and their predicted scores do
  /// not depend on it.
  int64_t parallel = 1;
};

struct Attempt {
  size_t ranked_index = 0; ///< into the ranked list
  /// What the strategy expected when it chose the variant: the ranked prediction, or for the
  /// online strategy its re-ranked score (in its own scale; only its order means something).
  double predicted = 0;
  exec::RunReport report;
};

struct ExploreResult {
  std::vector<Attempt> attempts; ///< in the order they ran
  std::optional<size_t> best;    ///< index into attempts of the fastest correct one
  /// Spearman of predicted vs measured throughput over the successful attempts (nullopt with
  /// fewer than 2, or when their predictions are all equal).
  std::optional<double> model_spearman;
  /// Online strategy: Spearman of the re-ranked scores the variants had when chosen vs measured
  /// throughput (how well the re-ranking predicted; same conditions as model_spearman).
  std::optional<double> online_spearman;
  /// Online strategy: the expected relative gain left when it stopped, and whether
  /// `auto_budget` stopped it before the budget.
  std::optional<double> remaining_gain;
  bool stopped_early = false;
};

/// Variants that share `ranked[i]`'s strategy and differ from it in exactly one parameter, one
/// launch dimension (global or local) or the tied flag.
std::vector<size_t> neighbours(const std::vector<RankedVariant>& ranked, size_t i);

/// Measures one variant: build, run, verify, time.
using Measure = std::function<exec::RunReport(const RankedVariant&)>;
/// Measures several variants (possibly at once): one report per variant, in their order.
using MeasureBatch =
    std::function<std::vector<exec::RunReport>(const std::vector<const RankedVariant*>&)>;
/// Called after each attempt (progress output).
using OnAttempt = std::function<void(const Attempt&, int64_t done, int64_t planned)>;

ExploreResult explore(const std::vector<RankedVariant>& ranked, const ExploreOptions& options,
                      const Measure& measure, const OnAttempt& on_attempt = {});
/// explore() with a measure that takes up to `options.parallel` variants at a time.
ExploreResult explore_batches(const std::vector<RankedVariant>& ranked,
                              const ExploreOptions& options, const MeasureBatch& measure,
                              const OnAttempt& on_attempt = {});

/// What explore and tune() do when the user does not say, per kind of device. CPUs (PoCL): every
/// size 1024 (a kernel then takes a tenth of a millisecond or more, which times steadily where
/// 128²'s microseconds did not, and is inside the shipped CPU model's training sizes) and the
/// whole space ranked. GPUs: every size 2048 (a kernel's time is its memory traffic rather than its
/// launch, inside the NVIDIA model's 512-4096 and quick to interpret for the verification) and
/// the whole space ranked too (10^6 variants: seconds, streamed over every core by rank()).
struct DeviceDefaults {
  int64_t size = 128; ///< per dimension of a 2D grid
  int64_t sample = 0; ///< 0 = the whole space
  /// The default extent of every dimension of a grid with `dimensions` size variables: about as
  /// many points as the 2D default (size²), a power of two; `size` itself for a 2D grid.
  int64_t extent(size_t dimensions) const;
};
DeviceDefaults defaults_for(const target::DeviceProfile& device);

/// Point-steps (the result's elements times the steps) above which interpreting an iterated
/// program's every step for the check takes long: about 40 s of the interpreter on 2 cores (more
/// than 64 steps at 1024², or 4 at 4096²).
inline constexpr double kLongCheckPointSteps = double(int64_t{1} << 26);
/// exec::RunOptions::check_launches for exploring `program` at `sizes`: 1 (each variant checked
/// on one launch of its step kernel and its remainder, on the full grid) when it is a host
/// iteration whose every step would take more than kLongCheckPointSteps to interpret; else 0.
int64_t check_launches_for(const ir::Program& program, const Sizes& sizes);

/// The product of a program's sizes above which interpreting it for the check takes minutes
/// (about 645³: a matrix product of 1024³, 2^30 multiply-adds, is past it, as is a 3D grid of
/// 1024³). Below it a variant is checked at the sizes it runs at.
inline constexpr double kLongCheckWork = double(int64_t{1} << 28);
/// The product of the sizes a variant is checked at instead, when its tiles allow: 512³.
inline constexpr double kShortCheckWork = double(int64_t{1} << 27);
/// Whether exploring `program` (not an iterated one: check_launches_for shortens those) at
/// `sizes` checks each variant at smaller sizes (check_sizes_for).
bool checks_at_smaller_sizes(const ir::Program& program, const Sizes& sizes);
/// exec::RunOptions::check_sizes for the variant `lowered` of `reference` at `sizes`: every size
/// halved together until their product is at most kShortCheckWork (an iteration: until the
/// product times its steps is at most kLongCheckPointSteps, 1024² for 64 steps), as far as the
/// lengths of both programs stay exact (the variant's tiles still divide them); empty when no
/// halving does.
Sizes check_sizes_for(const ir::Program& reference, const ir::Program& lowered, const Sizes& sizes);
/// Whether checking `lowered`, a variant of the iteration `reference` that fuses
/// `steps_per_launch` steps a launch, on one launch and its remainder at `sizes`
/// (check_launches_for) would interpret more than kLongCheckPointSteps: a deep fused launch on a
/// large grid (ten steps at 8192² take minutes to interpret). Such a variant is checked with
/// every step at smaller sizes instead (check_sizes_for, where its tiles allow any), as `liftx
/// run --check-size` checks it: the same kernel under the same launch rule.
bool one_launch_check_is_long(const ir::Program& reference, const ir::Program& lowered,
                              int64_t steps_per_launch, const Sizes& sizes);

/// Measures variants of one program in worker children (`liftx run --worker`: a kernel that
/// crashes or hangs takes down the child, not the exploration), each verified against the
/// high-level program, and records every run in the performance database (variant,
/// configuration, features, measurement). A configuration the database has already measured on
/// this device is not run again unless `remeasure`: its latest measurement (verified when it was
/// recorded) stands for the run, so that exploring again costs no device time for what is known.
class RecordingWorkerMeasure {
public:
  struct Options {
    std::string executable;  ///< the liftx binary
    std::string device_spec; ///< as the user gave it: the worker opens the same device
    int warmup = exec::kDefaultWarmup;
    int repeat = exec::kDefaultRepeat;
    std::chrono::milliseconds timeout{60000}; ///< per variant, build included
    bool remeasure = false; ///< run every variant, also those the database has measured
    /// exec::RunOptions::check_launches for every run (check_launches_for); an iterated
    /// program's whole reference is then not interpreted up front.
    int64_t check_launches = 0;
    /// Check each variant at smaller sizes (checks_at_smaller_sizes, check_sizes_for); the
    /// reference is then interpreted at those sizes, not at the run's.
    bool check_smaller = false;
  };
  RecordingWorkerMeasure(perfdb::PerfDb& db, const target::DeviceProfile& device,
                         const ir::Module& module, const ir::Program& program, const Sizes& sizes,
                         std::string feature_profile, Options options);
  ~RecordingWorkerMeasure();
  RecordingWorkerMeasure(const RecordingWorkerMeasure&) = delete;
  RecordingWorkerMeasure& operator=(const RecordingWorkerMeasure&) = delete;

  exec::RunReport operator()(const RankedVariant& ranked);
  /// Builds, checks against the high-level program and times one lowered program in a worker
  /// child as a variant is, at `launch`, but records nothing: the default lowering that explore
  /// compares its winner with.
  exec::RunReport run_unrecorded(const ir::Program& lowered, const codegen::Launch& launch);
  /// From now on, measures through `measurer` rather than a worker child per variant: the
  /// variants the database has not measured become collect's jobs (`collect-worker`: the same
  /// build, run, check against the reference and timing), handed over a batch at a time
  /// (`explore --mpi`: to the ranks of an MPI job). `devices` are measurer.devices(), the first
  /// being this object's device: each measurement is recorded under the device it was measured
  /// on, and what any of them has measured is stored.
  void measure_through(Measurer& measurer, const std::vector<target::DeviceProfile>& devices);
  /// Measures `variants` (reports in their order): at once through the measurer, else one by one.
  std::vector<exec::RunReport> measure_batch(const std::vector<const RankedVariant*>& variants);
  FeatureCache& features() { return features_; }
  /// The stored measurement that stood for this variant's run, or null when it was run.
  const perfdb::Measurement* stored(const RankedVariant& ranked) const;
  int64_t stored_count() const { return static_cast<int64_t>(stored_.size()); }

private:
  /// A stored measurement as a run report; its bandwidth is known once a run of this session
  /// has given the bytes the program moves.
  exec::RunReport report_of(const perfdb::Measurement& m) const;
  /// Runs `lowered` (`printed`: it as a module with the user functions) in a worker child
  /// (scratch file STEM.lift) at `launch`; `steps_per_launch`: of its step kernel, for
  /// Options::check_launches.
  exec::RunReport run_in_worker(const ir::Program& lowered, const std::string& printed,
                                const codegen::Launch& launch, const std::string& stem,
                                int64_t steps_per_launch);
  /// The worker's run of `file` (`lowered` printed) checked on `check_launches` launches (0:
  /// every step) and, with `check_smaller`, at smaller sizes (check_sizes_for).
  exec::RunReport run_checked_in_worker(const ir::Program& lowered,
                                        const std::filesystem::path& file,
                                        const codegen::Launch& launch, int64_t steps_per_launch,
                                        int64_t check_launches, bool check_smaller);
  /// With Options::check_launches: interprets the steps the worker will check `lowered` on
  /// (cached on disk, as interpret_reference), so that the interpreter's time is not the
  /// variant's: once per count of steps.
  void interpret_short_reference(const ir::Program& lowered, int64_t steps_per_launch);
  /// Records the variant's configuration (and features) in the database: its id.
  int64_t record_variant(const RankedVariant& ranked, const std::string& printed);
  /// The latest measurement of a configuration on one of the devices (none with `remeasure`).
  std::optional<perfdb::Measurement> known(int64_t configuration_id) const;

  /// Interprets the reference into the disk cache the workers read; runs on its own thread from
  /// construction, so that it overlaps the ranking, and the first run waits for it.
  void interpret_reference();
  std::set<int64_t> interpreted_steps_; ///< the shortened references interpreted so far
  /// With Options::check_smaller: the sizes `lowered` is checked at (empty: the run's), its
  /// reference interpreted at them first (cached on disk, once per sizes).
  Sizes prepare_smaller_check(const ir::Program& lowered);
  std::set<Sizes> interpreted_sizes_; ///< the sizes the reference was interpreted at so far
  /// reference_ read back, for the shortened checks and those at smaller sizes.
  std::optional<ir::Module> short_reference_;
  void wait_for_reference();

  perfdb::PerfDb& db_;
  const ir::Module& module_;
  Sizes sizes_;
  std::string feature_profile_;
  Options options_;
  std::vector<int64_t> device_ids_; ///< the first: the device of the constructor
  int64_t program_id_ = 0;
  std::string reference_source_; ///< the high-level program as a .lift module
  std::string reference_name_;
  Measurer* measurer_ = nullptr;
  perfdb::ScratchDir scratch_{"liftx-explore-"};
  std::filesystem::path reference_;
  FeatureCache features_;
  std::map<int64_t, perfdb::Measurement> stored_; ///< by variant index
  double bytes_moved_ = 0;                        ///< from the first successful run
  std::optional<double> roofline_gb_per_s_;
  double flops_ = 0; ///< of the high-level program (exec::count_flops), the same for every variant
  std::optional<double> fp32_peak_gflop_per_s_; ///< of the device measured on
  std::future<void> reference_job_;             ///< last: joined before the files it reads go
};

} // namespace liftx::explore
