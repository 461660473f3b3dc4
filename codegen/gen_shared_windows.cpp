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
  const size_t record = kernel_.loops.size();
  shared_window_loops_.insert(record);
  const cl::LoopKind kind =
      emit_loop(Level::Seq, 0, trip, false, "s", "mapSeqSlide", [&](const arith::Expr& index) {
        const arith::Expr first = index * shape.step;
        if (pipelined)
          source.ahead(first + shape.size); // the last element of the next window
        else
          for (int64_t k = 0; k < shape.step; ++k)
            source.produce(first + shape.keep() + k);
        apply(node.f, {shared_window(source, first, window_type)}, dest->at(index), result_element);
      });
  if (kind == cl::LoopKind::For) {
    // The next iteration's rows overwrite ring slots (and temporaries) this one read; in a
    // pipeline, this barrier is also the one that publishes every stage's row to its reader,
    // whether or not the stages have barriers of their own.
    add_loop_end_barrier(record, 0, pipelined && source.slots > 0);
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
  // Allocated before the loop that drives the pipeline: one ring per work-group.
  const TargetPtr ring =
      allocate(ir::Type::array(result_element, ring_slots), AddressSpace::Local, "mapSeqSlide");
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
                      row_temporaries](const arith::Expr& j) {
    const arith::Expr first = j * shape.step;
    for (int64_t k = 0; k < shape.step; ++k)
      from->produce(first + shape.keep() + k);
    row_temporaries([&] {
      apply(f, {shared_window(*from, first, window_type)}, ring->at(j % slots), result_element);
    });
    emit_barrier(true, false);
  };
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
    produced.ahead = [this, f = node.f, from, ring, shape, slots, window_type, result_element,
                      length, row_temporaries](const arith::Expr& j) {
      const arith::Expr computed = arith::min(j, length - 1);
      row_temporaries([&] {
        apply(f, {shared_window(*from, computed, window_type)},
              ring->at(arith::min(j, length) % slots), result_element);
      });
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

} // namespace liftx::codegen
