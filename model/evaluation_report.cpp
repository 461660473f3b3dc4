#include "model/evaluation_report.hpp"

#include "model/plot.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace liftx::model {

namespace {

/// 90 for 0.9, 97.5 for 0.975: how the tables name the fraction of the best a run must reach.
std::string percent(double fraction) {
  return fmt::format("{:g}", fraction * 100);
}

/// The header of a kinds.csv whose first column (`label_column`) names what was judged.
std::string kinds_csv_header(const std::string& label_column) {
  return label_column + ",kind,inputs,mean_runs_to_90,mean_runs_to_95,worst_runs_to_95,"
                        "first_pick_within_95\n";
}

/// The per-kind table as CSV rows, each starting with `label`.
std::string kinds_csv_rows(const std::vector<KindSummary>& kinds, const std::string& label) {
  std::string csv;
  for (const KindSummary& k : kinds)
    csv += fmt::format("\"{}\",{},{},{:.4f},{:.4f},{:.0f},{}\n", label, k.kind, k.inputs,
                       k.mean_runs_90, k.mean_runs_95, k.worst_runs_95, k.first_within_95);
  return csv;
}

/// The per-input table, its summary and the per-kind table, as both reports print them.
std::string evaluation_tables(const Evaluation& evaluation, const std::vector<KindSummary>& kinds,
                              double fraction) {
  return groups_table(evaluation.groups, fraction) + summary_text(evaluation, fraction) +
         "per kind of program (held-out inputs):\n" + kinds_table(kinds);
}

/// The setting that ranked a protocol's test inputs: the only candidate, else `chosen`.
std::string setting_label(const ProtocolRun& run, const std::string& chosen) {
  return run.candidates == 1 ? run.setting : chosen;
}

/// "fold F: chose S (inner mean runs to 90% R)" for each fold that chose among candidates.
std::string fold_choices_text(const std::vector<FoldChoice>& choices, double fraction) {
  std::string text;
  for (const FoldChoice& c : choices) {
    if (c.inner.empty())
      continue;
    double best = 0;
    for (const auto& [name, s] : c.inner)
      if (name == c.setting)
        best = s.mean_model_runs;
    text += fmt::format("fold {}: chose {} (inner mean runs to {}% {:.2f})\n", c.fold, c.setting,
                        percent(fraction), best);
  }
  return text;
}

/// Fig. 5: runs to the fraction per input, in model order and in random order (mean).
std::string runs_to_chart(const Evaluation& evaluation, const std::string& kind, double fraction) {
  std::vector<std::string> categories;
  Series model_runs{"model order", {}, "#c0392b", false};
  Series random_runs{"random (mean)", {}, "#7f8c8d", false};
  for (const GroupResult& g : evaluation.groups) {
    categories.push_back(g.program + " " + short_input(g.input));
    model_runs.y.push_back(double(g.model_runs));
    random_runs.y.push_back(g.random_runs);
  }
  return grouped_bar_chart_svg(
      fmt::format("Runs to reach {}% of the best ({} model, leave one benchmark out)",
                  percent(fraction), kind),
      "runs", categories, {model_runs, random_runs});
}

/// Best-so-far curves: one chart per benchmark, model and random order for each input.
std::vector<ReportFile> best_so_far_charts(const Evaluation& evaluation, const std::string& kind) {
  std::map<std::string, std::vector<Series>> per_program;
  for (const GroupResult& g : evaluation.groups) {
    auto& series = per_program[g.program];
    const std::string& colour = palette(series.size() / 2);
    series.push_back({"model " + short_input(g.input), g.model_curve, colour, false});
    series.push_back({"random " + short_input(g.input), g.random_curve, colour, true});
  }
  std::vector<ReportFile> files;
  for (const auto& [program, series] : per_program)
    files.push_back({"best-so-far-" + program + ".svg",
                     line_chart_svg(program + ": best normalised throughput so far (" + kind +
                                        " model, left out)",
                                    "runs", "best so far / best", series)});
  return files;
}

/// The pooled series of the scatter chart (a colour per benchmark, one for all synthetic
/// programs, drawn first: under the benchmarks' points) and each program's series per input.
struct ScatterSeries {
  std::vector<PointSeries> pooled;
  std::map<std::string, std::vector<PointSeries>> per_program;
};

ScatterSeries scatter_series(const Evaluation& evaluation) {
  ScatterSeries out;
  std::map<std::string, size_t> series_of; // program or "synth_*" -> index in pooled
  std::set<std::string> synthetic;
  size_t benchmarks = 0; // the other programs, each its own colour
  for (const GroupResult& g : evaluation.groups) {
    const std::string input = short_input(g.input);
    const bool synth = g.program.rfind("synth_", 0) == 0;
    if (synth)
      synthetic.insert(g.program);
    const std::string key = synth ? "synth_*" : g.program;
    auto [at, added] = series_of.emplace(key, out.pooled.size());
    if (added)
      out.pooled.push_back({key, synth ? "#c0c0c0" : palette(benchmarks++), {}});
    PointSeries& pooled = out.pooled[at->second];
    auto& inputs = out.per_program[g.program];
    inputs.push_back({fmt::format("{} (r {:.2f}, \u03c1 {:.2f})", input, g.pearson, g.spearman),
                      palette(inputs.size()),
                      {}});
    for (size_t i = 0; i < g.predicted.size() && i < g.measured.size(); ++i) {
      pooled.points.emplace_back(g.measured[i], g.predicted[i]);
      inputs.back().points.emplace_back(g.measured[i], g.predicted[i]);
    }
  }
  std::stable_partition(out.pooled.begin(), out.pooled.end(),
                        [](const PointSeries& s) { return s.label == "synth_*"; });
  for (PointSeries& s : out.pooled)
    s.label += s.label == "synth_*"
                   ? fmt::format(" ({} programs, {})", synthetic.size(), s.points.size())
                   : fmt::format(" ({})", s.points.size());
  return out;
}

/// The predicted and measured normalised throughput of every successful configuration.
std::string predictions_csv(const Evaluation& evaluation) {
  std::string csv = "program,input,predicted,measured\n";
  for (const GroupResult& g : evaluation.groups)
    for (size_t i = 0; i < g.predicted.size() && i < g.measured.size(); ++i)
      csv += fmt::format("{},\"{}\",{:.6g},{:.6g}\n", g.program, short_input(g.input),
                         g.predicted[i], g.measured[i]);
  return csv;
}

} // namespace

std::string short_input(const std::string& sizes_json) {
  try {
    auto j = nlohmann::json::parse(sizes_json);
    std::string out;
    for (auto it = j.begin(); it != j.end(); ++it)
      out += fmt::format("{}{}={}", out.empty() ? "" : ",", it.key(), it.value().dump());
    return out;
  } catch (const nlohmann::json::exception&) {
    return sizes_json;
  }
}

std::string groups_table(const std::vector<GroupResult>& groups, double fraction) {
  std::string table =
      fmt::format("| program | input | configs | failed | pearson | spearman | runs to {0}% model "
                  "| random | speedup | time to {0}% model (s) | random (s) | speedup |\n"
                  "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                  percent(fraction));
  for (const GroupResult& g : groups)
    table += fmt::format("| {} | {} | {} | {} | {:.3f} | {:.3f} | {} | {:.1f} | {:.2f} | {:.2f} | "
                         "{:.2f} | {:.2f} |\n",
                         g.program, short_input(g.input), g.configurations, g.failed, g.pearson,
                         g.spearman, g.model_runs, g.random_runs, g.run_speedup,
                         g.model_time_ms / 1000, g.random_time_ms / 1000, g.time_speedup);
  return table;
}

std::string groups_csv(const std::vector<GroupResult>& groups, double fraction) {
  std::string csv = fmt::format(
      "program,input,configurations,failed,pearson,spearman,model_runs_to_{0},random_runs_to_{0},"
      "run_speedup,model_time_to_{0}_ms,random_time_to_{0}_ms,time_speedup\n",
      percent(fraction));
  for (const GroupResult& g : groups)
    csv += fmt::format("{},\"{}\",{},{},{:.6f},{:.6f},{},{:.3f},{:.4f},{:.3f},{:.3f},{:.4f}\n",
                       g.program, short_input(g.input), g.configurations, g.failed, g.pearson,
                       g.spearman, g.model_runs, g.random_runs, g.run_speedup, g.model_time_ms,
                       g.random_time_ms, g.time_speedup);
  return csv;
}

std::string summary_text(const Evaluation& evaluation, double fraction) {
  const std::string p = percent(fraction);
  const EvaluationSummary summary = summarize(evaluation);
  std::string text =
      fmt::format("mean: spearman {:.3f}, runs to {}% model {:.1f} vs random {:.1f}\n",
                  summary.mean_spearman, p, summary.mean_model_runs, summary.mean_random_runs);
  if (summary.inputs > 0)
    text += fmt::format(
        "summary: runs to {0}% median {1:.1f}, worst {2:.0f}; mean pearson {3:.3f}; time "
        "to {0}% summed over inputs: model {4:.2f} s, random {5:.2f} s, {6:.0f}x less\n",
        p, summary.median_model_runs, summary.worst_model_runs, summary.mean_pearson,
        summary.model_time_ms / 1000, summary.random_time_ms / 1000, summary.time_reduction);
  return text;
}

std::string kinds_table(const std::vector<KindSummary>& kinds) {
  std::string table = "| kind | inputs | mean runs to 90% | mean runs to 95% | worst to 95% | "
                      "first pick within 95% |\n|---|---|---|---|---|---|\n";
  for (const KindSummary& k : kinds)
    table +=
        fmt::format("| {} | {} | {:.2f} | {:.2f} | {:.0f} | {} of {} |\n", k.kind, k.inputs,
                    k.mean_runs_90, k.mean_runs_95, k.worst_runs_95, k.first_within_95, k.inputs);
  return table;
}

std::vector<ReportFile> prediction_files(const Evaluation& evaluation, const std::string& setting,
                                         const std::string& protocol) {
  const ScatterSeries series = scatter_series(evaluation);
  const EvaluationSummary summary = summarize(evaluation);
  const std::string x_label = "measured normalised throughput";
  const std::string y_label = "predicted";
  std::vector<ReportFile> files;
  files.push_back({"predictions.csv", predictions_csv(evaluation)});
  files.push_back(
      {"scatter.svg",
       scatter_chart_svg(
           fmt::format("Predicted vs measured throughput ({}, {})", setting, protocol), x_label,
           y_label, series.pooled,
           {fmt::format("per input, mean over the {} inputs: Pearson {:.3f}, Spearman {:.3f}",
                        summary.inputs, summary.mean_pearson, summary.mean_spearman)})});
  for (const auto& [program, inputs] : series.per_program)
    files.push_back(
        {"scatter-" + program + ".svg",
         scatter_chart_svg(program + ": predicted vs measured (" + setting + ", " + protocol + ")",
                           x_label, y_label, inputs)});
  return files;
}

std::string leave_one_benchmark_out_report(const Evaluation& evaluation, const Dataset& data,
                                           const std::string& kind, const std::string& device_key,
                                           const std::string& profile, double fraction) {
  return fmt::format("leave-one-benchmark-out evaluation of the {} model: device {}, profile {}, "
                     "{} samples, {} features; random = mean of {} seeded orders\n",
                     kind, device_key, profile, data.samples.size(), data.feature_names.size(),
                     evaluation.random_orders) +
         evaluation_tables(evaluation, summarize_by_kind(evaluation.groups, data), fraction);
}

std::vector<ReportFile> leave_one_benchmark_out_files(const Evaluation& evaluation,
                                                      const std::string& kind, double fraction) {
  std::vector<ReportFile> files;
  files.push_back({"evaluation.csv", groups_csv(evaluation.groups, fraction)});
  std::string nmi_csv = "feature,nmi\n";
  for (const auto& [name, v] : evaluation.feature_nmi)
    nmi_csv += fmt::format("{},{:.6f}\n", name, v);
  files.push_back({"feature-nmi.csv", nmi_csv});
  files.push_back(
      {"runs-to-" + percent(fraction) + ".svg", runs_to_chart(evaluation, kind, fraction)});
  // Fig. 4: NMI of each feature with performance, largest first.
  auto nmi = evaluation.feature_nmi;
  std::stable_sort(nmi.begin(), nmi.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  files.push_back({"feature-nmi.svg",
                   bar_chart_svg("Normalised mutual information of each feature with performance",
                                 "NMI", nmi)});
  for (ReportFile& f : best_so_far_charts(evaluation, kind))
    files.push_back(std::move(f));
  for (ReportFile& f : prediction_files(evaluation, kind + " model", "leave one benchmark out"))
    files.push_back(std::move(f));
  return files;
}

std::string protocol_report(const ProtocolRun& run, const EvaluationRequest& request,
                            const std::string& device_key, const std::string& profile,
                            size_t train_samples) {
  return fmt::format(
             "evaluation: {}; device {}, profile {}, {} samples; {}; random = mean of {} "
             "seeded orders\n",
             run.described, device_key, profile, train_samples,
             run.candidates == 1
                 ? "setting " + run.setting
                 : fmt::format("setting chosen among {} inside each training fold", run.candidates),
             request.random_orders) +
         fold_choices_text(run.result.choices, request.fraction) +
         evaluation_tables(run.result.evaluation, run.kinds, request.fraction);
}

std::string protocol_kinds_csv(const ProtocolRun& run) {
  return kinds_csv_header("setting") +
         kinds_csv_rows(run.kinds, setting_label(run, "chosen per fold"));
}

std::string fold_choices_csv(const std::vector<FoldChoice>& choices) {
  std::string csv = "fold,candidate,chosen,inner_mean_runs,inner_worst_runs,inner_pearson\n";
  for (const FoldChoice& c : choices)
    for (const auto& [name, s] : c.inner)
      csv += fmt::format("\"{}\",\"{}\",{},{:.4f},{:.0f},{:.4f}\n", c.fold, name,
                         name == c.setting ? 1 : 0, s.mean_model_runs, s.worst_model_runs,
                         s.mean_pearson);
  return csv;
}

std::vector<ReportFile> protocol_prediction_files(const ProtocolRun& run) {
  return prediction_files(run.result.evaluation, setting_label(run, "setting chosen per fold"),
                          run.described);
}

std::string judge_header(const std::string& source, const std::string& device_key,
                         const std::string& profile, const Dataset& data) {
  std::set<std::string> inputs;
  for (const Sample& s : data.samples)
    inputs.insert(s.program + " " + s.input);
  return fmt::format("judged on {}: device {}, profile {}, {} samples of {} inputs; every "
                     "measured variant of an input ranked by the model, tried in that order\n",
                     source, device_key, profile, data.samples.size(), inputs.size());
}

std::string judged_model_report(const JudgedModel& judged) {
  const Model& model = judged.model;
  std::string routes;
  for (const auto& [kind, route] : model.routes())
    routes += fmt::format("{}{} programs by a {} model of {} samples", routes.empty() ? "; " : ", ",
                          kind, to_string(route->kind()), route->training_samples());
  return fmt::format("\nmodel {} ({}, trained on {} samples{})\n", judged.file,
                     to_string(model.kind()), model.training_samples(), routes) +
         kinds_table(judged.kinds);
}

std::string judged_kinds_csv(const std::vector<JudgedModel>& judged) {
  std::string csv = kinds_csv_header("model");
  for (const JudgedModel& j : judged)
    csv += kinds_csv_rows(j.kinds, j.file);
  return csv;
}

std::string judged_inputs_csv(const std::vector<JudgedModel>& judged, const Dataset& data) {
  std::string csv = "model,program,input,kind,configurations,failed,runs_to_90,runs_to_95,"
                    "first_pick_fraction,spearman\n";
  for (const JudgedModel& j : judged)
    for (const GroupResult& g : j.groups) {
      // How close the model's first pick comes to the input's best.
      const double first_pick = g.model_curve.empty() || g.model_curve.back() <= 0
                                    ? 0.0
                                    : g.model_curve.front() / g.model_curve.back();
      csv += fmt::format("\"{}\",{},\"{}\",{},{},{},{},{},{:.4f},{:.4f}\n", j.file, g.program,
                         short_input(g.input), kind_of(data, g.program), g.configurations, g.failed,
                         runs_to(g, 0.90), runs_to(g, 0.95), first_pick, g.spearman);
    }
  return csv;
}

std::string ship_rule_report(const EvaluationRequest& request,
                             const std::vector<std::string>& refusals) {
  if (refusals.empty())
    return fmt::format("\nship rule: {} is no worse than {} on any kind (tolerance {:g})\n",
                       request.models.front(), request.baseline, request.ship_rule.tolerance);
  std::string text = fmt::format("\nship rule: {} is refused, worse than {} on:\n",
                                 request.models.front(), request.baseline);
  for (const std::string& r : refusals)
    text += fmt::format("  {}\n", r);
  return text;
}

} // namespace liftx::model
