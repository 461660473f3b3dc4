// Shared windows (mapSeqSlide over rows or planes in a work-group's scope): the window is not
// copied into each work-item's registers but read where its elements lie, by every work-item of
// the group. A window over a plain array (a tile of the input) is a view of its elements. A
// window over a stream of computed elements (another shared window's results: the previous time
// step of a streamed pipeline) reads them from a ring of `size` local buffers, into which the
// stream writes element j at slot j mod size, the group's work-items computing its points (the
// stream's mapLcl), then a barrier. AN5D's N.5D blocking keeps each fused step's last rows in
// shared memory the same way; docs/codegen.md compares the two.
//
// Barriers: every row written into a ring is followed by one (its readers, the next step's
// work-items, wait for all of it). A ring slot is overwritten only after the loop's previous
// iteration read it: the loop that drives the pipeline ends each iteration with a barrier. The
// temporaries a step allocates inside that loop (a re-clamped row) are dead at the iteration's
// end, so the loop reuses their local memory (reuses_local_memory).
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
  return {[](const arith::Expr&) {}, [input](const arith::Expr& j) { return input->at(j); }};
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
  for (int64_t k = 0; k < shape.keep(); ++k)
    source.produce(arith::Expr(k));
  const size_t record = kernel_.loops.size();
  shared_window_loops_.insert(record);
  const arith::Expr trip = result.as<ir::ArrayType>()->length;
  const cl::LoopKind kind =
      emit_loop(Level::Seq, 0, trip, false, "s", "mapSeqSlide", [&](const arith::Expr& index) {
        const arith::Expr first = index * shape.step;
        for (int64_t k = 0; k < shape.step; ++k)
          source.produce(first + shape.keep() + k);
        apply(node.f, {shared_window(source, first, window_type)}, dest->at(index), result_element);
      });
  if (kind == cl::LoopKind::For) {
    // The next iteration's rows overwrite ring slots (and temporaries) this one read.
    add_loop_end_barrier(record, 0);
    current().stmts.insert(current().stmts.end() - 1,
                           {cl::Line{fmt::format("#pragma unroll {}", node.unroll)}});
  }
  return target_value(dest);
}

Value Generator::shared_window_stream(const ir::MapSeqSlide& node, const Value& x,
                                      const ir::Type& result) {
  const WindowShape shape = shape_of(node, loc_);
  const SharedSource source = shared_source(x);
  check_ring(source.slots, shape);
  const ir::Type element =
      std::get<std::shared_ptr<const ArrayValue>>(x)->type.as<ir::ArrayType>()->element;
  const ir::Type window_type = ir::Type::array(element, node.size);
  const ir::Type result_element = result.as<ir::ArrayType>()->element;
  // Allocated before the loop that drives the pipeline: one ring per work-group.
  const TargetPtr ring =
      allocate(ir::Type::array(result_element, node.size), AddressSpace::Local, "mapSeqSlide");
  for (int64_t k = 0; k < shape.keep(); ++k)
    source.produce(arith::Expr(k));
  const arith::Expr slots(shape.size);
  SharedSource produced;
  produced.produce = [this, f = node.f, source, ring, shape, slots, window_type,
                      result_element](const arith::Expr& j) {
    const arith::Expr first = j * shape.step;
    for (int64_t k = 0; k < shape.step; ++k)
      source.produce(first + shape.keep() + k);
    apply(f, {shared_window(source, first, window_type)}, ring->at(j % slots), result_element);
    emit_barrier(true, false);
  };
  produced.view = [ring, slots](const arith::Expr& j) { return target_value(ring->at(j % slots)); };
  produced.slots = shape.size;
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
