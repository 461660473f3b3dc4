#pragma once
/// Static features of a generated kernel for one launch (seed 003, Table 1, and more), computed
/// from the generator's records (codegen::Kernel: accesses, barriers, loops with the loop kinds
/// the generator chose, user-function calls) and the symbolic index expressions, without
/// compiling or running anything. docs/features.md defines every feature and its unit.
///
/// Counting convention: a per-thread count is the total number of executions over ALL launched
/// work-items divided by the number of launched work-items (an exact average; work-items that
/// have nothing to do count as zero). Totals are exact integers (`RecordCounts`), so that they can
/// be compared exactly with an instrumented run (exec::run_instrumented).
#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"
#include "features/compiled_expr.hpp"
#include "ir/interp/interp.hpp"
#include "target/profile.hpp"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace liftx::features {

/// A concrete launch. `local[d] == 0` means "chosen by the OpenCL runtime"; features then assume
/// the work-group shape `assumed_local` (see Analysis::local).
using Launch = codegen::Launch;

struct Features {
  // Parallelism (work-items; dimensions beyond the kernel's are 1).
  std::array<int64_t, 3> global_size{1, 1, 1};
  std::array<int64_t, 3> local_size{1, 1, 1}; ///< as launched, or assumed when left to the runtime
  bool local_size_assumed = false;
  int64_t work_items = 1;
  int64_t work_groups = 1;
  // Memory.
  int64_t local_memory_bytes = 0;   ///< per work-group
  int64_t private_memory_bytes = 0; ///< private arrays per work-item
  double global_loads_per_thread = 0;
  double global_stores_per_thread = 0;
  double local_loads_per_thread = 0;
  double local_stores_per_thread = 0;
  double private_loads_per_thread = 0;
  double private_stores_per_thread = 0;
  double cache_lines_per_warp_access = 0; ///< average over global accesses, execution-weighted
  /// Runs of consecutive cache lines among those lines (a warp of an 8-wide work-group reading
  /// float4 touches 4 lines in 4 rows, a 32-wide one 4 lines in 1 row), execution-weighted.
  double line_segments_per_warp_access = 0;
  /// Elements per global access (1 scalar, 4 for float4 loads/stores), execution-weighted.
  double global_access_width = 1;
  double bank_conflict_degree = 1; ///< average over local accesses, execution-weighted
  int64_t bytes_moved = 0;         ///< inputs read once + output written once
  int64_t working_set_bytes = 0;   ///< every global buffer (inputs, output, temporaries)
  // Control flow and synchronisation.
  double barriers_per_thread = 0;
  double if_statements_per_thread = 0; ///< `if` statements reached (condition evaluated)
  double if_bodies_per_thread = 0;     ///< `if` bodies entered (condition true)
  double for_bodies_per_thread = 0;    ///< iterations of `for` loops
  // Computation.
  double arith_ops_per_thread = 0; ///< user-function operations (UserFunDef::op_counts)
  // Occupancy estimate.
  int64_t work_groups_per_cu = 0;
  double occupancy = 0; ///< resident work-items per compute unit / the CU's maximum, in [0, 1]
};

/// Exact totals over all launched work-items, one per record of the kernel (same order as
/// Kernel::accesses, ::barriers, ::loops, ::calls). A loop's total counts entries into its body:
/// iterations of a `for`, an `if` taken, a block run, each copy of an unrolled body.
struct RecordCounts {
  std::vector<int64_t> accesses;
  std::vector<int64_t> barriers;
  std::vector<int64_t> loops;
  std::vector<int64_t> calls;
};

/// The representative warp: the first `warp.size()` work-items (by local linear id) of the
/// representative work-group: in every dimension the middle one of the work-groups that have
/// work (group id busy_d / 2, busy_d = the groups that the dimension's mapGlb/mapWrg iterations
/// reach), so that clamped and padded indices take their interior branch.
struct RepresentativeWarp {
  std::array<int64_t, 3> group{0, 0, 0};
  /// Global ids (x, y, z) of the warp's work-items, in lane order.
  std::vector<std::array<int64_t, 3>> lanes;
  /// Work-item number as exec::DynamicCounts numbers them: gid0 + G0 * (gid1 + G1 * gid2).
  int64_t work_item(size_t lane, const std::array<int64_t, 3>& global) const;
};

struct AccessDetail {
  /// Element index per lane at the lane's first execution of the access (parallel loop variables
  /// at the lane's ids, sequential ones at 0); nullopt when the lane never executes it.
  std::vector<std::optional<int64_t>> first_index;
  /// Global accesses: distinct cache lines of the warp; local: bank-conflict degree; private: 0.
  /// nullopt when no lane of the representative warp executes the access.
  std::optional<double> value;
};

struct Analysis {
  Features features;
  RecordCounts counts;
  RepresentativeWarp warp;
  std::vector<AccessDetail> accesses; ///< per Kernel::accesses
};

/// Distinct cache lines a warp touches given its lanes' element indices (nullopt = inactive lane):
/// offsets from the first active lane's index, times the element size, floor-divided by the line
/// size (seed 003 §4.2.3); a vector access of `width` elements counts every line it spans. 0 when
/// no lane is active.
int64_t distinct_lines(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                       int64_t line_bytes, int64_t width = 1);
/// The runs of consecutive cache lines among distinct_lines(): 1 when a warp reads one row
/// segment, 4 when it reads the same lines spread over four rows of a grid.
int64_t line_segments(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                      int64_t line_bytes, int64_t width = 1);
/// Bank-conflict degree of a warp's local accesses: the lanes are taken in groups of `banks`
/// consecutive lanes (one request each); per group, the largest number of DISTINCT words mapped
/// to the same bank (words of 4 bytes, bank = word mod banks; the same word is a broadcast);
/// averaged over the groups with an active lane. For a uniform word stride s this is
/// gcd(s, banks), and 1 for s == 0 (seed 004 §5).
double bank_conflict_degree(const std::vector<std::optional<int64_t>>& indices,
                            int64_t element_bytes, int64_t banks);

/// Buffers of KernelModel analyses (value tables, the warp's lanes, per-record totals), kept from
/// one launch to the next so that ranking a whole space allocates nothing per launch. Not shared
/// between threads: one per thread. Made for one device profile, whose throughput (a few string
/// operations) it computes once.
class AnalysisScratch {
public:
  explicit AnalysisScratch(const target::DeviceProfile& device);
  ~AnalysisScratch();
  AnalysisScratch(AnalysisScratch&&) noexcept;
  AnalysisScratch& operator=(AnalysisScratch&&) noexcept;
  struct Buffers; ///< defined in features.cpp

private:
  friend class KernelModel;
  std::unique_ptr<Buffers> buffers_;
};

/// Everything that depends only on the kernel, precomputed once (compiled index expressions,
/// loop factors); analysing a launch then costs a few evaluations per record and warp lane.
class KernelModel {
public:
  explicit KernelModel(codegen::Kernel kernel);
  const codegen::Kernel& kernel() const { return kernel_; }

  /// UserError for a launch that does not fit the kernel (dims, local not dividing global, a
  /// work-group kernel without a local size, unbound sizes).
  Analysis analyze(const Launch& launch, const Sizes& sizes,
                   const target::DeviceProfile& device) const;
  Features compute(const Launch& launch, const Sizes& sizes,
                   const target::DeviceProfile& device) const {
    return analyze(launch, sizes, device).features;
  }
  /// The same features as compute() for the scratch's device, in its buffers (the ranking's inner
  /// loop).
  Features compute(const Launch& launch, const Sizes& sizes, AnalysisScratch& scratch) const;

  /// Global-memory traffic with the reuse inside a work-group (group_traffic()).
  struct GroupTraffic {
    double lines = 0;    ///< cache lines over the launch
    double per_byte = 0; ///< their bytes per byte the program must move (inputs + output once)
    /// Some access had more executions in the work-group than the budget: its lines were
    /// counted over the first iterations of each work-item's outermost `for` and scaled.
    bool extrapolated = false;
  };
  static constexpr int64_t kTrafficBudget = 1 << 15;
  /// Seed 004's traffic model at cache-line granularity, with the reuse a work-group gets: per
  /// global buffer, the distinct lines (of `line_bytes`, default the device's) that the
  /// representative work-group (features' choice) touches over its whole execution, every
  /// work-item and loop iteration, times the work-groups that have work. A line re-read by another
  /// warp of the group or in a later iteration counts once (the group's working set stays in its
  /// compute unit's cache or local memory while it runs, which per-warp line counts do not see);
  /// lines shared with neighbouring work-groups count for each. Each work-item's outermost `for`
  /// stops after about budget / work-group size executions (loops inside it run to the end) and
  /// the lines are scaled by the executions left out, which overcounts the lines consecutive
  /// iterations share. Enumerates executions (0.13-0.17 s per stored stencil variant on average),
  /// an analysis (bench traffic_prune), not the ranking's inner loop.
  GroupTraffic group_traffic(const Launch& launch, const Sizes& sizes,
                             const target::DeviceProfile& device, int64_t line_bytes = 0,
                             int64_t budget = kTrafficBudget) const;

  struct Loop; ///< a compiled LoopContext
  struct Chain;
  struct LaunchState;

private:
  /// Checks the launch and binds it and the sizes in `s`; true when the local size is the one
  /// features assume (left to the runtime).
  bool bind_launch(const Launch& launch, const Sizes& sizes, const target::DeviceProfile& device,
                   LaunchState& s) const;
  /// Per dimension, the work-groups that have work (the ids below it).
  std::array<int64_t, 3> busy_groups(LaunchState& s) const;
  /// The work-group whose accesses stand for all: the middle of the busy ones.
  std::array<int64_t, 3> representative_group(LaunchState& s) const;
  /// The features of a launch; `detail` (when given) also gets the counts, the warp and the
  /// accesses' lanes.
  Features features_of(const Launch& launch, const Sizes& sizes, AnalysisScratch::Buffers& b,
                       Analysis* detail) const;
  // The steps of features_of (warp.cpp).
  struct WarpTotals;
  /// Every record's executions over all work-items (into `counts`), and the features made of
  /// them: loads, stores, barriers, branches and arithmetic per work-item.
  void count_executions(LaunchState& s, RecordCounts& counts, AnalysisScratch::Buffers& b,
                        Features& f) const;
  /// Places the warp of `group` that stands for all (its lanes' ids and slot values) in `b`, and
  /// in `detail` when given; returns its lanes.
  size_t place_warp(const std::array<int64_t, 3>& group, AnalysisScratch::Buffers& b,
                    Analysis* detail) const;
  /// The warp's lanes enter access k's loop chain at once (once per chain and launch where
  /// chains share their variables), leaving the lanes inside it in b.active; false where that
  /// cannot be exact and the lanes go one by one.
  bool enter_chain_lanes(size_t k, const std::array<int64_t, 3>& group, AnalysisScratch::Buffers& b,
                         size_t lanes) const;
  /// An access of k's line class, counted already, whose lanes touch lines shifted by one amount
  /// from k's (then k touches as many lines and segments); -1 when none.
  int same_lines_as(size_t k, size_t lanes, const AnalysisScratch::Buffers& b) const;
  /// Access k on the warp: its lanes' indices, then its cache lines and segments (global) or its
  /// bank conflicts (local), weighted by its executions, into `totals`.
  void measure_access(size_t k, bool indices_batched, const std::array<int64_t, 3>& group,
                      size_t lanes, const RecordCounts& counts, AnalysisScratch::Buffers& b,
                      WarpTotals& totals, Analysis* detail) const;
  /// Fills access_chain_id_, distinct_access_chains_ and share_entered_chains_.
  void number_access_chains();
  /// Fills line_class_ and line_classes_.
  void number_line_classes();

  codegen::Kernel kernel_;
  SlotTable slots_;
  std::vector<std::pair<int, std::string>> size_slots_; ///< slot and name of each size variable
  int64_t private_bytes_ = 0;
  std::vector<std::shared_ptr<const Chain>> access_chains_, barrier_chains_, loop_chains_,
      call_chains_;
  std::vector<CompiledExpr> access_index_;
  std::vector<int> call_ops_;
  CompiledExpr local_bytes_;
  std::vector<std::pair<const codegen::KernelArg*, CompiledExpr>> buffer_elements_;
  /// Per access: its index and its loops' trips read only sizes and the variables of its own
  /// loops, so that its lanes may be evaluated in one batch (every access the generator makes).
  std::vector<bool> access_lanes_exact_;
  /// Per access, per slot: the same in every lane of the warp at the access (sizes, work-group
  /// and sequential loop variables), for CompiledExpr::evaluate_lanes.
  std::vector<std::vector<uint8_t>> access_uniform_slots_;
  /// Per access: the number of its loop chain among the accesses' distinct chains (the accesses
  /// of one loop nest share one), and how many there are. The warp's lanes enter a chain once
  /// per launch when `share_entered_chains_`: every loop variable is the same coordinate (level
  /// and dimension) in every chain, so entering one chain cannot change another's variables.
  std::vector<int> access_chain_id_;
  int distinct_access_chains_ = 0;
  bool share_entered_chains_ = false;
  /// With shared chains: the index expressions of the accesses evaluated in batch, compiled
  /// together so that what they share is evaluated once per launch; access -> its root (-1: not
  /// in the set); per slot, the same in every lane; per distinct chain, an access in it (-1: none
  /// evaluated in batch).
  CompiledExpr batched_indices_;
  std::vector<int> batched_root_;
  std::vector<uint8_t> batched_uniform_slots_;
  std::vector<int> chain_access_;
  /// Per global access evaluated in batch: its class of accesses with the same loop chain,
  /// element size and width (-1: none). Where two of a class have indices that differ by one
  /// amount in every active lane, the warp touches as many lines and segments at both, which are
  /// then counted once.
  std::vector<int> line_class_;
  int line_classes_ = 0;
  bool uses_work_groups_ = false;
  int size_only_trips_ = 0; ///< loop trips that use no loop variable (LaunchState::trips)
  /// Unique to each model built (a copy shares it, as it has the same slots): the scratch
  /// buffers remember whose lanes they hold.
  uint64_t id_ = 0;
};

/// The launch features assume when the local size is left to the runtime: per dimension, the
/// largest divisor of the global size that keeps the work-group within min(256, the device's
/// limit) (dimension 0 first, then 1, then 2).
std::array<int64_t, 3> assumed_local(const Launch& launch, const target::DeviceProfile& device);

Features compute(const codegen::Kernel& kernel, const Launch& launch, const Sizes& sizes,
                 const target::DeviceProfile& device);
/// Generates the kernel and chooses the launch as exec::run_program would
/// (codegen::prepare_launch).
Analysis analyze(const ir::Program& program, const Sizes& sizes,
                 const codegen::LaunchRequest& request, const target::DeviceProfile& device);
Features compute(const ir::Program& program, const Sizes& sizes,
                 const codegen::LaunchRequest& request, const target::DeviceProfile& device);

// ---- output ------------------------------------------------------------------------------------
struct Column {
  std::string name; ///< stable snake_case name; the unit is in the name or in `unit`
  std::string unit;
  std::string description;
  std::function<double(const Features&)> value;
  bool integer = false;
};
/// Every feature column, in output order (docs/features.md documents each).
const std::vector<Column>& columns();
/// CSV header: `program,` then the columns; a row per program.
std::string csv_header();
std::string csv_row(const std::string& program, const Features& features);
/// column name -> value, integer columns as integers (`liftx features --format json`).
nlohmann::json to_json(const Features& features);
/// column name -> value, every column as a double: the form the performance database has stored
/// since its first row (to_json's integers would change the stored text of the same features).
nlohmann::json to_stored_json(const Features& features);

} // namespace liftx::features
