// `liftx collect`'s two phases: planning every target's variants (with their features) into the
// performance database, then measuring them through a Measurer; and the reports of what it stored.
#include "explore/collect.hpp"
#include "explore/collect_internal.hpp"
#include "explore/rank.hpp"
#include "perfdb/lock.hpp"
#include "perfdb/record.hpp"

#include "codegen/kernel.hpp"
#include "exec/program_binding.hpp"
#include "exec/run.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/cache_dir.hpp"
#include "space/space.hpp"
#include "space/stratified_sample.hpp"
#include "support/error.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

namespace liftx::explore {

namespace detail {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

} // namespace detail

using namespace detail;

namespace {

/// The `options.sample` variants `options.ranked_by` ranks best (among the --where ones), best
/// first, each with its lowered program.
std::vector<space::Variant> top_ranked(const ir::Program& program, const Sizes& sizes,
                                       const target::DeviceProfile& feature_profile,
                                       const std::string& profile_name,
                                       const CollectOptions& options) {
  const model::Model model = model::Model::load(options.ranked_by);
  LIFTX_USER_CHECK(model.profile == profile_name,
                   "collect: the model {} is for profile {}, the collection's features "
                   "are for profile {}",
                   options.ranked_by.string(), model.profile, profile_name);
  RankOptions ranking;
  ranking.sizes = sizes;
  ranking.profile = profile_name;
  ranking.device = feature_profile;
  ranking.keep = static_cast<size_t>(std::max<int64_t>(options.sample, 0));
  ranking.explain_top = 0;
  ranking.warp_streams = options.warp_streams;
  if (!options.where.empty())
    ranking.keep_if = [&](const std::string& strategy,
                          const std::map<std::string, int64_t>& parameters,
                          const codegen::Launch& launch) {
      return space::matches(strategy, parameters, launch, options.where);
    };
  RankResult ranked = rank(program, model, ranking);
  std::vector<space::Variant> variants;
  for (RankedVariant& r : ranked.ranked) {
    r.variant.program = *r.program;
    variants.push_back(std::move(r.variant));
  }
  return variants;
}

/// Streams a target's variant space (all of it or the sample), stores every variant,
/// configuration and its features, and returns the configurations in stream order.
std::vector<perfdb::PlannedConfiguration>
plan_target(perfdb::PerfDb& db, const ir::Program& program, const ir::Module& module,
            int64_t program_id, const Sizes& sizes, const DeviceLimits& limits,
            const target::DeviceProfile& feature_profile, const std::string& profile_name,
            const CollectOptions& options, int64_t& features_failed) {
  space::SpaceOptions space_options;
  space_options.sizes = sizes;
  space_options.device = limits;
  space_options.warp_streams = options.warp_streams;
  space::VariantStream stream(program, space_options);
  std::vector<space::Variant> variants;
  if (options.all) {
    space::Variant v;
    while (stream.next(v))
      if (space::matches(v, options.where))
        variants.push_back(std::move(v));
  } else if (!options.ranked_by.empty()) {
    variants = top_ranked(program, sizes, feature_profile, profile_name, options);
  } else {
    auto keep = [&](const space::Variant& v) { return space::matches(v, options.where); };
    variants = options.stratified
                   ? space::stratified_sample(stream, options.sample, options.seed, keep)
                   : space::sample(stream, options.sample, options.seed, keep);
  }
  LIFTX_USER_CHECK(!(variants.empty() && !options.where.empty()),
                   "collect: no variant of {} at {} has --where {}", program.name,
                   nlohmann::json(sizes).dump(), space::describe(options.where));
  const nlohmann::json sizes_json(sizes);
  std::vector<perfdb::PlannedConfiguration> planned;
  for (const space::Variant& v : variants) {
    perfdb::PlannedConfiguration p;
    p.printed = ir::print(ir::Module{module.userfuns, {v.program}});
    p.strategy = v.strategy;
    p.variant_index = v.index;
    p.launch = launch_json(v.launch);
    std::optional<nlohmann::json> features;
    try {
      features = features::to_stored_json(features::compute(
          v.program, sizes, perfdb::run_options_for(p.launch).request(), feature_profile));
    } catch (const UserError&) {
      ++features_failed; // measured all the same; rows() skips it
    }
    p.configuration_id = perfdb::record_configuration(
        db, program_id, sizes_json, {p.printed, v.strategy, nlohmann::json(v.parameters), p.launch},
        profile_name, features);
    planned.push_back(std::move(p));
  }
  return planned;
}

} // namespace

std::string profile_name_for(const target::DeviceProfile& device) {
  if (device.type == target::DeviceType::cpu)
    return "cpu";
  if (contains_nocase(device.vendor, "nvidia") || contains_nocase(device.platform_name, "nvidia"))
    return "nvidia";
  if (contains_nocase(device.vendor, "amd") || contains_nocase(device.vendor, "advanced micro") ||
      contains_nocase(device.platform_name, "amd"))
    return "amd";
  return std::string(target::to_string(device.type));
}

CollectSummary collect(const CollectOptions& options,
                       const std::function<void(const CollectProgress&)>& progress,
                       Measurer* measurer) {
  LIFTX_USER_CHECK(!options.targets.empty(), "collect: no programs to collect");
  LIFTX_USER_CHECK(!(!options.all && options.sample <= 0),
                   "collect: --sample must be positive (or use --all)");
  std::optional<LocalMeasurer> local;
  if (!measurer && !options.plan_only)
    measurer = &local.emplace(options);
  const Clock::time_point start = Clock::now();
  // Every target parsed once, up front. A lowered program has no variant space: collecting it
  // would measure nothing. Checked for every target before the database is opened, so that
  // nothing is written.
  std::vector<ir::Module> modules;
  modules.reserve(options.targets.size()); // `programs` points into them: no reallocation
  std::vector<const ir::Program*> programs;
  for (const CollectTarget& target : options.targets) {
    const ir::Module& module = modules.emplace_back(parse::parse_file(target.file));
    const ir::Program* program =
        target.program.empty() ? &module.main() : module.find(target.program);
    LIFTX_USER_CHECK(program, "{}: no definition named '{}'", target.file, target.program);
    programs.push_back(program);
    refuse_lowered(*program, target.file, "collect");
  }
  // One collection per database at a time (before the device is opened: refused at once).
  const perfdb::CollectionLock lock(options.db);

  CollectSummary summary;
  CollectProgress state;
  std::optional<Clock::time_point> measuring_start;
  auto report = [&] {
    state.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    if (measuring_start)
      state.measuring_s = std::chrono::duration<double>(Clock::now() - *measuring_start).count();
    if (progress)
      progress(state);
  };

  // The devices measured on (the first one is what `detect` means), and the profile that limits
  // the space and computes features.
  target::DeviceProfile feature_profile;
  DeviceLimits limits;
  std::vector<target::DeviceProfile> devices;
  if (!options.plan_only)
    devices = measurer->devices();
  if (options.profile == "detect") {
    LIFTX_USER_CHECK(!devices.empty(),
                     "collect: planning without a device needs a named --profile (cpu, nvidia "
                     "or amd), not detect");
    feature_profile = devices.front();
    limits = devices.front().limits();
    summary.profile = profile_name_for(devices.front());
  } else {
    feature_profile = runtime::named_profile(options.profile);
    limits = feature_profile.limits();
    summary.profile = options.profile;
  }

  perfdb::PerfDb db(options.db);
  std::vector<int64_t> device_ids;
  for (const target::DeviceProfile& device : devices)
    device_ids.push_back(db.device(device));
  if (!devices.empty())
    summary.device_key = devices.front().key;
  auto measured_before = [&](int64_t configuration_id) {
    for (int64_t device_id : device_ids)
      if (db.has_measurement(configuration_id, device_id))
        return true;
    return false;
  };
  // The plan's name: another selection is another plan (a retrained model ranks anew).
  std::string selection =
      options.all ? std::string("all")
      : !options.ranked_by.empty()
          ? fmt::format("top {} ranked by {}", options.sample,
                        runtime::content_hash(read_text(options.ranked_by)))
      : options.stratified
          ? fmt::format("stratified sample {} seed {}", options.sample, options.seed)
          : fmt::format("sample {} seed {}", options.sample, options.seed);
  if (!options.where.empty())
    selection += " where " + space::describe(options.where);
  if (options.warp_streams)
    selection += " with warp streams";

  // Phase 1: every target's plan, enumerated (with features) unless the database has it.
  state.phase = "enumerating";
  std::vector<CollectJob> jobs;
  for (size_t t = 0; t < options.targets.size(); ++t) {
    const CollectTarget& target = options.targets[t];
    const ir::Module& module = modules[t];
    const ir::Program* program = programs[t];
    const std::string source = ir::print(ir::Module{module.userfuns, {*program}});
    const int64_t program_id = db.program(program->name, source);
    const nlohmann::json sizes_json(target.sizes);
    std::optional<std::vector<perfdb::PlannedConfiguration>> planned =
        db.plan(program_id, sizes_json, summary.profile, selection);
    if (!planned) { // said only when it happens: a stored plan is read in an instant
      state.current = fmt::format("{} {}", program->name, exec::format_sizes(target.sizes));
      report();
      ++summary.targets_planned;
      planned = plan_target(db, *program, module, program_id, target.sizes, limits, feature_profile,
                            summary.profile, options, summary.features_failed);
      std::vector<std::pair<int64_t, int64_t>> ids;
      for (const perfdb::PlannedConfiguration& p : *planned)
        ids.emplace_back(p.configuration_id, p.variant_index);
      db.put_plan(program_id, sizes_json, summary.profile, selection, ids);
    }
    summary.variants += static_cast<int64_t>(planned->size());
    if (options.plan_only)
      continue;
    for (perfdb::PlannedConfiguration& p : *planned) {
      if (options.resume && measured_before(p.configuration_id)) {
        ++summary.skipped;
        continue;
      }
      CollectJob job;
      job.configuration_id = p.configuration_id;
      job.label = fmt::format("{} {} #{} {}", program->name, exec::format_sizes(target.sizes),
                              p.variant_index, p.strategy);
      job.json = {{"id", p.configuration_id},
                  {"module", std::move(p.printed)},
                  {"reference_file", std::filesystem::absolute(target.file).string()},
                  {"reference_program", program->name},
                  {"sizes", sizes_json},
                  {"launch", std::move(p.launch)},
                  {"repeat", options.repeat},
                  {"warmup", options.warmup},
                  {"seed", options.input_seed}};
      if (!target.check_sizes.empty())
        job.json["check_sizes"] = target.check_sizes;
      jobs.push_back(std::move(job));
    }
  }
  summary.skipped = state.skipped = summary.skipped;
  state.total = static_cast<int64_t>(jobs.size());

  // Phase 2: measure. Each job is recorded once, as its result arrives (committed at once), so
  // that a run cut off anywhere loses nothing measured and a resumed one measures nothing twice.
  if (jobs.empty()) // nothing to measure: no bar (the summary says what was skipped)
    return summary;
  state.phase = "measuring";
  measuring_start = Clock::now();
  report();
  auto out_of_time = [&] {
    return options.time_limit.count() > 0 && Clock::now() - start >= options.time_limit;
  };
  std::vector<bool> recorded(jobs.size(), false);
  int64_t stored = 0;
  auto record = [&](size_t job_index, size_t device, const perfdb::Measurement& m) {
    LIFTX_INTERNAL_CHECK(job_index < jobs.size() && device < device_ids.size(),
                         "collect: a result for job {} on device {} of {} jobs and "
                         "{} devices",
                         job_index, device, jobs.size(), device_ids.size());
    if (recorded[job_index])
      return; // a second answer (a rank given up for lost came back): the first one stands
    recorded[job_index] = true;
    const CollectJob& job = jobs[job_index];
    db.put_measurement(job.configuration_id, device_ids[device], m);
    ++summary.measured;
    ++stored;
    std::string status(runtime::to_string(m.status));
    ++summary.statuses[status];
    ++state.statuses[status];
    ++state.done;
    state.current = job.label;
    report();
    if (options.stop_after > 0 && stored >= options.stop_after)
      std::_Exit(75); // simulates an interrupted run: nothing flushed beyond what is committed
  };
  measurer->measure(jobs, record, out_of_time);
  summary.worker_restarts = measurer->worker_restarts();
  summary.left = static_cast<int64_t>(jobs.size()) - stored;
  return summary;
}

int64_t newest_measurement_id(const std::filesystem::path& db) {
  if (!std::filesystem::exists(db))
    return 0;
  return perfdb::PerfDb(db, perfdb::PerfDb::Access::read_only).last_measurement_id();
}

void write_collected_csv(std::ostream& out, const std::filesystem::path& db,
                         const CollectSummary& summary, int64_t measured_before) {
  const perfdb::PerfDb reader(db, perfdb::PerfDb::Access::read_only);
  reader.export_csv(out, summary.device_key, measured_before);
}

nlohmann::json collected_json(const std::filesystem::path& db, const CollectSummary& summary,
                              int64_t measured_before) {
  const perfdb::PerfDb reader(db, perfdb::PerfDb::Access::read_only);
  nlohmann::json statuses = nlohmann::json::object();
  for (const auto& [status, n] : summary.statuses)
    statuses[status] = n;
  return {{"database", db.string()},
          {"device", summary.device_key},
          {"profile", summary.profile},
          {"planned", summary.variants},
          {"measured", summary.measured},
          {"skipped", summary.skipped},
          {"left", summary.left},
          {"statuses", statuses},
          {"measurements", reader.measurements_json(summary.device_key, measured_before)}};
}

} // namespace liftx::explore
