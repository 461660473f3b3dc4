#include "codegen/view.hpp"

#include "ir/storage.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <unordered_map>

namespace liftx::codegen {

namespace {

const ir::ArrayType& array_type(const ir::Type& t) {
  const auto* a = t.as<ir::ArrayType>();
  LIFTX_INTERNAL_CHECK(a != nullptr, "expected an array type, got {}", t.to_string());
  return *a;
}

const ArrayValue& require_array(const Value& v, const char* what) {
  const ArrayValue* a = as_array(v);
  LIFTX_INTERNAL_CHECK(a != nullptr, "{}: expected an array value", what);
  return *a;
}

/// The same value where every scalar is `condition ? scalar : fallback`.
Value guarded(const Value& v, const std::string& condition, const ir::Scalar& fallback) {
  if (const ScalarValue* s = as_scalar(v)) {
    return ScalarValue{fmt::format("({} ? {} : {})", condition, s->text,
                                   ir::literal_text(ir::convert(fallback, s->kind))),
                       s->kind, s->loads, s->calls};
  }
  if (const TupleValue* t = as_tuple(v)) {
    auto out = std::make_shared<TupleValue>();
    for (const Value& e : t->elements)
      out->elements.push_back(guarded(e, condition, fallback));
    return out;
  }
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(v);
  return make_array(
      inner->type,
      [inner, condition, fallback](const arith::Expr& i) {
        return guarded(inner->at(i), condition, fallback);
      },
      inner->reads_private);
}

Value constant_value(const ir::Type& type, const ir::Scalar& value) {
  if (const auto* s = type.as<ir::ScalarType>())
    return ScalarValue{ir::literal_text(ir::convert(value, s->kind)), s->kind};
  if (const auto* a = type.as<ir::ArrayType>()) {
    ir::Type element = a->element;
    return make_array(
        type, [element, value](const arith::Expr&) { return constant_value(element, value); });
  }
  throw NotImplemented("constant padding of tuples");
}

} // namespace

const ScalarValue* as_scalar(const Value& v) {
  return std::get_if<ScalarValue>(&v);
}
const ArrayValue* as_array(const Value& v) {
  auto* p = std::get_if<std::shared_ptr<const ArrayValue>>(&v);
  return p ? p->get() : nullptr;
}
const TupleValue* as_tuple(const Value& v) {
  auto* p = std::get_if<std::shared_ptr<const TupleValue>>(&v);
  return p ? p->get() : nullptr;
}

Value make_array(ir::Type type, std::function<Value(const arith::Expr&)> at, bool reads_private) {
  return std::make_shared<const ArrayValue>(
      ArrayValue{std::move(type), std::move(at), reads_private});
}

arith::Expr scalar_count(const ir::Type& type) {
  if (type.is_scalar())
    return arith::Expr(1);
  if (const auto* a = type.as<ir::ArrayType>())
    return a->length * scalar_count(a->element);
  throw NotImplemented(fmt::format("storing tuples ({}) in memory", type.to_string()));
}

arith::Expr padded_scalar_count(const ir::Type& type, const arith::Expr& row_padding) {
  const auto* a = type.as<ir::ArrayType>();
  if (!a)
    return scalar_count(type);
  if (!a->element.as<ir::ArrayType>()) // an innermost row
    return (a->length + row_padding) * scalar_count(a->element);
  return a->length * padded_scalar_count(a->element, row_padding);
}

ir::ScalarKind memory_kind(const ir::Type& type, const char* what) {
  ir::Type base = ir::array_base(type);
  if (const auto* s = base.as<ir::ScalarType>())
    return s->kind;
  if (base.is_vector())
    throw NotImplemented(fmt::format("{}: vectors ({}) kept in memory as such; write them "
                                     "through asScalar",
                                     what, type.to_string()));
  throw NotImplemented(fmt::format("{}: storing tuples ({}) in memory", what, type.to_string()));
}

std::vector<ir::Type> stored_components(const ir::Type& type) {
  if (const auto* a = type.as<ir::ArrayType>()) {
    std::vector<ir::Type> components = stored_components(a->element);
    if (components.size() == 1 && components.front() == a->element)
      return {type};
    for (ir::Type& c : components)
      c = ir::Type::array(std::move(c), a->length);
    return components;
  }
  if (const auto* t = type.as<ir::TupleType>()) {
    std::vector<ir::Type> components;
    for (const ir::Type& e : t->elements)
      for (ir::Type& c : stored_components(e))
        components.push_back(std::move(c));
    return components;
  }
  return {type};
}

TargetPtr zip_targets(const ir::Type& type, std::vector<TargetPtr> leaves) {
  if (const auto* t = type.as<ir::TupleType>()) {
    auto target = std::make_shared<Target>();
    target->type = type;
    target->space = leaves.front()->space;
    size_t next = 0;
    for (const ir::Type& e : t->elements) {
      const size_t n = stored_components(e).size();
      LIFTX_INTERNAL_CHECK(next + n <= leaves.size(), "too few targets for {}", type.to_string());
      target->fields.push_back(zip_targets(
          e, std::vector<TargetPtr>(leaves.begin() + static_cast<std::ptrdiff_t>(next),
                                    leaves.begin() + static_cast<std::ptrdiff_t>(next + n))));
      next += n;
    }
    return target;
  }
  if (leaves.size() == 1)
    return leaves.front();
  const ir::ArrayType& a = array_type(type);
  auto target = std::make_shared<Target>();
  target->type = type;
  target->space = leaves.front()->space;
  target->at = [element = a.element, leaves](const arith::Expr& i) {
    std::vector<TargetPtr> at_i;
    for (const TargetPtr& leaf : leaves)
      at_i.push_back(leaf->at(i));
    return zip_targets(element, std::move(at_i));
  };
  return target;
}

TargetPtr unzip_target(const TargetPtr& target, size_t k, const ir::Type& xk_type) {
  auto t = std::make_shared<Target>();
  t->type = xk_type;
  t->space = target->space;
  t->at = [target, k](const arith::Expr& i) {
    TargetPtr element = target->at(i);
    LIFTX_INTERNAL_CHECK(k < element->fields.size(), "unzip of a target without field {}", k);
    return element->fields[k];
  };
  return t;
}

Value memory_value(const std::string& name, const ir::Type& type, const arith::Expr& offset,
                   AddressSpace space) {
  if (const auto* s = type.as<ir::ScalarType>())
    return ScalarValue{fmt::format("{}[{}]", name, arith::to_c(offset)),
                       s->kind,
                       {MemoryAccess{name, space, offset, s->kind, false, {}}}};
  const ir::ArrayType& a = array_type(type);
  ir::Type element = a.element;
  arith::Expr stride = scalar_count(element);
  return make_array(
      type,
      [name, element, offset, stride, space](const arith::Expr& i) {
        return memory_value(name, element, offset + i * stride, space);
      },
      space == AddressSpace::Private);
}

namespace {
/// Field `field` of `group` in global buffer `name`: the grid of `type` whose rows are counted
/// from `row` on (row r of the outer levels is stored_index's row).
Value stored_grid(const std::string& name, const ir::Type& type,
                  const std::shared_ptr<const ir::StorageGroup>& group, size_t field,
                  const arith::Expr& row) {
  const ir::ArrayType& a = array_type(type);
  ir::Type element = a.element;
  if (const auto* s = element.as<ir::ScalarType>()) {
    const ir::ScalarKind kind = s->kind;
    const arith::Expr row_length = a.length;
    return make_array(type, [=](const arith::Expr& column) -> Value {
      arith::Expr index = ir::stored_index(*group, row, column, row_length, field);
      return ScalarValue{fmt::format("{}[{}]", name, arith::to_c(index)),
                         kind,
                         {MemoryAccess{name, AddressSpace::Global, index, kind, false, {}}}};
    });
  }
  const arith::Expr length = a.length;
  return make_array(type, [=](const arith::Expr& i) {
    return stored_grid(name, element, group, field, row * length + i);
  });
}
} // namespace

Value stored_field_value(const std::string& name, const ir::Type& type,
                         const ir::StorageGroup& group, size_t field) {
  return stored_grid(name, type, std::make_shared<const ir::StorageGroup>(group), field, 0);
}

TargetPtr memory_target(const std::string& name, const ir::Type& type, const arith::Expr& offset,
                        AddressSpace space, const arith::Expr& row_padding) {
  auto target = std::make_shared<Target>();
  target->type = type;
  target->space = space;
  if (const auto* s = type.as<ir::ScalarType>()) {
    target->lvalue = fmt::format("{}[{}]", name, arith::to_c(offset));
    target->element = MemoryAccess{name, space, offset, s->kind, true, {}};
    return target;
  }
  const ir::ArrayType& a = array_type(type);
  ir::Type element = a.element;
  const bool padded = row_padding.as_constant() != std::optional<int64_t>(0);
  arith::Expr stride = padded ? padded_scalar_count(element, row_padding) : scalar_count(element);
  target->at = [name, element, offset, stride, space, row_padding](const arith::Expr& i) {
    return memory_target(name, element, offset + i * stride, space, row_padding);
  };
  return target;
}

Value split_view(const Value& x, const arith::Expr& chunk, const ir::Type& result) {
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  ir::Type row = array_type(result).element;
  return make_array(
      result,
      [inner, chunk, row](const arith::Expr& i) {
        return make_array(
            row, [inner, chunk, i](const arith::Expr& j) { return inner->at(i * chunk + j); },
            inner->reads_private);
      },
      inner->reads_private);
}

Value join_view(const Value& x, const ir::Type& result) {
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  arith::Expr row_length = array_type(array_type(inner->type).element).length;
  return make_array(
      result,
      [inner, row_length](const arith::Expr& k) {
        Value row = inner->at(k / row_length);
        return require_array(row, "join").at(k % row_length);
      },
      inner->reads_private);
}

Value slide_view(const Value& x, const arith::Expr& size, const arith::Expr& step,
                 const ir::Type& result) {
  (void)size;
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  ir::Type window = array_type(result).element;
  return make_array(
      result,
      [inner, step, window](const arith::Expr& i) {
        return make_array(
            window, [inner, step, i](const arith::Expr& j) { return inner->at(i * step + j); },
            inner->reads_private);
      },
      inner->reads_private);
}

Value slide_shifted_view(const Value& x, const arith::Expr& size, const arith::Expr& step,
                         const ir::Type& result) {
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  const arith::Expr last = array_type(inner->type).length - size;
  ir::Type window = array_type(result).element;
  return make_array(
      result,
      [inner, step, last, window](const arith::Expr& i) {
        const arith::Expr start = arith::min(i * step, last);
        return make_array(
            window, [inner, start](const arith::Expr& j) { return inner->at(start + j); },
            inner->reads_private);
      },
      inner->reads_private);
}

Value join_shifted_view(const Value& x, const ir::Type& result) {
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  const arith::Expr rows = array_type(inner->type).length;
  const arith::Expr row_length = array_type(array_type(inner->type).element).length;
  const arith::Expr last = array_type(result).length - row_length;
  return make_array(
      result,
      [inner, rows, row_length, last](const arith::Expr& p) {
        const arith::Expr i = arith::min(p / row_length, rows - arith::Expr(1));
        Value row = inner->at(i);
        return require_array(row, "joinShifted").at(p - arith::min(i * row_length, last));
      },
      inner->reads_private);
}

Value pad_view(const Value& x, const arith::Expr& left, const arith::Expr& right,
               const ir::Boundary& boundary, const ir::Type& result) {
  (void)right;
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  arith::Expr n = array_type(inner->type).length;
  ir::Type element = array_type(result).element;
  return make_array(
      result,
      [inner, left, n, boundary, element](const arith::Expr& i) -> Value {
        using Kind = ir::Boundary::Kind;
        arith::Expr j = i - left;
        switch (boundary.kind) {
        case Kind::Clamp:
          return inner->at(arith::min(arith::max(j, 0), n - 1));
        case Kind::Mirror: {
          arith::Expr folded = arith::select(arith::CmpOp::Lt, j, 0, -1 - j, j) % (2 * n);
          return inner->at(arith::select(arith::CmpOp::Ge, folded, n, 2 * n - 1 - folded, folded));
        }
        case Kind::Wrap:
          return inner->at((j % n + n) % n);
        case Kind::Constant: {
          bool above_zero = arith::prove_nonneg(j);
          bool below_n = arith::prove_lt(j, n);
          if (above_zero && below_n)
            return inner->at(j);
          if (arith::prove_lt(j, 0) || arith::prove_le(n, j))
            return constant_value(element, boundary.value);
          std::string condition;
          if (!above_zero)
            condition = fmt::format("0 <= {}", arith::to_c(j));
          if (!below_n)
            condition += fmt::format("{}{} < {}", condition.empty() ? "" : " && ", arith::to_c(j),
                                     arith::to_c(n));
          return guarded(inner->at(j), "(" + condition + ")", boundary.value);
        }
        }
        LIFTX_UNREACHABLE("unknown boundary");
      },
      inner->reads_private);
}

Value transpose_view(const Value& x, const ir::Type& result) {
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  ir::Type row = array_type(result).element;
  return make_array(
      result,
      [inner, row](const arith::Expr& i) {
        return make_array(
            row,
            [inner, i](const arith::Expr& j) {
              return require_array(inner->at(j), "transpose").at(i);
            },
            inner->reads_private);
      },
      inner->reads_private);
}

Value zip_view(const std::vector<Value>& xs, const ir::Type& result) {
  std::vector<std::shared_ptr<const ArrayValue>> inners;
  bool reads_private = false;
  for (const Value& x : xs) {
    inners.push_back(std::get<std::shared_ptr<const ArrayValue>>(x));
    reads_private |= inners.back()->reads_private;
  }
  return make_array(
      result,
      [inners](const arith::Expr& i) -> Value {
        auto tuple = std::make_shared<TupleValue>();
        for (const auto& inner : inners)
          tuple->elements.push_back(inner->at(i));
        return tuple;
      },
      reads_private);
}

namespace {

/// The target of rows X whose row i lands in `target` from element row_start(i) on (join's
/// inverse and joinShifted's).
TargetPtr rows_landing_at(const TargetPtr& target, const ir::Type& x_type,
                          std::function<arith::Expr(const arith::Expr&)> row_start) {
  ir::Type row = array_type(x_type).element;
  auto t = std::make_shared<Target>();
  t->type = x_type;
  t->space = target->space;
  t->at = [target, row, row_start = std::move(row_start)](const arith::Expr& i) {
    auto r = std::make_shared<Target>();
    r->type = row;
    r->space = target->space;
    r->at = [target, start = row_start(i)](const arith::Expr& j) { return target->at(start + j); };
    return TargetPtr(r);
  };
  return t;
}

} // namespace

TargetPtr join_inverse(const TargetPtr& target, const arith::Expr& chunk, const ir::Type& x_type) {
  // result = join(X), X : [[T]chunk]n  =>  X[i][j] lands in result[i*chunk + j]
  return rows_landing_at(target, x_type, [chunk](const arith::Expr& i) { return i * chunk; });
}

TargetPtr join_shifted_inverse(const TargetPtr& target, const arith::Expr& length,
                               const ir::Type& x_type) {
  const arith::Expr chunk = array_type(array_type(x_type).element).length;
  const arith::Expr last = length - chunk;
  return rows_landing_at(
      target, x_type, [chunk, last](const arith::Expr& i) { return arith::min(i * chunk, last); });
}

TargetPtr split_inverse(const TargetPtr& target, const arith::Expr& chunk, const ir::Type& x_type) {
  // result = split(chunk, X)  =>  X[k] lands in result[k / chunk][k % chunk]
  auto t = std::make_shared<Target>();
  t->type = x_type;
  t->space = target->space;
  t->at = [target, chunk](const arith::Expr& k) { return target->at(k / chunk)->at(k % chunk); };
  return t;
}

TargetPtr transpose_inverse(const TargetPtr& target, const ir::Type& x_type) {
  // result = transpose(X)  =>  X[i][j] lands in result[j][i]
  ir::Type row = array_type(x_type).element;
  auto t = std::make_shared<Target>();
  t->type = x_type;
  t->space = target->space;
  t->at = [target, row](const arith::Expr& i) {
    auto r = std::make_shared<Target>();
    r->type = row;
    r->space = target->space;
    r->at = [target, i](const arith::Expr& j) { return target->at(j)->at(i); };
    return TargetPtr(r);
  };
  return t;
}

Value target_value(const TargetPtr& target) {
  if (target->type.is_tuple()) {
    auto tuple = std::make_shared<TupleValue>();
    for (const TargetPtr& f : target->fields)
      tuple->elements.push_back(target_value(f));
    return tuple;
  }
  if (target->type.is_vector()) {
    std::vector<ScalarValue> parts;
    for (const TargetPtr& c : target->components)
      parts.push_back(std::get<ScalarValue>(target_value(c)));
    return vector_of(std::move(parts), {});
  }
  if (const auto* s = target->type.as<ir::ScalarType>()) {
    std::vector<Load> loads;
    if (target->element) {
      loads.push_back(*target->element);
      loads.back().is_store = false;
    }
    return ScalarValue{target->lvalue, s->kind, std::move(loads)};
  }
  auto array = std::make_shared<ArrayValue>();
  array->type = target->type;
  if (target->read)
    array->at = target->read;
  else
    array->at = [target](const arith::Expr& i) { return target_value(target->at(i)); };
  array->reads_private = target->space == AddressSpace::Private;
  array->lane_dim = target->lane_dim;
  if (target->own)
    array->own = [target] { return target_value(target->own()); };
  return array;
}

std::string value_type_name(ir::ScalarKind kind, int width) {
  return width == 1 ? std::string(ir::scalar_name(kind))
                    : fmt::format("{}{}", ir::scalar_name(kind), width);
}

bool provably_aligned(const arith::Expr& index, int64_t width, const SizeDivisors& divisors) {
  // A size variable known to be a multiple of d is d times a fresh size variable.
  std::unordered_map<arith::Expr, arith::Expr, std::hash<arith::Expr>> multiples;
  for (const arith::Expr& v : arith::free_vars(index)) {
    auto it = divisors.find(v.node().name);
    if (it != divisors.end() && v == arith::size_var(v.node().name))
      multiples.emplace(v, arith::Expr(it->second) * arith::size_var(v.node().name + "_multiple"));
  }
  return arith::divides(arith::Expr(width), arith::substitute(index, multiples));
}

const Load* direct_load(const ScalarValue& value) {
  if (value.width != 1 || value.loads.size() != 1 || !value.calls.empty())
    return nullptr;
  const Load& load = value.loads.front();
  if (value.text != fmt::format("{}[{}]", load.buffer, arith::to_c(load.index)))
    return nullptr;
  return &load;
}

ScalarValue vector_of(std::vector<ScalarValue> parts, const SizeDivisors& divisors,
                      const BufferNames* aligned_local) {
  LIFTX_INTERNAL_CHECK(parts.size() >= 2, "a vector of {} parts", parts.size());
  const ir::ScalarKind kind = parts.front().kind;
  const int width = static_cast<int>(parts.size());
  const std::string type = value_type_name(kind, width);
  ScalarValue v{"", kind, {}, {}, width, {}};
  const Load* first = direct_load(parts.front());
  bool contiguous = first && first->space != AddressSpace::Private;
  for (int k = 1; contiguous && k < width; ++k) {
    const Load* l = direct_load(parts[static_cast<size_t>(k)]);
    contiguous = l && l->buffer == first->buffer && l->space == first->space &&
                 arith::prove_eq(l->index - first->index, arith::Expr(k));
  }
  if (contiguous) {
    const std::string pointer = fmt::format("{} + {}", first->buffer, arith::to_c(first->index));
    // A provably aligned vector is read as one; vloadN needs only element alignment.
    const bool aligned_base = first->space == AddressSpace::Global ||
                              (first->space == AddressSpace::Local && aligned_local &&
                               aligned_local->count(first->buffer));
    if (aligned_base && provably_aligned(first->index, width, divisors))
      v.text =
          fmt::format("(*(const {} {}*)({}))", address_space_name(first->space), type, pointer);
    else
      v.text = fmt::format("vload{}(0, {})", width, pointer);
    Load load = *first;
    load.width = width;
    v.loads.push_back(std::move(load));
  } else {
    std::string list;
    for (const ScalarValue& p : parts) {
      LIFTX_INTERNAL_CHECK(p.width == 1 && p.kind == kind, "vector part of another type");
      list += (list.empty() ? "" : ", ") + p.text;
      v.loads.insert(v.loads.end(), p.loads.begin(), p.loads.end());
      v.calls.insert(v.calls.end(), p.calls.begin(), p.calls.end());
    }
    v.text = fmt::format("(({})({}))", type, list);
  }
  v.parts = std::move(parts);
  return v;
}

Value as_vector_view(const Value& x, int width, const ir::Type& result,
                     const SizeDivisors& divisors, const BufferNames* aligned_local) {
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  return make_array(
      result,
      [inner, width, divisors, aligned_local](const arith::Expr& i) -> Value {
        std::vector<ScalarValue> parts;
        for (int k = 0; k < width; ++k) {
          Value part = inner->at(i * width + k);
          const ScalarValue* s = as_scalar(part);
          LIFTX_INTERNAL_CHECK(s && s->width == 1, "asVector of a non-scalar element");
          parts.push_back(*s);
        }
        return vector_of(std::move(parts), divisors, aligned_local);
      },
      inner->reads_private);
}

Value as_scalar_view(const Value& x, int width, const ir::Type& result) {
  auto inner = std::get<std::shared_ptr<const ArrayValue>>(x);
  return make_array(
      result,
      [inner, width](const arith::Expr& j) -> Value {
        std::optional<int64_t> component = (j % width).as_constant();
        if (!component)
          throw NotImplemented(fmt::format("asScalar: component {} of a vector is not a constant "
                                           "(unroll the loop that reads it)",
                                           arith::to_c(j % width)));
        Value vector = inner->at(j / width);
        const ScalarValue* v = as_scalar(vector);
        LIFTX_INTERNAL_CHECK(v && v->width == width && v->parts.size() == size_t(width),
                             "asScalar of a non-vector element");
        return v->parts[static_cast<size_t>(*component)];
      },
      inner->reads_private);
}

TargetPtr as_scalar_inverse(const TargetPtr& target, int width, const ir::Type& x_type,
                            const SizeDivisors& divisors) {
  ir::Type vector = array_type(x_type).element;
  auto t = std::make_shared<Target>();
  t->type = x_type;
  t->space = target->space;
  t->at = [target, width, vector, divisors](const arith::Expr& i) {
    auto v = std::make_shared<Target>();
    v->type = vector;
    v->space = target->space;
    for (int k = 0; k < width; ++k)
      v->components.push_back(target->at(i * width + k));
    const auto& first = v->components.front()->element;
    bool contiguous = first && first->space != AddressSpace::Private;
    for (int k = 1; contiguous && k < width; ++k) {
      const auto& e = v->components[static_cast<size_t>(k)]->element;
      contiguous = e && e->buffer == first->buffer && e->space == first->space &&
                   arith::prove_eq(e->index - first->index, arith::Expr(k));
    }
    if (contiguous) {
      MemoryAccess access = *first;
      access.width = width;
      const std::string pointer = fmt::format("{} + {}", first->buffer, arith::to_c(first->index));
      if (first->space == AddressSpace::Global && provably_aligned(first->index, width, divisors))
        v->lvalue = fmt::format("*(global {}*)({})", value_type_name(first->kind, width), pointer);
      else
        v->pointer = pointer;
      v->element = access;
    }
    return TargetPtr(v);
  };
  return t;
}

} // namespace liftx::codegen
