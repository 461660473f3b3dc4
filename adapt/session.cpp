#include "adapt/session.hpp"

#include "adapt/header.hpp"
#include "codegen/kernel.hpp"
#include "explore/explore.hpp"
#include "explore/rank.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/walk.hpp"
#include "runtime/launch.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>

namespace liftx::adapt {

namespace {

namespace fs = std::filesystem;

/// A slot of a held-out shape's batch that is not there (no typical variant, no pick).
constexpr size_t kNone = size_t(-1);

void notify(const std::function<void()>& observer) {
  if (observer)
    observer();
}

std::vector<std::string> size_names(const ir::Program& program) {
  std::vector<std::string> names;
  for (const arith::Expr& v : program.size_vars())
    names.push_back(v.node().name);
  return names;
}

/// explore::rank with its progress reported to `observer`.
explore::RankResult rank_observed(const ir::Program& program, const model::Model& model,
                                  explore::RankOptions options, const SessionObserver& observer) {
  notify(observer.ranking_started);
  options.on_progress = observer.ranking_counted;
  explore::RankResult ranking = explore::rank(program, model, options);
  notify(observer.ranking_finished);
  return ranking;
}

/// A work-item per point (the library's default lowering: 3D, 2D, then 1D thread mappings, x
/// on dimension 0) with a work-group of 32x4x2, 16x4 or 64 (fitted to each shape): the fallback
/// when the ranking kept no shape-free tied variant.
std::optional<AdaptiveCandidate> default_fallback(const ir::Module& module,
                                                  const ir::Program& program, const Sizes& shape) {
  const ir::Program fused = rewrite::apply_until_fixpoint(program, rewrite::zip_of_maps());
  for (const auto& [strategy, local] :
       {std::pair<const char*, std::vector<int64_t>>{"global3d_210", {32, 4, 2}},
        {"global2d_10", {16, 4}},
        {"global1d", {64}}}) {
    auto lowered = rewrite::lower(fused, strategy, 0, shape);
    const auto* p = std::get_if<ir::Program>(&lowered);
    if (!p)
      continue;
    try {
      if (codegen::generate(*p).launch.dims != static_cast<int>(local.size()))
        continue;
    } catch (const UserError&) {
      continue;
    }
    AdaptiveCandidate c;
    c.printed = ir::print(ir::Module{module.userfuns, {*p}});
    c.strategy = strategy;
    c.local = local;
    return c;
  }
  return std::nullopt;
}

} // namespace

/// Measures variants of the program at one shape (verified, recorded), a batch at a time through
/// the session's measurer (one worker per batch, builders ahead of it): measured configurations
/// stand in.
class Session::ShapeMeasure {
public:
  ShapeMeasure(Session& session, const Sizes& shape, int repeat, bool remeasure = false)
      : measure_(*session.db_, session.device_.profile, session.module_, session.program_, shape,
                 session.kind_,
                 {session.options_.worker_executable, session.options_.device,
                  session.options_.warmup, repeat,
                  std::chrono::milliseconds(session.options_.timeout_ms), remeasure}) {
    measure_.measure_through(*session.measurer_, session.measured_on_);
  }

  /// The median time of each variant (nullopt where it failed or is absent), measured together.
  std::vector<std::optional<double>> operator()(std::vector<std::optional<space::Variant>> all) {
    std::vector<explore::RankedVariant> ranked;
    std::vector<size_t> slot;
    for (size_t k = 0; k < all.size(); ++k) {
      if (!all[k])
        continue;
      explore::RankedVariant r;
      r.program = std::make_shared<const ir::Program>(all[k]->program);
      r.variant = std::move(*all[k]);
      r.variant.index = next_index_++; // unique in this shape: the measurer's key
      ranked.push_back(std::move(r));
      slot.push_back(k);
    }
    std::vector<const explore::RankedVariant*> pointers;
    for (const explore::RankedVariant& r : ranked)
      pointers.push_back(&r);
    const std::vector<exec::RunReport> reports = measure_.measure_batch(pointers);
    std::vector<std::optional<double>> times(all.size());
    for (size_t j = 0; j < reports.size(); ++j)
      if (reports[j].status == runtime::Status::ok && reports[j].timing)
        times[slot[j]] = reports[j].timing->median_ms;
    return times;
  }

private:
  explore::RecordingWorkerMeasure measure_;
  int64_t next_index_ = 0;
};

/// Everything a held-out shape compares, measured as one batch, each distinct candidate once:
/// the portfolio, the typical shape's variant, the broad search (the best-ranked tied
/// candidates and free-thread launches there), and launches fitted to the shape.
struct Session::HeldOutBatch {
  std::vector<AdaptiveCandidate> compared; ///< the portfolio's members are the first
  /// One per slot: the compared candidates as they apply at the shape, the broad search's
  /// free-thread launches, then the fitted launches.
  std::vector<std::optional<space::Variant>> variants;
  size_t pick_slot = kNone;
  size_t single_slot = kNone;            ///< the single member, fitted where it does not apply
  size_t typical_slot = kNone;           ///< the typical variant as measured
  size_t typical_run_slot = kNone;       ///< and fitted where it does not apply
  std::vector<std::optional<double>> ms; ///< per slot, nullopt where it did not run
  std::vector<size_t> counted;           ///< the slots the best known is the fastest of
  /// The second measurement's times per slot, one per round (nullopt where a run failed).
  std::vector<std::vector<std::optional<double>>> rounds;
};

Session::Session(const ir::Module& module, const ir::Program& program, SessionOptions options)
    : options_(std::move(options)), module_(module), program_(program) {
  explore::refuse_lowered(program_, options_.file, "adapt");
  const std::vector<std::string> names = size_names(program_);
  for (const std::string& s : options_.shapes)
    shapes_.push_back(parse_shape(s, names));
  for (const std::string& s : options_.evaluate)
    held_out_.push_back(parse_shape(s, names));
  LIFTX_USER_CHECK(!shapes_.empty(), "no training shapes: give them with --shapes");
  LIFTX_USER_CHECK(!options_.emit_header || !options_.output.empty(),
                   "--emit header writes the header to the file given with -o");
  LIFTX_USER_CHECK(!options_.plot || !held_out_.empty(),
                   "--plot charts the held-out shapes: give them with --evaluate");

  device_ = runtime::select_device(options_.device);
  kind_ = explore::profile_name_for(device_.profile);
  found_ = explore::find_model(options_.model, device_.profile);
  model_.emplace(model::Model::load(found_.path));
  limits_ = device_.profile.limits();
  db_.emplace(options_.db.empty() ? perfdb::PerfDb::default_path() : fs::path(options_.db));
  // The variants of a shape are measured as one batch by a worker child (a crash or hang costs
  // its one variant), with builders ahead of it.
  explore::CollectOptions measuring;
  measuring.device = options_.device;
  measuring.timeout = std::chrono::milliseconds(options_.timeout_ms);
  measuring.worker_executable = options_.worker_executable;
  measuring.build_jobs = options_.build_jobs;
  measurer_.emplace(measuring);
  measured_on_ = {device_.profile};
}

Session::~Session() = default;

void Session::advance(Stage from, Stage to, std::string_view step) {
  LIFTX_INTERNAL_CHECK(stage_ == from, "adapt::Session::{} called out of order", step);
  stage_ = to;
}

size_t Session::gather_candidates(const SessionObserver& observer) {
  advance(Stage::opened, Stage::gathered, "gather_candidates");
  table_.shapes = shapes_;
  std::optional<AdaptiveCandidate> fallback;
  for (const Sizes& shape : shapes_) {
    std::optional<AdaptiveCandidate> shape_free = add_ranked_candidates(
        shape, options_.top, options_.fixed_grids, observer, table_.candidates);
    if (!fallback)
      fallback = shape_free;
  }
  if (!fallback)
    fallback = default_fallback(module_, program_, shapes_.front());
  // The last resort of shapes no tiled member divides: measured like every candidate (with its
  // work-group fitted where it does not divide).
  if (fallback) {
    const auto it = std::find(table_.candidates.begin(), table_.candidates.end(), *fallback);
    fallback_candidate_ = size_t(it - table_.candidates.begin());
    if (it == table_.candidates.end())
      table_.candidates.push_back(*fallback);
  }
  return table_.candidates.size();
}

/// The `top` best-ranked tied variants at `shape`, for each coverage probe of the shape
/// (coverage_probes) the best-ranked one that runs there, and the `fixed_grids` best-ranked
/// shape-free free-thread launches with a work-group (as fixed-grid candidates: their grid
/// strides over any shape, odd ones too), as candidates not already in `into`; returns the
/// best-ranked tied variant that is shape-free (is_shape_free), if any. With `free_threads` (a
/// broad search), the first `top` free-thread launches go there instead.
std::optional<AdaptiveCandidate> Session::add_ranked_candidates(
    const Sizes& shape, size_t top, size_t fixed_grids, const SessionObserver& observer,
    std::vector<AdaptiveCandidate>& into, std::vector<space::Variant>* free_threads) const {
  explore::RankOptions options;
  options.sizes = shape;
  options.profile = kind_;
  options.device = device_.profile;
  // Free-thread launches often rank first (at odd shapes, all of the first hundreds): keep
  // enough of the ranking to find `top` tied ones.
  options.keep = std::max<size_t>(top * 64, 5000);
  options.explain_top = 0; // no reasons are shown: TreeSHAP of the best rows would cost seconds
  const explore::RankResult ranking = rank_observed(program_, *model_, options, observer);
  size_t added = 0;
  std::optional<AdaptiveCandidate> shape_free;
  std::vector<Sizes> uncovered = coverage_probes(shape);
  // Looking for a probe's candidate costs a kernel generation per variant: within the first
  // ranked tied variants only.
  constexpr size_t kCoverageSearch = 400;
  size_t tied = 0, fixed = 0;
  for (const explore::RankedVariant& r : ranking.ranked) {
    const bool want_free = free_threads && free_threads->size() < top;
    const bool want_fixed = !free_threads && fixed < fixed_grids;
    if (added == top && shape_free && (uncovered.empty() || tied >= kCoverageSearch) &&
        !want_free && !want_fixed)
      break;
    if (!r.variant.launch.tied) {
      // A free-thread launch's global size was chosen for this shape: part of a broad search
      // here, or, shape-free, a fixed grid to run at every shape.
      const bool fixed_grid =
          want_fixed && r.variant.launch.local_given() && is_shape_free(r.variant.parameters);
      if (!want_free && !fixed_grid)
        continue;
      space::Variant v = r.variant;
      v.program = *r.program;
      if (want_free) {
        free_threads->push_back(std::move(v));
      } else {
        AdaptiveCandidate c = candidate_of(v, module_);
        if (std::find(into.begin(), into.end(), c) == into.end())
          into.push_back(std::move(c));
        ++fixed;
      }
      continue;
    }
    ++tied;
    space::Variant v = r.variant;
    v.program = *r.program;
    AdaptiveCandidate c = candidate_of(v, module_);
    if (!shape_free && is_shape_free(c.parameters))
      shape_free = c;
    bool wanted = added < top;
    if (!wanted && tied <= kCoverageSearch) {
      const auto covered = std::remove_if(uncovered.begin(), uncovered.end(), [&](const auto& p) {
        Fit fit = Fit::as_measured;
        return candidate_at_fitted(c, p, limits_, &fit).has_value();
      });
      wanted = covered != uncovered.end();
      uncovered.erase(covered, uncovered.end());
    }
    if (!wanted || std::find(into.begin(), into.end(), c) != into.end())
      continue;
    into.push_back(std::move(c));
    if (added < top)
      ++added;
  }
  if (!free_threads && fixed < fixed_grids)
    add_fixed_grids(options, fixed_grids - fixed, observer, into);
  return shape_free;
}

/// Fewer fixed grids than asked among the variants `ranked` kept (on a CPU, free-thread launches
/// of tiny shapes rank far down): the space again, ranking only those, for the `missing` ones.
void Session::add_fixed_grids(const explore::RankOptions& ranked, size_t missing,
                              const SessionObserver& observer,
                              std::vector<AdaptiveCandidate>& into) const {
  explore::RankOptions only_fixed = ranked;
  only_fixed.keep = missing;
  only_fixed.keep_if = [](const std::string& /*strategy*/,
                          const std::map<std::string, int64_t>& parameters,
                          const codegen::Launch& launch) {
    return !launch.tied && launch.local_given() && is_shape_free(parameters);
  };
  only_fixed.on_progress = observer.ranking_counted;
  notify(observer.ranking_started);
  explore::RankResult fixed_ranking;
  try {
    fixed_ranking = explore::rank(program_, *model_, only_fixed);
  } catch (const UserError&) {
    // No such launch in the space at this shape (ranking the whole of it succeeded before).
  }
  notify(observer.ranking_finished);
  for (const explore::RankedVariant& r : fixed_ranking.ranked) {
    space::Variant v = r.variant;
    v.program = *r.program;
    AdaptiveCandidate c = candidate_of(v, module_);
    if (std::find(into.begin(), into.end(), c) == into.end())
      into.push_back(std::move(c));
  }
}

void Session::measure_training_shapes(const SessionObserver& observer) {
  advance(Stage::gathered, Stage::measured, "measure_training_shapes");
  for (size_t s = 0; s < shapes_.size(); ++s) {
    const Sizes& shape = shapes_[s];
    if (observer.step)
      observer.step(fmt::format("training shape {} of {}: measuring {} candidates at {}", s + 1,
                                shapes_.size(), table_.candidates.size(), shape_text(shape)));
    ShapeMeasure measure(*this, shape, options_.repeat);
    std::vector<std::optional<space::Variant>> variants;
    for (size_t c = 0; c < table_.candidates.size(); ++c) {
      Fit fit = Fit::as_measured;
      variants.push_back(c == fallback_candidate_
                             ? candidate_at_fitted(table_.candidates[c], shape, limits_, &fit)
                             : candidate_at(table_.candidates[c], shape, limits_));
    }
    table_.ms.push_back(measure(std::move(variants)));
    if (observer.training_shape_measured)
      observer.training_shape_measured(
          {shape,
           size_t(std::count_if(table_.ms.back().begin(), table_.ms.back().end(),
                                [](const auto& t) { return t.has_value(); })),
           table_.candidates.size()});
  }
}

double Session::mean_fraction(size_t candidate) const {
  double sum = 0;
  for (size_t s = 0; s < shapes_.size(); ++s)
    sum += table_.fraction(s, candidate);
  return sum / double(shapes_.size());
}

/// The last resort of shapes no other member runs at: of the shape-free candidates that run at
/// any shape (the tied one with its work-group fitted, the fixed grids as measured), the one
/// with the highest mean fraction of the best over the training shapes.
void Session::choose_fallback() {
  for (size_t c = 0; c < table_.candidates.size(); ++c)
    if (table_.candidates[c].fixed_grid() && is_shape_free(table_.candidates[c].parameters) &&
        (!fallback_candidate_ || mean_fraction(c) > mean_fraction(*fallback_candidate_)))
      fallback_candidate_ = c;
}

const PortfolioResult& Session::build_portfolio() {
  advance(Stage::measured, Stage::built, "build_portfolio");
  choose_fallback();
  AdaptiveArtifact& artifact = portfolio_.artifact;
  artifact.program_name = program_.name;
  artifact.program_source = ir::print(ir::Module{module_.userfuns, {program_}});
  artifact.device = device_.profile.device_name;
  artifact.profile = device_.profile.key;
  // Chosen over the training shapes and, estimated from them, shapes nearby that fewer tiles
  // divide (with_coverage_probes).
  const AdaptiveTable probed = with_coverage_probes(table_, limits_);
  members_ = choose_portfolio(probed, options_.portfolio);
  LIFTX_USER_CHECK(!members_.empty(), "no candidate ran at any training shape: nothing to adapt");
  for (size_t c : members_)
    artifact.portfolio.push_back(table_.candidates[c]);
  artifact.selector = fit_selector(table_, members_);
  artifact.training = table_;
  if (fallback_candidate_) {
    const auto it = std::find(members_.begin(), members_.end(), *fallback_candidate_);
    artifact.fallback = size_t(it - members_.begin());
    if (it == members_.end())
      artifact.portfolio.push_back(table_.candidates[*fallback_candidate_]);
  }
  portfolio_.nearby_shapes = probed.shapes.size() - shapes_.size();
  portfolio_.listed = members_;
  if (artifact.fallback && *artifact.fallback == members_.size())
    portfolio_.listed.push_back(*fallback_candidate_);
  return portfolio_;
}

void Session::write_output() const {
  LIFTX_INTERNAL_CHECK(stage_ >= Stage::built && !options_.output.empty(),
                       "adapt::Session::write_output needs a portfolio and an output file");
  write_output_file(options_.output,
                    options_.emit_header ? adaptive_header(portfolio_.artifact)
                                         : to_json(portfolio_.artifact).dump(1) + "\n",
                    {options_.file}, "--output");
}

const EvaluationPlan& Session::plan_evaluation() {
  advance(Stage::built, Stage::planned, "plan_evaluation");
  LIFTX_INTERNAL_CHECK(evaluates(), "adapt::Session::plan_evaluation without held-out shapes");
  if (!options_.typical.empty()) {
    const Sizes t = parse_shape(options_.typical, size_names(program_));
    const auto it = std::find(shapes_.begin(), shapes_.end(), t);
    LIFTX_USER_CHECK(it != shapes_.end(), "--typical {} is not one of the training shapes",
                     options_.typical);
    plan_.typical = size_t(it - shapes_.begin());
  } else {
    double nearest = 1e300;
    for (size_t s = 0; s < shapes_.size(); ++s) {
      double d = 0;
      for (const auto& [name, value] : shapes_[s])
        d += std::pow(std::log2(double(value)) - 11.0, 2);
      if (d < nearest) {
        nearest = d;
        plan_.typical = s;
      }
    }
  }
  const std::vector<std::optional<double>>& at_typical = table_.ms[plan_.typical];
  for (size_t c = 0; c < table_.candidates.size(); ++c)
    if (at_typical[c] &&
        (!plan_.typical_candidate || *at_typical[c] < *at_typical[*plan_.typical_candidate]))
      plan_.typical_candidate = c;
  double single_mean = -1;
  for (size_t p = 0; p < members_.size(); ++p)
    if (const double mean = mean_fraction(members_[p]); mean > single_mean) {
      single_mean = mean;
      plan_.single = p;
    }
  plan_.confirm_round_repeat = (options_.confirm_repeat + kConfirmRounds - 1) / kConfirmRounds;
  return plan_;
}

HeldOutSummary Session::evaluate_held_out(const SessionObserver& observer) {
  advance(Stage::planned, Stage::evaluated, "evaluate_held_out");
  HeldOutSummary summary;
  // The typical variant's worst fraction where it runs: above 1 while it runs nowhere.
  double typical_worst = 2;
  for (size_t h = 0; h < held_out_.size(); ++h) {
    const Sizes& shape = held_out_[h];
    if (observer.step)
      observer.step(fmt::format("held-out shape {} of {}: ranking and measuring at {}", h + 1,
                                held_out_.size(), shape_text(shape)));
    HeldOutRow row = evaluate_held_out_shape(shape, observer);
    if (row.typical <= 0) {
      ++summary.typical_missing;
    } else if (row.typical < typical_worst) {
      typical_worst = row.typical;
      summary.typical_worst_shape = shape_text(shape);
    }
    summary.adaptive_sum += row.adaptive;
    summary.adaptive_worst = std::min(summary.adaptive_worst, row.adaptive);
    if (observer.held_out_shape_evaluated)
      observer.held_out_shape_evaluated(row);
    summary.rows.push_back(std::move(row));
  }
  if (typical_worst <= 1)
    summary.typical_worst = typical_worst;
  return summary;
}

/// The selector's pick at `shape`, the single member and the typical variant, as fractions of
/// the best known there: the fastest of them, the portfolio and the broad search.
HeldOutRow Session::evaluate_held_out_shape(const Sizes& shape, const SessionObserver& observer) {
  ShapeMeasure measure(*this, shape, options_.repeat);
  std::vector<AdaptiveCandidate> broad;
  std::vector<space::Variant> broad_free;
  (void)add_ranked_candidates(shape, options_.evaluate_top, 0, observer, broad, &broad_free);
  HeldOutRow row;
  row.shape = shape;
  row.pick = portfolio_.artifact.pick(shape, limits_);
  HeldOutBatch batch = held_out_batch(shape, row.pick, broad, std::move(broad_free));
  batch.ms = measure(batch.variants);
  std::vector<size_t> fastest;
  for (size_t k = 0; k < batch.ms.size(); ++k)
    if (batch.ms[k])
      fastest.push_back(k);
  std::sort(fastest.begin(), fastest.end(),
            [&](size_t a, size_t b) { return *batch.ms[a] < *batch.ms[b]; });
  batch.counted = fastest;
  batch.rounds.resize(batch.variants.size());
  if (options_.confirm_repeat > 0)
    confirm_fastest(shape, fastest, batch);
  size_t best_slot = kNone;
  for (size_t slot : batch.counted)
    if (batch.ms[slot] && (best_slot == kNone || *batch.ms[slot] < *batch.ms[best_slot]))
      best_slot = slot;
  row.best_ms = best_slot == kNone ? std::nullopt : batch.ms[best_slot];
  auto fraction = [&](size_t slot) {
    if (!row.best_ms || slot == kNone || !batch.ms[slot] || *batch.ms[slot] <= 0)
      return 0.0;
    if (!batch.rounds[slot].empty())
      if (std::optional<double> paired =
              paired_fraction(batch.rounds[best_slot], batch.rounds[slot]))
        return *paired;
    return *row.best_ms / *batch.ms[slot];
  };
  row.adaptive = fraction(batch.pick_slot);
  row.single = fraction(batch.single_slot);
  row.typical = fraction(batch.typical_run_slot);
  row.single_fitted = batch.single_slot != plan_.single && batch.ms[batch.single_slot];
  row.typical_fitted =
      batch.typical_run_slot != batch.typical_slot && batch.ms[batch.typical_run_slot];
  return row;
}

Session::HeldOutBatch Session::held_out_batch(const Sizes& shape,
                                              const std::optional<AdaptiveArtifact::Pick>& pick,
                                              const std::vector<AdaptiveCandidate>& broad,
                                              std::vector<space::Variant> broad_free) const {
  const AdaptiveArtifact& artifact = portfolio_.artifact;
  HeldOutBatch batch;
  batch.compared = artifact.portfolio;
  auto slot_of = [&](const AdaptiveCandidate& c) {
    const auto it = std::find(batch.compared.begin(), batch.compared.end(), c);
    if (it != batch.compared.end())
      return size_t(it - batch.compared.begin());
    batch.compared.push_back(c);
    return batch.compared.size() - 1;
  };
  if (plan_.typical_candidate)
    batch.typical_slot = slot_of(table_.candidates[*plan_.typical_candidate]);
  for (const AdaptiveCandidate& c : broad)
    (void)slot_of(c);
  std::vector<std::optional<space::Variant>>& variants = batch.variants;
  for (const AdaptiveCandidate& c : batch.compared)
    variants.push_back(candidate_at(c, shape, limits_));
  for (space::Variant& v : broad_free)
    variants.push_back(std::move(v));
  // A pick fitted to the shape is a launch of its own.
  if (pick && pick->as_measured) {
    batch.pick_slot = pick->member;
  } else if (pick) {
    Fit fit = Fit::as_measured;
    batch.pick_slot = variants.size();
    variants.push_back(candidate_at_fitted(artifact.portfolio[pick->member], shape, limits_, &fit));
  }
  // The single member and the typical variant where they do not apply as measured: fitted to
  // the shape as the pick would be (what an application keeping that one variant could run
  // there); they stay where no fitting runs either.
  std::map<size_t, size_t> fitted_of; // a compared slot -> its fitted launch's slot
  if (pick && !pick->as_measured)
    fitted_of[pick->member] = batch.pick_slot;
  auto fitted_slot = [&](size_t slot) {
    if (slot == kNone || variants[slot])
      return slot;
    if (const auto it = fitted_of.find(slot); it != fitted_of.end())
      return it->second; // the same kernel and launch: one measurement, not two
    Fit fit = Fit::as_measured;
    std::optional<space::Variant> v =
        candidate_at_fitted(batch.compared[slot], shape, limits_, &fit);
    if (!v)
      return slot;
    variants.push_back(std::move(v));
    return fitted_of[slot] = variants.size() - 1;
  };
  batch.single_slot = fitted_slot(plan_.single);
  batch.typical_run_slot = fitted_slot(batch.typical_slot);
  return batch;
}

/// The fastest of a score of noisy medians is biased fast (more so the more variants there are,
/// and at microsecond kernels): the fastest three, the pick, the single member and the typical
/// variant are measured again, and the fractions come from those runs. In interleaved rounds,
/// the fractions paired within each (paired_fraction): a slow spell of the device (clocks, a
/// neighbour) costs every variant of its round.
void Session::confirm_fastest(const Sizes& shape, const std::vector<size_t>& fastest,
                              HeldOutBatch& batch) {
  batch.counted.assign(fastest.begin(),
                       fastest.begin() + std::ptrdiff_t(std::min<size_t>(3, fastest.size())));
  for (size_t slot : {batch.pick_slot, batch.single_slot, batch.typical_run_slot})
    if (slot != kNone && batch.ms[slot] &&
        std::find(batch.counted.begin(), batch.counted.end(), slot) == batch.counted.end())
      batch.counted.push_back(slot);
  std::vector<std::optional<space::Variant>> again(batch.variants.size());
  for (size_t slot : batch.counted)
    again[slot] = batch.variants[slot];
  ShapeMeasure confirm(*this, shape, plan_.confirm_round_repeat, /*remeasure=*/true);
  for (int round = 0; round < kConfirmRounds; ++round) {
    const std::vector<std::optional<double>> confirmed = confirm(again);
    for (size_t slot : batch.counted)
      batch.rounds[slot].push_back(confirmed[slot]);
  }
  for (size_t slot : batch.counted) {
    std::vector<double> ran;
    for (const std::optional<double>& t : batch.rounds[slot])
      if (t)
        ran.push_back(*t);
    batch.ms[slot] =
        ran.empty() ? std::nullopt : std::optional(runtime::summarize_samples(ran).median_ms);
  }
}

} // namespace liftx::adapt
