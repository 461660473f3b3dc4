// Maps and reductions: where each may nest, the loop each becomes (nothing, a block, an if, a for,
// or unrolled copies: Lift's rule from the iteration range and the threads sharing it), and the
// barriers between a mapLcl and the work-items that read its result.
#include "codegen/generator.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <utility>

namespace liftx::codegen {

namespace {

std::pair<std::string, std::string> start_and_step(Level level, int dim) {
  switch (level) {
  case Level::Glb:
    return {fmt::format("get_global_id({})", dim), fmt::format("get_global_size({})", dim)};
  case Level::Wrg:
    return {fmt::format("get_group_id({})", dim), fmt::format("get_num_groups({})", dim)};
  case Level::Lcl:
    return {fmt::format("get_local_id({})", dim), fmt::format("get_local_size({})", dim)};
  case Level::Seq:
    return {"0", "1"};
  }
  return {"0", "1"};
}

} // namespace

void Generator::check_nesting(Level level, int dim, const std::string& name) {
  auto inside = [&](Level l, std::optional<int> d) {
    return std::any_of(loops_.begin(), loops_.end(),
                       [&](const LoopFrame& f) { return f.level == l && (!d || f.dim == *d); });
  };
  auto fail = [&](const std::string& why) {
    throw UserError(fmt::format("{} {}", name, why), loc_);
  };
  switch (level) {
  case Level::Glb:
    if (inside(Level::Glb, dim))
      fail(fmt::format("nested inside mapGlb{}", dim));
    if (inside(Level::Wrg, std::nullopt) || inside(Level::Lcl, std::nullopt))
      fail("inside mapWrg/mapLcl");
    used_glb_ = true;
    break;
  case Level::Wrg:
    if (inside(Level::Wrg, dim))
      fail(fmt::format("nested inside mapWrg{}", dim));
    if (inside(Level::Glb, std::nullopt) || inside(Level::Lcl, std::nullopt))
      fail("inside mapGlb/mapLcl");
    used_wrg_ = true;
    break;
  case Level::Lcl:
    if (!inside(Level::Wrg, dim))
      fail(fmt::format("outside mapWrg{}", dim));
    if (inside(Level::Lcl, dim))
      fail(fmt::format("nested inside mapLcl{}", dim));
    break;
  case Level::Seq:
    break;
  }
}

cl::LoopKind Generator::decide(Level level, int dim, const arith::Expr& trip, bool wants_unroll) {
  if (arith::prove_le(trip, 0))
    return cl::LoopKind::None;
  if (level == Level::Seq) {
    if (arith::prove_eq(trip, 1))
      return cl::LoopKind::Block;
    std::optional<int64_t> n = trip.as_constant();
    if (wants_unroll && n && *n <= kMaxUnroll)
      return cl::LoopKind::Unrolled;
    return cl::LoopKind::For;
  }
  std::optional<arith::Expr> p = workers(level, dim);
  if (p && arith::prove_eq(*p, trip))
    return cl::LoopKind::Block;
  if (p && arith::prove_le(trip, *p))
    return cl::LoopKind::If;
  return cl::LoopKind::For;
}

/// Emits `body(index)` once per iteration as decided; returns the loop kind.
cl::LoopKind Generator::emit_loop(Level level, int dim, const arith::Expr& trip, bool wants_unroll,
                                  const std::string& var_base, const std::string& primitive,
                                  const std::function<void(const arith::Expr&)>& body) {
  cl::LoopKind kind = decide(level, dim, trip, wants_unroll);
  // A loop's body, or a guarded one, does not always run right after the code before it, nor
  // the code after it right after its body: what was exchanged before it is not read inside,
  // nor what was exchanged inside after it; what was exchanged before it is read after it
  // only if no lane row was written inside.
  const bool straight =
      kind == cl::LoopKind::Unrolled || kind == cl::LoopKind::Block || kind == cl::LoopKind::None;
  std::map<std::string, std::string> exchanged_before;
  const int64_t published_before = lane_rows_published_;
  if (!straight)
    exchanged_before = std::exchange(exchanged_columns_, {});
  auto [start, step] = start_and_step(level, dim);
  const size_t record = kernel_.loops.size();
  kernel_.loops.push_back({primitive, kind, trip, loc_, loop_contexts()});
  auto run_body = [&](cl::Block& block, const arith::Expr& index, const arith::Expr& var) {
    blocks_.push_back(&block);
    loops_.push_back({level, dim, var, trip, primitive, kind, record, &block});
    count_slot(fmt::format("LIFTX_LOOP_SLOT({})", record));
    body(index);
    loops_.pop_back();
    blocks_.pop_back();
  };
  switch (kind) {
  case cl::LoopKind::None:
    emit_stmt({cl::Comment{fmt::format("{}: no iterations", level_name(level, dim))}});
    break;
  case cl::LoopKind::Unrolled: {
    int64_t n = *trip.as_constant();
    for (int64_t k = 0; k < n; ++k) {
      cl::Scope scope;
      run_body(scope.body, arith::Expr(k), arith::Expr(k));
      emit_stmt({std::move(scope)});
    }
    break;
  }
  case cl::LoopKind::Block:
  case cl::LoopKind::If:
  case cl::LoopKind::For: {
    std::string name = fresh(var_base);
    arith::Expr var = arith::range_var(name, 0, trip);
    cl::Block block;
    std::optional<int64_t> workers_known;
    if (level == Level::Lcl)
      if (std::optional<arith::Expr> p = workers(level, dim))
        workers_known = p->as_constant();
    const std::optional<int64_t> trip_known = trip.as_constant();
    if (kind == cl::LoopKind::For && workers_known && trip_known && *workers_known > 0 &&
        *trip_known % *workers_known == 0) {
      // Every work-item runs trip / workers iterations: a loop of a constant count, which the
      // OpenCL compiler unrolls, issuing all of a copy's reads before its writes (a strided loop
      // from get_local_id waits for each read in turn).
      const std::string round = fresh("r");
      block.stmts.push_back(
          {cl::Line{fmt::format("int {} = {} + {} * {};", name, start, *workers_known, round)}});
      run_body(block, var, var);
      emit_stmt({cl::For{fmt::format("int {} = 0", round),
                         fmt::format("{} < {}", round, *trip_known / *workers_known),
                         fmt::format("{} += 1", round), std::move(block)}});
    } else if (kind == cl::LoopKind::For) {
      run_body(block, var, var);
      emit_stmt({cl::For{fmt::format("int {} = {}", name, start),
                         fmt::format("{} < {}", name, arith::to_c(trip)),
                         fmt::format("{} += {}", name, step), std::move(block)}});
    } else if (kind == cl::LoopKind::Block && level == Level::Seq) {
      // One sequential iteration: index 0, a constant (private arrays need constant indices).
      run_body(block, arith::Expr(0), arith::Expr(0));
      emit_stmt({cl::Scope{std::move(block)}});
    } else {
      block.stmts.push_back({cl::Line{fmt::format("int {} = {};", name, start)}});
      run_body(block, var, var);
      if (kind == cl::LoopKind::Block)
        emit_stmt({cl::Scope{std::move(block)}});
      else
        emit_stmt({cl::If{fmt::format("{} < {}", start, arith::to_c(trip)), std::move(block)}});
    }
    break;
  }
  }
  if (!straight) {
    exchanged_columns_.clear();
    if (lane_rows_published_ == published_before)
      exchanged_columns_ = std::move(exchanged_before);
  }
  return kind;
}

Value Generator::emit_map(Level level, int dim, const ir::Fun& f, const Value& x, TargetPtr dest,
                          const ir::Type& result) {
  const std::string name = level_name(level, dim);
  check_nesting(level, dim, name);
  auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
  arith::Expr trip = input->type.as<ir::ArrayType>()->length;
  if (level == Level::Glb)
    census_.glb[dim].push_back(trip);
  if (level == Level::Wrg)
    census_.wrg[dim].push_back(trip);
  if (level == Level::Lcl)
    census_.lcl[dim].push_back(trip);
  bool allocated = false;
  if (!dest) {
    if (level == Level::Glb || level == Level::Wrg)
      throw UserError(fmt::format("the result of {} would be read by other threads of the same "
                                  "kernel, which cannot synchronise across work-groups: write "
                                  "it to the program's output or fuse the computations",
                                  name),
                      loc_);
    const AddressSpace space = write_space_.value_or(default_space());
    // Private memory written by work-items that run one iteration each holds one element per
    // work-item (an accumulator per work-item in a work-group's loop: its tiles in local memory).
    const std::vector<int> lanes = level == Level::Lcl && space == AddressSpace::Private
                                       ? lane_dims_of(dim, f, result)
                                       : std::vector<int>{};
    dest =
        lanes.empty() ? allocate(result, space, name) : allocate_per_work_item(result, lanes, name);
    allocated = true;
  }
  bool wants_unroll = dest->space == AddressSpace::Private || input->reads_private;
  ir::Type result_element = result.as<ir::ArrayType>()->element;
  const size_t loop_record = kernel_.loops.size();
  // The innermost mapWrg's body is where its work-group's tile's edges are known
  // (interior_tiles). A mapGlb's tile (a work-item's) gets no copy: on an H100 the register
  // pipelines ran 17-24% slower copied (bench/RESULTS.md, "Interior tiles").
  const bool tile_body = options_.interior_tiles && lengths_ && !options_.instrument &&
                         level == Level::Wrg && !maps_in_parallel(f);
  cl::LoopKind kind = emit_loop(level, dim, trip, wants_unroll,
                                level == Level::Glb   ? fmt::format("gid{}", dim)
                                : level == Level::Wrg ? fmt::format("wg{}", dim)
                                : level == Level::Lcl ? fmt::format("lid{}", dim)
                                                      : std::string("i"),
                                name, [&](const arith::Expr& index) {
                                  auto body = [&] {
                                    apply(f, {input->at(index)}, dest->at(index), result_element);
                                  };
                                  if (tile_body)
                                    with_interior_copy(body);
                                  else
                                    body();
                                });
  // Other threads of the work-group read what this mapLcl wrote: synchronise unless the memory
  // is private. Nested in another mapLcl the barrier sits inside that loop (its consumer, e.g. a
  // reduceSeq, reads every element in the same iteration); launches whose local size would make
  // that loop's trip count differ between work-items are refused (divergent_barrier).
  if (level == Level::Lcl && allocated && dest->space != AddressSpace::Private)
    emit_barrier(dest->space == AddressSpace::Local, dest->space == AddressSpace::Global);
  // The same for a sequential loop of a work-group's shared window whose steps are mapLcl
  // loops (rows of a window written one after the other by the group's work-items).
  if (level == Level::Seq && allocated && dest->space == AddressSpace::Local &&
      shares_windows(result.as<ir::ArrayType>()->element))
    emit_barrier(true, false);
  // A work-group loop that runs more than once reuses its local memory: wait until every
  // thread has finished reading before the next iteration overwrites it.
  if (level == Level::Wrg && kind == cl::LoopKind::For)
    add_loop_end_barrier(loop_record, dim);
  return target_value(dest);
}

void Generator::add_loop_end_barrier(size_t loop_record, int dim, bool always) {
  const LoopRecord record = kernel_.loops.at(loop_record);
  cl::Stmt& last = current().stmts.back();
  if (auto* loop = std::get_if<cl::For>(&last.node);
      loop && (always || cl::census(loop->body).barriers > 0)) {
    loop->body.stmts.push_back({cl::Barrier{true, false}});
    if (options_.instrument)
      loop->body.stmts.push_back({cl::Line{
          fmt::format("liftx_counts[liftx_wi * LIFTX_SLOTS + LIFTX_BARRIER_SLOT({})] += 1;",
                      kernel_.barriers.size())}});
    std::vector<LoopContext> context = record.enclosing.loops();
    // The barrier runs once per iteration of this loop, whose variable it does not need.
    context.push_back({record.primitive, dim, record.kind, arith::Expr(0), record.trip_count});
    kernel_.barriers.push_back({true, false, LoopNest(std::move(context))});
  }
}

void Generator::reduction_loop(const arith::Expr& trip, bool unroll,
                               const std::function<void(const arith::Expr&)>& step) {
  const size_t loop_record = kernel_.loops.size();
  const int64_t reused_before = reused_local_allocations_;
  // Private memory a step allocates (its operands copied to registers) is dead once the step's
  // result is in the accumulator, so unrolled steps can reuse the same registers: the loop needs
  // its widest step live at once, as the rolled loop's single body does. The rest is recorded as
  // reused, measured on what is live so that nested unrolled loops are not subtracted twice.
  auto live = [this] { return kernel_.private_bytes - kernel_.private_reused_bytes; };
  int64_t widest_step = 0, all_steps = 0;
  const cl::LoopKind kind =
      emit_loop(Level::Seq, 0, trip, unroll, "j", "reduceSeq", [&](const arith::Expr& index) {
        const int64_t step_start = live();
        step(index);
        widest_step = std::max(widest_step, live() - step_start);
        all_steps += live() - step_start;
      });
  kernel_.private_reused_bytes += std::max<int64_t>(0, all_steps - widest_step);
  // Its steps share the local memory they stage (reuses_local_memory): no step may overwrite it
  // before every work-item has read the previous step's.
  if (kind == cl::LoopKind::For && reused_local_allocations_ > reused_before)
    add_loop_end_barrier(loop_record, 0);
}

Value Generator::emit_reduce(const ir::Fun& f, const ir::Expr& init_expr, const Value& x,
                             const TargetPtr& dest, const ir::Type& result) {
  auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
  Value init = eval(init_expr, nullptr);
  const ScalarValue* init_scalar = as_scalar(init);
  if (!init_scalar)
    return emit_aggregate_reduce(f, init, *input, dest, result);
  ir::ScalarKind kind = init_scalar->kind;
  std::string acc = fresh("acc");
  emit(fmt::format("{} {} = {};", ir::scalar_name(kind), acc, init_scalar->text));
  arith::Expr trip = input->type.as<ir::ArrayType>()->length;
  ir::Type acc_type = ir::Type::scalar(kind);
  // Short reductions of a constant length are unrolled: indices become constants, so
  // generated weights fold to literals and private inputs stay in registers.
  std::optional<int64_t> constant_trip = trip.as_constant();
  const bool unroll = input->reads_private || (constant_trip && *constant_trip <= kMaxReduceUnroll);
  reduction_loop(trip, unroll, [&](const arith::Expr& index) {
    Value next = apply(f, {ScalarValue{acc, kind}, input->at(index)}, nullptr, acc_type);
    const ScalarValue* s = as_scalar(next);
    LIFTX_INTERNAL_CHECK(s, "reduceSeq: the function returned a non-scalar");
    emit(fmt::format("{} = {};", acc, s->text));
    record_loads(*s);
  });
  if (dest) {
    store(dest->at(0), ScalarValue{acc, kind});
    return target_value(dest);
  }
  return make_array(
      result,
      [acc, kind](const arith::Expr&) {
        return ScalarValue{acc, kind};
      },
      true);
}

void Generator::copy_into(const Value& v, const TargetPtr& dest, const ir::Type& type,
                          const std::string& primitive) {
  if (const auto* array = type.as<ir::ArrayType>()) {
    const ArrayValue* elements = as_array(v);
    LIFTX_INTERNAL_CHECK(elements, "copying a {} as an array", type_of(v).to_string());
    if (dest->own) { // each work-item copies its own element
      if (!elements->own || elements->lane_dim != dest->lane_dim)
        throw UserError(fmt::format("{}: an accumulator held per work-item (written by mapLcl{}) "
                                    "needs a value held the same way",
                                    primitive, dest->lane_dim),
                        loc_);
      copy_into(elements->own(), dest->own(), array->element, primitive);
      return;
    }
    emit_loop(Level::Seq, 0, array->length, true, "c", primitive, [&](const arith::Expr& i) {
      copy_into(elements->at(i), dest->at(i), array->element, primitive);
    });
    return;
  }
  if (const auto* tuple = type.as<ir::TupleType>(); tuple && !dest->fields.empty()) {
    const TupleValue* fields = as_tuple(v);
    LIFTX_INTERNAL_CHECK(fields && fields->elements.size() == dest->fields.size(),
                         "copying a {} as a tuple of {}", type_of(v).to_string(),
                         dest->fields.size());
    for (size_t k = 0; k < dest->fields.size(); ++k)
      copy_into(fields->elements[k], dest->fields[k], tuple->elements[k], primitive);
    return;
  }
  store(dest, v);
}

Value Generator::emit_aggregate_reduce(const ir::Fun& f, const Value& init, const ArrayValue& input,
                                       const TargetPtr& dest, const ir::Type& result) {
  const ir::Type acc_type = result.as<ir::ArrayType>()->element;
  // Private arrays are declared with constant lengths.
  std::function<bool(const ir::Type&)> constant_lengths = [&](const ir::Type& t) {
    if (const auto* a = t.as<ir::ArrayType>())
      return a->length.as_constant().has_value() && constant_lengths(a->element);
    if (const auto* tuple = t.as<ir::TupleType>())
      return std::all_of(tuple->elements.begin(), tuple->elements.end(), constant_lengths);
    return true;
  };
  if (!constant_lengths(acc_type))
    throw UserError(fmt::format("reduceSeq: an accumulator of type {} lives in private memory, "
                                "which needs constant array lengths",
                                acc_type.to_string()),
                    loc_);
  // What the accumulators cost in registers (kernel_.private_bytes, which the space holds to
  // the device's limit): a step reads acc[i] to write next[i], after which acc[i] is dead, and
  // next is dead once copied back, so a register allocator gives both the same registers. A
  // reduction that starts from an enclosing one's accumulator (a loop unrolled in chunks) reuses
  // its registers too: that accumulator is not read again before the chunk's result replaces it.
  // An initial value held per work-item (written by mapLcl: a work-group's accumulators, one
  // block per work-item) makes the accumulators per work-item too.
  std::vector<int> lanes;
  for (Value level = init; as_array(level) && as_array(level)->own;) {
    lanes.push_back(as_array(level)->lane_dim);
    Value element = as_array(level)->own();
    level = std::move(element);
  }
  const int64_t bytes_before = kernel_.private_bytes;
  const TargetPtr acc = allocate_per_work_item(acc_type, lanes, "reduceSeq");
  const int64_t accumulator_bytes = kernel_.private_bytes - bytes_before;
  const TargetPtr next = allocate_per_work_item(acc_type, lanes, "reduceSeq");
  kernel_.private_bytes -= accumulator_bytes;
  const auto* init_array = std::get_if<std::shared_ptr<const ArrayValue>>(&init);
  if (init_array && !aggregate_accumulators_.empty() &&
      init_array->get() == aggregate_accumulators_.back())
    kernel_.private_bytes -= accumulator_bytes;
  copy_into(init, acc, acc_type, "reduceSeq");
  const Value current = target_value(acc);
  const auto* current_array = std::get_if<std::shared_ptr<const ArrayValue>>(&current);
  aggregate_accumulators_.push_back(current_array ? current_array->get() : nullptr);
  struct Popped { // also when the step throws (a user error in f)
    std::vector<const ArrayValue*>& stack;
    ~Popped() { stack.pop_back(); }
  } popped{aggregate_accumulators_};
  const arith::Expr trip = input.type.as<ir::ArrayType>()->length;
  std::optional<int64_t> constant_trip = trip.as_constant();
  const bool unroll = input.reads_private || (constant_trip && *constant_trip <= kMaxReduceUnroll);
  reduction_loop(trip, unroll, [&](const arith::Expr& index) {
    std::optional<AddressSpace> saved = std::exchange(write_space_, std::nullopt);
    const Value stepped = apply(f, {current, input.at(index)}, next, acc_type);
    write_space_ = saved;
    copy_into(stepped, acc, acc_type, "reduceSeq");
  });
  if (dest) {
    copy_into(current, dest->at(0), acc_type, "reduceSeq");
    return target_value(dest);
  }
  return make_array(
      result, [current](const arith::Expr&) { return current; }, true);
}

} // namespace liftx::codegen
