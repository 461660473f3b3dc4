#pragma once
/// Collection across the ranks of an MPI job (`liftx collect --mpi` under mpirun or srun).
///
/// Rank 0 plans (or reads the stored plan: `resume`), hands out batches of jobs and alone writes
/// the database, recording each result as it arrives through collect()'s one recording path.
/// Every rank, rank 0 included, measures its batches in its own worker children (LocalMeasurer)
/// on its own device: the device `--device` names by P:D, or else the local rank's (modulo their
/// number) among the devices that match it. A rank that dies or stays silent past the silence
/// limit is given up for lost and its unrecorded jobs go to the other ranks; what was recorded
/// stays recorded, so a job killed as a whole (Open MPI's default when a rank dies) resumes with
/// `resume` and measures nothing twice. This header does not need MPI: without it, collect()
/// refuses with a UserError.
#include "explore/collect.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace liftx::explore::mpi {

/// Whether this liftx was built with MPI.
bool available();

struct MpiOptions {
  int batch = 16; ///< jobs handed to a rank at a time (a dead rank loses at most these)
  /// A rank (or rank 0, for the others) not heard from for this long is given up for lost. Every
  /// rank says it is alive once a second while it measures.
  std::chrono::seconds silence_limit{30};
  /// Testing: rank `die_rank` (> 0) kills itself with SIGKILL after sending `die_after` results,
  /// as a failed node would. -1: never.
  int die_rank = -1;
  int64_t die_after = 0;
};

/// What one rank did.
struct RankReport {
  int rank = 0;
  std::string host;
  std::string device_key; ///< empty when its device could not be opened
  int64_t measured = 0;   ///< results recorded from it (rank 0's view)
  bool lost = false;
  std::string problem; ///< why it was lost or had no device
};

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

/// The device spec ("P:D") a rank measures on: `spec` itself when it is a P:D spec; otherwise the
/// `local_rank`-th, modulo their number, of runtime::matching_devices(spec) (the rule
/// runtime::select_device opens the first of: type, vendor, or a part of the device or platform
/// name).
/// UserError when none matches.
std::string device_for_local_rank(std::string_view spec, int local_rank);

} // namespace liftx::explore::mpi
