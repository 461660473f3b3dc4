// Shared windows (mapSeqSlide over rows or planes in a work-group's scope): the window is not
// copied into each work-item's registers but read where its elements lie, by every work-item of
// the group. A window over a plain array (a tile of the input) is a view of its elements. A
// window over a stream of computed elements (another shared window's results: the previous time
// step of a streamed pipeline) reads them from a ring of `size` local buffers, into which the
// stream writes element j at slot j mod size, the group's work-items computing its points (the
// stream's mapLcl), then a barrier. AN5D's N.5D blocking keeps each fused step's last rows in
// shared memory the same way; docs/codegen.md compares the two.
//
// Barriers. A pipeline whose windows all slide by one element runs every stage one element
// ahead of its reader (AN5D double-buffers for one barrier per row and step; the lead makes it
// one per row): in each iteration of the loop that drives it, every stage computes the element
// its reader will take last in the next iteration, so that all it reads was written in earlier
// iterations, and the barrier that ends the iteration is the only one the rings need. A ring
// then keeps one slot more than its reader's window, the element being written. Before the
// loop, a prologue produces what the first iterations read, on demand, a barrier after each
// element. Any other pipeline (a window sliding by more, a source that is not a ring) produces
// on demand throughout: every row written into a ring is followed by a barrier (its readers, the
// next step's work-items, wait for all of it), and a ring slot is overwritten only after the
// previous iteration read it, the loop ending each iteration with a barrier. The
// temporaries a step allocates inside that loop (a re-clamped row, with its own barriers) are
// dead at the iteration's end, so the loop reuses their local memory (reuses_local_memory).
#include "codegen/generator.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace liftx::codegen {

namespace {

struct WindowShape {
  int64_t size = 0, step = 1;
  int64_t keep() const { return size - step; }
};

WindowShape shape_of(const ir::MapSeqSlide& node, const SourceLoc& loc) {
  std::optional<int64_t> size = node.size.as_constant(), step = node.step.as_constant();
  if (!size || !step)
    throw UserError(fmt::format("mapSeqSlide: a window shared by a work-group needs a constant "
                                "size and step, got {} and {}",
                                node.size.to_string(), node.step.to_string()),
                    loc);
  return {*size, *step};
}

} // namespace

namespace {

/// A row, a plane, or a tuple holding one (a row zipped with its position).
bool holds_array(const ir::Type& type) {
  if (type.as<ir::ArrayType>())
    return true;
  const auto* tuple = type.as<ir::TupleType>();
  return tuple && std::any_of(tuple->elements.begin(), tuple->elements.end(), holds_array);
}

/// A window reads its source's last `size` elements at once: a ring must keep them all.
void check_ring(int64_t slots, const WindowShape& shape) {
  LIFTX_INTERNAL_CHECK(slots == 0 || slots >= shape.size,
                       "a shared window of {} elements over a ring of {}", shape.size, slots);
}

} // namespace

bool Generator::shares_windows(const ir::Type& element) const {
  if (!holds_array(element))
    return false;
  const bool in_work_group = std::any_of(loops_.begin(), loops_.end(),
                                         [](const LoopFrame& f) { return f.level == Level::Wrg; });
  const bool in_work_item = std::any_of(loops_.begin(), loops_.end(), [](const LoopFrame& f) {
    return f.level == Level::Lcl || f.level == Level::Glb;
  });
  return in_work_group && !in_work_item;
}

Generator::SharedSource Generator::shared_source(const Value& x) const {
  auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
  for (const auto& [value, source] : shared_sources_)
    if (value == input)
      return source;
  SharedSource view;
  view.produce = [](const arith::Expr&) {};
  view.view = [input](const arith::Expr& j) { return input->at(j); };
  view.ahead = [](const arith::Expr&) {};
  view.prime = [](const arith::Expr&) {};
  return view;
}

void Generator::register_shared_source(const Value& produced, SharedSource source) {
  shared_sources_.emplace_back(std::get<std::shared_ptr<const ArrayValue>>(produced),
                               std::move(source));
}

Value Generator::shared_window(const SharedSource& source, const arith::Expr& first,
                               const ir::Type& window_type) {
  return make_array(
      window_type, [view = source.view, first](const arith::Expr& k) { return view(first + k); },
      false);
}

Value Generator::shared_slide_window(const ir::MapSeqSlide& node, const Value& x, TargetPtr dest,
                                     const ir::Type& result) {
  const WindowShape shape = shape_of(node, loc_);
  const SharedSource source = shared_source(x);
  check_ring(source.slots, shape);
  if (!dest)
    dest = allocate(result, write_space_.value_or(default_space()), "mapSeqSlide");
  const ir::Type element =
      std::get<std::shared_ptr<const ArrayValue>>(x)->type.as<ir::ArrayType>()->element;
  const ir::Type window_type = ir::Type::array(element, node.size);
  const ir::Type result_element = result.as<ir::ArrayType>()->element;
  const arith::Expr trip = result.as<ir::ArrayType>()->length;
  // Pipelined where every stage can run ahead and the loop iterates (a single window has no
  // next one to run ahead for).
  const bool pipelined = shape.step == 1 && source.ahead &&
                         (source.slots == 0 || source.slots > shape.size) &&
                         !arith::prove_le(trip, 1);
  const int64_t prologue = pipelined ? shape.size : shape.keep();
  for (int64_t k = 0; k < prologue; ++k)
    source.produce(arith::Expr(k));
  if (pipelined)
    source.prime(arith::Expr(shape.size - 1));
  // The next iteration's rows overwrite ring slots (and temporaries) this one read; in a
  // pipeline, the barrier that ends an iteration is also the one that publishes every stage's
  // row to its reader, whether or not the stages have barriers of their own.
  const bool publishes = pipelined && source.slots > 0 && !source.in_lanes;
  auto iteration = [&](const arith::Expr& index) {
    const arith::Expr first = index * shape.step;
    if (pipelined)
      source.ahead(first + shape.size); // the last element of the next window
    else
      for (int64_t k = 0; k < shape.step; ++k)
        source.produce(first + shape.keep() + k);
    apply(node.f, {shared_window(source, first, window_type)}, dest->at(index), result_element);
  };
  // Rings in registers are unrolled here, not by the OpenCL compiler: each copy's slots are
  // then constants in the source, which no compiler has to fold (NVIDIA's did not, and kept the
  // rings in its stack).
  const std::optional<int64_t> constant_trip = trip.as_constant();
  const int64_t copies = node.unroll;
  if (source.per_lane && copies > 1 && copies % source.slots == 0 && constant_trip &&
      *constant_trip >= 2 * copies) {
    const size_t record = kernel_.loops.size();
    shared_window_loops_.insert(record);
    // Each copy ends as an iteration of the rolled loop does: with a barrier where its rows are
    // published by one, or where it has barriers of its own (the next copy overwrites the local
    // memory it read). The loop's own barrier ends the last copy of its body.
    // A copy's temporaries (the consumer's window, repaired at the grid's edges) are dead once
    // its result is stored, as in a rolled loop's single body: the copies need the widest one's
    // live at once (as reduction_loop counts its unrolled steps), not all of them.
    int64_t widest_copy = 0, all_copies = 0;
    auto copy = [&](const arith::Expr& index, bool ends_loop_body) {
      const int64_t copy_start = kernel_.live_private_bytes();
      cl::Scope scope;
      blocks_.push_back(&scope.body);
      iteration(index);
      blocks_.pop_back();
      const int64_t grown = kernel_.live_private_bytes() - copy_start;
      widest_copy = std::max(widest_copy, grown);
      all_copies += grown;
      const bool barrier_after = publishes || cl::census(scope.body).barriers > 0;
      emit_stmt({std::move(scope)});
      if (barrier_after && !ends_loop_body)
        emit_barrier(true, false);
    };
    const int64_t rounds = *constant_trip / copies;
    const cl::LoopKind kind = emit_loop(Level::Seq, 0, arith::Expr(rounds), false, "s",
                                        "mapSeqSlide", [&](const arith::Expr& round) {
                                          for (int64_t k = 0; k < copies; ++k)
                                            copy(round * copies + k, k + 1 == copies);
                                        });
    LIFTX_INTERNAL_CHECK(kind == cl::LoopKind::For, "a loop of {} rounds of {} copies", rounds,
                         copies);
    add_loop_end_barrier(record, 0, publishes);
    for (int64_t index = rounds * copies; index < *constant_trip; ++index)
      copy(arith::Expr(index), false);
    kernel_.private_reused_bytes += std::max<int64_t>(0, all_copies - widest_copy);
    return target_value(dest);
  }
  const size_t record = kernel_.loops.size();
  shared_window_loops_.insert(record);
  const cl::LoopKind kind = emit_loop(Level::Seq, 0, trip, false, "s", "mapSeqSlide", iteration);
  if (kind == cl::LoopKind::For) {
    add_loop_end_barrier(record, 0, publishes);
    current().stmts.insert(current().stmts.end() - 1,
                           {cl::Line{fmt::format("#pragma unroll {}", node.unroll)}});
  }
  return target_value(dest);
}

Value Generator::shared_window_stream(const ir::MapSeqSlide& node, const Value& x,
                                      const ir::Type& result) {
  const WindowShape shape = shape_of(node, loc_);
  // Shared by this stream's functions, not copied into each: a copy holds copies of the whole
  // pipeline below it, so copies per stage would grow exponentially with the steps.
  const auto from = std::make_shared<const SharedSource>(shared_source(x));
  const SharedSource& source = *from;
  check_ring(source.slots, shape);
  const ir::Type element =
      std::get<std::shared_ptr<const ArrayValue>>(x)->type.as<ir::ArrayType>()->element;
  const ir::Type window_type = ir::Type::array(element, node.size);
  const ir::Type result_element = result.as<ir::ArrayType>()->element;
  // Whether this stream can run ahead of its reader (shared_slide_window's pipelined form): then
  // its ring keeps one slot more, for the element written while the reader reads its window.
  const bool can_run_ahead =
      shape.step == 1 && source.ahead && (source.slots == 0 || source.slots > shape.size);
  const int64_t ring_slots = can_run_ahead ? shape.size + 1 : shape.size;
  // Allocated before the loop that drives the pipeline: one ring per work-group, in local
  // memory or in the registers of its lanes.
  const int64_t lanes = ring_lanes(node.f, result_element);
  if (lanes_of(node.f, result_element) == 0)
    ++group_streams_;
  // Rows exchanged by shuffles need no barrier; the emulation's copies in local memory do.
  const bool in_lanes = lanes > 0 && options_.subgroup_rows == SubgroupRows::nvidia_shuffle;
  const TargetPtr ring = lanes > 0 ? lanes_ring(result_element, ring_slots, lanes)
                                   : allocate(ir::Type::array(result_element, ring_slots),
                                              AddressSpace::Local, "mapSeqSlide");
  for (int64_t k = 0; k < shape.keep(); ++k)
    source.produce(arith::Expr(k));
  const arith::Expr slots(ring_slots);
  // The private arrays a row's step allocates (a lane's repaired window) are dead once the row
  // is in the ring, and the rows of every stream are computed one after another: the kernel
  // needs its widest row's live at once, not every row's (as reduction_loop counts the steps of
  // a reduction).
  auto row_temporaries = [this](const std::function<void()>& emit_row) {
    const int64_t before = kernel_.live_private_bytes();
    emit_row();
    const int64_t grown = kernel_.live_private_bytes() - before;
    kernel_.private_reused_bytes += std::min(grown, widest_shared_row_);
    widest_shared_row_ = std::max(widest_shared_row_, grown);
  };
  SharedSource produced;
  produced.produce = [this, f = node.f, from, ring, shape, slots, window_type, result_element,
                      row_temporaries, in_lanes](const arith::Expr& j) {
    const arith::Expr first = j * shape.step;
    for (int64_t k = 0; k < shape.step; ++k)
      from->produce(first + shape.keep() + k);
    row_temporaries([&] {
      apply(f, {shared_window(*from, first, window_type)}, ring->at(j % slots), result_element);
    });
    publish_lane_row(ring, j % slots);
    if (!in_lanes)
      emit_barrier(true, false);
  };
  produced.in_lanes = in_lanes;
  produced.per_lane = lanes > 0;
  produced.reads_past_end = true;
  produced.view = [ring, slots](const arith::Expr& j) { return target_value(ring->at(j % slots)); };
  produced.slots = ring_slots;
  if (can_run_ahead) {
    const arith::Expr length = result.as<ir::ArrayType>()->length;
    const arith::Expr source_length =
        std::get<std::shared_ptr<const ArrayValue>>(x)->type.as<ir::ArrayType>()->length;
    // Element j reads the source's j to j + size - 1: the source runs `size` elements ahead.
    // Past the stream's end (the pipeline's last iterations) a stage computes its last element
    // again, from what its source still holds, into the slot of element `length`: that of
    // element length - size - 1, which nothing reads any more. (Not an `if` around the stage:
    // the stage has barriers inside, and PoCL miscompiled barriers under such a condition.)
    //
    // A ring per lane (registers) must be indexed by constants once unrolled, which a clamped
    // element is not: its stages compute elements past the end from what their source's slots
    // hold, into the slot that element takes (the row written while the reader reads its
    // window: nothing reads it), and only a stage reading a view (global memory) is clamped,
    // to stay inside it. What they compute past the end is never read.
    const bool per_lane = lanes > 0, clamped = !per_lane || !from->reads_past_end;
    produced.ahead = [this, f = node.f, from, ring, shape, slots, window_type, result_element,
                      length, row_temporaries, per_lane, clamped](const arith::Expr& j) {
      const arith::Expr computed = clamped ? arith::min(j, length - 1) : j;
      const arith::Expr slot = (per_lane ? j : arith::min(j, length)) % slots;
      row_temporaries([&] {
        apply(f, {shared_window(*from, computed, window_type)}, ring->at(slot), result_element);
      });
      publish_lane_row(ring, slot);
      from->ahead(j + shape.size);
    };
    // Only a pipeline shorter than its windows would prime past a stream's end: then its last
    // element is produced again, into its own slot.
    produced.prime = [from, shape, source_length](const arith::Expr& j) {
      const arith::Expr next = j + shape.size;
      from->produce(arith::min(next, source_length - 1));
      from->prime(next);
    };
  }
  Value stream = make_array(
      result,
      [produce = produced.produce, view = produced.view](const arith::Expr& j) {
        produce(j);
        return view(j);
      },
      false);
  register_shared_source(stream, std::move(produced));
  return stream;
}

int64_t Generator::ring_lanes(const ir::Fun& f, const ir::Type& row) {
  return options_.subgroup_rows == SubgroupRows::local_memory ? 0 : lanes_of(f, row);
}

int64_t Generator::lanes_of(const ir::Fun& f, const ir::Type& row) {
  // f, or the function a lambda's body ends by calling (a stage: w => toLocal(...)(...)).
  const ir::Fun* last = &f;
  if (const auto* lambda = f.as<ir::Lambda>())
    if (const auto* call = lambda->body.as<ir::Call>())
      last = &call->fun;
  const auto* to_local = last->as<ir::ToLocal>();
  const auto* lanes_map = to_local ? to_local->f.as<ir::MapLcl>() : nullptr;
  const auto* rows = row.as<ir::ArrayType>();
  const auto* slice = rows ? rows->element.as<ir::ArrayType>() : nullptr;
  if (!lanes_map || lanes_map->dim != 0 || !slice)
    return 0;
  const std::optional<int64_t> lanes = rows->length.as_constant();
  const auto* scalar = slice->element.as<ir::ScalarType>();
  // At most NVIDIA's warp, of floats (liftx_lane_read shuffles 32 bits), and one group of lanes
  // per kernel (the helper's mask names them).
  if (!lanes || *lanes > 32 || !slice->length.as_constant() || !scalar ||
      scalar->kind != ir::ScalarKind::Float || (exchange_lanes_ != 0 && exchange_lanes_ != *lanes))
    return 0;
  // Every work-item one lane: the work-group is the lanes.
  return decide(Level::Lcl, 0, rows->length, false) == cl::LoopKind::Block ? *lanes : 0;
}

TargetPtr Generator::lanes_ring(const ir::Type& row, int64_t slots, int64_t lanes) {
  const ir::Type slice = row.as<ir::ArrayType>()->element;
  const int64_t columns = *slice.as<ir::ArrayType>()->length.as_constant();
  const TargetPtr storage =
      allocate(ir::Type::array(slice, arith::Expr(slots)), AddressSpace::Private, "mapSeqSlide");
  exchange_lanes_ = lanes;
  cl::Block* const declared_in = &current();
  // Emulated: every row is also copied to local memory as it is published, where another lane's
  // columns are read (the slot, lane and column a shuffle would read).
  std::string mirror;
  if (options_.subgroup_rows == SubgroupRows::emulated_shuffle) {
    const Allocation buffer =
        allocate_array(ir::Type::array(row, arith::Expr(slots)), AddressSpace::Local, "laneRows");
    mirror = fmt::format("{}[{} + ", buffer.name, arith::to_c(buffer.offset));
  }
  // Column c of lane l of the row in `slot`, in the copy: slot, lane, column, row-major.
  auto mirrored_at = [mirror, lanes, columns](const arith::Expr& slot, const arith::Expr& lane,
                                              const arith::Expr& column) {
    return fmt::format("{}{}]", mirror, arith::to_c((slot * lanes + lane) * columns + column));
  };
  auto ring = std::make_shared<Target>();
  ring->type = ir::Type::array(row, arith::Expr(slots));
  ring->space = AddressSpace::Private;
  ring->at = [this, storage, row, mirror, mirrored_at, declared_in](const arith::Expr& slot) {
    const TargetPtr own = storage->at(slot);
    auto lanes_row = std::make_shared<Target>();
    lanes_row->type = row;
    lanes_row->space = AddressSpace::Private;
    lanes_row->lane_dim = 0;
    lanes_row->at = [this, own](const arith::Expr& lane) {
      check_own_lane(0, lane);
      return own;
    };
    lanes_row->own = [own] { return own; };
    MirrorRead mirrored;
    if (!mirror.empty())
      mirrored = [mirrored_at, slot](const arith::Expr& lane, const arith::Expr& column) {
        return mirrored_at(slot, lane, column);
      };
    lanes_row->read = [this, own, mirrored, constant_slot = slot.as_constant().has_value(),
                       declared_in](const arith::Expr& lane) {
      return lane_read(own, lane, mirrored, constant_slot, declared_in);
    };
    return TargetPtr(lanes_row);
  };
  if (!mirror.empty())
    lane_mirrors_[ring.get()] = [this, storage, mirrored_at, columns](const arith::Expr& slot) {
      // Outside the stage's mapLcl0 (the row is complete): the work-item's own lane by name.
      const arith::Expr lane = arith::var("get_local_id(0)");
      for (int64_t c = 0; c < columns; ++c)
        emit(fmt::format("{} = {};", mirrored_at(slot, lane, arith::Expr(c)),
                         storage->at(slot)->at(arith::Expr(c))->lvalue));
    };
  return ring;
}

void Generator::publish_lane_row(const TargetPtr& ring, const arith::Expr& slot) {
  const auto it = lane_mirrors_.find(ring.get());
  if (it != lane_mirrors_.end())
    it->second(slot);
  // What was exchanged of the slot's previous row is stale; a slot that is not a constant may be
  // any of them. (Rings in local memory have no lanes, nothing exchanged.)
  const TargetPtr slot_row = ring->at(slot);
  if (!slot_row->own)
    return;
  ++lane_rows_published_;
  if (!slot.as_constant()) {
    exchanged_columns_.clear();
    return;
  }
  const TargetPtr row = slot_row->own();
  const int64_t columns = *row->type.as<ir::ArrayType>()->length.as_constant();
  for (int64_t c = 0; c < columns; ++c) {
    const std::string column = row->at(arith::Expr(c))->lvalue + "|";
    for (auto kept = exchanged_columns_.lower_bound(column);
         kept != exchanged_columns_.end() && kept->first.compare(0, column.size(), column) == 0;)
      kept = exchanged_columns_.erase(kept);
  }
}

namespace {

/// The reader's mapLcl0 frame: the lane index every exchange is relative to.
const LoopFrame* lane_frame(const std::vector<LoopFrame>& loops) {
  for (auto frame = loops.rbegin(); frame != loops.rend(); ++frame)
    if (frame->level == Level::Lcl && frame->dim == 0)
      return frame->kind == cl::LoopKind::Block ? &*frame : nullptr;
  return nullptr;
}

} // namespace

Value Generator::lane_read(const TargetPtr& own, const arith::Expr& lane,
                           const MirrorRead& mirrored, bool constant_slot, cl::Block* declared_in) {
  const LoopFrame* frame = lane_frame(loops_);
  if (!frame)
    throw UserError("a row held in the registers of a work-group's lanes is read outside a "
                    "mapLcl0 that gives each work-item one lane",
                    loc_);
  // Its own columns where `lane` is the reader's index for every lane (proven, or counted).
  bool own_lane = arith::prove_eq(frame->var, lane);
  if (!own_lane) {
    own_lane = true;
    for (int64_t k = 0; k < exchange_lanes_ && own_lane; ++k) {
      const std::optional<int64_t> v =
          arith::substitute(lane, {{frame->var, arith::Expr(k)}}).as_constant();
      own_lane = v && *v == k;
    }
  }
  if (own_lane)
    return target_value(own);
  // The lane as every reader names it, whatever its mapLcl0's variable is called.
  const std::string lane_key =
      arith::to_c(arith::substitute(lane, {{frame->var, arith::var("lane")}}));
  return make_array(
      own->type,
      [this, own, lane, mirrored, constant_slot, declared_in,
       lane_key](const arith::Expr& column) -> Value {
        const arith::Expr c = same_for_every_lane(column);
        const TargetPtr register_of_column = own->at(c);
        const ScalarValue mine = std::get<ScalarValue>(target_value(register_of_column));
        const ScalarValue exchange =
            mirrored
                ? ScalarValue{mirrored(lane, c), mine.kind}
                : ScalarValue{fmt::format("liftx_lane_read({}, {})", mine.text, arith::to_c(lane)),
                              mine.kind, mine.loads, mine.calls};
        if (!constant_slot)
          return exchange;
        // Exchanged where first read, by every lane (a shuffle needs them all), and kept: the
        // windows of the next rows read the same columns of the same row. Not counted as
        // private memory: each replaces the window element a read would have copied it to.
        const std::string key = register_of_column->lvalue + "|" + lane_key;
        auto kept = exchanged_columns_.find(key);
        if (kept == exchanged_columns_.end()) {
          const std::string name = fresh("lane");
          declared_in->stmts.insert(
              declared_in->stmts.begin(),
              {cl::Line{fmt::format("{} {};", ir::scalar_name(mine.kind), name)}});
          emit(fmt::format("{} = {};", name, exchange.text));
          kept = exchanged_columns_.emplace(key, name).first;
        }
        return ScalarValue{kept->second, mine.kind};
      },
      true);
}

arith::Expr Generator::same_for_every_lane(const arith::Expr& e) const {
  const LoopFrame* frame = lane_frame(loops_);
  std::optional<int64_t> value;
  for (int64_t k = 0; frame && k < exchange_lanes_; ++k) {
    const std::optional<int64_t> v =
        arith::substitute(e, {{frame->var, arith::Expr(k)}}).as_constant();
    if (!v || (value && *v != *value)) {
      value.reset();
      break;
    }
    value = v;
  }
  if (!value)
    throw UserError(fmt::format("a row held in the registers of a work-group's lanes is read at "
                                "column {} of another lane, which is not the same column for "
                                "every lane: no exchange between lanes can read it",
                                arith::to_c(e)),
                    loc_);
  return arith::Expr(*value);
}

std::string Generator::lane_exchange_helpers() const {
  if (exchange_lanes_ == 0 || options_.subgroup_rows != SubgroupRows::nvidia_shuffle)
    return "";
  // The work-group's work-items are the warp's first `lanes`: the others take no part.
  const uint32_t mask = exchange_lanes_ == 32 ? 0xffffffffu : (1u << exchange_lanes_) - 1u;
  return fmt::format("inline float liftx_lane_read(float v, int lane) {{\n"
                     "  float r;\n"
                     "  asm volatile(\"shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0x{:x};\" : "
                     "\"=f\"(r) : \"f\"(v), \"r\"(lane));\n"
                     "  return r;\n"
                     "}}\n\n",
                     mask);
}

} // namespace liftx::codegen
