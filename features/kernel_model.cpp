#include "features/model_internal.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <unordered_map>

namespace liftx::features {

namespace detail {

/// LoopRecord has no dimension field: parallel primitives end with it ("mapLcl1").
int dim_of(const std::string& primitive) {
  if (level_of(primitive) == Level::Seq || primitive.empty())
    return 0;
  char last = primitive.back();
  LIFTX_INTERNAL_CHECK(last >= '0' && last <= '2', "parallel loop '{}' has no dimension",
                       primitive);
  return last - '0';
}

void throw_count_overflow(int64_t a, int64_t b) {
  throw UserError(fmt::format("feature count overflows int64 ({} x {})", a, b));
}

} // namespace detail

using namespace detail;

namespace {

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

} // namespace

int64_t RepresentativeWarp::work_item(size_t lane, const std::array<int64_t, 3>& global) const {
  const auto& g = lanes.at(lane);
  return g[0] + global[0] * (g[1] + global[1] * g[2]);
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

AnalysisScratch::AnalysisScratch(const target::DeviceProfile& device)
    : buffers_(std::make_unique<Buffers>(device)) {}
AnalysisScratch::~AnalysisScratch() = default;
AnalysisScratch::AnalysisScratch(AnalysisScratch&&) noexcept = default;
AnalysisScratch& AnalysisScratch::operator=(AnalysisScratch&&) noexcept = default;

bool KernelModel::bind_launch(const Launch& launch, const Sizes& sizes,
                              const target::DeviceProfile& device, LaunchState& s) const {
  LIFTX_USER_CHECK(launch.dims >= 1 && launch.dims <= 3, "a launch has 1 to 3 dimensions, got {}",
                   launch.dims);
  LIFTX_USER_CHECK(launch.dims >= kernel_.launch.dims,
                   "kernel {} uses {} dimension(s), the launch gives {}", kernel_.name,
                   kernel_.launch.dims, launch.dims);
  s.global = s.local = s.groups = {1, 1, 1};
  bool any_local_missing = false;
  for (int d = 0; d < launch.dims; ++d) {
    auto k = static_cast<size_t>(d);
    LIFTX_USER_CHECK(launch.global[k] >= 1, "global size {} in dimension {}", launch.global[k], d);
    LIFTX_USER_CHECK(launch.local[k] >= 0, "local size {} in dimension {}", launch.local[k], d);
    any_local_missing = any_local_missing || launch.local[k] == 0;
  }
  LIFTX_USER_CHECK(!(any_local_missing && uses_work_groups_),
                   "kernel {} uses work-groups (mapWrg/mapLcl): give its local size", kernel_.name);
  std::array<int64_t, 3> local = any_local_missing ? assumed_local(launch, device) : launch.local;
  for (int d = 0; d < launch.dims; ++d) {
    auto k = static_cast<size_t>(d);
    s.global[k] = launch.global[k];
    s.local[k] = local[k];
    LIFTX_USER_CHECK(s.global[k] % s.local[k] == 0,
                     "local size {} does not divide global size {} in dimension {}", s.local[k],
                     s.global[k], d);
    s.groups[k] = s.global[k] / s.local[k];
  }
  s.values.assign(static_cast<size_t>(slots_.size()), 0);
  s.trips.assign(static_cast<size_t>(size_only_trips_), std::nullopt);
  for (const auto& [slot, name] : size_slots_) {
    auto it = sizes.find(name);
    LIFTX_USER_CHECK(it != sizes.end(), "kernel {}: size '{}' is not bound", kernel_.name, name);
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
