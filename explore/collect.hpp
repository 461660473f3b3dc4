#pragma once
/// Collection: measuring the variants of high-level stencils into the performance database (the
/// ground truth for training and evaluating cost models).
///
/// Two phases. First, for every target (a stencil and one size set) the variant space is streamed
/// (all of it, or a fixed-seed sample) and every variant's program, variant and configuration
/// rows and its features are stored, and then the target's plan (the list of its configurations):
/// a later run of the same target finds the plan and skips the enumeration. Phase 1 alone
/// (`plan_only`) needs no device, so a slow machine can plan what a GPU machine measures. Then
/// the configurations not yet measured on the device (with `resume`) are measured by a worker
/// child process (`liftx collect-worker`), which builds, runs, verifies against the high-level
/// stencil and times many variants in a row and streams one JSON line per result; each result is
/// committed as it arrives. A worker first opens the device and says so (opening has its own
/// bound, never charged to a variant); then each variant has the timeout. A worker that crashes or
/// hangs past the timeout is killed, its variant recorded as run_error / timeout, and a new worker
/// continues with the next variant. One collection writes a database at a time
/// (perfdb::CollectionLock, perfdb/lock.hpp); a lowered program (no variant space) is refused
/// before anything is written. Meanwhile `build_jobs` builder children compile the kernels and
/// compute the reference results ahead of the worker (into the disk caches), on the other CPU
/// cores.
#include "exec/run.hpp"
#include "ir/interp/interp.hpp"
#include "perfdb/db.hpp"
#include "space/variant_filter.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace liftx::explore {

/// A reference at 512^3 takes the interpreter minutes; half an hour leaves room for larger ones
/// and still ends a collection stuck on one.
inline constexpr std::chrono::milliseconds kDefaultReferenceTimeout{30 * 60 * 1000};

/// One stencil at one size set.
struct CollectTarget {
  std::string file;    ///< the high-level .lift file
  std::string program; ///< its definition to explore; empty = the main (last) one
  Sizes sizes;
  /// Where its variants are verified (exec::RunOptions::check_sizes): each kernel under its
  /// launch rule on inputs of these sizes, against the reference interpreted at them, then timed
  /// unchecked at `sizes`; empty = checked at `sizes`. For targets whose interpretation takes the
  /// interpreter far longer than measuring their variants (64 steps at 8192²: minutes).
  Sizes check_sizes;
};

struct CollectOptions {
  std::vector<CollectTarget> targets;
  std::filesystem::path db;   ///< the performance database
  std::string device = "cpu"; ///< select_device spec of the device measured on
  /// Variant space limits and features: "detect" (the measured device's own profile) or a named
  /// profile ("cpu", "nvidia", "amd").
  std::string profile = "detect";
  bool all = false; ///< every variant; otherwise a fixed-seed sample of `sample` per target
  int64_t sample = 100;
  uint64_t seed = 1;
  /// The sample spread evenly over the kinds of kernel (space::stratified_sample) instead of
  /// uniform over the space.
  bool stratified = false;
  /// Only the variants every filter keeps (`--where`), all of them or the sample drawn among
  /// them; part of the stored plan's name, so another selection is another plan.
  std::vector<space::VariantFilter> where;
  /// The space streams iterated 2D stencils by sub-groups too (space::SpaceOptions::warp_streams);
  /// part of the stored plan's name.
  bool warp_streams = false;
  /// Instead of a sample: the `sample` variants this cost model (a `liftx train` file for the
  /// collection's profile) ranks best among the whole space (or the --where ones). Measurements
  /// at the top of the space, where a ranking is used and where uniform samples hardly reach.
  std::filesystem::path ranked_by;
  bool resume = false; ///< skip configurations already measured on the device
  int repeat = exec::kDefaultRepeat;
  int warmup = exec::kDefaultWarmup;
  uint64_t input_seed = 1; ///< seed of the random inputs of every run
  /// Per variant, including its build (not the worker's opening of the device, nor the
  /// interpretation of its program's reference before the program's first job).
  std::chrono::milliseconds timeout{60000};
  /// Per target (a program at one size set and seed): drawing its inputs and interpreting its
  /// reference, before its first job. Past it the target's jobs are recorded as timeouts, each
  /// with the reason, and the collection goes on with the next target.
  std::chrono::milliseconds reference_timeout{kDefaultReferenceTimeout};
  /// The liftx executable that runs `collect-worker` (normally /proc/self/exe).
  std::string worker_executable;
  /// Only phase 1: plan and compute features, open no device (`profile` must be a named one).
  bool plan_only = false;
  /// Builder processes compiling kernels and interpreting references ahead of the measuring
  /// worker; 0 = the worker does it all itself.
  int build_jobs = 0;
  /// Stop measuring (cleanly) once this much time has passed since the start; 0 = no limit.
  /// What is left is measured by a later run with `resume`.
  std::chrono::seconds time_limit{0};
  /// Testing: after this many stored measurements, exit the process at once (std::_Exit), as an
  /// interrupted run would. 0 = never.
  int64_t stop_after = 0;
};

struct CollectProgress {
  int64_t done = 0;                        ///< configurations measured (or skipped) so far
  int64_t total = 0;                       ///< configurations to measure in this run
  int64_t skipped = 0;                     ///< already measured (resume)
  std::map<std::string, int64_t> statuses; ///< status name -> count, this run
  double elapsed_s = 0;
  double measuring_s = 0; ///< since the measuring phase began (for an ETA)
  std::string phase;      ///< "enumerating" or "measuring"
  std::string current;    ///< "jacobi2d5pt M=64 N=128 #17 workgroup2d_local"
};

struct CollectSummary {
  int64_t variants = 0;        ///< configurations planned over all targets
  int64_t targets_planned = 0; ///< targets enumerated in this run (the others had a plan)
  int64_t features_failed = 0; ///< variants whose features could not be computed
  int64_t measured = 0;
  int64_t skipped = 0;
  int64_t worker_restarts = 0;
  int64_t left = 0; ///< not measured because the time limit was reached
  std::map<std::string, int64_t> statuses;
  std::string device_key;
  std::string profile; ///< the features' profile name ("cpu", "nvidia", ...)
};

/// One configuration to measure: what a worker reads, and a label for progress.
struct CollectJob {
  int64_t configuration_id = 0;
  /// id (the configuration's), module (the lowered program's text), reference_file (the
  /// high-level .lift file) or reference_module (its text), reference_program (the definition),
  /// sizes, check_sizes (only when CollectTarget::check_sizes is set), launch (launch_json),
  /// repeat, warmup, seed (of the random inputs).
  nlohmann::json json;
  std::string label; ///< "jacobi2d5pt M=64 N=128 #17 workgroup2d_local"
};

/// Where a collection's jobs are measured. collect() plans, skips and records (the one path into
/// the database); a Measurer only produces results. LocalMeasurer measures in this process's
/// worker children; explore/mpi/ measures across the ranks of an MPI job.
class Measurer {
public:
  virtual ~Measurer() = default;
  /// The devices results come from, opened before planning: `detect` means the first one's
  /// profile, and `resume` skips what any of them has measured.
  virtual std::vector<target::DeviceProfile> devices() = 0;
  /// Called once per result, on the thread that called measure(): the job's index in `jobs`, the
  /// index in devices() of the device it was measured on, and the measurement.
  using Record = std::function<void(size_t job, size_t device, const perfdb::Measurement&)>;
  /// Measures `jobs`; returns when each has been recorded or once `out_of_time()` (what is not
  /// recorded is left for a later `resume`).
  virtual void measure(const std::vector<CollectJob>& jobs, const Record& record,
                       const std::function<bool()>& out_of_time) = 0;
  /// Worker children restarted after a crash or timeout, so far.
  virtual int64_t worker_restarts() const = 0;
};

/// Measures jobs in order in worker children (`collect-worker`) on options.device, with
/// options.build_jobs builders ahead of them: a crashed or hung worker costs its one job (recorded
/// as run_error / timeout) and a new worker goes on with the next.
class LocalMeasurer : public Measurer {
public:
  explicit LocalMeasurer(const CollectOptions& options);
  std::vector<target::DeviceProfile> devices() override;
  void measure(const std::vector<CollectJob>& jobs, const Record& record,
               const std::function<bool()>& out_of_time) override;
  int64_t worker_restarts() const override { return restarts_; }

private:
  std::string executable_;
  std::string device_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds reference_timeout_;
  int build_jobs_ = 0;
  int64_t restarts_ = 0;
};

/// Runs a collection; `progress` (if set) is called after each stored measurement and at phase
/// changes. The jobs are measured by `measurer` (default: a LocalMeasurer of `options`); each
/// job is recorded once, whatever the measurer sends. UserError for unreadable programs, unknown
/// devices or profiles.
CollectSummary collect(const CollectOptions& options,
                       const std::function<void(const CollectProgress&)>& progress = {},
                       Measurer* measurer = nullptr);

/// The worker's side: opens the device `device_spec` and writes {"ready":true}, then reads jobs
/// (one JSON object per line, as `collect` writes them) from `jobs`, skips the first `from`, runs
/// each and writes one JSON line per result to `out`, flushed at once; a target's inputs and
/// reference are computed between {"preparing":ID} and {"prepared":ID} lines (ID: the target's
/// first job), which the job's timeout does not count. For tests,
/// $LIFTX_TEST_WORKER_CRASH_AT, $LIFTX_TEST_WORKER_HANG_AT and $LIFTX_TEST_WORKER_KERNEL_FAILS_AT
/// name job numbers (comma-separated) at which the worker crashes (SIGSEGV), hangs (a kernel that
/// never ends) or reports a failed kernel; $LIFTX_TEST_WORKER_OPEN_DELAY_MS slows the opening and
/// $LIFTX_TEST_WORKER_SLOW_REFERENCE_MS each target's preparation.
void run_worker(std::istream& jobs, int64_t from, const std::string& device_spec,
                std::ostream& out);

/// A builder's side: for the jobs of `jobs` whose number is `shard` modulo `shards`, computes the
/// reference result of each target (the first job of each; at its check sizes when it has them)
/// and builds each kernel, into the disk caches the worker reads. Errors are left for the worker to
/// report.
void run_builder(std::istream& jobs, int shard, int shards, const std::string& device_spec);

/// The id of the newest measurement of the database at `db`, opened read-only (0 when there is
/// no file yet): the measurements a collection adds are those after it.
int64_t newest_measurement_id(const std::filesystem::path& db);

/// The measurements a collection added (those after `measured_before`) on its device
/// (summary.device_key, not empty), as CSV rows of PerfDb::export_csv.
void write_collected_csv(std::ostream& out, const std::filesystem::path& db,
                         const CollectSummary& summary, int64_t measured_before);

/// The summary of a collection with the measurements it added (as write_collected_csv, in
/// PerfDb::measurements_json's form), as one JSON document.
nlohmann::json collected_json(const std::filesystem::path& db, const CollectSummary& summary,
                              int64_t measured_before);

/// The profile name features are stored under for a device: "cpu" for CPU devices, "nvidia" /
/// "amd" for their GPUs, otherwise the device type's name.
std::string profile_name_for(const target::DeviceProfile& device);

} // namespace liftx::explore
