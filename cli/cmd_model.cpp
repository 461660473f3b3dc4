// Cost-model commands (evaluate: cmd_evaluate.cpp):
//   liftx train --db DB [--device KEY] [--profile P] [--kind knn|tree|boosted] -o FILE
//   liftx rank FILE --model M --size ... [--profile P] [--top K] [--format table|csv|json]
//   liftx explore FILE [--device D] [--model M] [--budget K] [--strategy S] [--size ...] [--db DB]
// explore runs each variant in a worker child (`liftx run --worker`), as `liftx run` does, so a
// kernel that crashes or hangs the driver is recorded with a status and exploration goes on.
#include "cli/app.hpp"
#include "cli/model_options.hpp"
#include "cli/options.hpp"
#include "cli/program_options.hpp"
#include "codegen/kernel.hpp"
#include "codegen/runtime/isolate.hpp"
#include "exec/run.hpp"
#include "explore/collect.hpp"
#include "explore/dataset.hpp"
#include "explore/db.hpp"
#include "explore/explore.hpp"
#include "explore/models.hpp"
#include "explore/rank.hpp"
#include "ir/parse/parser.hpp"
#include "model/evaluate.hpp"
#include "model/plot.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <set>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

// ---- train --------------------------------------------------------------------------------------

void add_train(CLI::App& app) {
  auto o = std::make_shared<DataOptions>();
  auto output = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("train", "Train a cost model from the performance database");
  add_data_options(cmd, *o);
  cmd->add_option("-o,--output", *output, "model file to write (JSON)")->required();
  cmd->callback([o, output] {
    LoadedData loaded = load_data(*o);
    loaded.data = model::select_columns(loaded.data, o->columns(loaded.data.feature_names));
    model::Model m = model::train(loaded.data, model::parse_kind(o->kind), o->train_options());
    m.profile = o->profile;
    std::set<std::string> programs;
    int ok = 0;
    for (const model::Sample& s : loaded.data.samples) {
      programs.insert(s.program);
      ok += s.time_ms.has_value();
    }
    m.provenance = {{"database", fs::absolute(loaded.db_path).string()},
                    {"device", loaded.device_key},
                    {"programs", std::vector<std::string>(programs.begin(), programs.end())},
                    {"samples", ok},
                    {"failed_measurements_skipped", int(loaded.data.samples.size()) - ok},
                    {"trained", explore::utc_timestamp()},
                    {"liftx", "0.1.0"}};
    m.save(*output);
    fmt::print("trained   {} model on {} successful measurements of {} programs (device {}, "
               "profile {})\n",
               o->kind, ok, programs.size(), loaded.device_key, o->profile);
    fmt::print("features  {} columns, {} vary", m.feature_names().size(),
               m.standardiser().kept.size());
    if (m.kind() == model::Kind::knn)
      fmt::print(", {} principal components keep {:.1f}% of the variance", m.pca().basis.cols(),
                 m.pca().variance_kept.sum() * 100);
    else if (m.kind() == model::Kind::boosted)
      fmt::print(", {} boosted trees ({})", m.options().trees,
                 model::to_string(m.options().objective));
    else
      fmt::print(", tree of {} nodes", m.tree().size());
    fmt::print("\nwritten   {}\n", *output);
  });
}

// ---- rank ---------------------------------------------------------------------------------------

struct RankCommandOptions {
  std::string file;
  std::string program;
  std::string model;
  std::vector<std::string> sizes;
  std::string profile;
  int top = 20;
  std::string format = "table";
  std::string out;
  int64_t sample = 0;
  uint64_t seed = 1;
};

void add_rank(CLI::App& app) {
  auto o = std::make_shared<RankCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "rank", "Rank every variant of a program with a cost model, without running any");
  cmd->add_option("file", o->file, "high-level .lift stencil")->required();
  cmd->add_option("--program", o->program, "definition (default: the last one)");
  cmd->add_option("--model", o->model, "model file (liftx train)")->required();
  cmd->add_option("--size", o->sizes, "sizes: N=64,M=48, or 64 for every size")->required();
  add_profile_option(cmd, o->profile, "the model's");
  cmd->add_option("--top", o->top, "rows to print (0 = all; default 20)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--format", o->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--sample", o->sample,
                  "rank a fixed-seed uniform sample of this many variants (default 0 = all)");
  cmd->add_option("--seed", o->seed, "seed of --sample (default 1)");
  cmd->add_option("--out", o->out,
                  "also write the rows shown as DIR/<rank>-<index>-<strategy>.lift + .json");
  cmd->callback([o] {
    model::Model m = model::Model::load(o->model);
    ir::Module module = parse::parse_file(o->file);
    const ir::Program& program = select_program(module, o->program, o->file);
    interp::Sizes sizes = bind_sizes(program, o->sizes);
    explore::RankOptions options;
    options.sizes = rewrite::Sizes(sizes.begin(), sizes.end());
    options.profile = o->profile;
    options.sample = o->sample;
    options.sample_seed = o->seed;
    options.keep = size_t(o->top); // the rows shown; 0 = all
    auto start = std::chrono::steady_clock::now();
    const explore::RankResult result = explore::rank(program, m, options);
    const std::vector<explore::RankedVariant>& ranked = result.ranked;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const size_t shown = ranked.size();
    if (!o->out.empty()) {
      fs::create_directories(o->out);
      for (size_t i = 0; i < shown; ++i) {
        const explore::RankedVariant& r = ranked[i];
        const std::string stem =
            fmt::format("{:03}-{}-{}", r.rank, r.variant.index, r.variant.strategy);
        write_text(fs::path(o->out) / (stem + ".lift"),
                   ir::print(ir::Module{module.userfuns, {*r.program}}));
        write_text(fs::path(o->out) / (stem + ".json"),
                   rewrite::sidecar_json(r.variant, options.sizes));
      }
    }
    if (o->format == "json") {
      nlohmann::json rows = nlohmann::json::array();
      for (size_t i = 0; i < shown; ++i) {
        const explore::RankedVariant& r = ranked[i];
        nlohmann::json reasons = nlohmann::json::array();
        for (const model::Explanation& e : r.reasons)
          reasons.push_back({{"feature", e.feature}, {"value", e.value}, {"z", e.standardised}});
        rows.push_back({{"rank", r.rank},
                        {"predicted", r.predicted},
                        {"index", r.variant.index},
                        {"strategy", r.variant.strategy},
                        {"parameters", r.variant.parameters},
                        {"launch", explore::launch_json(r.variant.launch)},
                        {"features", reasons}});
      }
      fmt::print("{}\n", nlohmann::json{{"program", program.name},
                                        {"variants", result.variants},
                                        {"model", o->model},
                                        {"ranked", rows}}
                             .dump(2));
      return;
    }
    if (o->format == "csv") {
      fmt::print("rank,predicted,index,strategy,parameters,launch,features\n");
      for (size_t i = 0; i < shown; ++i) {
        const explore::RankedVariant& r = ranked[i];
        fmt::print("{},{:.6f},{},{},\"{}\",\"{}\",\"{}\"\n", r.rank, r.predicted, r.variant.index,
                   r.variant.strategy, explore::describe_parameters(r.variant),
                   codegen::describe(r.variant.launch), explore::describe_reasons(r.reasons));
      }
      return;
    }
    fmt::print("program   {} ({}), sizes {}, model {} ({}, profile {})\n", program.name, o->file,
               format_sizes(sizes), o->model, model::to_string(m.kind()),
               o->profile.empty() ? m.profile : o->profile);
    fmt::print("ranked    {} variants in {:.3f} s; predicted normalised throughput (1 = as fast "
               "as the best of its program and input)\n",
               result.variants, seconds);
    fmt::print("{:>5} {:>9} {:>6}  {:<36} {:<34} {}\n", "rank", "predicted", "index",
               "strategy and parameters", "launch", "main features");
    for (size_t i = 0; i < shown; ++i) {
      const explore::RankedVariant& r = ranked[i];
      fmt::print("{:>5} {:>9.3f} {:>6}  {:<36} {:<34} {}\n", r.rank, r.predicted, r.variant.index,
                 explore::describe_parameters(r.variant), codegen::describe(r.variant.launch),
                 explore::describe_reasons(r.reasons));
    }
  });
}

// ---- explore ------------------------------------------------------------------------------------

struct ExploreCommandOptions {
  std::string file;
  std::string program;
  std::string device = "cpu";
  std::string model;
  std::string budget = "10"; ///< runs, or "auto"
  int64_t batch = 4;
  std::string strategy = "online";
  std::vector<std::string> sizes;
  std::string db;
  uint64_t seed = 1;
  int64_t sample = -1; // -1: the device's default (explore::defaults_for: the whole space)
  int warmup = exec::kDefaultWarmup;
  int repeat = exec::kDefaultRepeat;
  int timeout_ms = 60000;
};

/// `--budget auto`'s hard cap on runs.
constexpr int64_t kAutoBudgetCap = 50;

/// "stopped after 8 runs: expected gain left 0.40% < 1%", or the runs and the gain left.
std::string describe_online_stop(const explore::ExploreResult& result,
                                 const explore::ExploreOptions& options) {
  if (result.stopped_early)
    return fmt::format("stopped after {} runs: expected gain left {:.2f}% < {:.0f}%",
                       result.attempts.size(), *result.remaining_gain * 100,
                       options.stop_gain * 100);
  if (result.remaining_gain && std::isfinite(*result.remaining_gain))
    return fmt::format("{} runs, expected gain left {:.2f}%", result.attempts.size(),
                       *result.remaining_gain * 100);
  return fmt::format("{} runs", result.attempts.size());
}

void add_explore(CLI::App& app) {
  auto o = std::make_shared<ExploreCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "explore", "Rank the variants with a model, then run and verify the most promising ones");
  cmd->add_option("file", o->file, "high-level .lift stencil")->required();
  cmd->add_option("--program", o->program, "definition (default: the last one)");
  cmd->add_option("--device", o->device, "cpu (default), gpu, pocl, nvidia, amd, P:D or a name");
  cmd->add_option("--model", o->model, "model file (default: the shipped one for the device kind)");
  cmd->add_option("--budget", o->budget,
                  fmt::format("variants to run (default 10), or auto: online, stop once the "
                              "expected gain of the best unmeasured variant is under {:.0f}% "
                              "(at most {} runs)",
                              model::kAutoStopGain * 100, kAutoBudgetCap))
      ->check(CLI::IsMember({"auto"}) | CLI::Range(1, 1000000));
  cmd->add_option("--batch", o->batch, "online: variants run between re-rankings (default 4)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--strategy", o->strategy,
                  "online (default: the model's ranking, re-ranked by the runs so far), model "
                  "(the static ranking), random, hillclimb or exhaustive")
      ->check(CLI::IsMember({"online", "model", "random", "hillclimb", "exhaustive"}));
  cmd->add_option("--size", o->sizes, "sizes (default: every size 128 on CPUs, 2048 on GPUs)");
  add_db_option(cmd, o->db, "to record every run in");
  cmd->add_option("--seed", o->seed, "seed of the random strategy and of --sample (default 1)");
  cmd->add_option("--sample", o->sample,
                  "rank a fixed-seed uniform sample of this many variants (default 0 = the whole "
                  "space)")
      ->check(CLI::Range(int64_t{0}, int64_t{100000000}));
  add_timing_options(cmd, o->warmup, o->repeat);
  cmd->add_option("--timeout-ms", o->timeout_ms, "per variant, build included (default 60000)");
  cmd->callback([o] {
    const bool auto_budget = o->budget == "auto";
    LIFTX_USER_CHECK(!auto_budget || o->strategy == "online",
                     "--budget auto goes with --strategy online, not {}", o->strategy);
    const int64_t budget = auto_budget ? kAutoBudgetCap : std::stoll(o->budget);
    ir::Module module = parse::parse_file(o->file);
    const ir::Program& program = select_program(module, o->program, o->file);
    runtime::Device device = runtime::select_device(o->device);
    const explore::DeviceDefaults defaults = explore::defaults_for(device.profile);
    interp::Sizes sizes = bind_sizes(
        program, o->sizes.empty() ? std::vector{std::to_string(defaults.size)} : o->sizes);
    const std::string kind = explore::profile_name_for(device.profile);
    const explore::FoundModel found = explore::find_model(o->model, device.profile);
    const fs::path& model_path = found.path;
    model::Model m = model::Model::load(model_path);

    explore::RankOptions rank_options;
    rank_options.sizes = rewrite::Sizes(sizes.begin(), sizes.end());
    rank_options.profile = kind;
    rank_options.device = device.profile;
    rank_options.sample = o->sample >= 0 ? o->sample : defaults.sample;
    rank_options.sample_seed = o->seed;
    // The exhaustive strategy runs every variant ranked; the others at most a few budgets' worth.
    rank_options.keep =
        o->strategy == "exhaustive" ? 0 : std::max(rank_options.keep, size_t(budget) * 4);
    const explore::RankResult ranking = explore::rank(program, m, rank_options);
    const std::vector<explore::RankedVariant>& ranked = ranking.ranked;
    fmt::print("program   {} ({}), sizes {}\n", program.name, o->file, format_sizes(sizes));
    fmt::print("device    {} ({})\n", device.profile.device_name, device.profile.key);
    fmt::print("model     {} ({}, trained for profile {})\n", model_path.string(),
               model::to_string(m.kind()), m.profile);
    for (const std::string& note : found.notes)
      fmt::print("note      {}\n", note);
    const bool all_kept = static_cast<int64_t>(ranked.size()) == ranking.variants;
    fmt::print("space     {} variants ranked{}{}; strategy {}{}, budget {}\n", ranking.variants,
               rank_options.sample > 0
                   ? fmt::format(" (a uniform sample, seed {}; --sample 0 ranks all)", o->seed)
                   : "",
               all_kept ? "" : fmt::format(", the best {} kept", ranked.size()), o->strategy,
               o->strategy == "online" ? fmt::format(" (batches of {})", o->batch) : "",
               o->strategy == "exhaustive" ? fmt::format("{}", ranked.size())
               : auto_budget               ? fmt::format("auto (at most {})", budget)
                                           : fmt::format("{}", budget));

    const fs::path db_path = o->db.empty() ? explore::PerfDb::default_path() : fs::path(o->db);
    explore::PerfDb db(db_path);
    explore::RecordingWorkerMeasure measure(db, device.profile, module, program, sizes, kind,
                                            {fs::read_symlink("/proc/self/exe").string(), o->device,
                                             o->warmup, o->repeat,
                                             std::chrono::milliseconds(o->timeout_ms)});
    auto on_attempt = [&](const explore::Attempt& a, int64_t done, int64_t planned) {
      const explore::RankedVariant& r = ranked[a.ranked_index];
      const exec::RunReport& rep = a.report;
      fmt::print("  [{:>3}/{}] rank {:>5} predicted {:.3f}  {:<32} {:<30} {}\n", done, planned,
                 r.rank, r.predicted, explore::describe_parameters(r.variant),
                 codegen::describe(r.variant.launch),
                 rep.status == runtime::Status::ok && rep.timing
                     ? fmt::format("{:.4f} ms", rep.timing->median_ms)
                     : std::string(runtime::to_string(rep.status)));
      std::fflush(stdout);
    };
    explore::ExploreOptions options;
    options.strategy = explore::parse_strategy(o->strategy);
    options.budget = budget;
    options.batch = o->batch;
    options.auto_budget = auto_budget;
    options.seed = o->seed;
    explore::ExploreResult result =
        explore::explore(ranked, options, std::ref(measure), on_attempt);

    fmt::print("recorded  {} measurements in {}\n", result.attempts.size(), db_path.string());
    if (result.model_spearman)
      fmt::print("model     Spearman {:.3f} between predicted and measured throughput on the {} "
                 "variants run\n",
                 *result.model_spearman, result.attempts.size());
    else
      fmt::print("model     no rank correlation: fewer than two successful runs, or their "
                 "predictions are all equal\n");
    if (options.strategy == explore::Strategy::online)
      fmt::print("online    {}; re-ranked scores when chosen vs measured: {}\n",
                 describe_online_stop(result, options),
                 result.online_spearman ? fmt::format("Spearman {:.3f}", *result.online_spearman)
                                        : std::string("no rank correlation"));
    if (!result.best) {
      fmt::print("best      none of the {} variants run succeeded\n", result.attempts.size());
      throw RunFailed();
    }
    const explore::Attempt& best = result.attempts[*result.best];
    const explore::RankedVariant& r = ranked[best.ranked_index];
    const exec::RunReport& rep = best.report;
    fmt::print("\nbest      rank {} (predicted {:.3f}): {}\n", r.rank, r.predicted,
               explore::describe_parameters(r.variant));
    fmt::print("launch    {}\n", codegen::describe(r.variant.launch));
    fmt::print("time      {:.4f} ms median of {} runs\n", rep.timing->median_ms,
               rep.timing->samples_ms.size());
    if (rep.gb_per_s) {
      fmt::print("bandwidth {:.2f} GB/s", *rep.gb_per_s);
      if (rep.roofline_fraction)
        fmt::print(" = {:.1f}% of the float4-copy roofline ({:.2f} GB/s)",
                   *rep.roofline_fraction * 100, *rep.roofline_gb_per_s);
      fmt::print("\n");
    }
    std::vector<model::Explanation> reasons = r.reasons;
    if (reasons.empty()) { // beyond the explained top rows
      const std::vector<double> all = explore::feature_values(
          measure.features().compute(*r.program, r.variant, rank_options.sizes),
          measure.features().profile().throughput());
      const std::vector<int> columns = m.feature_indices(explore::feature_names());
      Eigen::RowVectorXd row(static_cast<Eigen::Index>(columns.size()));
      for (size_t c = 0; c < columns.size(); ++c)
        row[static_cast<Eigen::Index>(c)] = all[size_t(columns[c])];
      reasons = m.explain(row);
    }
    fmt::print("why       {}\n", explore::describe_reasons(reasons));
    fmt::print("\n--- {}.lift ---\n{}\n", program.name,
               ir::print(ir::Module{module.userfuns, {*r.program}}));
    fmt::print("--- kernel ---\n{}\n",
               rep.kernel_source.empty()
                   ? codegen::generate(*r.program, codegen::Options{r.variant.launch.tied}).source
                   : rep.kernel_source);
  });
}

} // namespace

void add_model_commands(CLI::App& app) {
  add_train(app);
  add_rank(app);
  add_explore(app);
}

} // namespace liftx::cli
