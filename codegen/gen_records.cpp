// What the generator records beside the statements it emits: every memory access, barrier and
// user-function call with its enclosing loops (the static features read them), and, in
// instrumented kernels, the counters that check those records at run time.
#include "codegen/generator.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace liftx::codegen {

LoopNest Generator::loop_contexts() const {
  auto same = [](const LoopFrame& f, const LoopContext& c) {
    return f.var == c.var && f.trip == c.trip && f.dim == c.dim && f.kind == c.kind &&
           f.primitive == c.primitive;
  };
  if (!std::equal(loops_.begin(), loops_.end(), open_loops_.begin(), open_loops_.end(), same)) {
    std::vector<LoopContext> loops;
    loops.reserve(loops_.size());
    for (const LoopFrame& f : loops_)
      loops.push_back({f.primitive, f.dim, f.kind, f.var, f.trip});
    open_loops_ = LoopNest(std::move(loops));
  }
  return open_loops_;
}

void Generator::record_access(MemoryAccess access) {
  access.loops = loop_contexts();
  const size_t slot = kernel_.accesses.size();
  if (options_.instrument) {
    count_slot(std::to_string(slot));
    std::string first = fmt::format("liftx_first_index[liftx_wi * LIFTX_ACCESSES + {}]", slot);
    emit(fmt::format("if ({} < 0) {} = {};", first, first, arith::to_c(access.index)));
  }
  kernel_.accesses.push_back(std::move(access));
}

/// Records the statement's reads and the user functions it calls.
void Generator::record_loads(const ScalarValue& v) {
  for (const Load& load : v.loads)
    record_access(load);
  for (const ir::UserFunPtr& f : v.calls)
    kernel_.calls.push_back({f, loop_contexts()});
}

void Generator::emit_barrier(bool local_fence, bool global_fence) {
  emit_stmt({cl::Barrier{local_fence, global_fence}});
  count_slot(fmt::format("LIFTX_BARRIER_SLOT({})", kernel_.barriers.size()));
  kernel_.barriers.push_back({local_fence, global_fence, loop_contexts()});
}

bool Generator::ends_with_local_barrier() const {
  const std::vector<cl::Stmt>& stmts = blocks_.back()->stmts;
  // An instrumented kernel counts the barrier in the line after it.
  const size_t from_end = options_.instrument ? 2 : 1;
  if (stmts.size() < from_end)
    return false;
  const auto* barrier = std::get_if<cl::Barrier>(&stmts[stmts.size() - from_end].node);
  return barrier && barrier->local_fence && !barrier->global_fence;
}

bool Generator::drop_final_local_barrier() {
  if (!ends_with_local_barrier())
    return false;
  std::vector<cl::Stmt>& stmts = blocks_.back()->stmts;
  stmts.resize(stmts.size() - (options_.instrument ? 2 : 1));
  kernel_.barriers.pop_back(); // the last one recorded: its slot is the next barrier's
  return true;
}

/// Instrumented kernels: one more execution of `slot` by this work-item.
void Generator::count_slot(const std::string& slot) {
  if (options_.instrument)
    emit(fmt::format("liftx_counts[liftx_wi * LIFTX_SLOTS + {}] += 1;", slot));
}

} // namespace liftx::codegen
