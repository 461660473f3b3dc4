#include "space/stream_state.hpp"

#include "support/error.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <functional>
#include <utility>

namespace liftx::space {

namespace {

/// Per dimension: the kernel maps work-groups over it (mapWrg) but not work-items (no mapLcl).
std::array<bool, 3> groups_without_work_items(const codegen::Kernel& k) {
  std::array<bool, 3> wrg{}, lcl{};
  for (const codegen::LoopRecord& loop : k.loops)
    for (int d = 0; d < 3; ++d) {
      const std::string dim = std::to_string(d);
      wrg[size_t(d)] = wrg[size_t(d)] || loop.primitive == "mapWrg" + dim;
      lcl[size_t(d)] = lcl[size_t(d)] || loop.primitive == "mapLcl" + dim;
    }
  return {wrg[0] && !lcl[0], wrg[1] && !lcl[1], wrg[2] && !lcl[2]};
}

} // namespace

VariantStream::State::Generated VariantStream::State::generate_kernel(const ir::Program& p,
                                                                      bool tied, bool source,
                                                                      const DeviceLimits& device) {
  Generated g;
  try {
    codegen::Options o;
    o.tie_threads_to_lengths = tied;
    o.source = source;
    o.subgroup_rows = codegen::subgroup_rows_for(device);
    g.kernel = codegen::generate(p, o);
  } catch (const UserError& e) {
    g.rejection = "codegen refused: " + first_words(e.message(), 4);
  } catch (const NotImplemented& e) {
    g.rejection = "codegen not implemented: " + first_words(e.what(), 6);
  } catch (const InternalError& e) {
    g.rejection = "codegen internal error: " + first_words(e.what(), 6);
  } catch (...) {
    g.error = std::current_exception();
  }
  return g;
}

void VariantStream::State::generate(Lowered& item) const {
  const auto start = std::chrono::steady_clock::now();
  item.tied = generate_kernel(item.program, true, options.kernel_source, options.device);
  const bool kept = item.tied.kernel &&
                    item.tied.kernel->live_private_bytes() <= options.device.private_memory_bytes;
  if (kept && options.free_threads && item.free_threads)
    item.free = generate_kernel(item.program, false, options.kernel_source, options.device);
  item.generate_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  item.generated = true;
}

std::vector<Launch>
VariantStream::State::launches(const codegen::Kernel& k, bool tied,
                               const std::array<int64_t, 3>& lengths,
                               const std::optional<std::array<int64_t, 3>>& tied_locals) {
  if (codegen::index_overflow(k, options.sizes) ||
      (k.tail && codegen::index_overflow(*k.tail, options.sizes))) {
    reject("index overflows int");
    return {};
  }
  int dims = std::clamp(k.launch.dims, 1, 3);
  int64_t local_bytes = rewrite::evaluate_or(k.local_bytes(), options.sizes, 0);
  std::array<std::vector<int64_t>, 3> globals, locals_fixed;
  // A dimension whose work-groups split the work (mapWrg) but whose work-items do not (no
  // mapLcl): more than one work-item along it would repeat the group's work.
  const std::array<bool, 3> repeated_by_work_items = groups_without_work_items(k);
  for (int d = 0; d < dims; ++d) {
    if (tied) {
      globals[d] = {k.launch.global[d] ? rewrite::evaluate_or(*k.launch.global[d], options.sizes, 1)
                                       : 1};
    } else {
      int64_t base = 1;
      while (base * 2 <= lengths[d])
        base *= 2;
      for (int h = 0; h <= options.free_global_halvings && base >= 1; ++h, base /= 2)
        globals[d].push_back(base);
    }
    if (tied && k.launch.local[d])
      locals_fixed[d] = {rewrite::evaluate_or(*k.launch.local[d], options.sizes, 0)};
  }
  std::vector<Launch> out;
  // Odometer over the global choices, then over local choices of each.
  std::function<void(int, Launch&)> choose_global, choose_local;
  choose_local = [&](int d, Launch& l) {
    if (d == dims) {
      // Every launch of the space names its work-group (0 would leave it to the runtime).
      if (std::any_of(l.local.begin(), l.local.begin() + l.dims, [](int64_t v) { return v < 1; }))
        reject("local does not divide global");
      else if (!tied && tied_locals && runs_as_tied_twin(l, lengths, *tied_locals))
        reject("free launch runs as its tied twin");
      else if (std::optional<codegen::LaunchRefusal> refusal =
                   codegen::launch_refusal(k, l, options.sizes, options.device, local_bytes))
        reject(refusal->reason);
      else if (std::optional<codegen::LaunchRefusal> tail_refusal =
                   k.tail ? codegen::launch_refusal(*k.tail,
                                                    codegen::tail_launch(*k.tail, l, options.sizes),
                                                    options.sizes, options.device)
                          : std::nullopt)
        reject("remainder: " + tail_refusal->reason);
      else
        out.push_back(l);
      return;
    }
    std::vector<int64_t> options_d = locals_fixed[d];
    if (options_d.empty())
      for (int64_t p = 1; p <= l.global[d]; p *= 2)
        if (l.global[d] % p == 0)
          options_d.push_back(p);
    for (int64_t v : options_d) {
      if (v > 1 && repeated_by_work_items[size_t(d)]) {
        reject("work-items would repeat their group's work");
        continue;
      }
      l.local[d] = v;
      choose_local(d + 1, l);
    }
  };
  choose_global = [&](int d, Launch& l) {
    if (d == dims) {
      choose_local(0, l);
      return;
    }
    for (int64_t g : globals[d]) {
      l.global[d] = g;
      choose_global(d + 1, l);
    }
  };
  Launch l;
  l.dims = dims;
  l.tied = tied;
  choose_global(0, l);
  return out;
}

bool VariantStream::State::runs_as_tied_twin(const Launch& l, const std::array<int64_t, 3>& lengths,
                                             const std::array<int64_t, 3>& tied_locals) {
  for (int d = 0; d < l.dims; ++d)
    if (l.global[d] != lengths[d] || (tied_locals[d] > 0 && l.local[d] != tied_locals[d]))
      return false;
  return true;
}

void VariantStream::State::queue_lowered(const ir::Program& p, const std::string& strategy,
                                         std::map<std::string, int64_t> params, bool free_threads) {
  if (!seen_lowered.insert(p).second) {
    reject("duplicate lowered program");
    return;
  }
  lowered.push_back(Lowered{p, strategy, std::move(params), free_threads,
                            std::exchange(lowering_counts, SpaceCounts{})});
}

void VariantStream::State::process_lowered(Lowered& item) {
  add_counts(counts, item.lowering_counts);
  ++counts.lowered_programs;
  generating_seconds += item.generate_seconds;
  ++generated_programs;
  if (item.tied.error)
    std::rethrow_exception(item.tied.error);
  if (!item.tied.kernel) {
    reject(item.tied.rejection);
    return;
  }
  if (item.tied.kernel->live_private_bytes() > options.device.private_memory_bytes) {
    reject("private memory over limit");
    return;
  }
  ++counts.kernels;
  std::array<int64_t, 3> lengths{1, 1, 1};
  std::array<int64_t, 3> tied_locals{0, 0, 0};
  const codegen::Kernel& tied = *item.tied.kernel;
  const int tied_dims = std::clamp(tied.launch.dims, 1, 3);
  for (int d = 0; d < tied_dims; ++d) {
    if (tied.launch.global[d])
      lengths[d] = rewrite::evaluate_or(*tied.launch.global[d], options.sizes, 1);
    if (tied.launch.local[d])
      tied_locals[d] = rewrite::evaluate_or(*tied.launch.local[d], options.sizes, 0);
  }
  auto queue_kernel = [&](codegen::Kernel k, bool is_tied) {
    // A free-thread kernel of other dimensions has no tied twin.
    const bool twin_possible = !is_tied && std::clamp(k.launch.dims, 1, 3) == tied_dims;
    std::vector<Launch> kernel_launches =
        launches(k, is_tied, lengths, twin_possible ? std::optional(tied_locals) : std::nullopt);
    if (kernel_launches.empty())
      return;
    if (options.kernel_source && sources.insert(k.source).second)
      ++counts.distinct_sources;
    pending.push_back(Pending{item.program, item.strategy, item.parameters,
                              std::make_shared<const codegen::Kernel>(std::move(k)),
                              std::move(kernel_launches), 0, counts.kernels - 1});
  };
  queue_kernel(std::move(*item.tied.kernel), true);
  if (options.free_threads && item.free_threads) {
    if (item.free.error)
      std::rethrow_exception(item.free.error);
    if (item.free.kernel) {
      ++counts.kernels;
      queue_kernel(std::move(*item.free.kernel), false);
    } else {
      reject(item.free.rejection);
    }
  }
}

} // namespace liftx::space
