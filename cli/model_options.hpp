#pragma once
// What the model commands (train, evaluate) share: the database and device to learn from, the
// model kind and its options, and the feature columns.
#include "model/evaluate.hpp"

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

/// `model_files`, when given: `--model FILE` (repeatable) collects trained model files there; the
/// older `--model KIND` (a model kind) still sets the kind.
void add_data_options(CLI::App* cmd, DataOptions& options,
                      std::vector<std::string>* model_files = nullptr);

struct LoadedData {
  model::Dataset data;
  std::string device_key;
  std::filesystem::path db_path;
};

/// UserError when the database does not exist or lacks the device or profile.
LoadedData load_data(const std::string& db, const std::string& device, const std::string& profile);
inline LoadedData load_data(const DataOptions& o) {
  return load_data(o.db, o.device, o.profile);
}

/// Both datasets on the feature columns they share (two databases, e.g. two devices', may have
/// been collected by liftx versions with other columns), in `a`'s order.
void keep_shared_columns(model::Dataset& a, model::Dataset& b);

/// One database `add_databases` added: its file and the device whose rows it gave.
struct AddedSource {
  std::filesystem::path db_path;
  std::string device_key;
};

/// Adds the rows of other databases to `loaded` (`--add-db`): each spec is DB (its only device)
/// or DB@DEVICE_KEY, read with `profile`'s features. Every dataset keeps the columns they all
/// share. Rows of a device other than `loaded`'s get "@DEVICE_KEY" after their program name, so
/// that each device's inputs are normalised among themselves (model::stencil_of strips it).
std::vector<AddedSource> add_databases(LoadedData& loaded, const std::vector<std::string>& specs,
                                       const std::string& profile);

/// UserError when the file cannot be written.
void write_text(const std::filesystem::path& path, const std::string& text);

} // namespace liftx::cli
