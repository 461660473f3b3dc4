// liftx adapt: input-adaptive variant selection (adapt/session.hpp runs it). Ranks the space at
// each training shape, measures the best-ranked variants of every shape at every shape (each run
// verified and recorded in the performance database), keeps a greedy portfolio and its selector,
// writes them as a JSON artifact, and optionally evaluates the selector on held-out shapes
// against a broad search there, the portfolio's best single member and the variant tuned at one
// typical shape.
#include "adapt/plot.hpp"
#include "adapt/session.hpp"
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "exec/program_binding.hpp"
#include "ir/parse/parser.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <optional>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

/// The options of `liftx adapt`: the session's, and those only the command line has.
struct AdaptOptions {
  adapt::SessionOptions session;
  std::string program;
  std::string emit = "json";
  std::string plot;
  bool quiet = false;
};

/// The session's options, with what the command line gives as its own options filled in.
adapt::SessionOptions session_options(const AdaptOptions& o) {
  adapt::SessionOptions options = o.session;
  options.emit_header = o.emit == "header";
  options.plot = !o.plot.empty();
  options.worker_executable = fs::read_symlink("/proc/self/exe").string();
  return options;
}

std::string percent(double fraction) {
  return fraction > 0 ? fmt::format("{:.1f}%", fraction * 100) : "-";
}

void print_portfolio(const adapt::Session& session, const adapt::PortfolioResult& portfolio) {
  const std::vector<Sizes>& shapes = session.training_shapes();
  const adapt::AdaptiveTable& table = session.training();
  fmt::print("\nportfolio (chosen over the {} training shapes and {} nearby shapes that "
             "fewer tiles divide, estimated from them; fraction of the best candidate at each "
             "training shape)\n",
             shapes.size(), portfolio.nearby_shapes);
  fmt::print("  {:<3} {:<48}", "#", "variant");
  for (const Sizes& shape : shapes)
    fmt::print(" {:>10}", adapt::shape_text(shape));
  fmt::print("\n");
  for (size_t p = 0; p < portfolio.listed.size(); ++p) {
    fmt::print("  {:<3} {:<48}", p, table.candidates[portfolio.listed[p]].describe());
    for (size_t s = 0; s < shapes.size(); ++s)
      fmt::print(" {:>10}", percent(table.fraction(s, portfolio.listed[p])));
    fmt::print("{}\n", portfolio.artifact.fallback == p ? "  (fallback)" : "");
  }
}

void print_held_out_heading(const adapt::Session& session, const adapt::EvaluationPlan& plan,
                            const adapt::SessionOptions& o) {
  fmt::print("\nheld-out shapes (fraction of the best known: the fastest of the selector's pick, "
             "the portfolio, the {} tuned at {} and the {} best ranked there, tied and "
             "free-thread launches each{})\n",
             "variant", adapt::shape_text(session.training_shapes()[plan.typical]), o.evaluate_top,
             o.confirm_repeat > 0
                 ? fmt::format("; the fastest three, the pick, the single member and the "
                               "typical variant measured again in {} interleaved rounds of {} "
                               "{}: times the median of the rounds, fractions the median of "
                               "the rounds' ratios",
                               adapt::kConfirmRounds, plan.confirm_round_repeat,
                               plan.confirm_round_repeat == 1 ? "run" : "runs")
                 : std::string());
  fmt::print("(`*`: the pick, the single member or the typical variant fitted to the shape, "
             "where it does not apply as measured; `-`: it does not run there)\n");
  fmt::print("  {:<12} {:>9} {:>7} {:>8} {:>8} {:>8}  {}\n", "shape", "best ms", "pick", "adaptive",
             "single", "typical", "pick's variant");
}

void print_held_out_row(const adapt::HeldOutRow& row, const adapt::AdaptiveArtifact& artifact) {
  const std::optional<adapt::AdaptiveArtifact::Pick>& pick = row.pick;
  // `*`: fitted to the shape, not as measured.
  auto marked = [](double fraction, bool fitted) {
    return percent(fraction) + (fitted ? "*" : "");
  };
  fmt::print("  {:<12} {:>9} {:>7} {:>8} {:>8} {:>8}  {}\n", adapt::shape_text(row.shape),
             row.best_ms ? fmt::format("{:.4f}", *row.best_ms) : "-",
             pick ? fmt::format("#{}{}", pick->member, pick->as_measured ? "" : "*") : "none",
             percent(row.adaptive), marked(row.single, row.single_fitted),
             marked(row.typical, row.typical_fitted),
             !pick               ? std::string("no member applies")
             : pick->as_measured ? artifact.portfolio[pick->member].describe()
             : pick->rounded     ? fmt::format("{} (* global size rounded up to the work-group)",
                                               artifact.portfolio[pick->member].describe())
                                 : fmt::format("{} (* work-group fitted: {})",
                                               artifact.portfolio[pick->member].describe(),
                                               fmt::join(pick->local, "x")));
}

void print_held_out_summary(const adapt::Session& session, const adapt::EvaluationPlan& plan,
                            const adapt::HeldOutSummary& summary) {
  const size_t shown = summary.rows.size();
  fmt::print("\nadaptive  mean {:.1f}%, worst {:.1f}% of the best known over {} held-out "
             "shapes\n",
             summary.adaptive_mean_percent(), 100 * summary.adaptive_worst, shown);
  if (!plan.typical_candidate)
    return;
  const std::string typical_variant =
      session.training().candidates[*plan.typical_candidate].describe();
  if (summary.typical_worst)
    fmt::print("typical   {}: worst {} ({}) where it runs, fitted where needed; it runs at {} "
               "of the {} held-out shapes\n",
               typical_variant, percent(*summary.typical_worst), summary.typical_worst_shape,
               shown - summary.typical_missing, shown);
  else
    fmt::print("typical   {}: runs at none of the {} held-out shapes, fitted or not\n",
               typical_variant, shown);
}

/// The held-out shapes as an SVG chart of the pick, the single member and the typical variant.
void write_plot(const std::string& path, const std::string& title, const std::string& typical,
                const adapt::HeldOutSummary& summary) {
  adapt::write_held_out_plot(path, title, typical, summary);
  fmt::print("plot      {}\n", path);
}

void run_adapt(const AdaptOptions& o) {
  const adapt::SessionOptions& options = o.session;
  if (!options.output.empty()) // refused before the tuning, which may take long
    refuse_overwriting_input(options.output, {options.file}, "--output");
  const ir::Module module = parse::parse_file(options.file);
  const ir::Program program = exec::select_program(module, o.program, options.file);
  adapt::Session session(module, program, session_options(o));
  fmt::print("program   {} ({})\n", program.name, options.file);
  fmt::print("device    {} ({})\n", session.device().device_name, session.device().key);
  fmt::print("model     {}\n", session.found_model().path.string());
  for (const std::string& note : session.found_model().notes)
    fmt::print("note      {}\n", note);

  adapt::SessionObserver observer;
  observer.step = step_lines("adapt", o.quiet); // none with --quiet
  std::optional<ActivityPrinter> ranking;
  observer.ranking_started = [&] { ranking.emplace(o.quiet); };
  observer.ranking_counted = [&](std::string_view phase, int64_t n) { ranking->update(phase, n); };
  observer.ranking_finished = [&] { ranking->finish(); };
  observer.training_shape_measured = [](const adapt::TrainingShapeMeasured& m) {
    fmt::print("measured  {}: {} of {} candidates ran\n", adapt::shape_text(m.shape), m.ran,
               m.candidates);
  };
  const size_t candidates = session.gather_candidates(observer);
  fmt::print("candidates {} (the best {} ranked at each of {} training shapes, the "
             "best-ranked that runs at shapes nearby that fewer tiles divide, and {} fixed "
             "free-thread grid(s) of each)\n",
             candidates, options.top, session.training_shapes().size(), options.fixed_grids);
  session.measure_training_shapes(observer);
  const adapt::PortfolioResult& portfolio = session.build_portfolio();
  print_portfolio(session, portfolio);
  if (!options.output.empty()) {
    session.write_output();
    fmt::print("written   {}\n", options.output);
  }
  if (!session.evaluates())
    return;

  // Held-out shapes: the selector's pick against a broad search at each shape.
  const adapt::EvaluationPlan& plan = session.plan_evaluation();
  print_held_out_heading(session, plan, options);
  observer.held_out_shape_evaluated = [&](const adapt::HeldOutRow& row) {
    print_held_out_row(row, portfolio.artifact);
  };
  const adapt::HeldOutSummary summary = session.evaluate_held_out(observer);
  print_held_out_summary(session, plan, summary);
  if (!o.plot.empty())
    write_plot(o.plot,
               fmt::format("{} on {}: held-out shapes", program.name, session.device().device_name),
               adapt::shape_text(session.training_shapes()[plan.typical]), summary);
}

} // namespace

void add_adapt_command(CLI::App& app) {
  auto o = std::make_shared<AdaptOptions>();
  adapt::SessionOptions& s = o->session;
  CLI::App* cmd = app.add_subcommand(
      "adapt", "Tune a program for many input shapes: a portfolio of variants and a selector");
  cmd->add_option("file", s.file, "high-level .lift stencil")->required();
  cmd->add_option("--program", o->program, "definition (default: the last one)");
  add_device_option(cmd, s.device);
  cmd->add_option("--shapes", s.shapes,
                  "training shapes, e.g. 256x256 1024x128 (sizes in the order of their names) "
                  "or M=256,N=512")
      ->required();
  cmd->add_option("--top", s.top, "best-ranked variants taken from each training shape (4)");
  cmd->add_option("--fixed-grids", s.fixed_grids,
                  "best-ranked shape-free free-thread launches of each training shape kept as "
                  "candidates with their grid fixed (they run at any shape, odd ones too) (1)");
  cmd->add_option("--portfolio", s.portfolio, "at most this many variants kept (4, <= 8)")
      ->check(CLI::Range(1, 8));
  cmd->add_option("--evaluate", s.evaluate,
                  "held-out shapes: compare the selector with a broad search at each");
  cmd->add_option("--evaluate-top", s.evaluate_top,
                  "variants measured per held-out shape for its best known (16)");
  cmd->add_option("--typical", s.typical,
                  "the training shape whose tuned variant is compared (default: the one nearest "
                  "2048 per size)");
  cmd->add_option("--model", s.model, "model file (default: the shipped one for the device kind)");
  add_db_option(cmd, s.db, "where every run is recorded");
  add_timing_options(cmd, s.warmup, s.repeat);
  cmd->add_option("--timeout-ms", s.timeout_ms, "per variant, build included (default 60000)");
  cmd->add_option(
         "--confirm-repeat", s.confirm_repeat,
         fmt::format("with --evaluate: timed runs of a second measurement, at each held-out "
                     "shape, of the fastest three, the pick, the single member and the "
                     "typical variant, in {} interleaved rounds, which the fractions "
                     "come from (30; 0: the first measurements)",
                     adapt::kConfirmRounds))
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--build-jobs", s.build_jobs,
                  "processes compiling kernels and interpreting references ahead of the "
                  "measurements of each shape (default 0)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("-o,--output", s.output, "write the adaptive program to this file");
  cmd->add_option("--emit", o->emit,
                  "what -o writes: json (the artifact liftx::AdaptiveProgram loads) or header (a "
                  "standalone C++17 header: the kernels and the choice per shape, no liftx needed)")
      ->check(CLI::IsMember({"json", "header"}));
  cmd->add_option("--plot", o->plot,
                  "with --evaluate: an SVG chart of the held-out shapes (adaptive, single, "
                  "typical as fractions of each shape's best known)");
  cmd->add_flag("--quiet", o->quiet,
                "no progress on stderr (the ranking count, a line per shape measured)");
  cmd->callback([o] { run_adapt(*o); });
}

} // namespace liftx::cli
