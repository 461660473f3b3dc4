#include "explore/explore.hpp"

#include "codegen/launch.hpp"
#include "exec/flops.hpp"
#include "exec/run.hpp"
#include "explore/collect.hpp"
#include "ir/host_iteration.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"
#include "model/metrics.hpp"
#include "perfdb/record.hpp"
#include "rewrite/lowering.hpp"
#include "runtime/isolate.hpp"
#include "space/space.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <set>

namespace liftx::explore {

Strategy parse_strategy(const std::string& text) {
  if (text == "model")
    return Strategy::model;
  if (text == "online")
    return Strategy::online;
  if (text == "random")
    return Strategy::random;
  if (text == "hillclimb")
    return Strategy::hillclimb;
  if (text == "exhaustive")
    return Strategy::exhaustive;
  throw UserError(
      fmt::format("unknown strategy '{}' (model, online, random, hillclimb or exhaustive)", text));
}

std::string to_string(Strategy strategy) {
  switch (strategy) {
  case Strategy::model:
    return "model";
  case Strategy::online:
    return "online";
  case Strategy::random:
    return "random";
  case Strategy::hillclimb:
    return "hillclimb";
  case Strategy::exhaustive:
    return "exhaustive";
  }
  return "?";
}

namespace {

/// How many of the variants' coordinates differ (parameters by name, launch per dimension).
int differences(const space::Variant& a, const space::Variant& b) {
  int diff = 0;
  std::set<std::string> names;
  for (const auto& [k, v] : a.parameters)
    names.insert(k);
  for (const auto& [k, v] : b.parameters)
    names.insert(k);
  for (const std::string& name : names) {
    auto ia = a.parameters.find(name), ib = b.parameters.find(name);
    if (ia == a.parameters.end() || ib == b.parameters.end() || ia->second != ib->second)
      ++diff;
  }
  if (a.launch.dims != b.launch.dims)
    return diff + 2;
  for (size_t d = 0; d < 3; ++d) {
    diff += a.launch.global[d] != b.launch.global[d];
    diff += a.launch.local[d] != b.launch.local[d];
  }
  diff += a.launch.tied != b.launch.tied;
  // Same coordinates but a different program (another high-level rewrite): not a neighbour.
  if (diff == 0 && a.kernel_index != b.kernel_index)
    diff = 2;
  return diff;
}

/// The ranked variants' model input rows (candidates x columns); no columns unless every variant
/// has a row of the same width (the default lowering tune() tries first has none).
model::Matrix rows_of(const std::vector<RankedVariant>& ranked) {
  const size_t width = ranked.empty() ? 0 : ranked[0].columns.size();
  const bool uniform = std::all_of(ranked.begin(), ranked.end(), [&](const RankedVariant& r) {
    return r.columns.size() == width;
  });
  model::Matrix rows(static_cast<Eigen::Index>(ranked.size()),
                     static_cast<Eigen::Index>(uniform ? width : 0));
  for (Eigen::Index i = 0; i < rows.rows(); ++i)
    for (Eigen::Index c = 0; c < rows.cols(); ++c)
      rows(i, c) = ranked[size_t(i)].columns[size_t(c)];
  return rows;
}

/// Spearman of `predicted` vs measured throughput over the successful attempts; nullopt with
/// fewer than 2 or when the predictions are all equal.
std::optional<double> spearman_of(const std::vector<Attempt>& attempts,
                                  const std::function<double(const Attempt&)>& predicted_of) {
  std::vector<double> predicted, throughput;
  for (const Attempt& a : attempts)
    if (a.report.status == runtime::Status::ok && a.report.timing &&
        a.report.timing->median_ms > 0) {
      predicted.push_back(predicted_of(a));
      throughput.push_back(1.0 / a.report.timing->median_ms);
    }
  const bool distinct = std::adjacent_find(predicted.begin(), predicted.end(),
                                           std::not_equal_to<>()) != predicted.end();
  if (predicted.size() >= 2 && distinct)
    return model::spearman(predicted, throughput);
  return std::nullopt;
}

} // namespace

std::vector<size_t> neighbours(const std::vector<RankedVariant>& ranked, size_t i) {
  std::vector<size_t> out;
  const space::Variant& v = ranked.at(i).variant;
  for (size_t j = 0; j < ranked.size(); ++j)
    if (j != i && ranked[j].variant.strategy == v.strategy &&
        differences(v, ranked[j].variant) == 1)
      out.push_back(j);
  return out;
}

ExploreResult explore(const std::vector<RankedVariant>& ranked, const ExploreOptions& options,
                      const Measure& measure, const OnAttempt& on_attempt) {
  return explore_batches(
      ranked, options,
      [&](const std::vector<const RankedVariant*>& variants) {
        std::vector<exec::RunReport> reports;
        for (const RankedVariant* variant : variants)
          reports.push_back(measure(*variant));
        return reports;
      },
      on_attempt);
}

ExploreResult explore_batches(const std::vector<RankedVariant>& ranked,
                              const ExploreOptions& options, const MeasureBatch& measure,
                              const OnAttempt& on_attempt) {
  ExploreResult result;
  const size_t n = ranked.size();
  const auto budget =
      options.strategy == Strategy::exhaustive
          ? n
          : static_cast<size_t>(std::clamp<int64_t>(options.budget, 0, static_cast<int64_t>(n)));
  std::vector<bool> measured(n, false);
  auto time_of = [&](size_t attempt) -> std::optional<double> {
    const exec::RunReport& r = result.attempts[attempt].report;
    if (r.status != runtime::Status::ok || !r.timing)
      return std::nullopt;
    return r.timing->median_ms;
  };
  const auto parallel = static_cast<size_t>(std::max<int64_t>(options.parallel, 1));
  // Measures `indices` in one call of `measure`, then appends their attempts in this order:
  // `predicted_of(i)` just before variant i's attempt is appended, `observe(i)` just after (the
  // online strategy's scores and observations interleave as if each ran alone).
  auto run_batch = [&](const std::vector<size_t>& indices,
                       const std::function<double(size_t)>& predicted_of,
                       const std::function<void(size_t)>& observe = {}) {
    std::vector<const RankedVariant*> variants;
    for (size_t index : indices) {
      measured[index] = true;
      variants.push_back(&ranked[index]);
    }
    std::vector<exec::RunReport> reports = measure(variants);
    LIFTX_INTERNAL_CHECK(reports.size() == indices.size(), "explore: {} reports for {} variants",
                         reports.size(), indices.size());
    for (size_t k = 0; k < indices.size(); ++k) {
      result.attempts.push_back({indices[k], predicted_of(indices[k]), std::move(reports[k])});
      const size_t a = result.attempts.size() - 1;
      if (auto t = time_of(a); t && (!result.best || *t < *time_of(*result.best)))
        result.best = a;
      if (observe)
        observe(indices[k]);
      if (on_attempt)
        on_attempt(result.attempts.back(), static_cast<int64_t>(result.attempts.size()),
                   static_cast<int64_t>(budget));
    }
  };
  auto run_one = [&](size_t index, double predicted) {
    run_batch({index}, [&](size_t) { return predicted; });
  };

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  switch (options.strategy) {
  case Strategy::model:
    break; // ranked is already best predicted first
  case Strategy::random: {
    std::mt19937_64 rng(options.seed);
    for (size_t i = n; i > 1; --i)
      std::swap(order[i - 1], order[rng() % i]);
    break;
  }
  case Strategy::exhaustive:
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return ranked[a].variant.index < ranked[b].variant.index;
    });
    break;
  case Strategy::hillclimb: {
    // Start at the model's best; move to the best-predicted unmeasured neighbour of the best
    // measured point; when none is left, restart at the best-predicted unmeasured variant.
    while (result.attempts.size() < budget) {
      std::optional<size_t> next;
      if (result.best) {
        const size_t here = result.attempts[*result.best].ranked_index;
        for (size_t j : neighbours(ranked, here)) // ranked order = best predicted first
          if (!measured[j]) {
            next = j;
            break;
          }
      }
      if (!next)
        for (size_t j = 0; j < n && !next; ++j)
          if (!measured[j])
            next = j;
      if (!next)
        break;
      run_one(*next, ranked[*next].predicted);
    }
    break;
  }
  case Strategy::online: {
    // Re-rank after each batch; past the budget only while no run has succeeded.
    std::vector<double> prior;
    for (const RankedVariant& r : ranked)
      prior.push_back(r.predicted);
    model::OnlineRanker ranker(prior, rows_of(ranked), options.online);
    std::vector<int64_t> kernel_of;
    for (const RankedVariant& r : ranked)
      kernel_of.push_back(r.variant.kernel_index);
    ranker.set_kernels(std::move(kernel_of));
    std::vector<int64_t> shape_of;
    for (const RankedVariant& r : ranked)
      shape_of.push_back(model::launch_shape_of(r.variant.launch.dims, r.variant.launch.local));
    ranker.set_launch_shapes(std::move(shape_of));
    const size_t limit = std::max(
        budget,
        std::min(n, static_cast<size_t>(std::max<int64_t>(options.until_success_limit, 0))));
    const auto batch_size = static_cast<size_t>(std::max<int64_t>(options.batch, 1));
    while (result.attempts.size() < (result.best ? budget : limit)) {
      const size_t room = (result.best ? budget : limit) - result.attempts.size();
      const std::vector<size_t> batch = ranker.next_batch(std::min(batch_size, room));
      if (batch.empty())
        break;
      auto score = [&](size_t i) { return ranker.score(i); };
      auto observe = [&](size_t i) { ranker.observe(i, time_of(result.attempts.size() - 1)); };
      if (parallel > 1)
        run_batch(batch, score, observe);
      else
        for (size_t i : batch)
          run_batch({i}, score, observe);
      result.remaining_gain = ranker.remaining_gain();
      if (options.auto_budget && result.best && *result.remaining_gain < options.stop_gain) {
        result.stopped_early = result.attempts.size() < budget;
        break;
      }
    }
    result.online_spearman =
        spearman_of(result.attempts, [](const Attempt& a) { return a.predicted; });
    break;
  }
  }
  if (options.strategy != Strategy::hillclimb && options.strategy != Strategy::online) {
    const size_t limit = std::max(
        budget,
        std::min(n, static_cast<size_t>(std::max<int64_t>(options.until_success_limit, 0))));
    auto predicted = [&](size_t i) { return ranked[i].predicted; };
    for (size_t i = 0; i < limit && (i < budget || !result.best);) {
      // Within the budget `parallel` at a time; past it one at a time, until one succeeds.
      const size_t end = i < budget ? std::min(budget, i + parallel) : i + 1;
      run_batch(std::vector<size_t>(order.begin() + static_cast<std::ptrdiff_t>(i),
                                    order.begin() + static_cast<std::ptrdiff_t>(end)),
                predicted);
      i = end;
    }
  }
  result.model_spearman = spearman_of(
      result.attempts, [&](const Attempt& a) { return ranked[a.ranked_index].predicted; });
  return result;
}

int64_t DeviceDefaults::extent(size_t dimensions) const {
  if (dimensions <= 1)
    return size * size;
  const double points = double(size) * double(size);
  const auto target = static_cast<int64_t>(std::pow(points, 1.0 / double(dimensions)) + 1e-9);
  int64_t extent = 1;
  while (extent * 2 <= target)
    extent *= 2;
  return extent;
}

namespace {

/// The elements of `program`'s result at `sizes`: what one interpreted step computes.
double result_points(const ir::Program& program, const Sizes& sizes) {
  double points = 1;
  for (int64_t extent : interp::concrete_shape(program.result_type(), sizes))
    points *= double(extent);
  return points;
}

} // namespace

int64_t check_launches_for(const ir::Program& program, const Sizes& sizes) {
  const std::optional<ir::HostIteration> iteration = ir::host_iteration(program);
  if (!iteration || iteration->count + iteration->tail_count <= 1)
    return 0;
  return result_points(program, sizes) * double(iteration->count + iteration->tail_count) >
                 kLongCheckPointSteps
             ? 1
             : 0;
}

namespace {

/// The product of the sizes: what kLongCheckWork and kShortCheckWork bound.
double size_product(const Sizes& sizes) {
  double product = 1;
  for (const auto& [name, value] : sizes)
    product *= double(value);
  return product;
}

} // namespace

bool checks_at_smaller_sizes(const ir::Program& program, const Sizes& sizes) {
  return !ir::host_iteration(program) && size_product(sizes) > kLongCheckWork;
}

Sizes check_sizes_for(const ir::Program& reference, const ir::Program& lowered,
                      const Sizes& sizes) {
  // An iteration's check interprets every step at the smaller sizes.
  const std::optional<ir::HostIteration> iteration = ir::host_iteration(reference);
  const double steps = iteration ? double(iteration->count + iteration->tail_count) : 1;
  const double bound = iteration ? kLongCheckPointSteps : kShortCheckWork;
  Sizes smaller = sizes;
  bool shrunk = false;
  while (size_product(smaller) * steps > bound) {
    Sizes halved = smaller;
    bool even = true;
    for (auto& [name, value] : halved) {
      even = even && value % 2 == 0 && value >= 2;
      value /= 2;
    }
    if (!even || !rewrite::lengths_exact(lowered, halved) ||
        !rewrite::lengths_exact(reference, halved))
      break;
    smaller = std::move(halved);
    shrunk = true;
  }
  return shrunk ? smaller : Sizes{};
}

bool one_launch_check_is_long(const ir::Program& reference, const ir::Program& lowered,
                              int64_t steps_per_launch, const Sizes& sizes) {
  const std::optional<ir::HostIteration> iteration = ir::host_iteration(reference);
  if (!iteration)
    return false;
  // Not shortened (one launch and its remainder are every step): the whole iteration.
  const std::optional<exec::ShortCheck> shortened =
      exec::short_check(lowered, reference, 1, steps_per_launch);
  const int64_t steps =
      shortened ? shortened->steps_checked : iteration->count + iteration->tail_count;
  return result_points(reference, sizes) * double(steps) > kLongCheckPointSteps;
}

DeviceDefaults defaults_for(const target::DeviceProfile& device) {
  if (device.type == target::DeviceType::cpu)
    return {1024, 0};
  return {2048, 0};
}

namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  LIFTX_USER_CHECK(out, "cannot write {}", path.string());
}

} // namespace

RecordingWorkerMeasure::RecordingWorkerMeasure(perfdb::PerfDb& db,
                                               const target::DeviceProfile& device,
                                               const ir::Module& module, const ir::Program& program,
                                               const Sizes& sizes, std::string feature_profile,
                                               Options options)
    : db_(db), module_(module), sizes_(sizes), feature_profile_(std::move(feature_profile)),
      options_(std::move(options)), features_(device) {
  device_ids_.push_back(db_.device(device));
  reference_source_ = ir::print(ir::Module{module.userfuns, {program}});
  reference_name_ = program.name;
  program_id_ = db_.program(program.name, reference_source_);
  flops_ = exec::count_flops(program, sizes);
  fp32_peak_gflop_per_s_ = exec::fp32_peak_gflop_per_s(device);
  reference_ = scratch_.path() / "reference.lift";
  write_text(reference_, reference_source_);
  // A shortened check interprets a few steps per variant (cached per count), not all of them;
  // a check at smaller sizes interprets at those.
  if ((options_.check_launches == 0 || !ir::host_iteration(program)) && !options_.check_smaller)
    reference_job_ = std::async(std::launch::async, [this] { interpret_reference(); });
}

RecordingWorkerMeasure::~RecordingWorkerMeasure() {
  wait_for_reference();
}

void RecordingWorkerMeasure::wait_for_reference() {
  if (reference_job_.valid())
    reference_job_.get(); // interpret_reference() throws nothing
}

void RecordingWorkerMeasure::interpret_reference() {
  // The worker reads the reference result from the disk cache; computing it first keeps the
  // interpreter's time (a minute at 8192² for a large stencil) out of the first variant's
  // timeout, and on this thread it overlaps the ranking. The program is read back from the file
  // the worker reads, so the cache key matches.
  try {
    const ir::Module module = parse::parse_file(reference_.string());
    const ir::Program& reference = module.main();
    exec::RunOptions options;
    options.reference = &reference;
    exec::reference_result(reference, options, exec::draw_inputs(reference, sizes_, options.seed),
                           sizes_);
  } catch (const std::exception&) {
    // The worker meets the same problem and reports it with the variant.
  }
}

const perfdb::Measurement* RecordingWorkerMeasure::stored(const RankedVariant& ranked) const {
  const auto found = stored_.find(ranked.variant.index);
  return found == stored_.end() ? nullptr : &found->second;
}

exec::RunReport RecordingWorkerMeasure::report_of(const perfdb::Measurement& m) const {
  exec::RunReport report;
  report.status = m.status;
  report.message = m.message;
  report.compile_ms = m.compile_ms;
  if (m.status == runtime::Status::ok) {
    runtime::Timing t;
    t.median_ms = m.median_ms;
    t.min_ms = m.min_ms;
    t.max_ms = m.max_ms;
    t.q1_ms = m.q1_ms;
    t.q3_ms = m.q3_ms;
    t.samples_ms = m.samples_ms;
    report.timing = t;
    if (bytes_moved_ > 0 && m.median_ms > 0) {
      report.bytes_moved = bytes_moved_;
      report.gb_per_s = bytes_moved_ / (m.median_ms * 1e6);
      if (roofline_gb_per_s_) {
        report.roofline_gb_per_s = roofline_gb_per_s_;
        report.roofline_fraction = *report.gb_per_s / *roofline_gb_per_s_;
      }
    }
    exec::set_arithmetic_rate(report, flops_, fp32_peak_gflop_per_s_);
  }
  return report;
}

int64_t RecordingWorkerMeasure::record_variant(const RankedVariant& r, const std::string& printed) {
  const space::Variant& v = r.variant;
  std::optional<nlohmann::json> features;
  try {
    features = features::to_stored_json(features_.compute(*r.program, v, sizes_));
  } catch (const UserError&) {
    // Features that cannot be computed do not stop exploration; rows() skips the row.
  }
  return perfdb::record_configuration(
      db_, program_id_, nlohmann::json(sizes_),
      {printed, v.strategy, nlohmann::json(v.parameters), launch_json(v.launch)}, feature_profile_,
      features);
}

std::optional<perfdb::Measurement> RecordingWorkerMeasure::known(int64_t configuration_id) const {
  if (!options_.remeasure)
    for (int64_t device_id : device_ids_)
      if (std::optional<perfdb::Measurement> m =
              db_.latest_measurement(configuration_id, device_id))
        return m;
  return std::nullopt;
}

void RecordingWorkerMeasure::measure_through(Measurer& measurer,
                                             const std::vector<target::DeviceProfile>& devices) {
  LIFTX_INTERNAL_CHECK(!devices.empty(), "explore: a measurer without devices");
  measurer_ = &measurer;
  // Collect workers measure no roofline: the cached one of the first device, if any.
  if (devices.front().memory_gbs > 0)
    roofline_gb_per_s_ = devices.front().memory_gbs;
  fp32_peak_gflop_per_s_ = exec::fp32_peak_gflop_per_s(devices.front());
  device_ids_.clear();
  for (const target::DeviceProfile& device : devices)
    device_ids_.push_back(db_.device(device));
}

std::vector<exec::RunReport>
RecordingWorkerMeasure::measure_batch(const std::vector<const RankedVariant*>& variants) {
  std::vector<exec::RunReport> reports(variants.size());
  if (!measurer_) {
    for (size_t k = 0; k < variants.size(); ++k)
      reports[k] = (*this)(*variants[k]);
    return reports;
  }
  // Stored measurements stand for their runs; the others become collect's jobs.
  std::vector<CollectJob> jobs;
  std::vector<size_t> job_variant; // job -> index in variants
  for (size_t k = 0; k < variants.size(); ++k) {
    const RankedVariant& r = *variants[k];
    const std::string printed = ir::print(ir::Module{module_.userfuns, {*r.program}});
    const int64_t configuration_id = record_variant(r, printed);
    if (std::optional<perfdb::Measurement> m = known(configuration_id)) {
      stored_[r.variant.index] = *m;
      reports[k] = report_of(*m);
      continue;
    }
    CollectJob job;
    job.configuration_id = configuration_id;
    job.label = fmt::format("{} #{} {}", reference_name_, r.variant.index, r.variant.strategy);
    job.json = {{"id", configuration_id},
                {"module", printed},
                {"reference_module", reference_source_},
                {"reference_program", reference_name_},
                {"sizes", nlohmann::json(sizes_)},
                {"launch", launch_json(r.variant.launch)},
                {"repeat", options_.repeat},
                {"warmup", options_.warmup},
                {"seed", exec::RunOptions{}.seed}};
    jobs.push_back(std::move(job));
    job_variant.push_back(k);
  }
  if (jobs.empty())
    return reports;
  wait_for_reference(); // in the disk cache for this node's workers
  std::vector<bool> recorded(jobs.size(), false);
  measurer_->measure(
      jobs,
      [&](size_t job, size_t device, const perfdb::Measurement& m) {
        if (job >= jobs.size() || device >= device_ids_.size() || recorded[job])
          return;
        recorded[job] = true;
        db_.put_measurement(jobs[job].configuration_id, device_ids_[device], m);
        if (m.status == runtime::Status::ok && bytes_moved_ == 0 && m.bytes_moved > 0)
          bytes_moved_ = m.bytes_moved; // the same for every variant of the program
        reports[job_variant[job]] = report_of(m);
      },
      [] { return false; });
  for (size_t j = 0; j < jobs.size(); ++j)
    if (!recorded[j]) { // not expected: measure() returns once every job is recorded
      reports[job_variant[j]].status = runtime::Status::run_error;
      reports[job_variant[j]].message = "not measured";
    }
  return reports;
}

exec::RunReport RecordingWorkerMeasure::operator()(const RankedVariant& r) {
  const space::Variant& v = r.variant;
  const std::string printed = ir::print(ir::Module{module_.userfuns, {*r.program}});
  const int64_t configuration_id = record_variant(r, printed);
  if (std::optional<perfdb::Measurement> m = known(configuration_id)) {
    stored_[v.index] = *m;
    return report_of(*m);
  }

  exec::RunReport report =
      run_in_worker(*r.program, printed, v.launch, fmt::format("variant-{}", v.index),
                    space::steps_per_launch(v));
  if (report.status == runtime::Status::ok && bytes_moved_ == 0 && report.bytes_moved > 0) {
    bytes_moved_ = report.bytes_moved;
    roofline_gb_per_s_ = report.roofline_gb_per_s;
  }
  db_.put_measurement(configuration_id, device_ids_.front(), perfdb::measurement_of(report));
  return report;
}

exec::RunReport RecordingWorkerMeasure::run_unrecorded(const ir::Program& lowered,
                                                       const codegen::Launch& launch) {
  // The default lowering computes one step a launch.
  return run_in_worker(lowered, ir::print(ir::Module{module_.userfuns, {lowered}}), launch,
                       "unrecorded", 1);
}

Sizes RecordingWorkerMeasure::prepare_smaller_check(const ir::Program& lowered) {
  if (!short_reference_)
    short_reference_ = parse::parse_file(reference_.string());
  const ir::Program& reference = short_reference_->main();
  Sizes check = check_sizes_for(reference, lowered, sizes_);
  // Interpreted here, outside the worker's timeout (at the run's sizes when no smaller ones fit:
  // slow, but checked).
  const Sizes& interpreted = check.empty() ? sizes_ : check;
  if (interpreted_sizes_.insert(interpreted).second) {
    try {
      exec::RunOptions options;
      options.reference = &reference;
      exec::reference_result(reference, options,
                             exec::draw_inputs(reference, interpreted, options.seed), interpreted);
    } catch (const std::exception&) {
      // The worker meets the same problem and reports it with the variant.
    }
  }
  return check;
}

void RecordingWorkerMeasure::interpret_short_reference(const ir::Program& lowered,
                                                       int64_t steps_per_launch) {
  try {
    // Read back from the file the worker reads, so that the cache keys match.
    if (!short_reference_)
      short_reference_ = parse::parse_file(reference_.string());
    const std::optional<exec::ShortCheck> shortened = exec::short_check(
        lowered, short_reference_->main(), options_.check_launches, steps_per_launch);
    if (!shortened || !interpreted_steps_.insert(shortened->steps_checked).second)
      return;
    exec::RunOptions options;
    options.reference = &shortened->reference;
    exec::reference_result(shortened->reference, options,
                           exec::draw_inputs(shortened->reference, sizes_, options.seed), sizes_);
  } catch (const std::exception&) {
    // The worker meets the same problem and reports it with the variant.
  }
}

exec::RunReport RecordingWorkerMeasure::run_in_worker(const ir::Program& lowered,
                                                      const std::string& printed,
                                                      const codegen::Launch& launch,
                                                      const std::string& stem,
                                                      int64_t steps_per_launch) {
  wait_for_reference();
  int64_t check_launches = options_.check_launches;
  bool check_smaller = options_.check_smaller;
  if (check_launches > 0) {
    if (!short_reference_)
      short_reference_ = parse::parse_file(reference_.string());
    // Only where smaller sizes exist: every step at the run's sizes would take longer still.
    const ir::Program& reference = short_reference_->main();
    if (one_launch_check_is_long(reference, lowered, steps_per_launch, sizes_) &&
        !check_sizes_for(reference, lowered, sizes_).empty()) {
      check_launches = 0;
      check_smaller = true;
    }
  }
  const std::filesystem::path file = scratch_.path() / (stem + ".lift");
  write_text(file, printed);
  exec::RunReport report =
      run_checked_in_worker(lowered, file, launch, steps_per_launch, check_launches, check_smaller);
  // Every step at smaller sizes, where the reference amplifies rounding over that many steps (an
  // unstable iteration), checks nothing: no kernel matches it. The check explore chose for
  // itself then falls back to one launch of the kernel and its remainder at those sizes, as
  // before it checked every step (a check the user asked for, --full-check, stays as asked).
  if (report.status == runtime::Status::wrong_result &&
      report.verification.reference_ill_conditioned && check_launches == 0 &&
      options_.check_launches > 0) {
    report = run_checked_in_worker(lowered, file, launch, steps_per_launch, options_.check_launches,
                                   true);
    report.verification.reference_ill_conditioned = true;
  }
  return report;
}

exec::RunReport RecordingWorkerMeasure::run_checked_in_worker(
    const ir::Program& lowered, const std::filesystem::path& file, const codegen::Launch& launch,
    int64_t steps_per_launch, int64_t check_launches, bool check_smaller) {
  // (At smaller sizes the worker interprets the few steps itself, quickly.)
  if (check_launches > 0 && !check_smaller)
    interpret_short_reference(lowered, steps_per_launch);
  std::string global;
  for (int d = 0; d < launch.dims; ++d)
    global += (d ? "," : "") + std::to_string(launch.global[size_t(d)]);
  std::vector<std::string> argv = {options_.executable, "run",
                                   file.string(),       "--worker",
                                   "--device",          options_.device_spec,
                                   "--global",          global,
                                   "--reference",       reference_.string(),
                                   "--warmup",          std::to_string(options_.warmup),
                                   "--repeat",          std::to_string(options_.repeat)};
  if (check_launches > 0) {
    argv.insert(argv.end(), {"--check-launches", std::to_string(check_launches),
                             "--steps-per-launch", std::to_string(steps_per_launch)});
  }
  if (check_smaller) {
    std::vector<std::string> check;
    for (const auto& [name, value] : prepare_smaller_check(lowered))
      check.push_back(fmt::format("{}={}", name, value));
    if (!check.empty())
      argv.insert(argv.end(), {"--check-size", fmt::format("{}", fmt::join(check, ","))});
  }
  // A launch that leaves the work-group to the runtime asks for no local size.
  if (const codegen::LaunchRequest request = codegen::request_for(launch); !request.local.empty()) {
    argv.push_back("--local");
    argv.push_back(fmt::format("{}", fmt::join(request.local, ",")));
  }
  for (const auto& [name, value] : sizes_) {
    argv.push_back("--size");
    argv.push_back(fmt::format("{}={}", name, value));
  }
  runtime::IsolatedResult child = runtime::run_isolated(argv, options_.timeout);
  exec::RunReport report;
  if (child.succeeded()) {
    try {
      report = exec::report_from_json(nlohmann::json::parse(child.stdout_text));
    } catch (const nlohmann::json::exception& e) {
      report.status = runtime::Status::run_error;
      report.message = fmt::format("unreadable worker report: {}", e.what());
    }
  } else {
    report.status = child.timed_out ? runtime::Status::timeout : runtime::Status::run_error;
    report.message = child.describe() + (child.stderr_text.empty() ? "" : ": " + child.stderr_text);
  }
  return report;
}

} // namespace liftx::explore
