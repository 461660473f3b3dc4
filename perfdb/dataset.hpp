#pragma once
/// The performance database as a model's dataset: what `liftx train` and `liftx evaluate` learn
/// from and judge on.
#include "model/evaluate.hpp"
#include "model/protocol.hpp"
#include "perfdb/db.hpp"

#include <string>

namespace liftx::perfdb {

/// The device key `wanted` names: itself, or the one key it is a substring of; the only device
/// of the database when `wanted` is empty. UserError listing the keys otherwise.
std::string resolve_device(const PerfDb& db, const std::string& wanted);

/// One sample per measurement of the device with features for `profile`: the feature columns
/// every row has (in features::columns() order), the time of a successful run, the cost of the
/// run, and the kernel's build time charged once per kernel and size. UserError when there is no
/// such measurement.
model::Dataset load_dataset(const PerfDb& db, const std::string& device_key,
                            const std::string& profile);

/// The feature columns of a named set, those of `available` only, in `available`'s order:
/// - `table1`: the static features as computed (features::columns());
/// - `derived`: the derived columns (features/derived.hpp);
/// - `size_free`: the derived columns and the Table-1 columns that do not grow with the input
///   (work-group shape, memory per work-group and work-item, cache lines per warp access, vector
///   width, bank conflicts, occupancy);
/// - `all`: every available column.
/// UserError for another name.
std::vector<std::string> feature_set(const std::string& name,
                                     const std::vector<std::string>& available);

/// The settings `liftx evaluate --nested` chooses among, for the model kinds `kinds`: for kNN the
/// transforms log and log_relative, k 5 and 10, uniform and 1/distance weights, on the Table-1
/// columns (the seed's model and its variations); for boosted trees regression on the size-free
/// and on all columns, trees of depth 4 and 6; for the CART tree depths 6 and 10.
std::vector<model::Setting> candidate_settings(const std::vector<model::Kind>& kinds,
                                               const std::vector<std::string>& available);

} // namespace liftx::perfdb
