// iterate(k, f): applications alternate between two buffers swapped through pointers, inside a
// work-group (local buffers, a barrier between applications) or inside one work-item's own work
// (private arrays). At the top of a kernel it would need a global synchronisation: refused.
#include "codegen/generator.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace liftx::codegen {

/// The first application reads the input and writes buffer A; the others alternate between A and
/// B through two swapped pointers; the last one writes the destination when there is one.
/// Work-items synchronise between applications when the buffers are shared.
Value Generator::emit_iterate(const ir::Iterate& node, const Value& x, const TargetPtr& dest,
                              const ir::Type& result) {
  std::optional<int64_t> count = node.count.as_constant();
  LIFTX_INTERNAL_CHECK(count && *count >= 0, "iterate count must be a constant");
  if (*count == 0)
    return layout_result(x, dest);
  const bool in_wrg = std::any_of(loops_.begin(), loops_.end(),
                                  [](const LoopFrame& f) { return f.level == Level::Wrg; });
  const bool in_thread = std::any_of(loops_.begin(), loops_.end(), [](const LoopFrame& f) {
    return f.level == Level::Glb || f.level == Level::Lcl;
  });
  if (!in_wrg && !in_thread)
    throw UserError("iterate over a whole kernel needs a global synchronisation between "
                    "iterations: put it inside mapWrg (local memory) or inside a work-item's "
                    "own computation",
                    loc_);
  if (!result.is_array())
    throw NotImplemented("iterate over a scalar in generated code");
  AddressSpace space =
      write_space_.value_or(in_thread ? AddressSpace::Private : AddressSpace::Local);
  if (space == AddressSpace::Global && !in_thread)
    throw UserError("iterate: work-groups share global buffers only through local "
                    "synchronisation; use toLocal",
                    loc_);
  const bool shared = space != AddressSpace::Private;
  auto sync = [&] {
    if (shared && !in_thread)
      emit_barrier(space == AddressSpace::Local, space == AddressSpace::Global);
  };
  auto run = [&](const Value& in, const TargetPtr& out) {
    std::optional<AddressSpace> saved = write_space_;
    write_space_.reset();
    apply(node.f, {in}, out, result);
    write_space_ = saved;
  };
  if (*count == 1 && dest) {
    run(x, dest);
    return target_value(dest);
  }
  Allocation a = allocate_array(result, space, "iterate");
  Allocation b = allocate_array(result, space, "iterate");
  const bool is_private = space == AddressSpace::Private;
  const std::string qualifier = is_private ? "" : std::string(address_space_name(space)) + " ";
  const std::string scalar = ir::scalar_name(a.kind);
  run(x, memory_target(a.name, result, a.offset, space));
  sync();
  std::string src = fresh("src");
  std::string dst = fresh("dst");
  emit(fmt::format("{}{}* {} = {} + {};", qualifier, scalar, src, a.name, arith::to_c(a.offset)));
  emit(fmt::format("{}{}* {} = {} + {};", qualifier, scalar, dst, b.name, arith::to_c(b.offset)));
  // With a destination the last application writes it; otherwise the result stays in src.
  int64_t looped = dest ? *count - 2 : *count - 1;
  if (looped > 0) {
    std::string it = fresh("it");
    const size_t record = kernel_.loops.size();
    kernel_.loops.push_back(
        {"iterate", cl::LoopKind::For, arith::Expr(looped), loc_, loop_contexts()});
    cl::Block body;
    blocks_.push_back(&body);
    loops_.push_back({Level::Seq, 0, arith::range_var(it, 0, looped), arith::Expr(looped),
                      "iterate", cl::LoopKind::For});
    count_slot(fmt::format("LIFTX_LOOP_SLOT({})", record));
    run(memory_value(src, result, 0, space), memory_target(dst, result, 0, space));
    sync();
    loops_.pop_back();
    emit(fmt::format("{{ {}{}* swap = {}; {} = {}; {} = swap; }}", qualifier, scalar, src, src, dst,
                     dst));
    blocks_.pop_back();
    emit_stmt({cl::For{fmt::format("int {} = 0", it), fmt::format("{} < {}", it, looped),
                       fmt::format("{} += 1", it), std::move(body)}});
  }
  if (dest) {
    run(memory_value(src, result, 0, space), dest);
    return target_value(dest);
  }
  return memory_value(src, result, 0, space);
}

} // namespace liftx::codegen
