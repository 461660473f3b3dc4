#include "features/model_internal.hpp"

#include <algorithm>
#include <cstring>

namespace liftx::features {

using namespace detail;

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

/// Whether the lanes of row `x` touch their lines at indices shifted by one amount from row `y`'s
/// (both in batch, one loop chain: the same active lanes, the first of them `first`). The lines
/// are counted from the first active lane's index, so both count the same lines and segments.
/// Differences are taken modulo 2^64: equal ones give distinct_lines_of the same offsets.
bool shifted_alike(const int64_t* x, const int64_t* y, const uint8_t* active, size_t first,
                   size_t lanes) {
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
    if (active[l] && uint64_t(x[l]) - uint64_t(y[l]) != shift)
      return false;
  return true;
}

/// Occupancy: resident work-groups per compute unit, limited by local memory, by the threads a
/// compute unit holds and by a cap on resident groups.
void set_occupancy(Features& f, const AnalysisScratch::Buffers& b, int64_t group_size) {
  const target::DeviceProfile& device = b.device;
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
}

} // namespace

/// The weighted sums over the warp's accesses that the line, width and bank features average.
struct KernelModel::WarpTotals {
  int64_t line_bytes = 64;
  int64_t banks = 32;
  double lines_weighted = 0, lines_weight = 0, banks_weighted = 0, banks_weight = 0;
  double segments_weighted = 0;
  double width_weighted = 0;
};

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
  RecordCounts& counts = detail ? detail->counts : b.counts;
  count_executions(s, counts, b, f);

  // Memory sizes.
  f.local_memory_bytes = local_bytes_.evaluate(s.values);
  f.private_memory_bytes = private_bytes_;
  for (const auto& [arg, elements] : buffer_elements_) {
    int64_t bytes = checked_mul(elements.evaluate(s.values), element_bytes(arg->kind));
    f.working_set_bytes = checked_add(f.working_set_bytes, bytes);
    if (arg->role != codegen::KernelArg::Role::Temporary)
      f.bytes_moved = checked_add(f.bytes_moved, bytes);
  }

  const std::array<int64_t, 3> group = representative_group(s);
  const size_t lanes = place_warp(group, b, detail);
  b.active.resize(lanes);
  b.index.resize(lanes);
  b.chain_state.assign(static_cast<size_t>(distinct_access_chains_), 0);
  b.chain_active.resize(static_cast<size_t>(distinct_access_chains_) * lanes);
  WarpTotals totals;
  totals.line_bytes = device.cache_line_bytes > 0 ? device.cache_line_bytes : 64;
  totals.banks = device.local_mem_banks > 0 ? device.local_mem_banks : 32;
  // Where chains share: every chain entered first (each sets only its own loop variables, to
  // the same values in every chain), then every batched index in one pass over their shared
  // nodes. If any lane of any node fails there, each access evaluates its own index below.
  bool indices_batched = false;
  if (share_entered_chains_ && batched_indices_.roots() > 0) {
    for (int k : chain_access_)
      if (k >= 0)
        enter_chain_lanes(static_cast<size_t>(k), group, b, lanes);
    indices_batched = batched_indices_.evaluate_all_lanes(
        b.lane_values.data(), lanes, b.batched_rows, b.batched, batched_uniform_slots_.data());
  }
  b.counted.resize(static_cast<size_t>(line_classes_));
  b.counted_size.assign(static_cast<size_t>(line_classes_), 0);
  b.line_counts.resize(kernel_.accesses.size());
  for (size_t k = 0; k < kernel_.accesses.size(); ++k)
    measure_access(k, indices_batched, group, lanes, counts, b, totals, detail);
  const double lines_weight = totals.lines_weight;
  f.cache_lines_per_warp_access = lines_weight > 0 ? totals.lines_weighted / lines_weight : 0;
  f.line_segments_per_warp_access = lines_weight > 0 ? totals.segments_weighted / lines_weight : 0;
  f.global_access_width = lines_weight > 0 ? totals.width_weighted / lines_weight : 1;
  f.bank_conflict_degree =
      totals.banks_weight > 0 ? totals.banks_weighted / totals.banks_weight : 0;
  set_occupancy(f, b, s.local[0] * s.local[1] * s.local[2]);
  return f;
}

void KernelModel::count_executions(LaunchState& s, RecordCounts& counts,
                                   AnalysisScratch::Buffers& b, Features& f) const {
  // Exact totals over all work-items.
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
}

size_t KernelModel::place_warp(const std::array<int64_t, 3>& group, AnalysisScratch::Buffers& b,
                               Analysis* detail) const {
  const LaunchState& s = b.state;
  const int64_t group_size = s.local[0] * s.local[1] * s.local[2];
  const int64_t width = std::min<int64_t>(std::max<uint32_t>(b.device.warp_width, 1), group_size);
  const auto lanes = static_cast<size_t>(width);
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
  return lanes;
}

bool KernelModel::enter_chain_lanes(size_t k, const std::array<int64_t, 3>& group,
                                    AnalysisScratch::Buffers& b, size_t lanes) const {
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
}

int KernelModel::same_lines_as(size_t k, size_t lanes, const AnalysisScratch::Buffers& b) const {
  const auto c = static_cast<size_t>(line_class_[k]);
  const auto first = static_cast<size_t>(
      std::find(b.active.begin(), b.active.begin() + ptrdiff_t(lanes), 1) - b.active.begin());
  const int64_t* x = b.batched_rows[size_t(batched_root_[k])];
  for (int i = 0; first < lanes && i < b.counted_size[c]; ++i) {
    const int j = b.counted[c][size_t(i)];
    if (shifted_alike(x, b.batched_rows[size_t(batched_root_[size_t(j)])], b.active.data(), first,
                      lanes))
      return j;
  }
  return -1;
}

void KernelModel::measure_access(size_t k, bool indices_batched,
                                 const std::array<int64_t, 3>& group, size_t lanes,
                                 const RecordCounts& counts, AnalysisScratch::Buffers& b,
                                 WarpTotals& totals, Analysis* detail) const {
  const codegen::MemoryAccess& a = kernel_.accesses[k];
  // All lanes at once; lane by lane (as the features were first defined) where the batch
  // cannot be exact. Both give the same lanes and indices.
  bool batched = access_lanes_exact_[k] && enter_chain_lanes(k, group, b, lanes);
  const bool from_batch = batched && indices_batched && batched_root_[k] >= 0;
  const int same_lines =
      from_batch && !detail && line_class_[k] >= 0 ? same_lines_as(k, lanes, b) : -1;
  if (same_lines >= 0) {
    const LineCount count = b.line_counts[size_t(same_lines)];
    const auto weight = static_cast<double>(counts.accesses[k]);
    totals.segments_weighted += weight * static_cast<double>(count.segments);
    totals.lines_weighted += weight * static_cast<double>(count.lines);
    totals.lines_weight += weight;
    totals.width_weighted += weight * static_cast<double>(a.width);
    return;
  }
  // The lanes' indices: the batch's row, or b.index.
  const int64_t* index = b.index.data();
  if (from_batch) {
    index = b.batched_rows[size_t(batched_root_[k])];
  } else if (batched) {
    try {
      batched =
          access_index_[k].evaluate_lanes(b.lane_values.data(), lanes, b.active.data(),
                                          b.index.data(), b.eval, access_uniform_slots_[k].data());
    } catch (...) {
      batched = false;
    }
  }
  if (!batched) {
    LaunchState& s = b.state;
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
    return;
  const auto weight = static_cast<double>(counts.accesses[k]);
  double value = 0;
  switch (a.space) {
  case codegen::AddressSpace::Global: {
    const LineCount count = distinct_lines_of(index, b.active.data(), lanes, element_bytes(a.kind),
                                              totals.line_bytes, a.width, b.lines);
    if (from_batch && line_class_[k] >= 0) {
      const auto c = static_cast<size_t>(line_class_[k]);
      b.line_counts[k] = count;
      if (b.counted_size[c] < kShiftCandidates)
        b.counted[c][size_t(b.counted_size[c]++)] = static_cast<int>(k);
    }
    value = static_cast<double>(count.lines);
    totals.segments_weighted += weight * static_cast<double>(count.segments);
  }
    totals.lines_weighted += weight * value;
    totals.lines_weight += weight;
    totals.width_weighted += weight * static_cast<double>(a.width);
    break;
  case codegen::AddressSpace::Local:
    value = bank_conflict_degree_of(index, b.active.data(), lanes, element_bytes(a.kind),
                                    totals.banks, b.words, b.banks_hit);
    totals.banks_weighted += weight * value;
    totals.banks_weight += weight;
    break;
  case codegen::AddressSpace::Private:
    break;
  }
  if (detail)
    detail->accesses[k].value = value;
}

} // namespace liftx::features
