#pragma once
/// The performance database as a model's dataset: what `liftx train` and `liftx evaluate` learn
/// from and judge on.
#include "explore/db.hpp"
#include "model/evaluate.hpp"

#include <string>

namespace liftx::explore {

/// The device key `wanted` names: itself, or the one key it is a substring of; the only device
/// of the database when `wanted` is empty. UserError listing the keys otherwise.
std::string resolve_device(const PerfDb& db, const std::string& wanted);

/// One sample per measurement of the device with features for `profile`: the feature columns
/// every row has (in features::columns() order), the time of a successful run, the cost of the
/// run, and the kernel's build time charged once per kernel and size. UserError when there is no
/// such measurement.
model::Dataset load_dataset(const PerfDb& db, const std::string& device_key,
                            const std::string& profile);

} // namespace liftx::explore
