#include "features/model_internal.hpp"

#include <algorithm>
#include <map>

namespace liftx::features {

using namespace detail;

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

} // namespace liftx::features
