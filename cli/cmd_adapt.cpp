// liftx adapt: input-adaptive variant selection (adapt/adapt.hpp). Ranks the space at each
// training shape, measures the best-ranked variants of every shape at every shape (each run
// verified and recorded in the performance database), keeps a greedy portfolio and its selector,
// writes them as a JSON artifact, and optionally evaluates the selector on held-out shapes
// against a broad search there, the portfolio's best single member and the variant tuned at one
// typical shape.
#include "adapt/adapt.hpp"
#include "adapt/header.hpp"
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "cli/program_options.hpp"
#include "cli/progress.hpp"
#include "codegen/kernel.hpp"
#include "explore/collect.hpp"
#include "explore/explore.hpp"
#include "explore/models.hpp"
#include "explore/rank.hpp"
#include "ir/parse/parser.hpp"
#include "model/plot.hpp"
#include "perfdb/db.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/walk.hpp"
#include "runtime/launch.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

struct AdaptOptions {
  std::string file;
  std::string program;
  std::string device = "cpu";
  std::vector<std::string> shapes;
  std::vector<std::string> evaluate;
  std::string typical;
  size_t top = 4;
  size_t fixed_grids = 1;
  size_t portfolio = 4;
  size_t evaluate_top = 16;
  std::string model;
  std::string db;
  std::string out;
  std::string emit = "json";
  std::string plot;
  int warmup = exec::kDefaultWarmup;
  int repeat = exec::kDefaultRepeat;
  int64_t timeout_ms = 60000;
  int build_jobs = 0;
  int confirm_repeat = 30;
  bool quiet = false;
};

/// The confirm pass measures its variants this many times, one after another, each round with
/// --confirm-repeat / kConfirmRounds timed runs.
constexpr int kConfirmRounds = 3;

/// Measures variants of one program at one shape (verified, recorded), a batch at a time through
/// `measurer` (one worker per batch, builders ahead of it): measured configurations stand in.
class ShapeMeasure {
public:
  ShapeMeasure(perfdb::PerfDb& db, const target::DeviceProfile& device, const ir::Module& module,
               const ir::Program& program, const Sizes& shape, const std::string& kind,
               const AdaptOptions& o, explore::Measurer& measurer,
               const std::vector<target::DeviceProfile>& devices, int repeat,
               bool remeasure = false)
      : measure_(db, device, module, program, shape, kind,
                 {fs::read_symlink("/proc/self/exe").string(), o.device, o.warmup, repeat,
                  std::chrono::milliseconds(o.timeout_ms), remeasure}) {
    measure_.measure_through(measurer, devices);
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

/// The `top` best-ranked tied variants at `shape`, for each coverage probe of the shape
/// (adapt::coverage_probes) the best-ranked one that runs there, and the `fixed_grids`
/// best-ranked shape-free free-thread launches with a work-group (as fixed-grid candidates: their
/// grid strides over any shape, odd ones too), as candidates not already in `into`; returns the
/// best-ranked tied variant that is shape-free (adapt::is_shape_free), if any. With
/// `free_threads` (a broad search), the first `top` free-thread launches go there instead.
std::optional<adapt::AdaptiveCandidate>
add_ranked_candidates(const ir::Module& module, const ir::Program& program,
                      const model::Model& model, const target::DeviceProfile& device,
                      const std::string& kind, const Sizes& shape, size_t top, size_t fixed_grids,
                      bool quiet, std::vector<adapt::AdaptiveCandidate>& into,
                      std::vector<space::Variant>* free_threads = nullptr) {
  explore::RankOptions options;
  options.sizes = shape;
  options.profile = kind;
  options.device = device;
  // Free-thread launches often rank first (at odd shapes, all of the first hundreds): keep
  // enough of the ranking to find `top` tied ones.
  options.keep = std::max<size_t>(top * 64, 5000);
  options.explain_top = 0; // no reasons are shown: TreeSHAP of the best rows would cost seconds
  ActivityPrinter progress(quiet);
  options.on_progress = [&](std::string_view phase, int64_t n) { progress.update(phase, n); };
  const explore::RankResult ranking = explore::rank(program, model, options);
  progress.finish();
  size_t added = 0;
  std::optional<adapt::AdaptiveCandidate> shape_free;
  std::vector<Sizes> uncovered = adapt::coverage_probes(shape);
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
      const bool fixed_grid = want_fixed && r.variant.launch.local_given() &&
                              adapt::is_shape_free(r.variant.parameters);
      if (!want_free && !fixed_grid)
        continue;
      space::Variant v = r.variant;
      v.program = *r.program;
      if (want_free) {
        free_threads->push_back(std::move(v));
      } else {
        adapt::AdaptiveCandidate c = adapt::candidate_of(v, module);
        if (std::find(into.begin(), into.end(), c) == into.end())
          into.push_back(std::move(c));
        ++fixed;
      }
      continue;
    }
    ++tied;
    space::Variant v = r.variant;
    v.program = *r.program;
    adapt::AdaptiveCandidate c = adapt::candidate_of(v, module);
    if (!shape_free && adapt::is_shape_free(c.parameters))
      shape_free = c;
    bool wanted = added < top;
    if (!wanted && tied <= kCoverageSearch) {
      const auto covered = std::remove_if(uncovered.begin(), uncovered.end(), [&](const auto& p) {
        adapt::Fit fit = adapt::Fit::as_measured;
        return adapt::candidate_at_fitted(c, p, device.limits(), &fit).has_value();
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
  if (!free_threads && fixed < fixed_grids) {
    // Fewer fixed grids than asked among the variants kept (on a CPU, free-thread launches of
    // tiny shapes rank far down): the space again, ranking only those.
    explore::RankOptions only_fixed = options;
    only_fixed.keep = fixed_grids - fixed;
    only_fixed.keep_if = [](const std::string& /*strategy*/,
                            const std::map<std::string, int64_t>& parameters,
                            const codegen::Launch& launch) {
      return !launch.tied && launch.local_given() && adapt::is_shape_free(parameters);
    };
    ActivityPrinter fixed_progress(quiet);
    only_fixed.on_progress = [&](std::string_view phase, int64_t n) {
      fixed_progress.update(phase, n);
    };
    explore::RankResult fixed_ranking;
    try {
      fixed_ranking = explore::rank(program, model, only_fixed);
    } catch (const UserError&) {
      // No such launch in the space at this shape (ranking the whole of it succeeded above).
    }
    fixed_progress.finish();
    for (const explore::RankedVariant& r : fixed_ranking.ranked) {
      space::Variant v = r.variant;
      v.program = *r.program;
      adapt::AdaptiveCandidate c = adapt::candidate_of(v, module);
      if (std::find(into.begin(), into.end(), c) == into.end())
        into.push_back(std::move(c));
    }
  }
  return shape_free;
}

/// A work-item per point (the library's default lowering: 3D, 2D, then 1D thread mappings, x
/// on dimension 0) with a work-group of 32x4x2, 16x4 or 64 (fitted to each shape): the fallback
/// when the ranking kept no shape-free tied variant.
std::optional<adapt::AdaptiveCandidate>
default_fallback(const ir::Module& module, const ir::Program& program, const Sizes& shape) {
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
    adapt::AdaptiveCandidate c;
    c.printed = ir::print(ir::Module{module.userfuns, {*p}});
    c.strategy = strategy;
    c.local = local;
    return c;
  }
  return std::nullopt;
}

std::string percent(double fraction) {
  return fraction > 0 ? fmt::format("{:.1f}%", fraction * 100) : "-";
}

} // namespace

void add_adapt_command(CLI::App& app) {
  auto o = std::make_shared<AdaptOptions>();
  CLI::App* cmd = app.add_subcommand(
      "adapt", "Tune a program for many input shapes: a portfolio of variants and a selector");
  cmd->add_option("file", o->file, "high-level .lift stencil")->required();
  cmd->add_option("--program", o->program, "definition (default: the last one)");
  add_device_option(cmd, o->device);
  cmd->add_option("--shapes", o->shapes,
                  "training shapes, e.g. 256x256 1024x128 (sizes in the order of their names) "
                  "or M=256,N=512")
      ->required();
  cmd->add_option("--top", o->top, "best-ranked variants taken from each training shape (4)");
  cmd->add_option("--fixed-grids", o->fixed_grids,
                  "best-ranked shape-free free-thread launches of each training shape kept as "
                  "candidates with their grid fixed (they run at any shape, odd ones too) (1)");
  cmd->add_option("--portfolio", o->portfolio, "at most this many variants kept (4, <= 8)")
      ->check(CLI::Range(1, 8));
  cmd->add_option("--evaluate", o->evaluate,
                  "held-out shapes: compare the selector with a broad search at each");
  cmd->add_option("--evaluate-top", o->evaluate_top,
                  "variants measured per held-out shape for its best known (16)");
  cmd->add_option("--typical", o->typical,
                  "the training shape whose tuned variant is compared (default: the one nearest "
                  "2048 per size)");
  cmd->add_option("--model", o->model, "model file (default: the shipped one for the device kind)");
  add_db_option(cmd, o->db, "where every run is recorded");
  add_timing_options(cmd, o->warmup, o->repeat);
  cmd->add_option("--timeout-ms", o->timeout_ms, "per variant, build included (default 60000)");
  cmd->add_option(
         "--confirm-repeat", o->confirm_repeat,
         fmt::format("with --evaluate: timed runs of a second measurement, at each held-out "
                     "shape, of the fastest three, the pick, the single member and the "
                     "typical variant, in {} interleaved rounds, which the fractions "
                     "come from (30; 0: the first measurements)",
                     kConfirmRounds))
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--build-jobs", o->build_jobs,
                  "processes compiling kernels and interpreting references ahead of the "
                  "measurements of each shape (default 0)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("-o,--output", o->out, "write the adaptive program to this file");
  cmd->add_option("--emit", o->emit,
                  "what -o writes: json (the artifact liftx::AdaptiveProgram loads) or header (a "
                  "standalone C++17 header: the kernels and the choice per shape, no liftx needed)")
      ->check(CLI::IsMember({"json", "header"}));
  cmd->add_option("--plot", o->plot,
                  "with --evaluate: an SVG chart of the held-out shapes (adaptive, single, "
                  "typical as fractions of each shape's best known)");
  cmd->add_flag("--quiet", o->quiet,
                "no progress on stderr (the ranking count, a line per shape measured)");
  cmd->callback([o] {
    if (!o->out.empty()) // refused before the tuning, which may take long
      refuse_overwriting_input(o->out, {o->file}, "--output");
    const ir::Module module = parse::parse_file(o->file);
    const ir::Program program = select_program(module, o->program, o->file);
    explore::refuse_lowered(program, o->file, "adapt");
    std::vector<std::string> names;
    for (const arith::Expr& v : program.size_vars())
      names.push_back(v.node().name);
    std::vector<Sizes> shapes;
    for (const std::string& s : o->shapes)
      shapes.push_back(adapt::parse_shape(s, names));
    std::vector<Sizes> held_out;
    for (const std::string& s : o->evaluate)
      held_out.push_back(adapt::parse_shape(s, names));
    LIFTX_USER_CHECK(o->emit == "json" || !o->out.empty(),
                     "--emit header writes the header to the file given with -o");
    LIFTX_USER_CHECK(o->plot.empty() || !held_out.empty(),
                     "--plot charts the held-out shapes: give them with --evaluate");

    runtime::Device device = runtime::select_device(o->device);
    const std::string kind = explore::profile_name_for(device.profile);
    const explore::FoundModel found = explore::find_model(o->model, device.profile);
    const model::Model model = model::Model::load(found.path);
    const DeviceLimits limits = device.profile.limits();
    const fs::path db_path = o->db.empty() ? perfdb::PerfDb::default_path() : fs::path(o->db);
    perfdb::PerfDb db(db_path);
    // The variants of a shape are measured as one batch by a worker child (a crash or hang costs
    // its one variant), with builders ahead of it.
    explore::CollectOptions measuring;
    measuring.device = o->device;
    measuring.timeout = std::chrono::milliseconds(o->timeout_ms);
    measuring.worker_executable = fs::read_symlink("/proc/self/exe").string();
    measuring.build_jobs = o->build_jobs;
    explore::LocalMeasurer measurer(measuring);
    const std::vector<target::DeviceProfile> measured_on{device.profile};

    fmt::print("program   {} ({})\n", program.name, o->file);
    fmt::print("device    {} ({})\n", device.profile.device_name, device.profile.key);
    fmt::print("model     {}\n", found.path.string());
    for (const std::string& note : found.notes)
      fmt::print("note      {}\n", note);

    const auto step = step_lines("adapt", o->quiet); // none with --quiet
    // Candidates: the best-ranked tied variants of every training shape.
    adapt::AdaptiveTable table;
    table.shapes = shapes;
    std::optional<adapt::AdaptiveCandidate> fallback;
    for (const Sizes& shape : shapes) {
      std::optional<adapt::AdaptiveCandidate> shape_free =
          add_ranked_candidates(module, program, model, device.profile, kind, shape, o->top,
                                o->fixed_grids, o->quiet, table.candidates);
      if (!fallback)
        fallback = shape_free;
    }
    if (!fallback)
      fallback = default_fallback(module, program, shapes.front());
    // The last resort of shapes no tiled member divides: measured like every candidate (with its
    // work-group fitted where it does not divide).
    std::optional<size_t> fallback_candidate;
    if (fallback) {
      const auto it = std::find(table.candidates.begin(), table.candidates.end(), *fallback);
      fallback_candidate = size_t(it - table.candidates.begin());
      if (it == table.candidates.end())
        table.candidates.push_back(*fallback);
    }
    fmt::print("candidates {} (the best {} ranked at each of {} training shapes, the "
               "best-ranked that runs at shapes nearby that fewer tiles divide, and {} fixed "
               "free-thread grid(s) of each)\n",
               table.candidates.size(), o->top, shapes.size(), o->fixed_grids);

    // Every candidate at every training shape where it applies.
    for (size_t s = 0; s < shapes.size(); ++s) {
      const Sizes& shape = shapes[s];
      if (step)
        step(fmt::format("training shape {} of {}: measuring {} candidates at {}", s + 1,
                         shapes.size(), table.candidates.size(), adapt::shape_text(shape)));
      ShapeMeasure measure(db, device.profile, module, program, shape, kind, *o, measurer,
                           measured_on, o->repeat);
      std::vector<std::optional<space::Variant>> variants;
      for (size_t c = 0; c < table.candidates.size(); ++c) {
        adapt::Fit fit = adapt::Fit::as_measured;
        variants.push_back(
            c == fallback_candidate
                ? adapt::candidate_at_fitted(table.candidates[c], shape, limits, &fit)
                : adapt::candidate_at(table.candidates[c], shape, limits));
      }
      table.ms.push_back(measure(std::move(variants)));
      fmt::print("measured  {}: {} of {} candidates ran\n", adapt::shape_text(shape),
                 std::count_if(table.ms.back().begin(), table.ms.back().end(),
                               [](const auto& t) { return t.has_value(); }),
                 table.candidates.size());
    }

    // The last resort of shapes no other member runs at: of the shape-free candidates that run
    // at any shape (the tied one with its work-group fitted, the fixed grids as measured), the
    // one with the highest mean fraction of the best over the training shapes.
    auto mean_fraction = [&](size_t c) {
      double sum = 0;
      for (size_t s = 0; s < shapes.size(); ++s)
        sum += table.fraction(s, c);
      return sum / double(shapes.size());
    };
    for (size_t c = 0; c < table.candidates.size(); ++c)
      if (table.candidates[c].fixed_grid() &&
          adapt::is_shape_free(table.candidates[c].parameters) &&
          (!fallback_candidate || mean_fraction(c) > mean_fraction(*fallback_candidate)))
        fallback_candidate = c;

    adapt::AdaptiveArtifact artifact;
    artifact.program_name = program.name;
    artifact.program_source = ir::print(ir::Module{module.userfuns, {program}});
    artifact.device = device.profile.device_name;
    artifact.profile = device.profile.key;
    // Chosen over the training shapes and, estimated from them, shapes nearby that fewer tiles
    // divide (adapt::with_coverage_probes).
    const adapt::AdaptiveTable probed = adapt::with_coverage_probes(table, limits);
    const std::vector<size_t> members = adapt::choose_portfolio(probed, o->portfolio);
    LIFTX_USER_CHECK(!members.empty(), "no candidate ran at any training shape: nothing to adapt");
    for (size_t c : members)
      artifact.portfolio.push_back(table.candidates[c]);
    artifact.selector = adapt::fit_selector(table, members);
    artifact.training = table;
    if (fallback_candidate) {
      const auto it = std::find(members.begin(), members.end(), *fallback_candidate);
      artifact.fallback = size_t(it - members.begin());
      if (it == members.end())
        artifact.portfolio.push_back(table.candidates[*fallback_candidate]);
    }

    fmt::print("\nportfolio (chosen over the {} training shapes and {} nearby shapes that "
               "fewer tiles divide, estimated from them; fraction of the best candidate at each "
               "training shape)\n",
               shapes.size(), probed.shapes.size() - shapes.size());
    fmt::print("  {:<3} {:<48}", "#", "variant");
    for (const Sizes& shape : shapes)
      fmt::print(" {:>10}", adapt::shape_text(shape));
    fmt::print("\n");
    std::vector<size_t> listed = members;
    if (artifact.fallback && *artifact.fallback == members.size())
      listed.push_back(*fallback_candidate);
    for (size_t p = 0; p < listed.size(); ++p) {
      fmt::print("  {:<3} {:<48}", p, table.candidates[listed[p]].describe());
      for (size_t s = 0; s < shapes.size(); ++s)
        fmt::print(" {:>10}", percent(table.fraction(s, listed[p])));
      fmt::print("{}\n", artifact.fallback == p ? "  (fallback)" : "");
    }
    if (!o->out.empty()) {
      write_output_file(o->out,
                        o->emit == "header" ? adapt::adaptive_header(artifact)
                                            : to_json(artifact).dump(1) + "\n",
                        {o->file}, "--output");
      fmt::print("written   {}\n", o->out);
    }
    if (held_out.empty())
      return;

    // Held-out shapes: the selector's pick against a broad search at each shape.
    size_t typical = 0;
    if (!o->typical.empty()) {
      const Sizes t = adapt::parse_shape(o->typical, names);
      const auto it = std::find(shapes.begin(), shapes.end(), t);
      LIFTX_USER_CHECK(it != shapes.end(), "--typical {} is not one of the training shapes",
                       o->typical);
      typical = size_t(it - shapes.begin());
    } else {
      double nearest = 1e300;
      for (size_t s = 0; s < shapes.size(); ++s) {
        double d = 0;
        for (const auto& [name, value] : shapes[s])
          d += std::pow(std::log2(double(value)) - 11.0, 2);
        if (d < nearest) {
          nearest = d;
          typical = s;
        }
      }
    }
    std::optional<size_t> typical_candidate;
    for (size_t c = 0; c < table.candidates.size(); ++c)
      if (table.ms[typical][c] &&
          (!typical_candidate || *table.ms[typical][c] < *table.ms[typical][*typical_candidate]))
        typical_candidate = c;
    // The portfolio's best single member: the highest mean fraction over the training shapes.
    size_t single = 0;
    double single_mean = -1;
    for (size_t p = 0; p < members.size(); ++p)
      if (const double mean = mean_fraction(members[p]); mean > single_mean) {
        single_mean = mean;
        single = p;
      }
    const int confirm_round_repeat = (o->confirm_repeat + kConfirmRounds - 1) / kConfirmRounds;
    fmt::print("\nheld-out shapes (fraction of the best known: the fastest of the selector's pick, "
               "the portfolio, the {} tuned at {} and the {} best ranked there, tied and "
               "free-thread launches each{})\n",
               "variant", adapt::shape_text(shapes[typical]), o->evaluate_top,
               o->confirm_repeat > 0
                   ? fmt::format("; the fastest three, the pick, the single member and the "
                                 "typical variant measured again in {} interleaved rounds of {} "
                                 "{}: times the median of the rounds, fractions the median of "
                                 "the rounds' ratios",
                                 kConfirmRounds, confirm_round_repeat,
                                 confirm_round_repeat == 1 ? "run" : "runs")
                   : std::string());
    fmt::print("(`*`: the pick, the single member or the typical variant fitted to the shape, "
               "where it does not apply as measured; `-`: it does not run there)\n");
    fmt::print("  {:<12} {:>9} {:>7} {:>8} {:>8} {:>8}  {}\n", "shape", "best ms", "pick",
               "adaptive", "single", "typical", "pick's variant");
    double sum_adaptive = 0, worst_adaptive = 1;
    size_t shown = 0;
    // The typical variant's worst shape where it runs (fitted or not), and the shapes it misses.
    double worst_typical = 2;
    std::string worst_typical_shape;
    size_t typical_missing = 0;
    std::vector<std::string> plotted_shapes;
    std::vector<model::Series> plotted{
        {"adaptive pick", {}, model::palette(0), false},
        {"best single member", {}, model::palette(1), false},
        {"tuned at " + adapt::shape_text(shapes[typical]), {}, model::palette(2), false}};
    for (size_t h = 0; h < held_out.size(); ++h) {
      const Sizes& shape = held_out[h];
      if (step)
        step(fmt::format("held-out shape {} of {}: ranking and measuring at {}", h + 1,
                         held_out.size(), adapt::shape_text(shape)));
      ShapeMeasure measure(db, device.profile, module, program, shape, kind, *o, measurer,
                           measured_on, o->repeat);
      std::vector<adapt::AdaptiveCandidate> broad;
      std::vector<space::Variant> broad_free;
      (void)add_ranked_candidates(module, program, model, device.profile, kind, shape,
                                  o->evaluate_top, 0, o->quiet, broad, &broad_free);
      const std::optional<adapt::AdaptiveArtifact::Pick> pick = artifact.pick(shape, limits);
      // Everything this shape compares, measured as one batch, each distinct candidate once:
      // the portfolio, the typical shape's variant, the broad search (the best-ranked tied
      // candidates and free-thread launches here), and a pick fitted to the shape (a launch of
      // its own).
      std::vector<adapt::AdaptiveCandidate> compared = artifact.portfolio;
      auto slot_of = [&](const adapt::AdaptiveCandidate& c) {
        const auto it = std::find(compared.begin(), compared.end(), c);
        if (it != compared.end())
          return size_t(it - compared.begin());
        compared.push_back(c);
        return compared.size() - 1;
      };
      constexpr size_t kNone = size_t(-1);
      const size_t typical_slot =
          typical_candidate ? slot_of(table.candidates[*typical_candidate]) : kNone;
      for (const adapt::AdaptiveCandidate& c : broad)
        (void)slot_of(c);
      std::vector<std::optional<space::Variant>> variants;
      for (const adapt::AdaptiveCandidate& c : compared)
        variants.push_back(adapt::candidate_at(c, shape, limits));
      for (space::Variant& v : broad_free)
        variants.push_back(std::move(v));
      size_t pick_slot = kNone;
      if (pick && pick->as_measured) {
        pick_slot = pick->member;
      } else if (pick) {
        adapt::Fit fit = adapt::Fit::as_measured;
        pick_slot = variants.size();
        variants.push_back(
            adapt::candidate_at_fitted(artifact.portfolio[pick->member], shape, limits, &fit));
      }
      // The single member and the typical variant where they do not apply as measured: fitted
      // to the shape as the pick would be (what an application keeping that one variant could
      // run there), marked `*`; `-` only where no fitting runs either.
      std::map<size_t, size_t> fitted_of; // a compared slot -> its fitted launch's slot
      if (pick && !pick->as_measured)
        fitted_of[pick->member] = pick_slot;
      auto fitted_slot = [&](size_t slot) {
        if (slot == kNone || variants[slot])
          return slot;
        if (const auto it = fitted_of.find(slot); it != fitted_of.end())
          return it->second; // the same kernel and launch: one measurement, not two
        adapt::Fit fit = adapt::Fit::as_measured;
        std::optional<space::Variant> v =
            adapt::candidate_at_fitted(compared[slot], shape, limits, &fit);
        if (!v)
          return slot;
        variants.push_back(std::move(v));
        return fitted_of[slot] = variants.size() - 1;
      };
      const size_t single_slot = fitted_slot(single);
      const size_t typical_run_slot = fitted_slot(typical_slot);
      std::vector<std::optional<double>> ms = measure(variants);
      std::vector<size_t> fastest;
      for (size_t k = 0; k < ms.size(); ++k)
        if (ms[k])
          fastest.push_back(k);
      std::sort(fastest.begin(), fastest.end(),
                [&](size_t a, size_t b) { return *ms[a] < *ms[b]; });
      std::vector<size_t> counted = fastest; // the slots the best known is the fastest of
      // The confirm pass's times per slot, one per round (nullopt where a run failed).
      std::vector<std::vector<std::optional<double>>> rounds(variants.size());
      if (o->confirm_repeat > 0) {
        // The fastest of a score of noisy medians is biased fast (more so the more variants
        // there are, and at microsecond kernels): the fastest three, the pick, the single member
        // and the typical variant are measured again, and the fractions come from those runs.
        counted.assign(fastest.begin(),
                       fastest.begin() + std::ptrdiff_t(std::min<size_t>(3, fastest.size())));
        for (size_t slot : {pick_slot, single_slot, typical_run_slot})
          if (slot != kNone && ms[slot] &&
              std::find(counted.begin(), counted.end(), slot) == counted.end())
            counted.push_back(slot);
        // In interleaved rounds, the fractions paired within each (adapt::paired_fraction):
        // a slow spell of the device (clocks, a neighbour) costs every variant of its round.
        std::vector<std::optional<space::Variant>> again(variants.size());
        for (size_t slot : counted)
          again[slot] = variants[slot];
        ShapeMeasure confirm(db, device.profile, module, program, shape, kind, *o, measurer,
                             measured_on, confirm_round_repeat, true);
        for (int round = 0; round < kConfirmRounds; ++round) {
          const std::vector<std::optional<double>> confirmed = confirm(again);
          for (size_t slot : counted)
            rounds[slot].push_back(confirmed[slot]);
        }
        for (size_t slot : counted) {
          std::vector<double> ran;
          for (const std::optional<double>& t : rounds[slot])
            if (t)
              ran.push_back(*t);
          ms[slot] =
              ran.empty() ? std::nullopt : std::optional(runtime::summarize_samples(ran).median_ms);
        }
      }
      size_t best_slot = kNone;
      for (size_t slot : counted)
        if (ms[slot] && (best_slot == kNone || *ms[slot] < *ms[best_slot]))
          best_slot = slot;
      const std::optional<double> best = best_slot == kNone ? std::nullopt : ms[best_slot];
      // The portfolio's members are the first slots.
      auto fraction = [&](size_t slot) {
        if (!best || slot == kNone || !ms[slot] || *ms[slot] <= 0)
          return 0.0;
        if (!rounds[slot].empty())
          if (std::optional<double> paired =
                  adapt::paired_fraction(rounds[best_slot], rounds[slot]))
            return *paired;
        return *best / *ms[slot];
      };
      auto fitted_percent = [&](size_t slot, size_t as_measured_slot) {
        return percent(fraction(slot)) + (slot != as_measured_slot && ms[slot] ? "*" : "");
      };
      const double adaptive = fraction(pick_slot);
      plotted_shapes.push_back(adapt::shape_text(shape));
      plotted[0].y.push_back(100 * adaptive);
      plotted[1].y.push_back(100 * fraction(single_slot));
      plotted[2].y.push_back(100 * fraction(typical_run_slot));
      if (const double t = fraction(typical_run_slot); t <= 0) {
        ++typical_missing;
      } else if (t < worst_typical) {
        worst_typical = t;
        worst_typical_shape = adapt::shape_text(shape);
      }
      sum_adaptive += adaptive;
      worst_adaptive = std::min(worst_adaptive, adaptive);
      ++shown;
      fmt::print("  {:<12} {:>9} {:>7} {:>8} {:>8} {:>8}  {}\n", adapt::shape_text(shape),
                 best ? fmt::format("{:.4f}", *best) : "-",
                 pick ? fmt::format("#{}{}", pick->member, pick->as_measured ? "" : "*") : "none",
                 percent(adaptive), fitted_percent(single_slot, single),
                 fitted_percent(typical_run_slot, typical_slot),
                 !pick               ? std::string("no member applies")
                 : pick->as_measured ? artifact.portfolio[pick->member].describe()
                 : pick->rounded ? fmt::format("{} (* global size rounded up to the work-group)",
                                               artifact.portfolio[pick->member].describe())
                                 : fmt::format("{} (* work-group fitted: {})",
                                               artifact.portfolio[pick->member].describe(),
                                               fmt::join(pick->local, "x")));
    }
    fmt::print("\nadaptive  mean {:.1f}%, worst {:.1f}% of the best known over {} held-out "
               "shapes\n",
               100 * sum_adaptive / double(std::max<size_t>(shown, 1)), 100 * worst_adaptive,
               shown);
    if (typical_candidate) {
      const std::string typical_variant = table.candidates[*typical_candidate].describe();
      if (worst_typical <= 1)
        fmt::print("typical   {}: worst {} ({}) where it runs, fitted where needed; it runs at {} "
                   "of the {} held-out shapes\n",
                   typical_variant, percent(worst_typical), worst_typical_shape,
                   shown - typical_missing, shown);
      else
        fmt::print("typical   {}: runs at none of the {} held-out shapes, fitted or not\n",
                   typical_variant, shown);
    }
    if (!o->plot.empty()) {
      std::ofstream out(o->plot);
      out << model::grouped_bar_chart_svg(
          fmt::format("{} on {}: held-out shapes", program.name, device.profile.device_name),
          "% of the shape's best known", plotted_shapes, plotted);
      LIFTX_USER_CHECK(out.good(), "cannot write {}", o->plot);
      fmt::print("plot      {}\n", o->plot);
    }
  });
}

} // namespace liftx::cli
