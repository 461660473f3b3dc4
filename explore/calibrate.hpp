#pragma once
/// Calibration: the first day of a device liftx has no model for. A compact designed collection
/// (stencils x sizes x a sample of each variant space) is measured within a time budget, resumably,
/// and a cost model is trained on it and stored in the user data folder, where explore and tune()
/// find it (find_model).
#include "explore/collect.hpp"
#include "runtime/device.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace liftx::explore {

/// liftx's per-user data folder: $XDG_DATA_HOME/liftx, else $HOME/.local/share/liftx.
std::filesystem::path user_data_dir();

/// Where `liftx calibrate` stores a device's model: <user data>/models/<device key>.json.
std::filesystem::path calibrated_model_path(const target::DeviceProfile& device);

/// Where a device's calibration keeps its state file and its synthetic stencils:
/// <user data>/calibration/<device key>.
std::filesystem::path calibration_folder(const target::DeviceProfile& device);

/// Below this many measurements a calibrated model is thin: a one-minute calibration on a 2-core
/// machine trained on 6, the shipped CPU model on 2,089 (40 minutes).
inline constexpr int64_t kFewCalibrationSamples = 300;

/// The benchmark stencils (the `.lift` files of stencils/, not its variants), from the source tree
/// or ../share/liftx/stencils next to the executable; sorted by name. UserError when neither has
/// any.
std::vector<std::filesystem::path> suite_stencils();

/// What a calibration measures, fixed on its first run so that a resumed run measures the same
/// plans (and finds them in the database instead of enumerating again).
struct CalibrationDesign {
  std::vector<int64_t> sizes; ///< every size variable of a stencil takes each of these in turn
  int64_t sample = 0;         ///< variants per stencil and size (a fixed-seed sample)
  uint64_t seed = 1;
  /// The sample spread over the kinds of kernel (space::stratified_sample); false in designs
  /// stored before it existed, which sampled uniformly and resume that way.
  bool stratified = true;
};

/// The sizes a user of this kind of device runs (CPUs 256-2048, GPUs 2048 and 4096: large enough
/// that a kernel's time is its memory traffic) and a sample per target sized so that `budget`
/// covers the plan: enumerating each target's space (about 10 s) and measuring its sample at the
/// rate expected of the device (a kernel build, then runs a few times slower than streaming the
/// grid). A budget that runs out first leaves targets that a larger budget measures later.
CalibrationDesign design_calibration(const target::DeviceProfile& device,
                                     std::chrono::seconds budget, size_t programs);

/// The stencil files a calibration measures: `given`, else the benchmark suite (suite_stencils).
std::vector<std::string> calibration_stencils(const std::vector<std::string>& given);

/// Processes building kernels ahead of the measurements by default: the cores but one, at most 4
/// (a build is single-threaded; the measurements need a core of their own).
int default_calibration_build_jobs();

/// The collection targets of a design in the order they are measured: round r measures every
/// program, program p at size (p + r) mod |sizes|, so that a run cut short by its budget has
/// every program and every size, not all programs at the first size only.
std::vector<CollectTarget> calibration_targets(const std::vector<std::string>& files,
                                               const std::vector<Sizes>& sizes_per_file);

struct CalibrateOptions {
  std::vector<CollectTarget> targets; ///< calibration_targets(...)
  CalibrationDesign design;
  std::string device = "cpu";  ///< select_device spec
  std::filesystem::path db;    ///< the performance database measured into
  std::filesystem::path model; ///< the model file written
  /// The state file: the design and the time spent so far (a resumed run spends what is left).
  std::filesystem::path state;
  std::chrono::seconds budget{1200}; ///< in all, over every resumed run
  int build_jobs = 0;
  int repeat = exec::kDefaultRepeat;
  int warmup = exec::kDefaultWarmup;
  std::chrono::milliseconds timeout{60000};
  std::string worker_executable;
};

struct CalibrationState {
  CalibrationDesign design;
  double spent_s = 0; ///< time spent by earlier runs
  bool exists = false;
};
/// The state file's content; exists = false when there is none. UserError when it is unreadable.
CalibrationState read_calibration_state(const std::filesystem::path& path);
void write_calibration_state(const std::filesystem::path& path, const CalibrationState& state);

/// The design a run measures: an earlier run's (`earlier.exists`: a resumed calibration measures
/// the same plans), else design_calibration's, with `sizes` and `sample` instead of its own where
/// given (non-empty, > 0).
CalibrationDesign resume_or_design_calibration(const CalibrationState& earlier,
                                               const target::DeviceProfile& device,
                                               std::chrono::seconds budget, size_t programs,
                                               const std::vector<int64_t>& sizes, int64_t sample);

struct CalibrateSummary {
  CollectSummary collected;
  double spent_s = 0; ///< in all, this run and the earlier ones
  /// Variants of the plan not measured (targets not reached counted at their sample size): the
  /// budget ran out; a run with a larger budget measures them.
  int64_t left = 0;
  int64_t samples = 0;  ///< successful measurements the model was trained on
  int64_t programs = 0; ///< distinct programs among them
  bool trained = false; ///< false when the budget was spent before any run succeeded
  std::string feature_profile;
};

/// Measures what is left of the plan within what is left of the budget (CollectOptions::resume),
/// then trains boosted trees (the shipped NVIDIA model's settings: log target, every feature
/// column) on every successful measurement of the device in the database and writes the model.
CalibrateSummary calibrate(const CalibrateOptions& options,
                           const std::function<void(const CollectProgress&)>& progress = {});

} // namespace liftx::explore
