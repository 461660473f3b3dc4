#pragma once
/// A database's measurements of one device read as a model's dataset, with the file and device
/// they came from; several databases (`--add-db`, `--test-db`, `--prior-db`) combined on the
/// feature columns they share. What `liftx train`, `evaluate`, `replay` and `route` learn from.
#include "model/evaluate.hpp"
#include "model/evaluation_run.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace liftx::perfdb {

struct LoadedData {
  model::Dataset data;
  std::string device_key;
  std::filesystem::path db_path;
};

/// UserError when the database does not exist or lacks the device or profile.
LoadedData load_data(const std::string& db, const std::string& device, const std::string& profile);

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

/// The test device's data of a transfer, with the --add-db databases added to `loaded`; UserError
/// when they give the training data an input of the test data.
LoadedData load_transfer_data(LoadedData& loaded, const model::EvaluationRequest& request,
                              const std::string& profile);

} // namespace liftx::perfdb
