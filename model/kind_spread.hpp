#pragma once
/// Spreading the first runs of an exploration over kinds of kernel. A cost model is most wrong
/// between kinds (a register window against a one-point-per-work-item kernel: on PoCL the shipped
/// CPU model rates the window 3x above the simple kernel that runs 5x faster), and within one
/// kind its errors are shared, so that its best few picks of one kind teach nothing about the
/// others. Running the best-predicted variant of each of the few best kinds first measures that
/// error before the budget is spent. (The online ranker's feature kernel carries one run of a
/// kind to that run's neighbours only; OnlineOptions::kind_correlation carries it to the whole
/// kind. Replayed, neither became a default: docs/results.md, "Hedging across kinds".)
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

namespace liftx::model {

/// `order` (candidate indices, best first) with the first candidate of each of its first `kinds`
/// distinct kinds moved to the front, in the order they appear; the rest keep their order.
/// `kind_of[i]` is candidate i's kind (any id: equal ids, one kind). With fewer distinct kinds,
/// every kind's first candidate comes first. Kinds in `tried` (already run) are not spread over.
std::vector<size_t> spread_over_kinds(const std::vector<size_t>& order,
                                      const std::vector<int64_t>& kind_of, size_t kinds,
                                      const std::set<int64_t>& tried = {});

} // namespace liftx::model
