#include "ir/type.hpp"

#include "support/error.hpp"

#include <algorithm>
#include <functional>

namespace liftx::ir {
namespace {

size_t mix(size_t seed, size_t value) {
  // 64-bit variant of boost::hash_combine's mixing step.
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

Type make(TypeNode node, size_t hash) {
  return Type(std::make_shared<const TypeData>(TypeData{std::move(node), hash}));
}

Type make_scalar(ScalarKind k) {
  return make(ScalarType{k}, mix(0x51u, static_cast<size_t>(k)));
}

/// Lengths that are not a constant >= 0 or a single variable need parentheses in `[T]len`.
bool length_is_atomic(const arith::Expr& length) {
  if (auto c = length.as_constant())
    return *c >= 0;
  return length.node().kind == arith::Kind::Var;
}

} // namespace

Type::Type() : Type(scalar(ScalarKind::Float)) {}

Type Type::scalar(ScalarKind k) {
  // Scalars are shared: building them is frequent and they never differ.
  static const Type cache[] = {make_scalar(ScalarKind::Bool), make_scalar(ScalarKind::Int),
                               make_scalar(ScalarKind::Float), make_scalar(ScalarKind::Double)};
  auto index = static_cast<size_t>(k);
  LIFTX_INTERNAL_CHECK(index < 4, "bad scalar kind {}", index);
  return cache[index];
}

Type Type::tuple(std::vector<Type> elements) {
  LIFTX_USER_CHECK(elements.size() >= 2, "a tuple type needs at least 2 elements, got {}",
                   elements.size());
  size_t h = mix(0x7u, elements.size());
  for (const Type& e : elements)
    h = mix(h, e.hash());
  return make(TupleType{std::move(elements)}, h);
}

Type Type::vector(ScalarKind kind, int width) {
  LIFTX_USER_CHECK(width == 2 || width == 4 || width == 8 || width == 16,
                   "vector width {} is not an OpenCL vector width (2, 4, 8 or 16)", width);
  LIFTX_USER_CHECK(kind != ScalarKind::Bool, "there are no vectors of bool in OpenCL C");
  return make(VectorType{kind, width},
              mix(mix(0x7ec7u, static_cast<size_t>(kind)), static_cast<size_t>(width)));
}

Type Type::array(Type element, arith::Expr length) {
  size_t h = mix(mix(0xa11u, element.hash()), length.hash());
  return make(ArrayType{std::move(element), std::move(length)}, h);
}

bool Type::operator==(const Type& o) const {
  if (data_ == o.data_)
    return true;
  if (hash() != o.hash() || data_->node.index() != o.data_->node.index())
    return false;
  if (const auto* s = as<ScalarType>())
    return s->kind == o.as<ScalarType>()->kind;
  if (const auto* t = as<TupleType>())
    return t->elements == o.as<TupleType>()->elements;
  if (const auto* v = as<VectorType>())
    return v->kind == o.as<VectorType>()->kind && v->width == o.as<VectorType>()->width;
  const auto* a = as<ArrayType>();
  const auto* b = o.as<ArrayType>();
  return a->length == b->length && a->element == b->element;
}

std::string Type::to_string() const {
  if (const auto* s = as<ScalarType>())
    return scalar_name(s->kind);
  if (const auto* v = as<VectorType>())
    return scalar_name(v->kind) + std::to_string(v->width);
  if (const auto* t = as<TupleType>()) {
    std::string out = "(";
    for (size_t i = 0; i < t->elements.size(); ++i) {
      if (i > 0)
        out += ", ";
      out += t->elements[i].to_string();
    }
    return out + ")";
  }
  const auto* a = as<ArrayType>();
  std::string length = a->length.to_string();
  if (!length_is_atomic(a->length))
    length = "(" + length + ")";
  return "[" + a->element.to_string() + "]" + length;
}

int array_rank(const Type& t) {
  int rank = 0;
  for (const ArrayType* a = t.as<ArrayType>(); a; a = a->element.as<ArrayType>())
    ++rank;
  return rank;
}

std::vector<arith::Expr> array_shape(const Type& t) {
  std::vector<arith::Expr> shape;
  for (const ArrayType* a = t.as<ArrayType>(); a; a = a->element.as<ArrayType>())
    shape.push_back(a->length);
  return shape;
}

Type array_base(const Type& t) {
  Type current = t;
  while (const auto* a = current.as<ArrayType>()) {
    Type next = a->element; // copy before `current` (which owns *a) is replaced
    current = std::move(next);
  }
  return current;
}

bool contains_vector(const Type& t) {
  if (t.is_vector())
    return true;
  if (const auto* a = t.as<ArrayType>())
    return contains_vector(a->element);
  if (const auto* tup = t.as<TupleType>())
    return std::any_of(tup->elements.begin(), tup->elements.end(),
                       [](const Type& e) { return contains_vector(e); });
  return false;
}

namespace {
void collect_size_vars(const Type& t, std::vector<arith::Expr>& out) {
  if (const auto* a = t.as<ArrayType>()) {
    for (const arith::Expr& v : arith::free_vars(a->length))
      out.push_back(v);
    collect_size_vars(a->element, out);
  } else if (const auto* tup = t.as<TupleType>()) {
    for (const Type& e : tup->elements)
      collect_size_vars(e, out);
  }
}
} // namespace

std::vector<arith::Expr> size_vars(const Type& t) {
  std::vector<arith::Expr> vars;
  collect_size_vars(t, vars);
  std::sort(vars.begin(), vars.end(), [](const arith::Expr& a, const arith::Expr& b) {
    if (a.node().name != b.node().name)
      return a.node().name < b.node().name;
    return std::less<const void*>{}(a.get(), b.get()); // same name, other range
  });
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  return vars;
}

} // namespace liftx::ir
