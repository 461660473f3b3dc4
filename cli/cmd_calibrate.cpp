// `liftx calibrate --device D [--minutes M]`: measure a designed set of variants on a device that
// has no model (the benchmark stencils and seeded synthetic ones, a few sizes, a sample of each
// space), within a time budget and resumably, then train and store the device's cost model where
// explore and tune() find it (docs/calibrate.md).
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "exec/run.hpp"
#include "explore/calibrate.hpp"
#include "explore/collect_targets.hpp"
#include "perfdb/db.hpp"
#include "support/error.hpp"
#include "synth/synth.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

struct CalibrateCommandOptions {
  std::string device = "cpu";
  double minutes = 20;
  std::vector<std::string> stencils;
  int synthetic = 8;
  std::vector<int64_t> sizes;
  int64_t sample = 0;
  std::string db;
  std::string output;
  bool restart = false;
  int build_jobs = -1;
  int warmup = exec::kDefaultWarmup;
  int repeat = exec::kDefaultRepeat;
  int timeout_ms = 60000;
  bool quiet = false;
};

/// Writes `count` seeded synthetic stencils into `folder` (kept small: at most three grids of
/// radius two, so that enumerating their spaces stays quick) and returns their paths.
std::vector<std::string> write_synthetic(const fs::path& folder, int count) {
  synth::SynthOptions options;
  options.max_grids = 3;
  options.max_radius = 2;
  constexpr uint64_t kSeed = 1;
  fs::create_directories(folder);
  std::vector<std::string> files;
  for (int i = 0; i < count; ++i) {
    const std::string name = fmt::format("synth_{}_{}", kSeed, i);
    const fs::path path = folder / (name + ".lift");
    std::ofstream out(path);
    out << synth::to_lift(synth::generate(kSeed, i, options), name);
    LIFTX_USER_CHECK(out, "cannot write {}", path.string());
    files.push_back(path.string());
  }
  return files;
}

explore::CalibrateOptions calibrate_options(const CalibrateCommandOptions& o,
                                            const runtime::Device& device,
                                            const std::vector<std::string>& files,
                                            const explore::CalibrationDesign& design,
                                            const fs::path& state, std::chrono::seconds budget) {
  explore::CalibrateOptions options;
  options.targets = explore::calibration_targets(files, explore::sizes_per_file(files, design));
  options.design = design;
  options.device = o.device;
  options.db = o.db.empty() ? perfdb::PerfDb::default_path() : fs::path(o.db);
  options.model =
      o.output.empty() ? explore::calibrated_model_path(device.profile) : fs::path(o.output);
  options.state = state;
  options.budget = budget;
  options.build_jobs = o.build_jobs >= 0 ? o.build_jobs : explore::default_calibration_build_jobs();
  options.repeat = o.repeat;
  options.warmup = o.warmup;
  options.timeout = std::chrono::milliseconds(o.timeout_ms);
  options.worker_executable = fs::read_symlink("/proc/self/exe").string();
  return options;
}

/// The summary after the run; RunFailed when no model could be trained.
void print_summary(const CalibrateCommandOptions& o, const runtime::Device& device,
                   const explore::CalibrateOptions& options, const explore::CalibrateSummary& s) {
  fmt::print("measured  {} now ({} already measured), {} left in the plan; {:.1f} of {:.1f} min "
             "spent\n",
             s.collected.measured, s.collected.skipped, s.left, s.spent_s / 60, o.minutes);
  fmt::print("database  {}\n", options.db.string());
  if (s.left)
    fmt::print("next      the budget ran out before the plan: `liftx calibrate --device {} "
               "--minutes M` with a larger M measures the rest\n",
               o.device);
  if (!s.trained) {
    fmt::print("model     none: no successful measurement of {} yet\n", device.profile.key);
    throw RunFailed();
  }
  fmt::print("model     boosted trees on {} measurements of {} programs: {}\n", s.samples,
             s.programs, options.model.string());
  if (s.samples < explore::kFewCalibrationSamples)
    fmt::print("warning   {} measurements are few for a ranking model (the shipped CPU model "
               "learnt from 2,089, in 40 minutes): `liftx calibrate --device {} --minutes M` "
               "with a larger M resumes and measures more\n",
               s.samples, o.device);
  fmt::print("use       liftx explore FILE --device {}{}\n", o.device,
             o.output.empty() ? "" : " --model " + o.output);
}

void run_calibrate(const CalibrateCommandOptions& o) {
  const runtime::Device device = runtime::select_device(o.device);
  const fs::path folder = explore::calibration_folder(device.profile);
  const fs::path state = folder / "state.json";
  if (o.restart)
    fs::remove(state);
  std::vector<std::string> files = explore::calibration_stencils(o.stencils);
  const std::vector<std::string> synthetic = write_synthetic(folder / "synth", o.synthetic);
  files.insert(files.end(), synthetic.begin(), synthetic.end());

  const std::chrono::seconds budget(static_cast<int64_t>(o.minutes * 60));
  const explore::CalibrationState earlier = explore::read_calibration_state(state);
  const explore::CalibrationDesign design = explore::resume_or_design_calibration(
      earlier, device.profile, budget, files.size(), o.sizes, o.sample);
  if (earlier.exists && (!o.sizes.empty() || o.sample > 0))
    fmt::print("note      resuming the calibration in {}: its sizes and sample stay (use "
               "--restart to change them)\n",
               state.string());

  const explore::CalibrateOptions options =
      calibrate_options(o, device, files, design, state, budget);
  std::string sizes;
  for (int64_t n : design.sizes)
    sizes += fmt::format("{}{}", sizes.empty() ? "" : ", ", n);
  fmt::print("device    {} ({})\n", device.profile.device_name, device.profile.key);
  fmt::print("design    {} stencils ({} synthetic) x sizes {} x {} variants each; budget {:.1f} "
             "min{}\n",
             files.size(), synthetic.size(), sizes, design.sample, o.minutes,
             earlier.exists ? fmt::format(", {:.1f} min spent before", earlier.spent_s / 60)
                            : std::string());
  std::fflush(stdout);
  ProgressPrinter printer;
  std::function<void(const explore::CollectProgress&)> progress;
  if (!o.quiet)
    progress = [&printer](const explore::CollectProgress& p) { printer.update(p); };
  const explore::CalibrateSummary summary = explore::calibrate(options, progress);
  printer.finish();
  print_summary(o, device, options, summary);
}

void add_calibrate_options(CLI::App* cmd, CalibrateCommandOptions& o) {
  add_device_option(cmd, o.device);
  cmd->add_option("--minutes", o.minutes,
                  "time budget in all, over resumed runs (default 20); a run cut short goes on "
                  "where it stopped")
      ->check(CLI::Range(0.05, 100000.0));
  cmd->add_option("--stencils", o.stencils, "stencil files (default: the benchmark suite)");
  cmd->add_option("--synthetic", o.synthetic, "seeded synthetic stencils added to them (default 8)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--sizes", o.sizes,
                  "square sizes (default: 256,512,1024,2048 on CPUs, 2048,4096 on GPUs)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{8}, int64_t{1} << 20));
  cmd->add_option("--sample", o.sample,
                  "variants per stencil and size (default: what the budget allows, 20 to 400)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  add_db_option(cmd, o.db, "to record the runs in");
  cmd->add_option("-o,--output", o.output,
                  "model file (default: <user data>/models/<device key>.json, where explore and "
                  "tune() look first)");
  cmd->add_flag("--restart", o.restart,
                "forget an earlier calibration's design and time spent (measurements are kept)");
  cmd->add_option("--build-jobs", o.build_jobs,
                  "processes building kernels ahead of the measurements (default: the cores "
                  "but one, at most 4)")
      ->check(CLI::Range(0, 256));
  add_timing_options(cmd, o.warmup, o.repeat);
  cmd->add_option("--timeout-ms", o.timeout_ms, "per variant, build included (default 60000)")
      ->check(CLI::Range(100, 3600000));
  cmd->add_flag("--quiet", o.quiet, "no progress bar");
}

} // namespace

void add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure a designed sample of variants on a device and train its cost model");
  add_calibrate_options(cmd, *o);
  cmd->callback([o] { run_calibrate(*o); });
}

} // namespace liftx::cli
