#pragma once
/// Collection across the ranks of an MPI job (`liftx collect --mpi` under mpirun or srun), on a
/// RankFarm (rank_farm.hpp): rank 0 plans (or reads the stored plan: `resume`) and alone writes
/// the database, recording each result as it arrives through collect()'s one recording path; the
/// ranks measure. What was recorded stays recorded, so a job killed as a whole (Open MPI's default
/// when a rank dies) resumes with `resume` and measures nothing twice.
#include "explore/collect.hpp"
#include "explore/mpi/rank_farm.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace liftx::explore::mpi {

struct MpiCollectResult {
  int rank = 0;
  int ranks = 1;
  std::optional<CollectSummary> summary; ///< rank 0 only
  std::vector<RankReport> rank_reports;  ///< rank 0: every rank; others: their own
};

/// Runs `options` as a collection across MPI_COMM_WORLD: initialises and finalises MPI (once per
/// process). `progress` is called on rank 0 only. UserError when this liftx has no MPI, when
/// rank 0 cannot collect (bad input, a database being written, no rank with a device), or on a
/// rank whose device cannot be opened; rank 0 tells the other ranks to stop first.
MpiCollectResult collect(const CollectOptions& options, const MpiOptions& mpi,
                         const std::function<void(const CollectProgress&)>& progress = {});

} // namespace liftx::explore::mpi
