#include "features/features.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
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

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw UserError(fmt::format("feature count overflows int64 ({} x {})", a, b));
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

/// Per-launch values shared by every record: coordinate sizes and the variable table.
struct LaunchState {
  std::array<int64_t, 3> global{1, 1, 1};
  std::array<int64_t, 3> local{1, 1, 1};
  std::array<int64_t, 3> groups{1, 1, 1};
  std::vector<int64_t> values; ///< by slot: sizes bound, loop variables set per lane
  /// By Loop::trip_id: the trips that depend on sizes only, evaluated once per launch when first
  /// needed (the warp's lanes would otherwise evaluate them per lane and per record).
  std::vector<std::optional<int64_t>> trips;
};

} // namespace

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

int64_t distinct_lines(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                       int64_t line_bytes, int64_t width) {
  std::optional<int64_t> first;
  std::vector<int64_t> lines;
  for (const std::optional<int64_t>& index : indices) {
    if (!index)
      continue;
    if (!first)
      first = *index;
    // A vector access spans `width` elements: every line from its first to its last byte.
    const int64_t begin = checked_mul(*index - *first, element_bytes);
    const int64_t end = begin + checked_mul(width, element_bytes) - 1;
    for (int64_t line = floor_div(begin, line_bytes); line <= floor_div(end, line_bytes); ++line)
      lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return std::unique(lines.begin(), lines.end()) - lines.begin();
}

double bank_conflict_degree(const std::vector<std::optional<int64_t>>& indices,
                            int64_t element_bytes, int64_t banks) {
  if (banks <= 0)
    banks = 32;
  double sum = 0;
  int groups = 0;
  for (size_t start = 0; start < indices.size(); start += static_cast<size_t>(banks)) {
    std::vector<int64_t> words;
    size_t stop = std::min(indices.size(), start + static_cast<size_t>(banks));
    for (size_t k = start; k < stop; ++k)
      if (indices[k])
        words.push_back(floor_div(checked_mul(*indices[k], element_bytes), 4));
    if (words.empty())
      continue;
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    std::unordered_map<int64_t, int> per_bank;
    int worst = 0;
    for (int64_t w : words) {
      int64_t bank = ((w % banks) + banks) % banks;
      worst = std::max(worst, ++per_bank[bank]);
    }
    sum += worst;
    ++groups;
  }
  return groups == 0 ? 0.0 : sum / groups;
}

KernelModel::KernelModel(codegen::Kernel kernel) : kernel_(std::move(kernel)) {
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
}

std::array<int64_t, 3> assumed_local(const Launch& launch, const runtime::DeviceProfile& device) {
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

Analysis KernelModel::analyze(const Launch& launch, const interp::Sizes& sizes,
                              const runtime::DeviceProfile& device) const {
  if (launch.dims < 1 || launch.dims > 3)
    throw UserError(fmt::format("a launch has 1 to 3 dimensions, got {}", launch.dims));
  if (launch.dims < kernel_.launch.dims)
    throw UserError(fmt::format("kernel {} uses {} dimension(s), the launch gives {}", kernel_.name,
                                kernel_.launch.dims, launch.dims));
  Analysis out;
  Features& f = out.features;
  LaunchState s;
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
  f.local_size_assumed = any_local_missing;
  for (int d = 0; d < launch.dims; ++d) {
    auto k = static_cast<size_t>(d);
    s.global[k] = launch.global[k];
    s.local[k] = local[k];
    if (s.global[k] % s.local[k] != 0)
      throw UserError(fmt::format("local size {} does not divide global size {} in dimension {}",
                                  s.local[k], s.global[k], d));
    s.groups[k] = s.global[k] / s.local[k];
  }
  f.global_size = s.global;
  f.local_size = s.local;
  f.work_items = checked_mul(checked_mul(s.global[0], s.global[1]), s.global[2]);
  f.work_groups = checked_mul(checked_mul(s.groups[0], s.groups[1]), s.groups[2]);

  s.values.assign(static_cast<size_t>(slots_.size()), 0);
  s.trips.assign(static_cast<size_t>(size_only_trips_), std::nullopt);
  for (const auto& [slot, name] : size_slots_) {
    auto it = sizes.find(name);
    if (it == sizes.end())
      throw UserError(fmt::format("kernel {}: size '{}' is not bound", kernel_.name, name));
    s.values[static_cast<size_t>(slot)] = it->second;
  }

  // Exact totals over all work-items.
  auto totals = [&](const std::vector<std::shared_ptr<const Chain>>& chains) {
    std::vector<int64_t> t;
    t.reserve(chains.size());
    for (const auto& c : chains)
      t.push_back(total_executions(*c, c->loops.size(), s));
    return t;
  };
  out.counts.accesses = totals(access_chains_);
  out.counts.barriers = totals(barrier_chains_);
  out.counts.loops = totals(loop_chains_);
  out.counts.calls = totals(call_chains_);
  const auto items = static_cast<double>(f.work_items);
  auto per_thread = [&](int64_t total) { return static_cast<double>(total) / items; };

  std::array<std::array<int64_t, 2>, 3> loads_stores{}; // [space][store]
  for (size_t k = 0; k < kernel_.accesses.size(); ++k) {
    const codegen::MemoryAccess& a = kernel_.accesses[k];
    auto& slot = loads_stores[static_cast<size_t>(a.space)][a.is_store ? 1 : 0];
    slot = checked_add(slot, out.counts.accesses[k]);
  }
  using codegen::AddressSpace;
  f.global_loads_per_thread = per_thread(loads_stores[size_t(AddressSpace::Global)][0]);
  f.global_stores_per_thread = per_thread(loads_stores[size_t(AddressSpace::Global)][1]);
  f.local_loads_per_thread = per_thread(loads_stores[size_t(AddressSpace::Local)][0]);
  f.local_stores_per_thread = per_thread(loads_stores[size_t(AddressSpace::Local)][1]);
  f.private_loads_per_thread = per_thread(loads_stores[size_t(AddressSpace::Private)][0]);
  f.private_stores_per_thread = per_thread(loads_stores[size_t(AddressSpace::Private)][1]);
  int64_t barriers = 0;
  for (int64_t b : out.counts.barriers)
    barriers = checked_add(barriers, b);
  f.barriers_per_thread = per_thread(barriers);
  int64_t if_reached = 0, if_taken = 0, for_bodies = 0;
  for (size_t k = 0; k < kernel_.loops.size(); ++k) {
    const codegen::LoopRecord& l = kernel_.loops[k];
    if (l.kind == codegen::cl::LoopKind::If) {
      if_taken = checked_add(if_taken, out.counts.loops[k]);
      const Chain& c = *loop_chains_[k];
      if_reached = checked_add(if_reached, total_executions(c, c.loops.size() - 1, s));
    } else if (l.kind == codegen::cl::LoopKind::For) {
      for_bodies = checked_add(for_bodies, out.counts.loops[k]);
    }
  }
  f.if_statements_per_thread = per_thread(if_reached);
  f.if_bodies_per_thread = per_thread(if_taken);
  f.for_bodies_per_thread = per_thread(for_bodies);
  double ops = 0;
  for (size_t k = 0; k < call_ops_.size(); ++k)
    ops += static_cast<double>(call_ops_[k]) * static_cast<double>(out.counts.calls[k]);
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
  RepresentativeWarp& warp = out.warp;
  const int64_t group_size = s.local[0] * s.local[1] * s.local[2];
  const int64_t width = std::min<int64_t>(std::max<uint32_t>(device.warp_width, 1), group_size);
  // The middle of the work-groups that have work: a free launch may have more groups than a
  // dimension's iterations (mapGlb over fewer items than work-items, mapWrg over fewer tiles).
  std::array<int64_t, 3> busy_groups = s.groups;
  for (size_t k = 0; k < kernel_.loops.size(); ++k) {
    const Loop& own = loop_chains_[k]->loops.back();
    if (own.level != Level::Glb && own.level != Level::Wrg)
      continue;
    auto d = static_cast<size_t>(own.dim);
    int64_t trip = std::max<int64_t>(trip_of(own, s), 1);
    int64_t groups = own.level == Level::Glb
                         ? (std::min(trip, s.global[d]) + s.local[d] - 1) / s.local[d]
                         : std::min(trip, s.groups[d]);
    busy_groups[d] = std::min(busy_groups[d], groups);
  }
  for (size_t d = 0; d < 3; ++d)
    warp.group[d] = busy_groups[d] / 2;
  std::vector<std::array<int64_t, 3>> lane_local;
  for (int64_t t = 0; t < width; ++t) {
    std::array<int64_t, 3> lid{t % s.local[0], (t / s.local[0]) % s.local[1],
                               t / (s.local[0] * s.local[1])};
    lane_local.push_back(lid);
    warp.lanes.push_back({warp.group[0] * s.local[0] + lid[0], warp.group[1] * s.local[1] + lid[1],
                          warp.group[2] * s.local[2] + lid[2]});
  }
  const int64_t line_bytes = device.cache_line_bytes > 0 ? device.cache_line_bytes : 64;
  const int64_t banks = device.local_mem_banks > 0 ? device.local_mem_banks : 32;
  double lines_weighted = 0, lines_weight = 0, banks_weighted = 0, banks_weight = 0;
  double width_weighted = 0;
  out.accesses.resize(kernel_.accesses.size());
  for (size_t k = 0; k < kernel_.accesses.size(); ++k) {
    const codegen::MemoryAccess& a = kernel_.accesses[k];
    AccessDetail& detail = out.accesses[k];
    detail.first_index.resize(static_cast<size_t>(width));
    bool any = false;
    for (size_t lane = 0; lane < static_cast<size_t>(width); ++lane) {
      if (!enter_first_iteration(*access_chains_[k], warp.group, lane_local[lane], warp.lanes[lane],
                                 s))
        continue;
      detail.first_index[lane] = access_index_[k].evaluate(s.values);
      any = true;
    }
    if (!any)
      continue;
    const auto weight = static_cast<double>(out.counts.accesses[k]);
    switch (a.space) {
    case AddressSpace::Global:
      detail.value = static_cast<double>(
          distinct_lines(detail.first_index, element_bytes(a.kind), line_bytes, a.width));
      lines_weighted += weight * *detail.value;
      lines_weight += weight;
      width_weighted += weight * static_cast<double>(a.width);
      break;
    case AddressSpace::Local:
      detail.value = bank_conflict_degree(detail.first_index, element_bytes(a.kind), banks);
      banks_weighted += weight * *detail.value;
      banks_weight += weight;
      break;
    case AddressSpace::Private:
      detail.value = 0;
      break;
    }
  }
  f.cache_lines_per_warp_access = lines_weight > 0 ? lines_weighted / lines_weight : 0;
  f.global_access_width = lines_weight > 0 ? width_weighted / lines_weight : 1;
  f.bank_conflict_degree = banks_weight > 0 ? banks_weighted / banks_weight : 0;

  // Occupancy: resident work-groups per compute unit, limited by local memory, by the threads a
  // compute unit holds and by a cap on resident groups.
  const int64_t cu_threads =
      std::max<int64_t>(device.throughput().resident_work_items_per_cu, group_size);
  const int64_t cu_groups = 32;
  const int64_t lanes = std::max<int64_t>(device.warp_width, 1);
  const int64_t group_threads = (group_size + lanes - 1) / lanes * lanes;
  int64_t resident = std::min(cu_groups, cu_threads / std::max<int64_t>(group_threads, 1));
  if (f.local_memory_bytes > 0 && device.local_mem_bytes > 0)
    resident =
        std::min(resident, static_cast<int64_t>(device.local_mem_bytes) / f.local_memory_bytes);
  f.work_groups_per_cu = resident;
  f.occupancy = std::min(1.0, static_cast<double>(resident * group_threads) /
                                  static_cast<double>(std::max<int64_t>(cu_threads, 1)));
  return out;
}

Features compute(const codegen::Kernel& kernel, const Launch& launch, const interp::Sizes& sizes,
                 const runtime::DeviceProfile& device) {
  return KernelModel(kernel).compute(launch, sizes, device);
}

Analysis analyze(const ir::Program& program, const interp::Sizes& sizes,
                 const codegen::LaunchRequest& request, const runtime::DeviceProfile& device) {
  interp::check_sizes(program, sizes);
  codegen::PreparedLaunch prepared =
      codegen::prepare_launch(program, sizes, request, device.limits());
  return KernelModel(std::move(prepared.kernel)).analyze(prepared.launch, sizes, device);
}

Features compute(const ir::Program& program, const interp::Sizes& sizes,
                 const codegen::LaunchRequest& request, const runtime::DeviceProfile& device) {
  return analyze(program, sizes, request, device).features;
}

} // namespace liftx::features
