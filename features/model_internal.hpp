#pragma once
/// What the files of KernelModel share (kernel_model.cpp, executions.cpp, lines.cpp, warp.cpp,
/// traffic.cpp): the compiled loops, the launch state, the scratch buffers and the small
/// arithmetic helpers. Internal to features/: nothing outside the folder includes it. The helpers
/// the per-lane loops call are inline here, so that splitting the files costs no call.
#include "features/features.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace liftx::features::detail {

enum class Level : uint8_t { Glb, Wrg, Lcl, Seq };

inline Level level_of(const std::string& primitive) {
  if (primitive.rfind("mapGlb", 0) == 0)
    return Level::Glb;
  if (primitive.rfind("mapWrg", 0) == 0)
    return Level::Wrg;
  if (primitive.rfind("mapLcl", 0) == 0)
    return Level::Lcl;
  return Level::Seq;
}

/// LoopRecord has no dimension field: parallel primitives end with it ("mapLcl1").
int dim_of(const std::string& primitive);

inline int64_t element_bytes(ir::ScalarKind kind) {
  return static_cast<int64_t>(codegen::scalar_bytes(kind));
}

// Out of line and cold, so that checked_mul inlines into the per-lane loops.
[[noreturn, gnu::cold, gnu::noinline]] void throw_count_overflow(int64_t a, int64_t b);

inline int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw_count_overflow(a, b);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  LIFTX_USER_CHECK(!__builtin_add_overflow(a, b, &r), "feature count overflows int64 ({} + {})", a,
                   b);
  return r;
}

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

} // namespace liftx::features::detail

namespace liftx::features {

/// Per-launch values shared by every record: coordinate sizes and the variable table.
struct KernelModel::LaunchState {
  std::array<int64_t, 3> global{1, 1, 1};
  std::array<int64_t, 3> local{1, 1, 1};
  std::array<int64_t, 3> groups{1, 1, 1};
  std::vector<int64_t> values; ///< by slot: sizes bound, loop variables set per lane
  /// By Loop::trip_id: the trips that depend on sizes only, evaluated once per launch when first
  /// needed (the warp's lanes would otherwise evaluate them per lane and per record).
  std::vector<std::optional<int64_t>> trips;
};

struct KernelModel::Loop {
  detail::Level level;
  int dim;
  codegen::cl::LoopKind kind;
  CompiledExpr trip;
  int var_slot; ///< -1 when the variable is a constant (unrolled copy)
  int trip_id;  ///< index into LaunchState::trips when the trip uses no loop variable, else -1
};

struct KernelModel::Chain {
  std::vector<Loop> loops;
  /// The last loop is the record's own loop (loop records): an unrolled one counts all its copies.
  bool last_is_own = false;
};

namespace detail {

using Chain = KernelModel::Chain;
using Loop = KernelModel::Loop;
using LaunchState = KernelModel::LaunchState;

/// A loop's trip in this launch (a size-only trip evaluated once per launch).
inline int64_t trip_of(const KernelModel::Loop& loop, KernelModel::LaunchState& s) {
  if (loop.trip_id < 0)
    return loop.trip.evaluate(s.values);
  std::optional<int64_t>& trip = s.trips[static_cast<size_t>(loop.trip_id)];
  if (!trip)
    trip = loop.trip.evaluate(s.values);
  return *trip;
}

/// Executions of a record's first `loops` loops summed over all launched work-items.
int64_t total_executions(const Chain& chain, size_t loops, LaunchState& s);

/// Sets the loop variables of `chain` for a lane at its first execution; false if the lane never
/// executes a statement inside the chain.
bool enter_first_iteration(const Chain& chain, const std::array<int64_t, 3>& group,
                           const std::array<int64_t, 3>& local,
                           const std::array<int64_t, 3>& global_id, LaunchState& s);

/// The distinct cache lines of one warp access, and the runs of consecutive lines they form.
struct LineCount {
  int64_t lines = 0;
  int64_t segments = 0;
};

/// distinct_lines and line_segments over lanes given as values and activity flags; `lines` is
/// reused scratch.
LineCount distinct_lines_of(const int64_t* index, const uint8_t* active, size_t lanes,
                            int64_t element_bytes, int64_t line_bytes, int64_t width,
                            std::vector<int64_t>& lines);

/// bank_conflict_degree over lanes given as values and activity flags; `words` and `banks_hit`
/// are reused scratch.
double bank_conflict_degree_of(const int64_t* index, const uint8_t* active, size_t lanes,
                               int64_t element_bytes, int64_t banks, std::vector<int64_t>& words,
                               std::vector<int64_t>& banks_hit);

} // namespace detail

/// Accesses of a line class that a later access is compared with (KernelModel::line_class_).
constexpr int kShiftCandidates = 4;

struct AnalysisScratch::Buffers {
  explicit Buffers(const target::DeviceProfile& profile)
      : device(profile),
        resident_work_items_per_cu(profile.throughput().resident_work_items_per_cu) {}
  target::DeviceProfile device;
  int64_t resident_work_items_per_cu;
  KernelModel::LaunchState state;
  RecordCounts counts; ///< when no Analysis records them
  /// The warp's lanes: [dimension][lane] global and local ids.
  std::array<std::vector<int64_t>, 3> lane_global, lane_local;
  /// Slot-major values of every lane: slot s of lane l at [s * lanes + l].
  std::vector<int64_t> lane_values;
  /// What lane_values were last filled from: the model (KernelModel::id_, 0 none), the lanes
  /// and the slot values.
  uint64_t lane_values_model = 0;
  size_t lane_values_lanes = 0;
  std::vector<int64_t> lane_values_base;
  std::vector<uint8_t> active; ///< per lane: executes the access
  /// Per distinct access chain (KernelModel::access_chain_id_) in this launch: 0 not entered
  /// yet, 1 entered in batch (its lanes' activity in chain_active), 2 the batch failed.
  std::vector<uint8_t> chain_state, chain_active;
  /// KernelModel::batched_indices_'s lanes (root r's at batched_rows[r]), in `batched`.
  std::vector<const int64_t*> batched_rows;
  LaneScratch batched, eval;
  std::vector<int64_t> chain_totals; ///< per distinct access chain, its executions (-1: not yet)
  std::vector<int64_t> index, trip, lines, words, banks_hit;
  /// Per line class (KernelModel::line_class_), in this launch: up to kShiftCandidates accesses
  /// whose lines were counted from the batched indices, and their counts.
  std::vector<std::array<int, kShiftCandidates>> counted;
  std::vector<int> counted_size;
  std::vector<detail::LineCount> line_counts; ///< per access
};

} // namespace liftx::features
