#pragma once
/// A replay's results as the CSV files `liftx replay --out DIR` writes.
#include "model/replay.hpp"

#include <string>

namespace liftx::model {

/// summary.csv: one row per strategy (its runs to 90% and 95% of the best, censored counts, the
/// largest size's and the automatic stop's figures), with the header line.
std::string replay_summary_csv(const ReplayResult& result);

/// groups.csv: one row per replayed input and strategy, with the header line.
std::string replay_groups_csv(const ReplayResult& result);

} // namespace liftx::model
