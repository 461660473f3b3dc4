#include "features/features.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace liftx::features {

namespace {

enum class Level : uint8_t { Glb, Wrg, Lcl, Seq };

Level level_of(const std::string& primitive) {
  if (primitive.rfind("mapGlb", 0) == 0)
    return Level::Glb;
  if (primitive.rfind("mapWrg", 0) == 0)
    return Level::Wrg;
  if (primitive.rfind("mapLcl", 0) == 0)
    return Level::Lcl;
  return Level::Seq;
}

/// LoopRecord has no dimension field: parallel primitives end with it ("mapLcl1").
int dim_of(const std::string& primitive) {
  if (level_of(primitive) == Level::Seq || primitive.empty())
    return 0;
  char last = primitive.back();
  if (last < '0' || last > '2')
    throw InternalError(fmt::format("parallel loop '{}' has no dimension", primitive), __FILE__,
                        __LINE__);
  return last - '0';
}

int64_t element_bytes(ir::ScalarKind kind) {
  return static_cast<int64_t>(codegen::scalar_bytes(kind));
}

// Out of line and cold, so that checked_mul inlines into the per-lane loops.
[[noreturn, gnu::cold, gnu::noinline]] void throw_count_overflow(int64_t a, int64_t b) {
  throw UserError(fmt::format("feature count overflows int64 ({} x {})", a, b));
}

inline int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw_count_overflow(a, b);
  return r;
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw UserError(fmt::format("feature count overflows int64 ({} + {})", a, b));
  return r;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

} // namespace

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
  Level level;
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

namespace {

using Chain = KernelModel::Chain;
using Loop = KernelModel::Loop;
using LaunchState = KernelModel::LaunchState;

int64_t trip_of(const Loop& loop, LaunchState& s) {
  if (loop.trip_id < 0)
    return loop.trip.evaluate(s.values);
  std::optional<int64_t>& trip = s.trips[static_cast<size_t>(loop.trip_id)];
  if (!trip)
    trip = loop.trip.evaluate(s.values);
  return *trip;
}

/// Workers sharing a parallel loop's iterations (threads or work-groups).
int64_t workers(const Loop& loop, const LaunchState& s) {
  switch (loop.level) {
  case Level::Glb:
    return s.global[static_cast<size_t>(loop.dim)];
  case Level::Wrg:
    return s.groups[static_cast<size_t>(loop.dim)];
  case Level::Lcl:
    return s.local[static_cast<size_t>(loop.dim)];
  case Level::Seq:
    return 1;
  }
  return 1;
}

/// Iterations of `loop` summed over its workers (for a sequential loop: per execution).
int64_t summed_iterations(const Loop& loop, int64_t trip, const LaunchState& s, bool own) {
  using codegen::cl::LoopKind;
  if (trip <= 0 || loop.kind == LoopKind::None)
    return 0;
  if (loop.level == Level::Seq) {
    switch (loop.kind) {
    case LoopKind::For:
      return trip;
    case LoopKind::Unrolled:
      return own ? trip : 1; // each copy is a record of its own
    case LoopKind::Block:
      return 1;
    case LoopKind::If:
      return std::min<int64_t>(trip, 1);
    case LoopKind::None:
      return 0;
    }
  }
  int64_t p = workers(loop, s);
  switch (loop.kind) {
  case LoopKind::Block:
    return p; // every worker runs the body once
  case LoopKind::If:
    return std::min(trip, p); // workers with an id below the trip
  case LoopKind::For:
    return trip; // the iterations are dealt out once each
  case LoopKind::Unrolled:
    return own ? trip : 1;
  case LoopKind::None:
    return 0;
  }
  return 0;
}

/// Executions of a record summed over all launched work-items. Work-items are the tuples
/// (group_d, local_d), d = 0..2; a parallel loop sums over the coordinates it depends on (mapGlb
/// over both of its dimension, mapWrg over the group, mapLcl over the local id); the generator
/// refuses nesting that would make two loops share a coordinate, so the sum factorises.
int64_t total_executions(const Chain& chain, size_t loops, LaunchState& s) {
  std::array<bool, 3> group_used{false, false, false};
  std::array<bool, 3> local_used{false, false, false};
  int64_t total = 1;
  for (size_t k = 0; k < loops; ++k) {
    const Loop& loop = chain.loops[k];
    int64_t trip = trip_of(loop, s);
    bool own = chain.last_is_own && k + 1 == chain.loops.size();
    total = checked_mul(total, summed_iterations(loop, trip, s, own));
    auto d = static_cast<size_t>(loop.dim);
    if (loop.level == Level::Glb || loop.level == Level::Wrg) {
      if (group_used[d])
        throw InternalError("two loops over one group id", __FILE__, __LINE__);
      group_used[d] = true;
    }
    if (loop.level == Level::Glb || loop.level == Level::Lcl) {
      if (local_used[d])
        throw InternalError("two loops over one local id", __FILE__, __LINE__);
      local_used[d] = true;
    }
  }
  for (size_t d = 0; d < 3; ++d) {
    if (!group_used[d])
      total = checked_mul(total, s.groups[d]);
    if (!local_used[d])
      total = checked_mul(total, s.local[d]);
  }
  return total;
}

/// Numbers the loop trips that use no loop variable (the same trip in many records: one id).
struct TripIds {
  std::vector<bool> loop_var; ///< by slot
  std::unordered_map<arith::Expr, int> ids;

  int of(const CompiledExpr& trip) {
    if (trip.uses_any(loop_var))
      return -1;
    return ids.emplace(trip.source(), static_cast<int>(ids.size())).first->second;
  }
};

std::shared_ptr<const Chain> compile_chain(const std::vector<codegen::LoopContext>& contexts,
                                           const codegen::LoopRecord* own, SlotTable& slots,
                                           TripIds& trips) {
  auto chain = std::make_shared<Chain>();
  for (const codegen::LoopContext& c : contexts) {
    Level level = level_of(c.primitive);
    int var_slot = c.var.node().kind == arith::Kind::Var ? slots.slot(c.var) : -1;
    CompiledExpr trip(c.trip, slots);
    const int trip_id = trips.of(trip);
    chain->loops.push_back({level, c.dim, c.kind, std::move(trip), var_slot, trip_id});
  }
  if (own) {
    CompiledExpr trip(own->trip_count, slots);
    const int trip_id = trips.of(trip);
    chain->loops.push_back({level_of(own->primitive), dim_of(own->primitive), own->kind,
                            std::move(trip), -1, trip_id});
    chain->last_is_own = true;
  }
  return chain;
}

/// Sets the loop variables of `chain` for a lane at its first execution; false if the lane never
/// executes a statement inside the chain.
bool enter_first_iteration(const Chain& chain, const std::array<int64_t, 3>& group,
                           const std::array<int64_t, 3>& local,
                           const std::array<int64_t, 3>& global_id, LaunchState& s) {
  using codegen::cl::LoopKind;
  for (const Loop& loop : chain.loops) {
    auto d = static_cast<size_t>(loop.dim);
    int64_t id = 0;
    switch (loop.level) {
    case Level::Glb:
      id = global_id[d];
      break;
    case Level::Wrg:
      id = group[d];
      break;
    case Level::Lcl:
      id = local[d];
      break;
    case Level::Seq:
      id = 0;
      break;
    }
    if (loop.var_slot >= 0)
      s.values[static_cast<size_t>(loop.var_slot)] = id;
    if (loop.kind == LoopKind::None)
      return false;
    if (loop.kind == LoopKind::Block)
      continue;
    if (loop.kind == LoopKind::Unrolled && loop.var_slot < 0)
      continue;
    if (id >= trip_of(loop, s))
      return false;
  }
  return true;
}

} // namespace

int64_t RepresentativeWarp::work_item(size_t lane, const std::array<int64_t, 3>& global) const {
  const auto& g = lanes.at(lane);
  return g[0] + global[0] * (g[1] + global[1] * g[2]);
}

namespace {

/// The distinct cache lines of one warp access, and the runs of consecutive lines they form.
struct LineCount {
  int64_t lines = 0;
  int64_t segments = 0;
};

/// distinct_lines and line_segments over lanes given as values and activity flags; `lines` is
/// reused scratch.
LineCount distinct_lines_of(const int64_t* index, const uint8_t* active, size_t lanes,
                            int64_t element_bytes, int64_t line_bytes, int64_t width,
                            std::vector<int64_t>& lines) {
  lines.clear();
  std::optional<int64_t> first;
  bool sorted = true; // a warp usually touches its lines in order: no sort needed then
  // Lines are powers of two: floor division is then an arithmetic shift, not two hardware
  // divisions per lane.
  const bool power_of_two = line_bytes > 0 && (line_bytes & (line_bytes - 1)) == 0;
  const int shift = power_of_two ? __builtin_ctzll(static_cast<uint64_t>(line_bytes)) : 0;
  auto line_of = [&](int64_t byte) {
    return power_of_two ? byte >> shift : floor_div(byte, line_bytes);
  };
  // A warp usually touches its lines in order, each lane's lines from where the previous lane's
  // end: then they are counted as they come, without a list. Out of order, the list is sorted.
  {
    LineCount count;
    int64_t previous_last = 0;
    bool in_order = true, any = false;
    const int64_t span = checked_mul(width, element_bytes) - 1;
    for (size_t l = 0; l < lanes && in_order; ++l) {
      if (!active[l])
        continue;
      if (!first)
        first = index[l];
      const int64_t begin = checked_mul(index[l] - *first, element_bytes);
      const int64_t first_line = line_of(begin), last_line = line_of(begin + span);
      if (any && first_line < previous_last) {
        in_order = false;
        break;
      }
      count.lines += last_line - first_line + 1 - (any && first_line == previous_last ? 1 : 0);
      count.segments += !any || first_line > previous_last + 1;
      previous_last = last_line;
      any = true;
    }
    if (in_order)
      return count;
  }
  for (size_t l = 0; l < lanes; ++l) {
    if (!active[l])
      continue;
    if (!first)
      first = index[l];
    // A vector access spans `width` elements: every line from its first to its last byte.
    const int64_t begin = checked_mul(index[l] - *first, element_bytes);
    const int64_t end = begin + checked_mul(width, element_bytes) - 1;
    for (int64_t line = line_of(begin); line <= line_of(end); ++line) {
      sorted = sorted && (lines.empty() || lines.back() <= line);
      lines.push_back(line);
    }
  }
  if (!sorted)
    std::sort(lines.begin(), lines.end());
  LineCount count;
  for (size_t k = 0; k < lines.size(); ++k) {
    count.lines += k == 0 || lines[k] != lines[k - 1];
    count.segments += k == 0 || lines[k] > lines[k - 1] + 1;
  }
  return count;
}

/// bank_conflict_degree over lanes given as values and activity flags; `words` and `banks_hit`
/// are reused scratch.
double bank_conflict_degree_of(const int64_t* index, const uint8_t* active, size_t lanes,
                               int64_t element_bytes, int64_t banks, std::vector<int64_t>& words,
                               std::vector<int64_t>& banks_hit) {
  if (banks <= 0)
    banks = 32;
  double sum = 0;
  int groups = 0;
  for (size_t start = 0; start < lanes; start += static_cast<size_t>(banks)) {
    words.clear();
    size_t stop = std::min(lanes, start + static_cast<size_t>(banks));
    for (size_t k = start; k < stop; ++k)
      if (active[k])
        words.push_back(floor_div(checked_mul(index[k], element_bytes), 4));
    if (words.empty())
      continue;
    if (!std::is_sorted(words.begin(), words.end()))
      std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    int worst = 1;
    // Distinct words spanning fewer than `banks` words fall in distinct banks: the usual case
    // needs no count per bank.
    int64_t span = 0;
    if (__builtin_sub_overflow(words.back(), words.front(), &span) || span >= banks) {
      banks_hit.clear();
      for (int64_t w : words)
        banks_hit.push_back(((w % banks) + banks) % banks);
      std::sort(banks_hit.begin(), banks_hit.end());
      int run = 0;
      for (size_t k = 0; k < banks_hit.size(); ++k) {
        run = k > 0 && banks_hit[k] == banks_hit[k - 1] ? run + 1 : 1;
        worst = std::max(worst, run);
      }
    }
    sum += worst;
    ++groups;
  }
  return groups == 0 ? 0.0 : sum / groups;
}

/// The lanes of `indices` as values and activity flags.
void split_lanes(const std::vector<std::optional<int64_t>>& indices, std::vector<int64_t>& index,
                 std::vector<uint8_t>& active) {
  index.assign(indices.size(), 0);
  active.assign(indices.size(), 0);
  for (size_t l = 0; l < indices.size(); ++l)
    if (indices[l]) {
      index[l] = *indices[l];
      active[l] = 1;
    }
}

/// distinct_lines_of over lanes given as optional indices (nullopt = inactive).
LineCount count_lines(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                      int64_t line_bytes, int64_t width) {
  std::vector<int64_t> index, lines;
  std::vector<uint8_t> active;
  split_lanes(indices, index, active);
  return distinct_lines_of(index.data(), active.data(), index.size(), element_bytes, line_bytes,
                           width, lines);
}

} // namespace

int64_t distinct_lines(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                       int64_t line_bytes, int64_t width) {
  return count_lines(indices, element_bytes, line_bytes, width).lines;
}

int64_t line_segments(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                      int64_t line_bytes, int64_t width) {
  return count_lines(indices, element_bytes, line_bytes, width).segments;
}

double bank_conflict_degree(const std::vector<std::optional<int64_t>>& indices,
                            int64_t element_bytes, int64_t banks) {
  std::vector<int64_t> index, words, banks_hit;
  std::vector<uint8_t> active;
  split_lanes(indices, index, active);
  return bank_conflict_degree_of(index.data(), active.data(), index.size(), element_bytes, banks,
                                 words, banks_hit);
}

KernelModel::KernelModel(codegen::Kernel kernel) : kernel_(std::move(kernel)) {
  static std::atomic<uint64_t> models_built{0};
  id_ = ++models_built;
  // The loop variables first, so that a trip that uses none of them is known when compiled.
  TripIds trips;
  auto note_loop_vars = [&](const std::vector<codegen::LoopContext>& contexts) {
    for (const codegen::LoopContext& c : contexts)
      if (c.var.node().kind == arith::Kind::Var) {
        const auto slot = static_cast<size_t>(slots_.slot(c.var));
        trips.loop_var.resize(std::max(trips.loop_var.size(), slot + 1), false);
        trips.loop_var[slot] = true;
      }
  };
  for (const codegen::MemoryAccess& a : kernel_.accesses)
    note_loop_vars(a.loops);
  for (const codegen::BarrierRecord& b : kernel_.barriers)
    note_loop_vars(b.loops);
  for (const codegen::LoopRecord& l : kernel_.loops)
    note_loop_vars(l.enclosing);
  for (const codegen::CallRecord& c : kernel_.calls)
    note_loop_vars(c.loops);
  for (const codegen::MemoryAccess& a : kernel_.accesses) {
    access_chains_.push_back(compile_chain(a.loops, nullptr, slots_, trips));
    access_index_.emplace_back(a.index, slots_);
  }
  for (size_t k = 0; k < kernel_.accesses.size(); ++k) {
    // The loop variables not yet set when a trip or the index is evaluated (their values would
    // be left over from other accesses or lanes): none, for every access the generator makes.
    std::vector<bool> unset = trips.loop_var;
    bool exact = true;
    for (const Loop& l : access_chains_[k]->loops) {
      if (l.var_slot >= 0 && static_cast<size_t>(l.var_slot) < unset.size())
        unset[static_cast<size_t>(l.var_slot)] = false; // set before the loop's trip is evaluated
      exact = exact && (l.trip_id >= 0 || !l.trip.uses_any(unset));
    }
    access_lanes_exact_.push_back(exact && !access_index_[k].uses_any(unset));
  }
  for (const codegen::BarrierRecord& b : kernel_.barriers)
    barrier_chains_.push_back(compile_chain(b.loops, nullptr, slots_, trips));
  for (const codegen::LoopRecord& l : kernel_.loops) {
    loop_chains_.push_back(compile_chain(l.enclosing, &l, slots_, trips));
    uses_work_groups_ = uses_work_groups_ || level_of(l.primitive) == Level::Wrg ||
                        level_of(l.primitive) == Level::Lcl;
  }
  for (const codegen::CallRecord& c : kernel_.calls) {
    call_chains_.push_back(compile_chain(c.loops, nullptr, slots_, trips));
    call_ops_.push_back(c.fun ? c.fun->op_counts().total() : 0);
  }
  local_bytes_ = CompiledExpr(kernel_.local_bytes(), slots_);
  for (const codegen::KernelArg& a : kernel_.args)
    if (a.role == codegen::KernelArg::Role::Input || a.role == codegen::KernelArg::Role::Output ||
        a.role == codegen::KernelArg::Role::Temporary)
      buffer_elements_.emplace_back(&a, CompiledExpr(a.elements, slots_));
  // Private arrays have constant sizes; every element is written, so the largest index seen
  // bounds the array.
  std::map<std::string, int64_t> private_extent;
  for (const codegen::MemoryAccess& a : kernel_.accesses) {
    if (a.space != codegen::AddressSpace::Private)
      continue;
    std::optional<int64_t> last = a.index.as_constant();
    if (!last)
      last = arith::bounds(a.index).hi;
    if (!last)
      continue;
    int64_t bytes = (*last + 1) * element_bytes(a.kind);
    private_extent[a.buffer] = std::max(private_extent[a.buffer], bytes);
  }
  for (const auto& [name, bytes] : private_extent)
    private_bytes_ += bytes;
  size_only_trips_ = static_cast<int>(trips.ids.size());
  private_bytes_ += kernel_.window_bytes; // registers of sliding windows (no array accesses)
  // Every variable that is not a loop variable is a size, bound by name at analysis time.
  std::vector<bool> is_loop_var(static_cast<size_t>(slots_.size()), false);
  for (const auto* chains : {&access_chains_, &barrier_chains_, &loop_chains_, &call_chains_})
    for (const auto& c : *chains)
      for (const Loop& l : c->loops)
        if (l.var_slot >= 0)
          is_loop_var[static_cast<size_t>(l.var_slot)] = true;
  for (size_t k = 0; k < is_loop_var.size(); ++k)
    if (!is_loop_var[k])
      size_slots_.emplace_back(static_cast<int>(k), slots_.vars()[k].node().name);
  for (const auto& chain : access_chains_) {
    std::vector<uint8_t> uniform(is_loop_var.size(), 0);
    for (size_t k = 0; k < is_loop_var.size(); ++k)
      uniform[k] = !is_loop_var[k];
    for (const Loop& l : chain->loops)
      if (l.var_slot >= 0)
        uniform[static_cast<size_t>(l.var_slot)] = l.level == Level::Wrg || l.level == Level::Seq;
    access_uniform_slots_.push_back(std::move(uniform));
  }
  number_access_chains();
  number_line_classes();
}

void KernelModel::number_access_chains() {
  auto same_loop = [](const Loop& x, const Loop& y) {
    return x.level == y.level && x.dim == y.dim && x.kind == y.kind && x.var_slot == y.var_slot &&
           x.trip_id == y.trip_id && x.trip.source() == y.trip.source();
  };
  auto same_chain = [&](const Chain& x, const Chain& y) {
    return x.last_is_own == y.last_is_own &&
           std::equal(x.loops.begin(), x.loops.end(), y.loops.begin(), y.loops.end(), same_loop);
  };
  std::vector<const Chain*> distinct;
  for (const auto& chain : access_chains_) {
    auto same = std::find_if(distinct.begin(), distinct.end(),
                             [&](const Chain* c) { return same_chain(*c, *chain); });
    access_chain_id_.push_back(static_cast<int>(same - distinct.begin()));
    if (same == distinct.end())
      distinct.push_back(chain.get());
  }
  distinct_access_chains_ = static_cast<int>(distinct.size());
  std::map<int, std::pair<Level, int>> coordinate; // loop variable slot -> (level, dimension)
  share_entered_chains_ = true;
  for (const Chain* chain : distinct)
    for (const Loop& loop : chain->loops)
      if (loop.var_slot >= 0) {
        const auto [it, fresh] = coordinate.emplace(loop.var_slot, std::pair{loop.level, loop.dim});
        if (!fresh && it->second != std::pair{loop.level, loop.dim})
          share_entered_chains_ = false;
      }
  if (!share_entered_chains_)
    return;
  std::vector<arith::Expr> roots;
  chain_access_.assign(distinct.size(), -1);
  for (size_t k = 0; k < kernel_.accesses.size(); ++k) {
    if (!access_lanes_exact_[k]) {
      batched_root_.push_back(-1);
      continue;
    }
    batched_root_.push_back(static_cast<int>(roots.size()));
    roots.push_back(kernel_.accesses[k].index);
    int& first = chain_access_[static_cast<size_t>(access_chain_id_[k])];
    if (first < 0)
      first = static_cast<int>(k);
  }
  batched_indices_ = CompiledExpr(roots, slots_);
  // A loop variable is the same in every lane where its loop deals out work-groups or runs
  // sequentially (as access_uniform_slots_ has it per chain); the sizes are.
  batched_uniform_slots_.assign(static_cast<size_t>(slots_.size()), 1);
  for (const Chain* chain : distinct)
    for (const Loop& loop : chain->loops)
      if (loop.var_slot >= 0)
        batched_uniform_slots_[static_cast<size_t>(loop.var_slot)] =
            loop.level == Level::Wrg || loop.level == Level::Seq;
}

void KernelModel::number_line_classes() {
  line_class_.assign(kernel_.accesses.size(), -1);
  if (!share_entered_chains_)
    return;
  std::vector<std::array<int64_t, 3>> classes; // loop chain, element bytes, width
  for (size_t k = 0; k < kernel_.accesses.size(); ++k) {
    const codegen::MemoryAccess& a = kernel_.accesses[k];
    if (a.space != codegen::AddressSpace::Global || batched_root_[k] < 0)
      continue;
    const std::array<int64_t, 3> key{access_chain_id_[k], element_bytes(a.kind), a.width};
    const auto same = std::find(classes.begin(), classes.end(), key);
    line_class_[k] = static_cast<int>(same - classes.begin());
    if (same == classes.end())
      classes.push_back(key);
  }
  line_classes_ = static_cast<int>(classes.size());
}

std::array<int64_t, 3> assumed_local(const Launch& launch, const target::DeviceProfile& device) {
  int64_t budget = 256;
  if (device.max_work_group_size > 0)
    budget = std::min<int64_t>(budget, static_cast<int64_t>(device.max_work_group_size));
  std::array<int64_t, 3> local{1, 1, 1};
  for (int d = 0; d < launch.dims && d < 3; ++d) {
    int64_t g = launch.global[static_cast<size_t>(d)];
    int64_t best = 1;
    for (int64_t l = std::min(g, budget); l >= 1; --l)
      if (g % l == 0) {
        best = l;
        break;
      }
    local[static_cast<size_t>(d)] = best;
    budget /= best;
  }
  return local;
}

/// Accesses of a line class that a later access is compared with (KernelModel::line_class_).
constexpr int kShiftCandidates = 4;

struct AnalysisScratch::Buffers {
  explicit Buffers(const target::DeviceProfile& profile)
      : device(profile),
        resident_work_items_per_cu(profile.throughput().resident_work_items_per_cu) {}
  target::DeviceProfile device;
  int64_t resident_work_items_per_cu;
  LaunchState state;
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
  std::vector<LineCount> line_counts; ///< per access
};

AnalysisScratch::AnalysisScratch(const target::DeviceProfile& device)
    : buffers_(std::make_unique<Buffers>(device)) {}
AnalysisScratch::~AnalysisScratch() = default;
AnalysisScratch::AnalysisScratch(AnalysisScratch&&) noexcept = default;
AnalysisScratch& AnalysisScratch::operator=(AnalysisScratch&&) noexcept = default;

namespace {

/// enter_first_iteration for every lane of the warp at once: sets the chain's loop variables in
/// b.lane_values and leaves in b.active the lanes that execute a statement inside the chain.
/// False when a trip that depends on the lane cannot be evaluated in batch
/// (CompiledExpr::evaluate_lanes): the caller then takes the lane-by-lane path, which gives the
/// same lanes or throws the same error.
bool enter_first_iteration_lanes(const Chain& chain, const std::array<int64_t, 3>& group,
                                 AnalysisScratch::Buffers& b, size_t lanes,
                                 const uint8_t* uniform_slots) {
  using codegen::cl::LoopKind;
  std::fill_n(b.active.begin(), lanes, 1);
  for (const Loop& loop : chain.loops) {
    const auto d = static_cast<size_t>(loop.dim);
    const int64_t* ids = nullptr; // per lane, or `uniform` for every lane
    int64_t uniform = 0;
    switch (loop.level) {
    case Level::Glb:
      ids = b.lane_global[d].data();
      break;
    case Level::Wrg:
      uniform = group[d];
      break;
    case Level::Lcl:
      ids = b.lane_local[d].data();
      break;
    case Level::Seq:
      break;
    }
    if (loop.var_slot >= 0) {
      int64_t* var = b.lane_values.data() + static_cast<size_t>(loop.var_slot) * lanes;
      if (ids)
        std::copy_n(ids, lanes, var);
      else
        std::fill_n(var, lanes, uniform);
    }
    if (loop.kind == LoopKind::None) {
      std::fill_n(b.active.begin(), lanes, 0);
      return true;
    }
    if (loop.kind == LoopKind::Block || (loop.kind == LoopKind::Unrolled && loop.var_slot < 0))
      continue;
    if (std::find(b.active.begin(), b.active.begin() + ptrdiff_t(lanes), 1) ==
        b.active.begin() + ptrdiff_t(lanes))
      return true; // no lane gets this far: nothing more to evaluate
    if (loop.trip_id >= 0) {
      const int64_t trip = trip_of(loop, b.state);
      for (size_t l = 0; l < lanes; ++l)
        b.active[l] &= (ids ? ids[l] : uniform) < trip;
    } else {
      b.trip.resize(lanes);
      if (!loop.trip.evaluate_lanes(b.lane_values.data(), lanes, b.active.data(), b.trip.data(),
                                    b.eval, uniform_slots))
        return false;
      for (size_t l = 0; l < lanes; ++l)
        b.active[l] &= (ids ? ids[l] : uniform) < b.trip[l];
    }
  }
  return true;
}

} // namespace

bool KernelModel::bind_launch(const Launch& launch, const Sizes& sizes,
                              const target::DeviceProfile& device, LaunchState& s) const {
  if (launch.dims < 1 || launch.dims > 3)
    throw UserError(fmt::format("a launch has 1 to 3 dimensions, got {}", launch.dims));
  if (launch.dims < kernel_.launch.dims)
    throw UserError(fmt::format("kernel {} uses {} dimension(s), the launch gives {}", kernel_.name,
                                kernel_.launch.dims, launch.dims));
  s.global = s.local = s.groups = {1, 1, 1};
  bool any_local_missing = false;
  for (int d = 0; d < launch.dims; ++d) {
    auto k = static_cast<size_t>(d);
    if (launch.global[k] < 1)
      throw UserError(fmt::format("global size {} in dimension {}", launch.global[k], d));
    if (launch.local[k] < 0)
      throw UserError(fmt::format("local size {} in dimension {}", launch.local[k], d));
    any_local_missing = any_local_missing || launch.local[k] == 0;
  }
  if (any_local_missing && uses_work_groups_)
    throw UserError(fmt::format("kernel {} uses work-groups (mapWrg/mapLcl): give its local size",
                                kernel_.name));
  std::array<int64_t, 3> local = any_local_missing ? assumed_local(launch, device) : launch.local;
  for (int d = 0; d < launch.dims; ++d) {
    auto k = static_cast<size_t>(d);
    s.global[k] = launch.global[k];
    s.local[k] = local[k];
    if (s.global[k] % s.local[k] != 0)
      throw UserError(fmt::format("local size {} does not divide global size {} in dimension {}",
                                  s.local[k], s.global[k], d));
    s.groups[k] = s.global[k] / s.local[k];
  }
  s.values.assign(static_cast<size_t>(slots_.size()), 0);
  s.trips.assign(static_cast<size_t>(size_only_trips_), std::nullopt);
  for (const auto& [slot, name] : size_slots_) {
    auto it = sizes.find(name);
    if (it == sizes.end())
      throw UserError(fmt::format("kernel {}: size '{}' is not bound", kernel_.name, name));
    s.values[static_cast<size_t>(slot)] = it->second;
  }
  return any_local_missing;
}

std::array<int64_t, 3> KernelModel::busy_groups(LaunchState& s) const {
  // A free launch may have more groups than a dimension's iterations (mapGlb over fewer items
  // than work-items, mapWrg over fewer tiles).
  std::array<int64_t, 3> busy = s.groups;
  for (size_t k = 0; k < kernel_.loops.size(); ++k) {
    const Loop& own = loop_chains_[k]->loops.back();
    if (own.level != Level::Glb && own.level != Level::Wrg)
      continue;
    auto d = static_cast<size_t>(own.dim);
    int64_t trip = std::max<int64_t>(trip_of(own, s), 1);
    int64_t groups = own.level == Level::Glb
                         ? (std::min(trip, s.global[d]) + s.local[d] - 1) / s.local[d]
                         : std::min(trip, s.groups[d]);
    busy[d] = std::min(busy[d], groups);
  }
  return busy;
}

std::array<int64_t, 3> KernelModel::representative_group(LaunchState& s) const {
  std::array<int64_t, 3> group = busy_groups(s);
  for (int64_t& id : group)
    id /= 2; // the middle of the work-groups that have work
  return group;
}

Analysis KernelModel::analyze(const Launch& launch, const Sizes& sizes,
                              const target::DeviceProfile& device) const {
  AnalysisScratch scratch(device);
  Analysis out;
  out.features = features_of(launch, sizes, *scratch.buffers_, &out);
  return out;
}

Features KernelModel::compute(const Launch& launch, const Sizes& sizes,
                              AnalysisScratch& scratch) const {
  return features_of(launch, sizes, *scratch.buffers_, nullptr);
}

Features KernelModel::features_of(const Launch& launch, const Sizes& sizes,
                                  AnalysisScratch::Buffers& b, Analysis* detail) const {
  const target::DeviceProfile& device = b.device;
  Features f;
  LaunchState& s = b.state;
  f.local_size_assumed = bind_launch(launch, sizes, device, s);
  f.global_size = s.global;
  f.local_size = s.local;
  f.work_items = checked_mul(checked_mul(s.global[0], s.global[1]), s.global[2]);
  f.work_groups = checked_mul(checked_mul(s.groups[0], s.groups[1]), s.groups[2]);

  // Exact totals over all work-items.
  RecordCounts& counts = detail ? detail->counts : b.counts;
  auto totals = [&](const std::vector<std::shared_ptr<const Chain>>& chains,
                    std::vector<int64_t>& t) {
    t.clear();
    for (const auto& c : chains)
      t.push_back(total_executions(*c, c->loops.size(), s));
  };
  // Accesses of one loop nest share a chain (access_chain_id_): its total once.
  b.chain_totals.assign(static_cast<size_t>(distinct_access_chains_), -1);
  counts.accesses.clear();
  for (size_t k = 0; k < access_chains_.size(); ++k) {
    int64_t& total = b.chain_totals[static_cast<size_t>(access_chain_id_[k])];
    if (total < 0)
      total = total_executions(*access_chains_[k], access_chains_[k]->loops.size(), s);
    counts.accesses.push_back(total);
  }
  totals(barrier_chains_, counts.barriers);
  totals(loop_chains_, counts.loops);
  totals(call_chains_, counts.calls);
  const auto items = static_cast<double>(f.work_items);
  auto per_thread = [&](int64_t total) { return static_cast<double>(total) / items; };

  std::array<std::array<int64_t, 2>, 3> loads_stores{}; // [space][store]
  for (size_t k = 0; k < kernel_.accesses.size(); ++k) {
    const codegen::MemoryAccess& a = kernel_.accesses[k];
    auto& slot = loads_stores[static_cast<size_t>(a.space)][a.is_store ? 1 : 0];
    slot = checked_add(slot, counts.accesses[k]);
  }
  using codegen::AddressSpace;
  f.global_loads_per_thread = per_thread(loads_stores[size_t(AddressSpace::Global)][0]);
  f.global_stores_per_thread = per_thread(loads_stores[size_t(AddressSpace::Global)][1]);
  f.local_loads_per_thread = per_thread(loads_stores[size_t(AddressSpace::Local)][0]);
  f.local_stores_per_thread = per_thread(loads_stores[size_t(AddressSpace::Local)][1]);
  f.private_loads_per_thread = per_thread(loads_stores[size_t(AddressSpace::Private)][0]);
  f.private_stores_per_thread = per_thread(loads_stores[size_t(AddressSpace::Private)][1]);
  int64_t barriers = 0;
  for (int64_t c : counts.barriers)
    barriers = checked_add(barriers, c);
  f.barriers_per_thread = per_thread(barriers);
  int64_t if_reached = 0, if_taken = 0, for_bodies = 0;
  for (size_t k = 0; k < kernel_.loops.size(); ++k) {
    const codegen::LoopRecord& l = kernel_.loops[k];
    if (l.kind == codegen::cl::LoopKind::If) {
      if_taken = checked_add(if_taken, counts.loops[k]);
      const Chain& c = *loop_chains_[k];
      if_reached = checked_add(if_reached, total_executions(c, c.loops.size() - 1, s));
    } else if (l.kind == codegen::cl::LoopKind::For) {
      for_bodies = checked_add(for_bodies, counts.loops[k]);
    }
  }
  f.if_statements_per_thread = per_thread(if_reached);
  f.if_bodies_per_thread = per_thread(if_taken);
  f.for_bodies_per_thread = per_thread(for_bodies);
  double ops = 0;
  for (size_t k = 0; k < call_ops_.size(); ++k)
    ops += static_cast<double>(call_ops_[k]) * static_cast<double>(counts.calls[k]);
  f.arith_ops_per_thread = ops / items;

  // Memory sizes.
  f.local_memory_bytes = local_bytes_.evaluate(s.values);
  f.private_memory_bytes = private_bytes_;
  for (const auto& [arg, elements] : buffer_elements_) {
    int64_t bytes = checked_mul(elements.evaluate(s.values), element_bytes(arg->kind));
    f.working_set_bytes = checked_add(f.working_set_bytes, bytes);
    if (arg->role != codegen::KernelArg::Role::Temporary)
      f.bytes_moved = checked_add(f.bytes_moved, bytes);
  }

  // The representative warp.
  const int64_t group_size = s.local[0] * s.local[1] * s.local[2];
  const int64_t width = std::min<int64_t>(std::max<uint32_t>(device.warp_width, 1), group_size);
  const auto lanes = static_cast<size_t>(width);
  const std::array<int64_t, 3> group = representative_group(s);
  for (size_t d = 0; d < 3; ++d) {
    b.lane_global[d].resize(lanes);
    b.lane_local[d].resize(lanes);
  }
  // Lane t's local id is t in the mixed radix of the local sizes: counted, not divided out.
  std::array<int64_t, 3> lid{0, 0, 0};
  for (int64_t t = 0; t < width; ++t) {
    for (size_t d = 0; d < 3; ++d) {
      b.lane_local[d][size_t(t)] = lid[d];
      b.lane_global[d][size_t(t)] = group[d] * s.local[d] + lid[d];
    }
    for (size_t d = 0; d < 3 && ++lid[d] == s.local[d]; ++d)
      lid[d] = 0;
  }
  if (detail) {
    detail->warp.group = group;
    for (size_t l = 0; l < lanes; ++l)
      detail->warp.lanes.push_back({b.lane_global[0][l], b.lane_global[1][l], b.lane_global[2][l]});
    detail->accesses.resize(kernel_.accesses.size());
  }
  // Every lane starts from the sizes; the loop variables are set per access, before anything
  // reads them (a chain's variables when the lanes enter it). So the lanes are filled only when
  // the kernel, the warp or the sizes change: the launches of one kernel come one after another.
  if (b.lane_values_model != id_ || b.lane_values_lanes != lanes ||
      b.lane_values_base != s.values) {
    b.lane_values.resize(s.values.size() * lanes);
    for (size_t slot = 0; slot < s.values.size(); ++slot)
      std::fill_n(b.lane_values.begin() + ptrdiff_t(slot * lanes), lanes, s.values[slot]);
    b.lane_values_model = id_;
    b.lane_values_lanes = lanes;
    b.lane_values_base = s.values;
  }
  b.active.resize(lanes);
  b.index.resize(lanes);
  b.chain_state.assign(static_cast<size_t>(distinct_access_chains_), 0);
  b.chain_active.resize(static_cast<size_t>(distinct_access_chains_) * lanes);

  const int64_t line_bytes = device.cache_line_bytes > 0 ? device.cache_line_bytes : 64;
  const int64_t banks = device.local_mem_banks > 0 ? device.local_mem_banks : 32;
  double lines_weighted = 0, lines_weight = 0, banks_weighted = 0, banks_weight = 0;
  double segments_weighted = 0;
  double width_weighted = 0;
  // The lanes enter access k's loop chain (in batch): once per chain and launch where chains
  // share their variables; b.active holds the lanes inside it when chain_state is 1.
  auto enter_chain = [&](size_t k) {
    const auto chain = static_cast<size_t>(access_chain_id_[k]);
    uint8_t* entered = b.chain_active.data() + chain * lanes;
    if (!share_entered_chains_ || b.chain_state[chain] == 0) {
      bool ok = false;
      try {
        ok = enter_first_iteration_lanes(*access_chains_[k], group, b, lanes,
                                         access_uniform_slots_[k].data());
      } catch (...) {
        ok = false; // the lane-by-lane path meets the same error at the same point
      }
      b.chain_state[chain] = ok ? 1 : 2;
      if (ok)
        std::copy_n(b.active.begin(), lanes, entered);
    } else if (b.chain_state[chain] == 1) {
      std::copy_n(entered, lanes, b.active.begin());
    }
    return b.chain_state[chain] == 1;
  };
  // Where chains share: every chain entered first (each sets only its own loop variables, to
  // the same values in every chain), then every batched index in one pass over their shared
  // nodes. If any lane of any node fails there, each access evaluates its own index below.
  bool indices_batched = false;
  if (share_entered_chains_ && batched_indices_.roots() > 0) {
    for (int k : chain_access_)
      if (k >= 0)
        enter_chain(static_cast<size_t>(k));
    indices_batched = batched_indices_.evaluate_all_lanes(
        b.lane_values.data(), lanes, b.batched_rows, b.batched, batched_uniform_slots_.data());
  }
  b.counted.resize(static_cast<size_t>(line_classes_));
  b.counted_size.assign(static_cast<size_t>(line_classes_), 0);
  b.line_counts.resize(kernel_.accesses.size());
  // Whether access k's lanes touch their lines at indices shifted by one amount from access j's
  // (both in batch, one loop chain: the same active lanes, the first of them `first`). The lines
  // are counted from the first active lane's index, so both count the same lines and segments.
  // Differences are taken modulo 2^64: equal ones give distinct_lines_of the same offsets.
  auto shifted = [&](size_t k, size_t j, size_t first) {
    const int64_t* x = b.batched_rows[size_t(batched_root_[k])];
    const int64_t* y = b.batched_rows[size_t(batched_root_[j])];
    const uint64_t shift = uint64_t(x[first]) - uint64_t(y[first]);
    // Every lane first (inactive lanes have indices too: the batch evaluates them all), two at a
    // time in vector registers; lane by lane, active ones only, where that fails.
    using Pair = uint64_t __attribute__((vector_size(16)));
    Pair differs_pair{0, 0};
    const Pair shift_pair{shift, shift};
    size_t l = 0;
    for (; l + 2 <= lanes; l += 2) {
      Pair a, c;
      std::memcpy(&a, x + l, sizeof a);
      std::memcpy(&c, y + l, sizeof c);
      differs_pair |= (a - c) ^ shift_pair;
    }
    uint64_t differs = differs_pair[0] | differs_pair[1];
    for (; l < lanes; ++l)
      differs |= (uint64_t(x[l]) - uint64_t(y[l])) ^ shift;
    if (differs == 0)
      return true;
    for (l = 0; l < lanes; ++l)
      if (b.active[l] && uint64_t(x[l]) - uint64_t(y[l]) != shift)
        return false;
    return true;
  };
  for (size_t k = 0; k < kernel_.accesses.size(); ++k) {
    const codegen::MemoryAccess& a = kernel_.accesses[k];
    // All lanes at once; lane by lane (as the features were first defined) where the batch
    // cannot be exact. Both give the same lanes and indices.
    bool batched = access_lanes_exact_[k] && enter_chain(k);
    const bool from_batch = batched && indices_batched && batched_root_[k] >= 0;
    int same_lines_as = -1;
    if (from_batch && !detail && line_class_[k] >= 0) {
      const auto c = static_cast<size_t>(line_class_[k]);
      const auto first = static_cast<size_t>(
          std::find(b.active.begin(), b.active.begin() + ptrdiff_t(lanes), 1) - b.active.begin());
      for (int i = 0; first < lanes && i < b.counted_size[c] && same_lines_as < 0; ++i)
        if (shifted(k, size_t(b.counted[c][size_t(i)]), first))
          same_lines_as = b.counted[c][size_t(i)];
    }
    if (same_lines_as >= 0) {
      const LineCount count = b.line_counts[size_t(same_lines_as)];
      const auto weight = static_cast<double>(counts.accesses[k]);
      segments_weighted += weight * static_cast<double>(count.segments);
      lines_weighted += weight * static_cast<double>(count.lines);
      lines_weight += weight;
      width_weighted += weight * static_cast<double>(a.width);
      continue;
    }
    // The lanes' indices: the batch's row, or b.index.
    const int64_t* index = b.index.data();
    if (from_batch) {
      index = b.batched_rows[size_t(batched_root_[k])];
    } else if (batched) {
      try {
        batched = access_index_[k].evaluate_lanes(b.lane_values.data(), lanes, b.active.data(),
                                                  b.index.data(), b.eval,
                                                  access_uniform_slots_[k].data());
      } catch (...) {
        batched = false;
      }
    }
    if (!batched) {
      for (size_t lane = 0; lane < lanes; ++lane) {
        const std::array<int64_t, 3> lid{b.lane_local[0][lane], b.lane_local[1][lane],
                                         b.lane_local[2][lane]};
        const std::array<int64_t, 3> gid{b.lane_global[0][lane], b.lane_global[1][lane],
                                         b.lane_global[2][lane]};
        b.active[lane] = enter_first_iteration(*access_chains_[k], group, lid, gid, s);
        if (b.active[lane])
          b.index[lane] = access_index_[k].evaluate(s.values);
      }
    }
    if (detail) {
      auto& first_index = detail->accesses[k].first_index;
      first_index.assign(lanes, std::nullopt);
      for (size_t lane = 0; lane < lanes; ++lane)
        if (b.active[lane])
          first_index[lane] = index[lane];
    }
    if (std::find(b.active.begin(), b.active.end(), 1) == b.active.end())
      continue;
    const auto weight = static_cast<double>(counts.accesses[k]);
    double value = 0;
    switch (a.space) {
    case AddressSpace::Global: {
      const LineCount count = distinct_lines_of(
          index, b.active.data(), lanes, element_bytes(a.kind), line_bytes, a.width, b.lines);
      if (from_batch && line_class_[k] >= 0) {
        const auto c = static_cast<size_t>(line_class_[k]);
        b.line_counts[k] = count;
        if (b.counted_size[c] < kShiftCandidates)
          b.counted[c][size_t(b.counted_size[c]++)] = static_cast<int>(k);
      }
      value = static_cast<double>(count.lines);
      segments_weighted += weight * static_cast<double>(count.segments);
    }
      lines_weighted += weight * value;
      lines_weight += weight;
      width_weighted += weight * static_cast<double>(a.width);
      break;
    case AddressSpace::Local:
      value = bank_conflict_degree_of(index, b.active.data(), lanes, element_bytes(a.kind), banks,
                                      b.words, b.banks_hit);
      banks_weighted += weight * value;
      banks_weight += weight;
      break;
    case AddressSpace::Private:
      break;
    }
    if (detail)
      detail->accesses[k].value = value;
  }
  f.cache_lines_per_warp_access = lines_weight > 0 ? lines_weighted / lines_weight : 0;
  f.line_segments_per_warp_access = lines_weight > 0 ? segments_weighted / lines_weight : 0;
  f.global_access_width = lines_weight > 0 ? width_weighted / lines_weight : 1;
  f.bank_conflict_degree = banks_weight > 0 ? banks_weighted / banks_weight : 0;

  // Occupancy: resident work-groups per compute unit, limited by local memory, by the threads a
  // compute unit holds and by a cap on resident groups.
  const int64_t cu_threads = std::max<int64_t>(b.resident_work_items_per_cu, group_size);
  const int64_t cu_groups = 32;
  const int64_t warp_lanes = std::max<int64_t>(device.warp_width, 1);
  const int64_t group_threads = (group_size + warp_lanes - 1) / warp_lanes * warp_lanes;
  int64_t resident = std::min(cu_groups, cu_threads / std::max<int64_t>(group_threads, 1));
  if (f.local_memory_bytes > 0 && device.local_mem_bytes > 0)
    resident =
        std::min(resident, static_cast<int64_t>(device.local_mem_bytes) / f.local_memory_bytes);
  f.work_groups_per_cu = resident;
  f.occupancy = std::min(1.0, static_cast<double>(resident * group_threads) /
                                  static_cast<double>(std::max<int64_t>(cu_threads, 1)));
  return f;
}

namespace {

/// Every execution of a chain's loops for one work-item, in program order: the loop variables
/// set in `s`, `leaf` called with each, and `left` decremented. The outermost `for` loop (the one
/// that streams through the work-item's data) starts no iteration after its first once `left` is
/// spent; loops inside it always run to the end, since the lines of a partial inner loop (a few
/// taps of a window) do not grow with its iterations. Returns false when it stopped early.
template <typename Leaf>
bool visit_executions(const Chain& chain, size_t at, bool outer_for,
                      const std::array<int64_t, 3>& group, const std::array<int64_t, 3>& local,
                      const std::array<int64_t, 3>& global_id, LaunchState& s, int64_t& left,
                      Leaf&& leaf) {
  using codegen::cl::LoopKind;
  if (at == chain.loops.size()) {
    leaf();
    --left;
    return true;
  }
  const Loop& loop = chain.loops[at];
  const auto d = static_cast<size_t>(loop.dim);
  int64_t first = 0, step = 1;
  switch (loop.level) {
  case Level::Glb:
    first = global_id[d], step = s.global[d];
    break;
  case Level::Wrg:
    first = group[d], step = s.groups[d];
    break;
  case Level::Lcl:
    first = local[d], step = s.local[d];
    break;
  case Level::Seq:
    break;
  }
  auto set = [&](int64_t value) {
    if (loop.var_slot >= 0)
      s.values[static_cast<size_t>(loop.var_slot)] = value;
  };
  auto inner = [&](bool outer) {
    return visit_executions(chain, at + 1, outer, group, local, global_id, s, left, leaf);
  };
  switch (loop.kind) {
  case LoopKind::None:
    return true;
  case LoopKind::Block:
    set(first);
    return inner(outer_for);
  case LoopKind::If:
    set(first);
    return first < trip_of(loop, s) ? inner(outer_for) : true;
  case LoopKind::Unrolled:
    if (loop.var_slot < 0)
      return inner(outer_for); // one copy of the body: its variable is a constant of the index
    [[fallthrough]];
  case LoopKind::For:
    for (int64_t value = first, trip = trip_of(loop, s); value < trip; value += step) {
      if (outer_for && value != first && left <= 0)
        return false;
      set(value);
      if (!inner(false))
        return false;
    }
    return true;
  }
  return true;
}

} // namespace

KernelModel::GroupTraffic KernelModel::group_traffic(const Launch& launch, const Sizes& sizes,
                                                     const target::DeviceProfile& device,
                                                     int64_t line_bytes, int64_t budget) const {
  LIFTX_USER_CHECK(budget >= 1, "the traffic model's budget must be positive, got {}", budget);
  if (line_bytes <= 0)
    line_bytes = device.cache_line_bytes > 0 ? device.cache_line_bytes : 64;
  LaunchState s;
  bind_launch(launch, sizes, device, s);
  const std::array<int64_t, 3> busy = busy_groups(s);
  const std::array<int64_t, 3> group = representative_group(s);
  const int64_t group_size = s.local[0] * s.local[1] * s.local[2];
  const int64_t busy_count = checked_mul(checked_mul(busy[0], busy[1]), busy[2]);
  const int64_t per_item = std::max<int64_t>(budget / group_size, 1);

  GroupTraffic out;
  // Per buffer: the lines touched, and the executions seen and expected where one was cut short.
  struct Buffer {
    std::vector<int64_t> lines;
    double seen = 0, expected = 0;
    bool cut = false;
  };
  std::map<std::string, Buffer> buffers;
  for (size_t k = 0; k < kernel_.accesses.size(); ++k) {
    const codegen::MemoryAccess& a = kernel_.accesses[k];
    if (a.space != codegen::AddressSpace::Global)
      continue;
    Buffer& buffer = buffers[a.buffer];
    const int64_t bytes = element_bytes(a.kind);
    int64_t seen = 0;
    bool cut = false;
    std::array<int64_t, 3> lid{0, 0, 0};
    for (int64_t t = 0; t < group_size; ++t) {
      std::array<int64_t, 3> gid{};
      for (size_t d = 0; d < 3; ++d)
        gid[d] = group[d] * s.local[d] + lid[d];
      int64_t left = per_item;
      cut |= !visit_executions(*access_chains_[k], 0, true, group, lid, gid, s, left, [&] {
        const int64_t start = checked_mul(access_index_[k].evaluate(s.values), bytes);
        const int64_t last = floor_div(start + a.width * bytes - 1, line_bytes);
        for (int64_t line = floor_div(start, line_bytes); line <= last; ++line)
          buffer.lines.push_back(line);
        ++seen;
      });
      for (size_t d = 0; d < 3 && ++lid[d] == s.local[d]; ++d)
        lid[d] = 0;
    }
    // A work-group's share of the access's executions, to scale a cut enumeration.
    const int64_t total = total_executions(*access_chains_[k], access_chains_[k]->loops.size(), s);
    buffer.seen += double(seen);
    buffer.expected += cut ? double(total) / double(busy_count) : double(seen);
    buffer.cut |= cut;
  }
  for (auto& [name, buffer] : buffers) {
    std::sort(buffer.lines.begin(), buffer.lines.end());
    const auto distinct =
        double(std::unique(buffer.lines.begin(), buffer.lines.end()) - buffer.lines.begin());
    const double scale =
        buffer.cut && buffer.seen > 0 ? std::max(1.0, buffer.expected / buffer.seen) : 1.0;
    out.lines += distinct * scale * double(busy_count);
    out.extrapolated |= buffer.cut;
  }
  int64_t moved = 0;
  for (const auto& [arg, elements] : buffer_elements_)
    if (arg->role != codegen::KernelArg::Role::Temporary)
      moved =
          checked_add(moved, checked_mul(elements.evaluate(s.values), element_bytes(arg->kind)));
  out.per_byte = out.lines * double(line_bytes) / double(std::max<int64_t>(moved, 1));
  return out;
}

Features compute(const codegen::Kernel& kernel, const Launch& launch, const Sizes& sizes,
                 const target::DeviceProfile& device) {
  return KernelModel(kernel).compute(launch, sizes, device);
}

Analysis analyze(const ir::Program& program, const Sizes& sizes,
                 const codegen::LaunchRequest& request, const target::DeviceProfile& device) {
  interp::check_sizes(program, sizes);
  codegen::PreparedLaunch prepared =
      codegen::prepare_launch(program, sizes, request, device.limits());
  return KernelModel(std::move(prepared.kernel)).analyze(prepared.launch, sizes, device);
}

Features compute(const ir::Program& program, const Sizes& sizes,
                 const codegen::LaunchRequest& request, const target::DeviceProfile& device) {
  return analyze(program, sizes, request, device).features;
}

} // namespace liftx::features
