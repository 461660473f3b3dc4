#pragma once
/// The ranks of an MPI job as one Measurer of collection jobs (explore/collect.hpp's CollectJob,
/// as collect's workers take them): the machinery under `liftx collect --mpi` and
/// `liftx explore --mpi`.
///
/// Rank 0 holds the Measurer: it hands the jobs of each measure() call out in batches, to itself
/// and to the other ranks, and hands each result to the caller's recording as it arrives (so the
/// caller alone writes the database). Every rank, rank 0 included, measures its batches in its own
/// worker children (LocalMeasurer) on its own device: the device `--device` names by P:D, or else
/// the local rank's (modulo their number) among the devices that match it. A rank that dies,
/// fails or stays silent past the silence limit is given up for lost and its unrecorded jobs go
/// to the other ranks. This header does not need MPI: without it, RankFarm's constructor refuses
/// with a UserError.
#include "explore/collect.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  std::string command = "collect"; ///< the liftx command, in messages
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

/// MPI for the life of the object (initialised once per process, finalised on destruction unless
/// a rank was lost: see finish()). `measuring` gives what each rank's LocalMeasurer needs: the
/// device spec, worker executable, timeout, builders and time limit (from the start).
class RankFarm {
public:
  RankFarm(const CollectOptions& measuring, const MpiOptions& mpi);
  /// Rank 0: tells the other ranks to stop first, if finish() was not called (an error).
  ~RankFarm();
  RankFarm(const RankFarm&) = delete;
  RankFarm& operator=(const RankFarm&) = delete;

  int rank() const;
  int ranks() const;
  /// A rank other than 0: says hello with its device, then measures the batches rank 0 sends
  /// until it says stop; this rank's report.
  RankReport serve();
  /// Rank 0: the Measurer whose slots are the ranks. devices() (call it first, once) opens rank
  /// 0's device and waits for the others' hellos: every rank's device, rank 0's first; measure()
  /// may be called any number of times, each returning once every job is recorded (or on the
  /// time limit). UserError from measure() when every rank has failed.
  Measurer& measurer();
  /// Rank 0: tells the other ranks to stop and lets the messages go; every rank's report.
  std::vector<RankReport> finish();

  struct State;

private:
  std::unique_ptr<State> state_;
};

/// The device spec ("P:D") a rank measures on: `spec` itself when it is a P:D spec; otherwise the
/// `local_rank`-th, modulo their number, of runtime::matching_devices(spec) (the rule
/// runtime::select_device opens the first of: type, vendor, or a part of the device or platform
/// name). UserError when none matches.
std::string device_for_local_rank(std::string_view spec, int local_rank);

} // namespace liftx::explore::mpi
