#include "features/model_internal.hpp"

#include <algorithm>

namespace liftx::features::detail {

namespace {

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

} // namespace

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
      LIFTX_INTERNAL_CHECK(!group_used[d], "two loops over one group id");
      group_used[d] = true;
    }
    if (loop.level == Level::Glb || loop.level == Level::Lcl) {
      LIFTX_INTERNAL_CHECK(!local_used[d], "two loops over one local id");
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

} // namespace liftx::features::detail
