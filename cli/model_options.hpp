#pragma once
// What the model commands (train, evaluate) share: the database and device to learn from, the
// model kind and its options, and the feature columns (the data itself: perfdb/loaded_data.hpp).
#include "model/evaluate.hpp"
#include "perfdb/loaded_data.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace liftx::cli {

struct DataOptions {
  std::string db;
  std::string device; ///< device key; empty = the only one in the database
  std::string profile = "cpu";
  std::string kind = "knn";
  std::string transform = "raw";
  int neighbours = 5;
  bool distance_weighted = false;
  model::TrainOptions boosting; ///< the boosted model's options (the rest set from the above)
  std::string objective = "regression";
  /// Feature set (perfdb::feature_set); empty = the kind's default: the Table-1 columns for
  /// kNN and the CART tree (the seed's model), every column for boosted trees.
  std::string features;

  model::TrainOptions train_options() const;
  /// The columns of `available` the feature set names.
  std::vector<std::string> columns(const std::vector<std::string>& available) const;
};

/// `model_files`, when given: `--model FILE` (repeatable) collects trained model files there
/// (`model_help` says what the command does with them; empty: judges them); the older `--model
/// KIND` (a model kind) still sets the kind.
void add_data_options(CLI::App* cmd, DataOptions& options,
                      std::vector<std::string>* model_files = nullptr,
                      const std::string& model_help = "");

/// `--launch-spread F`: the online strategies' batches spread over launch shapes among
/// near-ties (model::OnlineOptions::launch_spread; explore's and replay's). `spread` holds the
/// default when the option is not given.
void add_launch_spread_option(CLI::App* cmd, double& spread);

/// The data of the database, device and profile `o` names (perfdb::load_data).
inline perfdb::LoadedData load_data(const DataOptions& o) {
  return perfdb::load_data(o.db, o.device, o.profile);
}

/// UserError when the file cannot be written.
void write_text(const std::filesystem::path& path, const std::string& text);

} // namespace liftx::cli
