#include "perfdb/loaded_data.hpp"

#include "perfdb/dataset.hpp"
#include "perfdb/db.hpp"
#include "support/error.hpp"

#include <algorithm>
#include <iterator>

namespace liftx::perfdb {

namespace fs = std::filesystem;

LoadedData load_data(const std::string& db_name, const std::string& device,
                     const std::string& profile) {
  LoadedData out;
  out.db_path = db_name.empty() ? PerfDb::default_path() : fs::path(db_name);
  LIFTX_USER_CHECK(fs::exists(out.db_path), "database {} does not exist", out.db_path.string());
  PerfDb db(out.db_path, PerfDb::Access::read_only);
  out.device_key = resolve_device(db, device);
  out.data = load_dataset(db, out.device_key, profile);
  return out;
}

void keep_shared_columns(model::Dataset& a, model::Dataset& b) {
  std::vector<std::string> shared;
  for (const std::string& name : a.feature_names)
    if (std::find(b.feature_names.begin(), b.feature_names.end(), name) != b.feature_names.end())
      shared.push_back(name);
  a = model::select_columns(a, shared);
  b = model::select_columns(b, shared);
}

std::vector<AddedSource> add_databases(LoadedData& loaded, const std::vector<std::string>& specs,
                                       const std::string& profile) {
  std::vector<AddedSource> added;
  for (const std::string& spec : specs) {
    const size_t at = spec.rfind('@');
    const std::string file = at == std::string::npos ? spec : spec.substr(0, at);
    const std::string device = at == std::string::npos ? "" : spec.substr(at + 1);
    LoadedData more = load_data(file, device, profile);
    keep_shared_columns(loaded.data, more.data);
    if (more.device_key != loaded.device_key)
      for (model::Sample& sample : more.data.samples)
        sample.program += "@" + more.device_key;
    loaded.data.samples.insert(loaded.data.samples.end(),
                               std::make_move_iterator(more.data.samples.begin()),
                               std::make_move_iterator(more.data.samples.end()));
    loaded.data.program_kinds.insert(more.data.program_kinds.begin(),
                                     more.data.program_kinds.end());
    added.push_back({more.db_path, more.device_key});
  }
  return added;
}

LoadedData load_transfer_data(LoadedData& loaded, const model::EvaluationRequest& request,
                              const std::string& profile) {
  LoadedData test = load_data(request.test_db, request.test_device, profile);
  std::vector<std::string> added_device_keys;
  for (const AddedSource& added : add_databases(loaded, request.add_db, profile))
    added_device_keys.push_back(added.device_key);
  model::refuse_test_inputs_in_training(added_device_keys, loaded.data, test.data, test.device_key);
  keep_shared_columns(loaded.data, test.data);
  return test;
}

} // namespace liftx::perfdb
