// liftx evaluate: how well a cost model orders the variants it never saw.
//   liftx evaluate --db SUITE --model NEW.json [--baseline OLD.json]
//       judges trained models per kind of program; the ship rule with a baseline;
//   liftx evaluate --db DB [--device-key KEY] [--profile P] [--kind knn|tree|boosted] [--out DIR]
//       leave one benchmark out with the given setting (the seed's evaluation, with plots);
//   ... --protocol program|size [--hold-out PREFIX] [--nested [--kinds knn,boosted]]
//   ... --test-db DB2 [--test-device KEY2]
//       the protocols of docs/results.md, with the setting chosen inside each training fold.
// The evaluations and their reports are model/evaluation_run.hpp's and
// model/evaluation_report.hpp's; this file reads the databases they need, and prints and writes.
#include "cli/app.hpp"
#include "cli/model_options.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "exec/program_binding.hpp"
#include "model/evaluation_report.hpp"
#include "model/evaluation_run.hpp"
#include "perfdb/dataset.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

/// What `liftx evaluate` is given: the data to learn from, the evaluation asked for, and where
/// its files go.
struct EvaluateCommandOptions {
  DataOptions data;
  model::EvaluationRequest request;
  std::string out_dir; ///< empty: no files
  bool quiet = false;  ///< no progress lines
};

/// Writes `files` into `dir`, one after the other, and appends their names to `written`.
void write_files(const fs::path& dir, const std::vector<model::ReportFile>& files,
                 std::vector<std::string>& written) {
  for (const model::ReportFile& f : files) {
    write_text(dir / f.name, f.text);
    written.push_back(f.name);
  }
}

/// "written   DIR/A, DIR/B" with the newline.
void print_written(const fs::path& dir, const std::vector<std::string>& names) {
  fmt::print("written   ");
  for (size_t i = 0; i < names.size(); ++i)
    fmt::print("{}{}", i ? ", " : "", (dir / names[i]).string());
  fmt::print("\n");
}

std::vector<model::Kind> parse_kinds(const std::string& text) {
  std::vector<model::Kind> kinds;
  for (const std::string& part : exec::split_on(text, ','))
    kinds.push_back(model::parse_kind(part));
  return kinds;
}

/// The settings a protocol chooses among: with --nested, every candidate of the kinds (those of
/// --kinds, else --kind); otherwise the one setting --kind, --transform and --features describe.
std::vector<model::Setting> candidate_settings(const DataOptions& o,
                                               const model::EvaluationRequest& request,
                                               const std::vector<std::string>& feature_names) {
  if (request.nested)
    return perfdb::candidate_settings(parse_kinds(request.kinds.empty() ? o.kind : request.kinds),
                                      feature_names);
  model::Setting s;
  s.name = fmt::format("{} {}", o.kind, o.transform);
  s.kind = model::parse_kind(o.kind);
  s.train = o.train_options();
  s.features = o.columns(feature_names);
  return {std::move(s)};
}

/// kinds.csv, evaluation.csv, choices.csv and the predictions and their charts.
void write_protocol_files(const fs::path& dir, const model::ProtocolRun& run, double fraction) {
  fs::create_directories(dir);
  write_text(dir / "kinds.csv", model::protocol_kinds_csv(run));
  write_text(dir / "evaluation.csv", model::groups_csv(run.result.evaluation.groups, fraction));
  write_text(dir / "choices.csv", model::fold_choices_csv(run.result.choices));
  std::vector<std::string> written = {"evaluation.csv", "choices.csv", "kinds.csv"};
  write_files(dir, model::protocol_prediction_files(run), written);
  print_written(dir, written);
}

void run_protocol(const EvaluateCommandOptions& c) {
  const DataOptions& o = c.data;
  const model::EvaluationRequest& request = c.request;
  perfdb::LoadedData loaded = load_data(o);
  model::ProtocolOptions options;
  options.random_orders = request.random_orders;
  options.fraction = request.fraction;
  options.inner_folds = request.inner_folds;
  options.progress = step_lines("evaluate", c.quiet);
  model::check_protocol_request(request);
  std::optional<perfdb::LoadedData> test;
  if (!request.test_db.empty())
    test = perfdb::load_transfer_data(loaded, request, o.profile);
  options.candidates = candidate_settings(o, request, loaded.data.feature_names);
  const model::ProtocolRun run =
      model::run_protocol(request, loaded.data, loaded.device_key, test ? &test->data : nullptr,
                          test ? test->device_key : "", options);
  fmt::print("{}", model::protocol_report(run, request, loaded.device_key, o.profile,
                                          loaded.data.samples.size()));
  if (!c.out_dir.empty())
    write_protocol_files(c.out_dir, run, request.fraction);
}

void run_leave_one_benchmark_out(const EvaluateCommandOptions& c) {
  const DataOptions& o = c.data;
  perfdb::LoadedData loaded = load_data(o);
  loaded.data = model::select_columns(loaded.data, o.columns(loaded.data.feature_names));
  model::EvaluateOptions options;
  options.kind = model::parse_kind(o.kind);
  options.train = o.train_options();
  options.random_orders = c.request.random_orders;
  options.fraction = c.request.fraction;
  options.progress = step_lines("evaluate", c.quiet);
  const model::Evaluation ev = model::evaluate(loaded.data, options);
  fmt::print("{}", model::leave_one_benchmark_out_report(ev, loaded.data, o.kind, loaded.device_key,
                                                         o.profile, c.request.fraction));
  if (c.out_dir.empty())
    return;
  const fs::path dir(c.out_dir);
  fs::create_directories(dir);
  std::vector<std::string> written;
  write_files(dir, model::leave_one_benchmark_out_files(ev, o.kind, c.request.fraction), written);
  print_written(dir, written);
}

/// Judges trained models (no training) on every input of the database, per kind of program;
/// with a baseline, applies the ship rule to the first model and fails (exit 1) when it is refused.
void judge_models(const EvaluateCommandOptions& c) {
  const DataOptions& o = c.data;
  const model::EvaluationRequest& request = c.request;
  perfdb::LoadedData loaded = load_data(o);
  fmt::print("{}", model::judge_header(o.db.empty() ? "the default database" : o.db,
                                       loaded.device_key, o.profile, loaded.data));
  const model::Judgement judgement = model::judge_models(
      request, loaded.data,
      fmt::format("`liftx db --db DB --refresh-features {}`, on a copy", o.profile),
      [](const model::JudgedModel& judged) {
        fmt::print("{}", model::judged_model_report(judged));
      });
  if (!c.out_dir.empty()) {
    const fs::path dir(c.out_dir);
    fs::create_directories(dir);
    write_text(dir / "kinds.csv", model::judged_kinds_csv(judgement.models));
    write_text(dir / "inputs.csv", model::judged_inputs_csv(judgement.models, loaded.data));
    fmt::print("\nwritten   {}, {}\n", (dir / "kinds.csv").string(), (dir / "inputs.csv").string());
  }
  if (!judgement.refusals)
    return;
  fmt::print("{}", model::ship_rule_report(request, *judgement.refusals));
  if (judgement.refusals->empty())
    return;
  std::fflush(stdout);
  throw RunFailed();
}

/// --out, --orders and --fraction: what every evaluation counts and writes.
void add_output_options(CLI::App* cmd, EvaluateCommandOptions& c) {
  cmd->add_option("--out", c.out_dir,
                  "write evaluation.csv, predictions.csv and SVG plots to this folder");
  cmd->add_option("--orders", c.request.random_orders, "random orders to average (default 100)")
      ->check(CLI::Range(100, 1000000));
  cmd->add_option("--fraction", c.request.fraction,
                  "runs to this fraction of each input's best are counted (default 0.9; with "
                  "--nested also what the inner folds choose by)")
      ->check(CLI::Range(0.5, 1.0));
}

void add_protocol_options(CLI::App* cmd, EvaluateCommandOptions& c) {
  model::EvaluationRequest& r = c.request;
  cmd->add_option("--protocol", r.protocol,
                  "program (leave one program out), size (train without the largest size, test "
                  "on it) or transfer (with --test-db); reports the setting chosen per fold");
  cmd->add_option("--hold-out", r.hold_out,
                  "program protocol: hold out only programs whose name starts with this");
  cmd->add_flag("--nested", r.nested,
                "choose the setting (transform, neighbours, depth, feature set) among candidates "
                "inside each training fold");
  cmd->add_option("--kinds", r.kinds, "--nested: model kinds to choose among, e.g. knn,boosted");
  cmd->add_option("--inner-folds", r.inner_folds,
                  "--nested: program groups of the inner evaluation (default 4)")
      ->check(CLI::Range(2, 100));
  cmd->add_option("--test-db", r.test_db, "transfer: the database of the test device");
  cmd->add_option("--test-device", r.test_device, "transfer: the test device's key");
  cmd->add_option("--add-db", r.add_db,
                  "transfer: also train on DB (its only device) or DB@DEVICE_KEY, e.g. the test "
                  "device's data at other inputs (repeatable; refused when it holds a test input)");
  cmd->add_flag("--quiet", c.quiet, "no progress lines (one per fold, on stderr)");
}

void add_ship_rule_options(CLI::App* cmd, model::EvaluationRequest& r) {
  cmd->add_option("--baseline", r.baseline,
                  "with --model: the ship rule, exit 1 when the first --model is worse than this "
                  "model on some kind")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tolerance", r.ship_rule.tolerance,
                  "ship rule: how much higher a kind's mean runs to 95% may be, relative "
                  "(default 0.1)")
      ->check(CLI::Range(0.0, 10.0));
}

} // namespace

void add_evaluate_command(CLI::App& app) {
  auto options = std::make_shared<EvaluateCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate", "Evaluate a kind of cost model on the database (leave one benchmark out, or "
                  "another protocol), or judge trained model files per kind of program");
  add_data_options(cmd, options->data, &options->request.models);
  add_output_options(cmd, *options);
  add_protocol_options(cmd, *options);
  add_ship_rule_options(cmd, options->request);
  cmd->callback([options] {
    switch (model::choose_evaluation(options->request)) {
    case model::EvaluationMode::judge_models:
      return judge_models(*options);
    case model::EvaluationMode::protocol:
      return run_protocol(*options);
    case model::EvaluationMode::leave_one_benchmark_out:
      return run_leave_one_benchmark_out(*options);
    }
  });
}

} // namespace liftx::cli
