// liftx evaluate: how well a cost model orders the variants it never saw.
//   liftx evaluate --db SUITE --model NEW.json [--baseline OLD.json]
//       judges trained models per kind of program; the ship rule with a baseline;
//   liftx evaluate --db DB [--device-key KEY] [--profile P] [--kind knn|tree|boosted] [--out DIR]
//       leave one benchmark out with the given setting (the seed's evaluation, with plots);
//   ... --protocol program|size [--hold-out PREFIX] [--nested [--kinds knn,boosted]]
//   ... --test-db DB2 [--test-device KEY2]
//       the protocols of docs/results.md, with the setting chosen inside each training fold.
#include "cli/app.hpp"
#include "cli/model_options.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "model/plot.hpp"
#include "model/protocol.hpp"
#include "model/ship_rule.hpp"
#include "perfdb/dataset.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

/// 90 for 0.9, 97.5 for 0.975: how the tables name the fraction of the best a run must reach.
std::string percent(double fraction) {
  return fmt::format("{:g}", fraction * 100);
}

/// Prints the per-input table and returns it as CSV; `fraction` names the runs-to columns.
std::string print_groups(const std::vector<model::GroupResult>& groups, double fraction) {
  const std::string p = percent(fraction);
  fmt::print("| program | input | configs | failed | pearson | spearman | runs to {0}% model | "
             "random | speedup | time to {0}% model (s) | random (s) | speedup |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
             p);
  std::string csv = fmt::format(
      "program,input,configurations,failed,pearson,spearman,model_runs_to_{0},random_runs_to_{0},"
      "run_speedup,model_time_to_{0}_ms,random_time_to_{0}_ms,time_speedup\n",
      p);
  for (const model::GroupResult& g : groups) {
    fmt::print("| {} | {} | {} | {} | {:.3f} | {:.3f} | {} | {:.1f} | {:.2f} | {:.2f} | {:.2f} | "
               "{:.2f} |\n",
               g.program, short_input(g.input), g.configurations, g.failed, g.pearson, g.spearman,
               g.model_runs, g.random_runs, g.run_speedup, g.model_time_ms / 1000,
               g.random_time_ms / 1000, g.time_speedup);
    csv += fmt::format("{},\"{}\",{},{},{:.6f},{:.6f},{},{:.3f},{:.4f},{:.3f},{:.3f},{:.4f}\n",
                       g.program, short_input(g.input), g.configurations, g.failed, g.pearson,
                       g.spearman, g.model_runs, g.random_runs, g.run_speedup, g.model_time_ms,
                       g.random_time_ms, g.time_speedup);
  }
  return csv;
}

void print_summary(const model::Evaluation& ev, double fraction) {
  const std::string p = percent(fraction);
  const model::EvaluationSummary summary = model::summarize(ev);
  fmt::print("mean: spearman {:.3f}, runs to {}% model {:.1f} vs random {:.1f}\n",
             summary.mean_spearman, p, summary.mean_model_runs, summary.mean_random_runs);
  if (summary.inputs > 0)
    fmt::print("summary: runs to {0}% median {1:.1f}, worst {2:.0f}; mean pearson {3:.3f}; time "
               "to {0}% summed over inputs: model {4:.2f} s, random {5:.2f} s, {6:.0f}x less\n",
               p, summary.median_model_runs, summary.worst_model_runs, summary.mean_pearson,
               summary.model_time_ms / 1000, summary.random_time_ms / 1000, summary.time_reduction);
}

/// predictions.csv and the predicted-vs-measured scatter charts: scatter.svg (every held-out
/// input, coloured by program; the synthetic programs synth_* share one colour) and
/// scatter-PROGRAM.svg (its inputs); `write(name, text)` writes a file of the output folder.
template <typename Write>
void write_predictions(const model::Evaluation& ev, const std::string& setting,
                       const std::string& protocol, Write&& write) {
  std::string csv = "program,input,predicted,measured\n";
  std::vector<model::PointSeries> all;
  std::map<std::string, size_t> series_of; // program or "synth_*" -> index in all
  std::set<std::string> synthetic;
  size_t benchmarks = 0; // the other programs, each its own colour
  std::map<std::string, std::vector<model::PointSeries>> per_program;
  for (const model::GroupResult& g : ev.groups) {
    const std::string input = short_input(g.input);
    const bool synth = g.program.rfind("synth_", 0) == 0;
    if (synth)
      synthetic.insert(g.program);
    const std::string key = synth ? "synth_*" : g.program;
    auto [at, added] = series_of.emplace(key, all.size());
    if (added)
      all.push_back({key, synth ? "#c0c0c0" : model::palette(benchmarks++), {}});
    model::PointSeries& pooled = all[at->second];
    auto& inputs = per_program[g.program];
    inputs.push_back({fmt::format("{} (r {:.2f}, \u03c1 {:.2f})", input, g.pearson, g.spearman),
                      model::palette(inputs.size()),
                      {}});
    for (size_t i = 0; i < g.predicted.size() && i < g.measured.size(); ++i) {
      csv +=
          fmt::format("{},\"{}\",{:.6g},{:.6g}\n", g.program, input, g.predicted[i], g.measured[i]);
      pooled.points.emplace_back(g.measured[i], g.predicted[i]);
      inputs.back().points.emplace_back(g.measured[i], g.predicted[i]);
    }
  }
  // The synthetic programs first, under the benchmarks' points.
  std::stable_partition(all.begin(), all.end(),
                        [](const model::PointSeries& s) { return s.label == "synth_*"; });
  for (model::PointSeries& s : all)
    s.label += s.label == "synth_*"
                   ? fmt::format(" ({} programs, {})", synthetic.size(), s.points.size())
                   : fmt::format(" ({})", s.points.size());
  write("predictions.csv", csv);
  const model::EvaluationSummary summary = model::summarize(ev);
  const std::string x_label = "measured normalised throughput";
  const std::string y_label = "predicted";
  write("scatter.svg",
        model::scatter_chart_svg(
            fmt::format("Predicted vs measured throughput ({}, {})", setting, protocol), x_label,
            y_label, all,
            {fmt::format("per input, mean over the {} inputs: Pearson {:.3f}, Spearman {:.3f}",
                         summary.inputs, summary.mean_pearson, summary.mean_spearman)}));
  for (const auto& [program, inputs] : per_program)
    write("scatter-" + program + ".svg",
          model::scatter_chart_svg(program + ": predicted vs measured (" + setting + ", " +
                                       protocol + ")",
                                   x_label, y_label, inputs));
}

struct ProtocolCommandOptions {
  std::string protocol;            ///< empty: the plain leave-one-benchmark-out evaluation
  std::string hold_out;            ///< program-name prefix of the held-out programs
  bool nested = false;             ///< choose among candidate settings inside each training fold
  std::string kinds;               ///< for --nested: comma-separated kinds (default: --model)
  std::string test_db;             ///< transfer: the test device's database
  std::string test_device;         ///< its device key
  std::vector<std::string> add_db; ///< transfer: more training databases (DB or DB@DEVICE_KEY)
  int inner_folds = 4;
  bool quiet = false;
};

std::vector<model::Kind> parse_kinds(const std::string& text) {
  std::vector<model::Kind> kinds;
  for (const std::string& part : split_on(text, ','))
    kinds.push_back(model::parse_kind(part));
  return kinds;
}

/// UserError when an added database gives the training data the test device's rows of an input
/// the test data holds: the transfer would then be judged on what it learnt from.
void refuse_test_inputs_in(const std::vector<AddedSource>& added, const model::Dataset& train,
                           const LoadedData& test) {
  const bool adds_test_device = std::any_of(added.begin(), added.end(), [&](const AddedSource& a) {
    return a.device_key == test.device_key;
  });
  if (!adds_test_device)
    return;
  std::set<std::pair<std::string, std::string>> test_inputs;
  for (const model::Sample& s : test.data.samples)
    test_inputs.emplace(s.program, s.input);
  const std::string tag = "@" + test.device_key;
  for (const model::Sample& s : train.samples) {
    const bool test_device = s.program.size() > tag.size() && s.program.ends_with(tag);
    const std::string stencil(model::stencil_of(s.program));
    LIFTX_USER_CHECK(!test_device || !test_inputs.contains({stencil, s.input}),
                     "--add-db: the training data holds the test device's measurements of {} at "
                     "{}, an input of the test data",
                     stencil, short_input(s.input));
  }
}

/// Prints one model's per-kind table; returns it as CSV rows prefixed by `label`.
std::string print_kinds(const std::vector<model::KindSummary>& kinds, const std::string& label) {
  fmt::print("| kind | inputs | mean runs to 90% | mean runs to 95% | worst to 95% | first pick "
             "within 95% |\n|---|---|---|---|---|---|\n");
  std::string csv;
  for (const model::KindSummary& k : kinds) {
    fmt::print("| {} | {} | {:.2f} | {:.2f} | {:.0f} | {} of {} |\n", k.kind, k.inputs,
               k.mean_runs_90, k.mean_runs_95, k.worst_runs_95, k.first_within_95, k.inputs);
    csv += fmt::format("\"{}\",{},{},{:.4f},{:.4f},{:.0f},{}\n", label, k.kind, k.inputs,
                       k.mean_runs_90, k.mean_runs_95, k.worst_runs_95, k.first_within_95);
  }
  return csv;
}

void run_protocol(const DataOptions& o, const ProtocolCommandOptions& p, int orders,
                  double fraction, const std::string& out_dir) {
  LoadedData loaded = load_data(o);
  model::ProtocolOptions options;
  options.random_orders = orders;
  options.fraction = fraction;
  options.inner_folds = p.inner_folds;
  options.progress = step_lines("evaluate", p.quiet);
  const std::string protocol = p.protocol.empty() ? "program" : p.protocol;
  model::ProtocolResult result;
  std::string described;
  LIFTX_USER_CHECK(protocol != "transfer" || !p.test_db.empty(),
                   "--protocol transfer needs --test-db (the database of the test device)");
  // In the other protocols a held-out stencil's rows of the added device would stay in training.
  LIFTX_USER_CHECK(p.add_db.empty() || !p.test_db.empty(),
                   "--add-db goes with --protocol transfer and --test-db");
  std::optional<LoadedData> test;
  if (!p.test_db.empty()) {
    LIFTX_USER_CHECK(protocol == "transfer" || p.protocol.empty(),
                     "--test-db goes with --protocol transfer, not {}", protocol);
    test = load_data(p.test_db, p.test_device, o.profile);
    refuse_test_inputs_in(add_databases(loaded, p.add_db, o.profile), loaded.data, *test);
    keep_shared_columns(loaded.data, test->data);
  }
  if (p.nested) {
    options.candidates = perfdb::candidate_settings(parse_kinds(p.kinds.empty() ? o.kind : p.kinds),
                                                    loaded.data.feature_names);
  } else {
    model::Setting s;
    s.name = fmt::format("{} {}", o.kind, o.transform);
    s.kind = model::parse_kind(o.kind);
    s.train = o.train_options();
    s.features = o.columns(loaded.data.feature_names);
    options.candidates.push_back(std::move(s));
  }
  LIFTX_USER_CHECK(!options.candidates.empty(), "no candidate setting for --kinds {}", p.kinds);
  if (test) {
    described = fmt::format("train on device {}, test on device {} ({} samples)", loaded.device_key,
                            test->device_key, test->data.samples.size());
    result = model::evaluate_transfer(loaded.data, test->data, options);
  } else if (protocol == "program") {
    described = p.hold_out.empty() ? "leave one program out"
                                   : "leave out each program named " + p.hold_out + "*";
    result = model::evaluate_folds(loaded.data,
                                   model::leave_one_program_out(loaded.data, p.hold_out), options);
  } else if (protocol == "size") {
    described = "train without the largest input size, test on it";
    result =
        model::evaluate_folds(loaded.data, model::leave_largest_size_out(loaded.data), options);
  } else {
    throw UserError(fmt::format(
        "unknown protocol '{}' (known: program, size, transfer with --test-db)", protocol));
  }
  fmt::print("evaluation: {}; device {}, profile {}, {} samples; {}; random = mean of {} seeded "
             "orders\n",
             described, loaded.device_key, o.profile, loaded.data.samples.size(),
             options.candidates.size() == 1
                 ? "setting " + options.candidates[0].name
                 : fmt::format("setting chosen among {} inside each training fold",
                               options.candidates.size()),
             orders);
  for (const model::FoldChoice& c : result.choices) {
    if (c.inner.empty())
      continue;
    double best = 0;
    for (const auto& [name, s] : c.inner)
      if (name == c.setting)
        best = s.mean_model_runs;
    fmt::print("fold {}: chose {} (inner mean runs to {}% {:.2f})\n", c.fold, c.setting,
               percent(fraction), best);
  }
  model::sort_groups(result.evaluation.groups);
  const std::string csv = print_groups(result.evaluation.groups, fraction);
  print_summary(result.evaluation, fraction);
  fmt::print("per kind of program (held-out inputs):\n");
  const std::string kinds_csv = print_kinds(
      model::summarize_by_kind(result.evaluation.groups, test ? test->data : loaded.data),
      options.candidates.size() == 1 ? options.candidates[0].name : "chosen per fold");
  if (!out_dir.empty()) {
    fs::create_directories(out_dir);
    write_text(fs::path(out_dir) / "kinds.csv",
               "setting,kind,inputs,mean_runs_to_90,mean_runs_to_95,worst_runs_to_95,"
               "first_pick_within_95\n" +
                   kinds_csv);
    write_text(fs::path(out_dir) / "evaluation.csv", csv);
    std::string choices = "fold,candidate,chosen,inner_mean_runs,inner_worst_runs,inner_pearson\n";
    for (const model::FoldChoice& c : result.choices)
      for (const auto& [name, s] : c.inner)
        choices += fmt::format("\"{}\",\"{}\",{},{:.4f},{:.0f},{:.4f}\n", c.fold, name,
                               name == c.setting ? 1 : 0, s.mean_model_runs, s.worst_model_runs,
                               s.mean_pearson);
    write_text(fs::path(out_dir) / "choices.csv", choices);
    std::vector<std::string> written = {"evaluation.csv", "choices.csv", "kinds.csv"};
    write_predictions(result.evaluation,
                      options.candidates.size() == 1 ? options.candidates[0].name
                                                     : "setting chosen per fold",
                      described, [&](const std::string& name, const std::string& text) {
                        write_text(fs::path(out_dir) / name, text);
                        written.push_back(name);
                      });
    fmt::print("written   ");
    for (size_t i = 0; i < written.size(); ++i)
      fmt::print("{}{}", i ? ", " : "", (fs::path(out_dir) / written[i]).string());
    fmt::print("\n");
  }
}

struct JudgeOptions {
  std::vector<std::string> models; ///< trained model files to judge
  std::string baseline;            ///< the model the first one must be no worse than, per kind
  double tolerance = model::ShipRule{}.tolerance;
};

/// Judges trained models (no training) on every input of the database, per kind of program;
/// with a baseline, applies the ship rule to the first model and fails (exit 1) when it is refused.
void judge_models(const DataOptions& o, const JudgeOptions& j, int orders,
                  const std::string& out_dir) {
  LoadedData loaded = load_data(o);
  std::set<std::string> inputs;
  for (const model::Sample& s : loaded.data.samples)
    inputs.insert(s.program + " " + s.input);
  fmt::print("judged on {}: device {}, profile {}, {} samples of {} inputs; every measured variant "
             "of an input ranked by the model, tried in that order\n",
             o.db.empty() ? "the default database" : o.db, loaded.device_key, o.profile,
             loaded.data.samples.size(), inputs.size());
  std::vector<std::string> files = j.models;
  if (!j.baseline.empty())
    files.push_back(j.baseline);
  std::string kinds_csv = "model,kind,inputs,mean_runs_to_90,mean_runs_to_95,worst_runs_to_95,"
                          "first_pick_within_95\n";
  std::string groups_csv = "model,program,input,kind,configurations,failed,runs_to_90,runs_to_95,"
                           "first_pick_fraction,spearman\n";
  std::vector<std::vector<model::KindSummary>> summaries;
  for (const std::string& file : files) {
    const model::Model trained = model::Model::load(file);
    std::vector<model::GroupResult> groups;
    try {
      groups = model::judge_all(trained, loaded.data, orders);
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}: {} (`liftx db --db DB --refresh-features {}`, on a copy)",
                                  file, e.message(), o.profile));
    }
    std::string routes;
    for (const auto& [kind, route] : trained.routes())
      routes +=
          fmt::format("{}{} programs by a {} model of {} samples", routes.empty() ? "; " : ", ",
                      kind, model::to_string(route->kind()), route->training_samples());
    fmt::print("\nmodel {} ({}, trained on {} samples{})\n", file, model::to_string(trained.kind()),
               trained.training_samples(), routes);
    for (const model::GroupResult& g : groups)
      groups_csv +=
          fmt::format("\"{}\",{},\"{}\",{},{},{},{},{},{:.4f},{:.4f}\n", file, g.program,
                      short_input(g.input), model::kind_of(loaded.data, g.program),
                      g.configurations, g.failed, model::runs_to(g, 0.90), model::runs_to(g, 0.95),
                      g.model_curve.empty() || g.model_curve.back() <= 0
                          ? 0.0
                          : g.model_curve.front() / g.model_curve.back(),
                      g.spearman);
    summaries.push_back(model::summarize_by_kind(groups, loaded.data));
    kinds_csv += print_kinds(summaries.back(), file);
  }
  if (!out_dir.empty()) {
    fs::create_directories(out_dir);
    write_text(fs::path(out_dir) / "kinds.csv", kinds_csv);
    write_text(fs::path(out_dir) / "inputs.csv", groups_csv);
    fmt::print("\nwritten   {}, {}\n", (fs::path(out_dir) / "kinds.csv").string(),
               (fs::path(out_dir) / "inputs.csv").string());
  }
  if (j.baseline.empty())
    return;
  const std::vector<std::string> refusals =
      model::ship_refusals(summaries.front(), summaries.back(), {j.tolerance});
  if (refusals.empty()) {
    fmt::print("\nship rule: {} is no worse than {} on any kind (tolerance {:g})\n",
               j.models.front(), j.baseline, j.tolerance);
    return;
  }
  fmt::print("\nship rule: {} is refused, worse than {} on:\n", j.models.front(), j.baseline);
  for (const std::string& r : refusals)
    fmt::print("  {}\n", r);
  std::fflush(stdout);
  throw RunFailed();
}

} // namespace

void add_evaluate_command(CLI::App& app) {
  auto o = std::make_shared<DataOptions>();
  auto p = std::make_shared<ProtocolCommandOptions>();
  auto j = std::make_shared<JudgeOptions>();
  auto out_dir = std::make_shared<std::string>();
  auto orders = std::make_shared<int>(100);
  auto fraction = std::make_shared<double>(0.9);
  CLI::App* cmd = app.add_subcommand(
      "evaluate", "Evaluate a kind of cost model on the database (leave one benchmark out, or "
                  "another protocol), or judge trained model files per kind of program");
  add_data_options(cmd, *o, &j->models);
  cmd->add_option("--out", *out_dir,
                  "write evaluation.csv, predictions.csv and SVG plots to this folder");
  cmd->add_option("--orders", *orders, "random orders to average (default 100)")
      ->check(CLI::Range(100, 1000000));
  cmd->add_option("--fraction", *fraction,
                  "runs to this fraction of each input's best are counted (default 0.9; with "
                  "--nested also what the inner folds choose by)")
      ->check(CLI::Range(0.5, 1.0));
  cmd->add_option("--protocol", p->protocol,
                  "program (leave one program out), size (train without the largest size, test "
                  "on it) or transfer (with --test-db); reports the setting chosen per fold");
  cmd->add_option("--hold-out", p->hold_out,
                  "program protocol: hold out only programs whose name starts with this");
  cmd->add_flag("--nested", p->nested,
                "choose the setting (transform, neighbours, depth, feature set) among candidates "
                "inside each training fold");
  cmd->add_option("--kinds", p->kinds, "--nested: model kinds to choose among, e.g. knn,boosted");
  cmd->add_option("--inner-folds", p->inner_folds,
                  "--nested: program groups of the inner evaluation (default 4)")
      ->check(CLI::Range(2, 100));
  cmd->add_option("--test-db", p->test_db, "transfer: the database of the test device");
  cmd->add_option("--test-device", p->test_device, "transfer: the test device's key");
  cmd->add_option("--add-db", p->add_db,
                  "transfer: also train on DB (its only device) or DB@DEVICE_KEY, e.g. the test "
                  "device's data at other inputs (repeatable; refused when it holds a test input)");
  cmd->add_flag("--quiet", p->quiet, "no progress lines (one per fold, on stderr)");
  cmd->add_option("--baseline", j->baseline,
                  "with --model: the ship rule, exit 1 when the first --model is worse than this "
                  "model on some kind")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tolerance", j->tolerance,
                  "ship rule: how much higher a kind's mean runs to 95% may be, relative "
                  "(default 0.1)")
      ->check(CLI::Range(0.0, 10.0));
  cmd->callback([o, p, j, out_dir, orders, fraction] {
    if (!j->models.empty()) {
      LIFTX_USER_CHECK(p->protocol.empty() && !p->nested && p->test_db.empty() && p->add_db.empty(),
                       "--model judges trained models; it does not go with --protocol, --nested, "
                       "--test-db or --add-db");
      return judge_models(*o, *j, *orders, *out_dir);
    }
    LIFTX_USER_CHECK(j->baseline.empty(), "--baseline goes with --model (the candidate)");
    if (!p->protocol.empty() || p->nested || !p->test_db.empty() || !p->add_db.empty())
      return run_protocol(*o, *p, *orders, *fraction, *out_dir);
    LoadedData loaded = load_data(*o);
    loaded.data = model::select_columns(loaded.data, o->columns(loaded.data.feature_names));
    model::EvaluateOptions options;
    options.kind = model::parse_kind(o->kind);
    options.train = o->train_options();
    options.random_orders = *orders;
    options.fraction = *fraction;
    options.progress = step_lines("evaluate", p->quiet);
    model::Evaluation ev = model::evaluate(loaded.data, options);
    fmt::print("leave-one-benchmark-out evaluation of the {} model: device {}, profile {}, {} "
               "samples, {} features; random = mean of {} seeded orders\n",
               o->kind, loaded.device_key, o->profile, loaded.data.samples.size(),
               loaded.data.feature_names.size(), *orders);
    const std::string csv = print_groups(ev.groups, *fraction);
    print_summary(ev, *fraction);
    fmt::print("per kind of program (held-out inputs):\n");
    print_kinds(model::summarize_by_kind(ev.groups, loaded.data), o->kind);
    if (out_dir->empty())
      return;
    fs::create_directories(*out_dir);
    const fs::path dir(*out_dir);
    write_text(dir / "evaluation.csv", csv);
    std::string nmi_csv = "feature,nmi\n";
    for (const auto& [name, v] : ev.feature_nmi)
      nmi_csv += fmt::format("{},{:.6f}\n", name, v);
    write_text(dir / "feature-nmi.csv", nmi_csv);
    // Fig. 5: runs to 90% (or --fraction) per benchmark, model vs random.
    std::vector<std::string> categories;
    model::Series model_runs{"model order", {}, "#c0392b", false};
    model::Series random_runs{"random (mean)", {}, "#7f8c8d", false};
    for (const model::GroupResult& g : ev.groups) {
      categories.push_back(g.program + " " + short_input(g.input));
      model_runs.y.push_back(double(g.model_runs));
      random_runs.y.push_back(g.random_runs);
    }
    std::vector<std::string> written = {"evaluation.csv", "feature-nmi.csv"};
    auto svg = [&](const std::string& name, const std::string& text) {
      write_text(dir / name, text);
      written.push_back(name);
    };
    svg("runs-to-" + percent(*fraction) + ".svg",
        model::grouped_bar_chart_svg(
            fmt::format("Runs to reach {}% of the best ({} model, leave one benchmark out)",
                        percent(*fraction), o->kind),
            "runs", categories, {model_runs, random_runs}));
    // Fig. 4: NMI of each feature with performance, largest first.
    auto nmi = ev.feature_nmi;
    std::stable_sort(nmi.begin(), nmi.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    svg("feature-nmi.svg",
        model::bar_chart_svg("Normalised mutual information of each feature with performance",
                             "NMI", nmi));
    // Best-so-far curves: one chart per benchmark, model and random order for each input.
    std::map<std::string, std::vector<model::Series>> per_program;
    for (const model::GroupResult& g : ev.groups) {
      auto& series = per_program[g.program];
      const std::string& colour = model::palette(series.size() / 2);
      series.push_back({"model " + short_input(g.input), g.model_curve, colour, false});
      series.push_back({"random " + short_input(g.input), g.random_curve, colour, true});
    }
    for (const auto& [program, series] : per_program)
      svg("best-so-far-" + program + ".svg",
          model::line_chart_svg(program + ": best normalised throughput so far (" + o->kind +
                                    " model, left out)",
                                "runs", "best so far / best", series));
    write_predictions(ev, o->kind + " model", "leave one benchmark out", svg);
    fmt::print("written   ");
    for (size_t i = 0; i < written.size(); ++i)
      fmt::print("{}{}", i ? ", " : "", (dir / written[i]).string());
    fmt::print("\n");
  });
}

} // namespace liftx::cli
