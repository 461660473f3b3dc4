// liftx replay: exploration strategies simulated on measured data (no device).
//   liftx replay --db DB [--device-key KEY] [--profile P] [--strategies
//   static,online,random,hillclimb]
//       [--budget 30] [--batch 4] [--hold-out PREFIX] [--except PREFIX] [--out DIR]
//       [--prior-db DB [--prior-device KEY] | --model FILE] [--spread-kinds 4]
//       [--kind-correlation 0]
#include "cli/app.hpp"
#include "cli/model_options.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "exec/program_binding.hpp"
#include "model/replay.hpp"
#include "model/replay_csv.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

struct ReplayCommandOptions {
  std::string strategies = "static,online,random,hillclimb";
  int64_t budget = 30;
  size_t batch = 4;
  int seeds = 20;
  std::string hold_out; ///< replay only programs whose name starts with this
  std::string except;   ///< do not replay programs whose name starts with this
  std::string out;
  std::string prior_db;            ///< train the prior on this database (another device) instead
  std::string prior_device;        ///< its device key
  std::vector<std::string> models; ///< a trained model as every program's prior (no training)
  size_t spread_kinds = 4;
  double kind_correlation = 0;
  double launch_spread = model::OnlineOptions{}.launch_spread;
  bool quiet = false;
};

std::vector<model::ReplayStrategy> parse_strategies(const std::string& text) {
  std::vector<model::ReplayStrategy> out;
  for (const std::string& part : exec::split_on(text, ','))
    out.push_back(model::parse_replay_strategy(part));
  return out;
}

/// A runs-to figure, ">N" when censored at the budget.
std::string runs_text(double runs, bool censored, int64_t budget) {
  return censored && runs > double(budget) ? fmt::format(">{}", budget)
                                           : fmt::format("{:.1f}", runs);
}

/// One table of summaries; with `by_kind`, a first column names each row's kind of program.
void print_summaries(const std::vector<std::pair<std::string, model::ReplaySummary>>& rows,
                     int64_t budget, bool by_kind) {
  fmt::print(
      "| {}strategy | inputs | runs to 90% mean | median | worst | runs to 95% mean | median | "
      "worst | largest size: 95% within 10 runs | auto: stopped | runs | fraction |\n"
      "|{}---|---|---|---|---|---|---|---|---|---|---|---|\n",
      by_kind ? "kind | " : "", by_kind ? "---|" : "");
  for (const auto& [kind, s] : rows)
    fmt::print("| {}{} | {} | {:.2f} | {:.1f} | {} | {:.2f} | {:.1f} | {} | {}/{} | {} | {:.1f} | "
               "{:.3f} |\n",
               by_kind ? kind + " | " : "", model::to_string(s.strategy), s.inputs, s.mean_90,
               s.median_90, runs_text(s.worst_90, s.censored_90 > 0, budget), s.mean_95,
               s.median_95, runs_text(s.worst_95, s.censored_95 > 0, budget),
               s.largest_95_within_10, s.largest_programs, s.auto_stopped, s.mean_auto_runs,
               s.mean_auto_fraction);
}

void run_replay(const DataOptions& o, const ReplayCommandOptions& r) {
  LIFTX_USER_CHECK(r.models.size() <= 1, "replay: one --model file at most (got {})",
                   r.models.size());
  LIFTX_USER_CHECK(r.models.empty() || r.prior_db.empty(),
                   "replay: --model is the prior itself; --prior-db trains one (give one of them)");
  std::optional<model::Model> fixed;
  if (!r.models.empty())
    fixed = model::Model::load(r.models.front());
  perfdb::LoadedData loaded = load_data(o);
  std::optional<perfdb::LoadedData> prior;
  if (!r.prior_db.empty()) {
    prior = perfdb::load_data(r.prior_db, r.prior_device, o.profile);
    perfdb::keep_shared_columns(loaded.data, prior->data);
  }
  model::ReplayOptions options;
  if (prior)
    options.prior_data = &prior->data;
  if (fixed)
    options.fixed_prior = &*fixed;
  options.spread_kinds = r.spread_kinds;
  options.kind_correlation = r.kind_correlation;
  options.online.launch_spread = r.launch_spread;
  options.strategies = parse_strategies(r.strategies);
  options.budget = r.budget;
  options.batch = r.batch;
  options.random_seeds = r.seeds;
  options.prior.name = fmt::format("{} {}", o.kind, o.transform);
  options.prior.kind = model::parse_kind(o.kind);
  options.prior.train = o.train_options();
  options.prior.features = o.columns(loaded.data.feature_names);
  options.replayed = [r](const std::string& program) {
    return program.rfind(r.hold_out, 0) == 0 &&
           (r.except.empty() || program.rfind(r.except, 0) != 0);
  };
  options.progress = step_lines("replay", r.quiet);
  const std::string prior_source =
      prior ? fmt::format("every other program of {} (device {}, {} samples)", r.prior_db,
                          prior->device_key, prior->data.samples.size())
            : std::string("every other program of the database");
  const std::string prior_text =
      fixed ? fmt::format("prior {} (as trained, its route for each program's kind)",
                          r.models.front())
            : fmt::format("prior {} on {} columns, trained without the replayed program ({} in "
                          "training)",
                          options.prior.name, options.prior.features.size(), prior_source);
  fmt::print("replay: device {}, profile {}, {} samples; {}; budget {} runs, online batches of "
             "{} (launch shapes spread within {:g}%), spread over {} kinds with a kind "
             "correlation of {}, random = mean of {} seeds\n",
             loaded.device_key, o.profile, loaded.data.samples.size(), prior_text, r.budget,
             r.batch, r.launch_spread * 100, r.spread_kinds, r.kind_correlation, r.seeds);
  const model::ReplayResult result = model::replay(loaded.data, options);
  std::vector<std::pair<std::string, model::ReplaySummary>> overall, per_kind;
  for (const model::ReplaySummary& summary : result.summaries)
    overall.emplace_back("", summary);
  print_summaries(overall, r.budget, false);
  if (result.kind_summaries.size() > 1) {
    for (const auto& [kind, summaries] : result.kind_summaries)
      for (const model::ReplaySummary& summary : summaries)
        per_kind.emplace_back(kind, summary);
    fmt::print("\nper kind of program:\n");
    print_summaries(per_kind, r.budget, true);
  }
  fmt::print("runs-to figures average the {} inputs (program, size) replayed; a fraction not "
             "reached within the budget counts as budget + 1 (a lower bound, shown >{})\n",
             result.groups.size(), r.budget);
  if (!r.out.empty()) {
    fs::create_directories(r.out);
    write_text(fs::path(r.out) / "summary.csv", model::replay_summary_csv(result));
    write_text(fs::path(r.out) / "groups.csv", model::replay_groups_csv(result));
    fmt::print("written   {}, {}\n", (fs::path(r.out) / "summary.csv").string(),
               (fs::path(r.out) / "groups.csv").string());
  }
}

} // namespace

void add_replay_command(CLI::App& app) {
  auto o = std::make_shared<DataOptions>();
  o->kind = "boosted"; // the shipped NVIDIA model's setting
  o->transform = "log";
  auto r = std::make_shared<ReplayCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Simulate exploration strategies on the measured variants of a database (no "
                "device): runs to 90% and 95% of the best, prior trained leaving each program out");
  add_data_options(cmd, *o, &r->models,
                   "a trained model file as every program's prior instead of one trained leaving "
                   "each program out (judges a shipped model's explorations on programs it "
                   "never saw)");
  cmd->add_option("--strategies", r->strategies,
                  "comma-separated: static, online, online-knn, online-ei, random, hillclimb, "
                  "static-spread, online-spread (default static,online,random,hillclimb)");
  cmd->add_option("--budget", r->budget, "runs per input (default 30)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  cmd->add_option("--batch", r->batch, "online: variants measured between re-rankings (default 4)")
      ->check(CLI::Range(size_t{1}, size_t{1000}));
  cmd->add_flag("--quiet", r->quiet, "no progress lines (one per prior trained, on stderr)");
  cmd->add_option("--seeds", r->seeds, "random orders to average (default 20)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--hold-out", r->hold_out, "replay only programs whose name starts with this");
  cmd->add_option("--except", r->except, "do not replay programs whose name starts with this");
  cmd->add_option("--out", r->out, "write summary.csv and groups.csv to this folder");
  cmd->add_option("--prior-db", r->prior_db,
                  "train the prior on this database instead (another device's measurements: a "
                  "new device explored with an old device's model), still without the replayed "
                  "program");
  cmd->add_option("--spread-kinds", r->spread_kinds,
                  "static-spread, online-spread: the first runs go to the best of this many "
                  "kinds of kernel (default 4)")
      ->check(CLI::Range(size_t{1}, size_t{100}));
  cmd->add_option("--kind-correlation", r->kind_correlation,
                  "online-spread: the correlation of two variants of one kind in the re-ranking "
                  "(default 0: kinds play no part; --spread-kinds 1 for the correlation alone)")
      ->check(CLI::Range(0.0, 1.0));
  add_launch_spread_option(cmd, r->launch_spread);
  cmd->add_option("--prior-device", r->prior_device,
                  "--prior-db: its device key (default: the only device it holds)");
  cmd->callback([o, r] { run_replay(*o, *r); });
}

} // namespace liftx::cli
