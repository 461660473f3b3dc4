#include "explore/calibrate.hpp"

#include "model/evaluate.hpp"
#include "model/protocol.hpp"
#include "perfdb/dataset.hpp"
#include "perfdb/lock.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

namespace liftx::explore {

namespace fs = std::filesystem;

fs::path user_data_dir() {
  if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data)
    return fs::path(data) / "liftx";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".local" / "share" / "liftx";
}

fs::path calibrated_model_path(const target::DeviceProfile& device) {
  return user_data_dir() / "models" / (device.key + ".json");
}

fs::path calibration_folder(const target::DeviceProfile& device) {
  return user_data_dir() / "calibration" / device.key;
}

std::vector<std::string> calibration_stencils(const std::vector<std::string>& given) {
  std::vector<std::string> files = given;
  if (files.empty())
    for (const fs::path& f : suite_stencils())
      files.push_back(f.string());
  return files;
}

int default_calibration_build_jobs() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::clamp(cores - 1, 0, 4);
}

std::vector<fs::path> suite_stencils() {
  std::vector<fs::path> folders;
#ifdef LIFTX_SOURCE_DIR
  folders.push_back(fs::path(LIFTX_SOURCE_DIR) / "stencils");
#endif
  std::error_code ec;
  if (const fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
    folders.push_back(exe.parent_path().parent_path() / "share" / "liftx" / "stencils");
  for (const fs::path& folder : folders) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(folder, ec))
      if (e.is_regular_file() && e.path().extension() == ".lift")
        files.push_back(e.path());
    if (!files.empty()) {
      std::sort(files.begin(), files.end());
      return files;
    }
  }
  std::string looked;
  for (const fs::path& folder : folders)
    looked += "\n  " + folder.string();
  throw UserError("no benchmark stencils found; looked in:" + looked);
}

namespace {

/// Seconds one measurement is expected to take at size n x n: building the kernel, then warm-up
/// and timed runs of a variant a few times slower than streaming the grid twice (read and write).
double seconds_per_measurement(const target::DeviceProfile& device, int64_t n) {
  const bool cpu = device.type == target::DeviceType::cpu;
  const double build_s = cpu ? 0.8 : 0.15; // PoCL compiles with LLVM; measured on 2 cores
  const double gbs = device.throughput().memory_gbs > 0 ? device.throughput().memory_gbs : 10;
  const double stream_s = 2.0 * 4.0 * double(n) * double(n) / (gbs * 1e9);
  constexpr double runs = 13, slower = 3;
  return build_s + runs * slower * stream_s;
}

} // namespace

CalibrationDesign design_calibration(const target::DeviceProfile& device,
                                     std::chrono::seconds budget, size_t programs) {
  CalibrationDesign design;
  design.sizes = device.type == target::DeviceType::cpu ? std::vector<int64_t>{256, 512, 1024, 2048}
                                                        : std::vector<int64_t>{2048, 4096};
  constexpr double kPlanSeconds = 10; // enumerating one target's space and its features
  double per_round = 0;               // one measurement of every program at every size
  for (int64_t n : design.sizes)
    per_round += seconds_per_measurement(device, n) * double(programs);
  const double planning_s = kPlanSeconds * double(programs * design.sizes.size());
  // 90%: training and the last target's overshoot take the rest.
  const double measuring_s = 0.9 * double(budget.count()) - planning_s;
  const auto rounds = static_cast<int64_t>(std::max(measuring_s, 0.0) / std::max(per_round, 1e-3));
  // Fewer than 20 variants per space teach the model little about it; beyond 400 a space adds
  // little that another stencil would not.
  design.sample = std::clamp<int64_t>(rounds, 20, 400);
  return design;
}

CalibrationDesign resume_or_design_calibration(const CalibrationState& earlier,
                                               const target::DeviceProfile& device,
                                               std::chrono::seconds budget, size_t programs,
                                               const std::vector<int64_t>& sizes, int64_t sample) {
  if (earlier.exists)
    return earlier.design;
  CalibrationDesign design = design_calibration(device, budget, programs);
  if (!sizes.empty())
    design.sizes = sizes;
  if (sample > 0)
    design.sample = sample;
  return design;
}

std::vector<CollectTarget> calibration_targets(const std::vector<std::string>& files,
                                               const std::vector<Sizes>& sizes_per_file) {
  LIFTX_INTERNAL_CHECK(!files.empty() && sizes_per_file.size() % files.size() == 0,
                       "calibration_targets: {} size sets for {} files", sizes_per_file.size(),
                       files.size());
  // sizes_per_file holds, size by size, one entry per file.
  const size_t sizes = sizes_per_file.size() / files.size();
  std::vector<CollectTarget> targets;
  for (size_t round = 0; round < sizes; ++round)
    for (size_t p = 0; p < files.size(); ++p) {
      CollectTarget t;
      t.file = files[p];
      t.sizes = sizes_per_file[((p + round) % sizes) * files.size() + p];
      targets.push_back(std::move(t));
    }
  return targets;
}

CalibrationState read_calibration_state(const fs::path& path) {
  CalibrationState state;
  std::error_code ec;
  if (!fs::exists(path, ec))
    return state;
  std::ifstream in(path);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    state.design.sizes = j.at("sizes").get<std::vector<int64_t>>();
    state.design.sample = j.at("sample").get<int64_t>();
    state.design.seed = j.at("seed").get<uint64_t>();
    state.design.stratified = j.value("stratified", false);
    state.spent_s = j.at("spent_s").get<double>();
    state.exists = true;
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: unreadable calibration state ({}); remove it to start the "
                                "calibration again",
                                path.string(), e.what()));
  }
  return state;
}

void write_calibration_state(const fs::path& path, const CalibrationState& state) {
  fs::create_directories(path.parent_path());
  // Written next to the target and renamed over it: an interrupted write leaves the old state.
  const fs::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial);
    out << nlohmann::json{{"sizes", state.design.sizes},
                          {"sample", state.design.sample},
                          {"seed", state.design.seed},
                          {"stratified", state.design.stratified},
                          {"spent_s", state.spent_s}}
               .dump(2)
        << "\n";
    LIFTX_USER_CHECK(out, "cannot write {}", partial.string());
  }
  fs::rename(partial, path);
}

namespace {

/// Adds a chunk's collection to the run's.
void accumulate(CollectSummary& into, const CollectSummary& chunk) {
  into.variants += chunk.variants;
  into.targets_planned += chunk.targets_planned;
  into.features_failed += chunk.features_failed;
  into.measured += chunk.measured;
  into.skipped += chunk.skipped;
  into.worker_restarts += chunk.worker_restarts;
  into.left += chunk.left;
  for (const auto& [status, n] : chunk.statuses)
    into.statuses[status] += n;
  into.device_key = chunk.device_key;
  into.profile = chunk.profile;
}

} // namespace

CalibrateSummary calibrate(const CalibrateOptions& options,
                           const std::function<void(const CollectProgress&)>& progress) {
  CalibrationState state = read_calibration_state(options.state);
  if (!state.exists)
    state.design = options.design;
  write_calibration_state(options.state, state); // the design, before anything is measured
  CalibrateSummary summary;
  CollectOptions collect_options;
  collect_options.db = options.db;
  collect_options.device = options.device;
  collect_options.sample = state.design.sample;
  collect_options.seed = state.design.seed;
  collect_options.stratified = state.design.stratified;
  collect_options.resume = true;
  collect_options.repeat = options.repeat;
  collect_options.warmup = options.warmup;
  collect_options.timeout = options.timeout;
  collect_options.worker_executable = options.worker_executable;
  collect_options.build_jobs = options.build_jobs;

  // A few targets per collection, so that planning (enumerating a space takes seconds) and
  // measuring alternate: a budget that runs out leaves whole targets, each planned and measured,
  // rather than every plan and no measurement.
  constexpr size_t kChunk = 4;
  const auto start = std::chrono::steady_clock::now();
  auto spent_now = [&] {
    return state.spent_s +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int64_t done_before = 0;
  // Held across the chunks: another collect on the database cannot slip in between them.
  const perfdb::CollectionLock lock(options.db);
  for (size_t first = 0; first < options.targets.size(); first += kChunk) {
    const double left_s = double(options.budget.count()) - spent_now();
    const size_t last = std::min(options.targets.size(), first + kChunk);
    if (left_s < 1) {
      summary.left += static_cast<int64_t>(last - first) * state.design.sample;
      continue;
    }
    collect_options.targets.assign(options.targets.begin() + ptrdiff_t(first),
                                   options.targets.begin() + ptrdiff_t(last));
    collect_options.time_limit = std::chrono::seconds(static_cast<int64_t>(std::ceil(left_s)));
    const auto still_planned =
        static_cast<int64_t>(options.targets.size() - last) * state.design.sample;
    // Progress over the whole plan (targets not yet enumerated counted at their sample size);
    // the time spent is saved with each measurement, so a killed run resumes with what is left.
    auto on_progress = [&](const CollectProgress& p) {
      CollectProgress whole = p;
      whole.done += done_before;
      whole.total += done_before + still_planned;
      // The rate (and so the ETA) over this whole run, planning included.
      whole.elapsed_s = spent_now() - state.spent_s;
      whole.measuring_s = whole.elapsed_s;
      CalibrationState now = state;
      now.spent_s = spent_now();
      if (p.phase == "measuring")
        write_calibration_state(options.state, now);
      if (progress)
        progress(whole);
    };
    const CollectSummary chunk = collect(collect_options, on_progress);
    done_before += chunk.measured + chunk.skipped;
    accumulate(summary.collected, chunk);
    summary.left += chunk.left;
  }
  state.spent_s = spent_now();
  write_calibration_state(options.state, state);
  if (summary.collected.device_key.empty()) {
    // Nothing was collected in this run (the budget was spent before): name the device as
    // collect would have.
    const runtime::Device device = runtime::select_device(options.device);
    summary.collected.device_key = device.profile.key;
    summary.collected.profile = profile_name_for(device.profile);
  }
  summary.spent_s = state.spent_s;
  summary.feature_profile = summary.collected.profile;

  const perfdb::PerfDb db(options.db, perfdb::PerfDb::Access::read_only);
  model::Dataset data;
  try {
    data = perfdb::load_dataset(db, summary.collected.device_key, summary.collected.profile);
  } catch (const UserError&) {
    return summary; // nothing measured yet: no model
  }
  std::set<std::string> programs;
  for (const model::Sample& s : data.samples)
    if (s.time_ms) {
      ++summary.samples;
      programs.insert(s.program);
    }
  summary.programs = static_cast<int64_t>(programs.size());
  if (summary.samples < 2)
    return summary;
  data = model::select_columns(data, perfdb::feature_set("all", data.feature_names));
  model::TrainOptions train;
  train.transform = model::Transform::log;
  model::Model m = model::train(data, model::Kind::boosted, train);
  m.profile = summary.collected.profile;
  const runtime::Device device = runtime::select_device(options.device);
  m.provenance = {{"database", fs::absolute(options.db).string()},
                  {"device", summary.collected.device_key},
                  {"device_profile", device.profile},
                  {"programs", std::vector<std::string>(programs.begin(), programs.end())},
                  {"samples", summary.samples},
                  {"calibration",
                   {{"sizes", state.design.sizes},
                    {"sample", state.design.sample},
                    {"spent_s", state.spent_s},
                    {"budget_s", options.budget.count()}}},
                  {"trained", perfdb::utc_timestamp()},
                  {"liftx", "0.1.0"}};
  fs::create_directories(fs::absolute(options.model).parent_path());
  m.save(options.model);
  summary.trained = true;
  return summary;
}

} // namespace liftx::explore
