// Memory: buffers for results that have no destination yet (private arrays, local buffers per
// work-group, global temporaries), stores into targets, writes through invertible layout, and
// the address space toGlobal/toLocal/toPrivate choose.
#include "codegen/generator.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace liftx::codegen {

Generator::Allocation Generator::allocate_array(const ir::Type& type, AddressSpace space,
                                                const std::string& writer,
                                                const std::optional<arith::Expr>& row_padding) {
  ir::ScalarKind kind = memory_kind(type, writer.c_str());
  arith::Expr count = row_padding ? padded_scalar_count(type, *row_padding) : scalar_count(type);
  if (space == AddressSpace::Private) {
    std::optional<int64_t> n = count.as_constant();
    if (!n)
      throw UserError(fmt::format("{}: private memory needs a constant size, got {} elements; "
                                  "use toLocal or toGlobal",
                                  writer, count.to_string()),
                      loc_);
    std::string name = fresh("priv");
    // A declaration node, not a line: scalarise_private_arrays may turn it into scalars.
    emit_stmt({cl::ArrayDecl{ir::scalar_name(kind), name, *n}});
    kernel_.private_bytes += *n * static_cast<int64_t>(scalar_bytes(kind));
    return {name, arith::Expr(0), space, kind};
  }
  // Local memory is per work-group: regions for the loops inside the innermost mapWrg. Global
  // memory is per kernel: regions for every enclosing loop.
  size_t first = 0;
  if (space == AddressSpace::Local) {
    auto wrg = std::find_if(loops_.rbegin(), loops_.rend(),
                            [](const LoopFrame& f) { return f.level == Level::Wrg; });
    if (wrg == loops_.rend())
      throw UserError(fmt::format("{}: toLocal outside mapWrg: local memory belongs to a "
                                  "work-group",
                                  writer),
                      loc_);
    first = static_cast<size_t>(loops_.rend() - wrg);
  }
  arith::Expr regions(1);
  arith::Expr region(0);
  for (size_t k = first; k < loops_.size(); ++k) {
    // A rolled reduction passes only its accumulator (allocated outside its loop) from one
    // iteration to the next: local memory allocated inside is dead at the iteration's end, so
    // every iteration reuses one region (reduction_loop puts a barrier at the loop's end). Staging
    // a tile per step of a reduction (a matrix product's K loop) needs one tile, not K.
    if (space == AddressSpace::Local && reuses_local_memory(loops_[k], shared_window_loops_)) {
      ++reused_local_allocations_;
      continue;
    }
    region = region * loops_[k].trip + loops_[k].var;
    regions = regions * loops_[k].trip;
  }
  std::string name = fresh(space == AddressSpace::Local ? "lcl" : "tmp");
  if (space == AddressSpace::Local && (regions * count).as_constant())
    constant_local_buffers_.insert(name);
  kernel_.args.push_back(
      {space == AddressSpace::Local ? KernelArg::Role::Local : KernelArg::Role::Temporary, name,
       kind, regions * count, -1, loc_});
  return {name, region * count, space, kind};
}

TargetPtr Generator::allocate(const ir::Type& type, AddressSpace space, const std::string& writer) {
  std::optional<arith::Expr> row_padding;
  if (space == AddressSpace::Local)
    row_padding = std::exchange(local_row_padding_, std::nullopt);
  return allocate_components(type, space, writer, row_padding);
}

TargetPtr Generator::allocate_components(const ir::Type& type, AddressSpace space,
                                         const std::string& writer,
                                         const std::optional<arith::Expr>& row_padding) {
  if (std::vector<ir::Type> components = stored_components(type); components.size() > 1) {
    // Tuples in memory: one buffer (or private scalar) per component.
    std::vector<TargetPtr> leaves;
    for (const ir::Type& c : components)
      leaves.push_back(allocate_components(c, space, writer, row_padding));
    return zip_targets(type, std::move(leaves));
  }
  if (space == AddressSpace::Private && type.is_scalar()) {
    ir::ScalarKind kind = type.as<ir::ScalarType>()->kind;
    std::string name = fresh("priv");
    emit(fmt::format("{} {};", ir::scalar_name(kind), name));
    kernel_.private_bytes += static_cast<int64_t>(scalar_bytes(kind));
    auto t = std::make_shared<Target>();
    t->type = type;
    t->space = space;
    t->lvalue = name;
    return t;
  }
  Allocation a = allocate_array(type, space, writer, row_padding);
  return memory_target(a.name, type, a.offset, space, row_padding.value_or(arith::Expr(0)));
}

TargetPtr Generator::allocate_per_work_item(const ir::Type& type, const std::vector<int>& lane_dims,
                                            const std::string& writer) {
  if (lane_dims.empty())
    return allocate(type, AddressSpace::Private, writer);
  const ir::Type element = type.as<ir::ArrayType>()->element;
  const TargetPtr inner = allocate_per_work_item(
      element, std::vector<int>(lane_dims.begin() + 1, lane_dims.end()), writer);
  auto target = std::make_shared<Target>();
  target->type = type;
  target->space = AddressSpace::Private;
  target->lane_dim = lane_dims.front();
  target->at = [this, inner, dim = lane_dims.front()](const arith::Expr& i) {
    check_own_lane(dim, i);
    return inner;
  };
  target->own = [inner] { return inner; };
  return target;
}

std::vector<int> Generator::lane_dims_of(int dim, const ir::Fun& f, const ir::Type& type) {
  const auto* array = type.as<ir::ArrayType>();
  const cl::LoopKind kind = decide(Level::Lcl, dim, array->length, false);
  if (kind != cl::LoopKind::Block && kind != cl::LoopKind::If)
    return {};
  std::vector<int> dims{dim};
  if (const auto* inner = f.as<ir::MapLcl>()) {
    std::vector<int> rest = lane_dims_of(inner->dim, inner->f, array->element);
    dims.insert(dims.end(), rest.begin(), rest.end());
  }
  return dims;
}

void Generator::check_own_lane(int dim, const arith::Expr& index) const {
  for (auto frame = loops_.rbegin(); frame != loops_.rend(); ++frame)
    if (frame->level == Level::Lcl && frame->dim == dim) {
      if ((frame->kind == cl::LoopKind::Block || frame->kind == cl::LoopKind::If) &&
          arith::prove_eq(frame->var, index))
        return;
      break;
    }
  throw UserError(fmt::format("private memory written by mapLcl{} holds one element per "
                              "work-item, but it is read at index {}, not the work-item's own: "
                              "read it in a mapLcl{} over the same array",
                              dim, arith::to_c(index), dim),
                  loc_);
}

/// Copies a scalar value into a scalar target; anything else cannot be stored without a map.
Value Generator::store(const TargetPtr& dest, const Value& v) {
  if (dest->type.is_tuple()) {
    const TupleValue* t = as_tuple(v);
    LIFTX_INTERNAL_CHECK(t && t->elements.size() == dest->fields.size(),
                         "storing {} into a tuple target of {} fields", type_of(v).to_string(),
                         dest->fields.size());
    for (size_t k = 0; k < t->elements.size(); ++k)
      store(dest->fields[k], t->elements[k]);
    return target_value(dest);
  }
  if (dest->type.is_vector())
    return store_vector(dest, v);
  const ScalarValue* s = as_scalar(v);
  if (!s || !dest->type.is_scalar())
    throw UserError(fmt::format("cannot store a value of type {} directly: compute it with a "
                                "map (e.g. mapSeq(id))",
                                type_of(v).to_string()),
                    loc_);
  emit(fmt::format("{} = {};", dest->lvalue, s->text));
  record_loads(*s);
  if (dest->element)
    record_access(*dest->element);
  return target_value(dest);
}

/// A vector into a vector target: one vector store when the target is consecutive memory,
/// component by component otherwise.
Value Generator::store_vector(const TargetPtr& dest, const Value& v) {
  const ScalarValue* s = as_scalar(v);
  const int width = dest->type.as<ir::VectorType>()->width;
  LIFTX_INTERNAL_CHECK(s && s->width == width, "storing {} into a vector of {}",
                       type_of(v).to_string(), width);
  if (!dest->element) {
    // Private components: a vector read from memory in one access (a block of a tile in local
    // memory, a block's row of B) stays one read, held in a vector variable. Other vectors are
    // stored part by part, each part reading its own element.
    if (s->loads.size() == 1 && s->loads.front().width == width && s->calls.empty()) {
      const std::string name = fresh("vec");
      emit(fmt::format("const {} {} = {};", value_type_name(s->kind, width), name, s->text));
      record_loads(*s);
      for (int k = 0; k < width; ++k)
        store(dest->components[static_cast<size_t>(k)],
              ScalarValue{fmt::format("{}.s{:x}", name, k), s->kind});
      return target_value(dest);
    }
    for (int k = 0; k < width; ++k)
      store(dest->components[static_cast<size_t>(k)], s->parts[static_cast<size_t>(k)]);
    return target_value(dest);
  }
  if (!dest->lvalue.empty())
    emit(fmt::format("{} = {};", dest->lvalue, s->text));
  else
    emit(fmt::format("vstore{}({}, 0, {});", width, s->text, dest->pointer));
  record_loads(*s);
  record_access(*dest->element);
  return v;
}

/// The target of X such that writing X there stores f(X) in `dest`, for layout functions that
/// only reorder (join, split, transpose, asScalar, and maps of them); nullptr for anything else.
TargetPtr Generator::invert(const ir::Fun& f, const TargetPtr& dest, const ir::Type& x_type) const {
  if (f.as<ir::AsScalar>()) {
    const auto* v = x_type.as<ir::ArrayType>()->element.as<ir::VectorType>();
    return as_scalar_inverse(dest, v->width, x_type, divisors_);
  }
  if (f.as<ir::Join>()) {
    arith::Expr chunk = x_type.as<ir::ArrayType>()->element.as<ir::ArrayType>()->length;
    return join_inverse(dest, chunk, x_type);
  }
  if (const auto* j = f.as<ir::JoinShifted>())
    return join_shifted_inverse(dest, j->length, x_type);
  if (const auto* s = f.as<ir::Split>())
    return split_inverse(dest, s->chunk, x_type);
  if (f.as<ir::Transpose>())
    return transpose_inverse(dest, x_type);
  if (const auto* tuple = x_type.as<ir::TupleType>(); tuple && f.as<ir::Zip>()) {
    // zip of one tuple argument (spread): its element k lands in field k of the zip's elements.
    auto t = std::make_shared<Target>();
    t->type = x_type;
    t->space = dest->space;
    for (size_t k = 0; k < tuple->elements.size(); ++k)
      t->fields.push_back(unzip_target(dest, k, tuple->elements[k]));
    return t;
  }
  if (const auto* m = f.as<ir::Map>()) {
    const auto* array = x_type.as<ir::ArrayType>();
    if (!array)
      return nullptr;
    ir::Type element = array->element;
    ir::Fun g = m->f;
    // Check invertibility once, on a probe of the first element.
    if (!invert(g, dest->at(arith::Expr(0)), element))
      return nullptr;
    auto t = std::make_shared<Target>();
    t->type = x_type;
    t->space = dest->space;
    t->at = [this, dest, g, element](const arith::Expr& i) {
      return invert(g, dest->at(i), element);
    };
    return t;
  }
  return nullptr;
}

Value Generator::with_space(AddressSpace space, const ir::Fun& f, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  std::optional<AddressSpace> saved = write_space_;
  write_space_ = space;
  Value v = apply(f, std::move(args), dest, result);
  write_space_ = saved;
  return v;
}

} // namespace liftx::codegen
