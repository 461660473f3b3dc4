#pragma once
/// The reports of an evaluation of cost models as text: the tables `liftx evaluate` prints, the
/// CSV files and SVG charts it writes. Each returns the text, so that the command and a batch
/// script embedding the library print or store the same report.
#include "model/evaluation_run.hpp"

#include <string>
#include <vector>

namespace liftx::model {

/// {"M":512,"N":512} -> M=512,N=512; other text as it is.
std::string short_input(const std::string& sizes_json);

/// A file of a report: its name in the output folder and its text.
struct ReportFile {
  std::string name;
  std::string text;
};

// Parts of every report; `fraction` names the runs-to columns (90 for 0.9).

/// The per-input table (Markdown).
std::string groups_table(const std::vector<GroupResult>& groups, double fraction);
/// The per-input table as CSV (evaluation.csv).
std::string groups_csv(const std::vector<GroupResult>& groups, double fraction);
/// The lines of means, medians and summed times under the per-input table.
std::string summary_text(const Evaluation& evaluation, double fraction);
/// The per-kind table (Markdown).
std::string kinds_table(const std::vector<KindSummary>& kinds);
/// predictions.csv and the predicted-vs-measured scatter charts: scatter.svg (every held-out
/// input, coloured by program; the synthetic programs synth_* share one colour) and
/// scatter-PROGRAM.svg (its inputs). `setting` and `protocol` name them in the titles.
std::vector<ReportFile> prediction_files(const Evaluation& evaluation, const std::string& setting,
                                         const std::string& protocol);

// Leave one benchmark out with one setting (`kind` as the user named the model kind).

/// What is printed: the evaluation, its per-input table, summary and per-kind table; `data` is
/// the evaluated dataset (its size, columns and program kinds).
std::string leave_one_benchmark_out_report(const Evaluation& evaluation, const Dataset& data,
                                           const std::string& kind, const std::string& device_key,
                                           const std::string& profile, double fraction);
/// What is written, in order: evaluation.csv, feature-nmi.csv, runs-to-PERCENT.svg (runs per
/// input, model vs random: Fig. 5), feature-nmi.svg (Fig. 4), best-so-far-PROGRAM.svg and the
/// prediction_files.
std::vector<ReportFile> leave_one_benchmark_out_files(const Evaluation& evaluation,
                                                      const std::string& kind, double fraction);

// The protocols.

/// What is printed: the protocol and data, the setting chosen per fold, the per-input table,
/// summary and per-kind table. `train_samples` counts the training data's rows.
std::string protocol_report(const ProtocolRun& run, const EvaluationRequest& request,
                            const std::string& device_key, const std::string& profile,
                            size_t train_samples);
/// kinds.csv: the per-kind table labelled by the setting.
std::string protocol_kinds_csv(const ProtocolRun& run);
/// choices.csv: how each candidate scored inside each fold, and which was chosen.
std::string fold_choices_csv(const std::vector<FoldChoice>& choices);
/// prediction_files of the run.
std::vector<ReportFile> protocol_prediction_files(const ProtocolRun& run);

// Judging trained models.

/// The line before the models: the data they are judged on (`source` names its database).
std::string judge_header(const std::string& source, const std::string& device_key,
                         const std::string& profile, const Dataset& data);
/// One model: what it is and its per-kind table.
std::string judged_model_report(const JudgedModel& judged);
/// kinds.csv: every model's per-kind table, labelled by its file.
std::string judged_kinds_csv(const std::vector<JudgedModel>& judged);
/// inputs.csv: every model's figures per input (`data`: the judged dataset, for the kinds).
std::string judged_inputs_csv(const std::vector<JudgedModel>& judged, const Dataset& data);
/// The ship rule's verdict on the first model against the baseline (`refusals`: ship_refusals).
std::string ship_rule_report(const EvaluationRequest& request,
                             const std::vector<std::string>& refusals);

} // namespace liftx::model
