#pragma once
/// Types of the functional IR: scalars, tuples and arrays whose length is a symbolic expression.
/// `[[float]N]M` is M arrays of N floats. Types are immutable values behind a cheap handle;
/// equality is structural (array lengths compare as canonical arithmetic expressions).
#include "ir/arith/expr.hpp"
#include "ir/userfun/scalar.hpp"

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace liftx::ir {

struct TypeData;

class Type {
public:
  Type(); ///< float
  explicit Type(std::shared_ptr<const TypeData> d) : data_(std::move(d)) {}

  static Type scalar(ScalarKind k);
  static Type float_() { return scalar(ScalarKind::Float); }
  static Type int_() { return scalar(ScalarKind::Int); }
  static Type bool_() { return scalar(ScalarKind::Bool); }
  static Type double_() { return scalar(ScalarKind::Double); }
  static Type tuple(std::vector<Type> elements); ///< at least 2 elements
  /// An OpenCL vector of `width` scalars of `kind` (float4, int8, ...): width 2, 4, 8 or 16,
  /// kind int, float or double; UserError otherwise.
  static Type vector(ScalarKind kind, int width);
  static Type array(Type element, arith::Expr length);

  const TypeData& data() const { return *data_; }
  template <class T>
  const T* as() const;
  bool is_scalar() const;
  bool is_array() const;
  bool is_tuple() const;
  bool is_vector() const;

  bool operator==(const Type& o) const;
  bool operator!=(const Type& o) const { return !(*this == o); }
  size_t hash() const;

  /// .lift spelling: `float`, `float4`, `(float, int)`, `[[float]N]M`; lengths that are not a
  /// constant or a single variable are parenthesised: `[float](N+2)`.
  std::string to_string() const;

private:
  std::shared_ptr<const TypeData> data_;
};

struct ScalarType {
  ScalarKind kind;
};
/// Produced by asVector and consumed by asScalar and vectorised user functions; never a program
/// parameter or result (memory holds scalars).
struct VectorType {
  ScalarKind kind;
  int width;
};
struct TupleType {
  std::vector<Type> elements;
};
struct ArrayType {
  Type element;
  arith::Expr length;
};
using TypeNode = std::variant<ScalarType, TupleType, ArrayType, VectorType>;

struct TypeData {
  TypeNode node;
  size_t hash = 0;
};

template <class T>
const T* Type::as() const {
  return std::get_if<T>(&data_->node);
}
inline bool Type::is_scalar() const {
  return as<ScalarType>() != nullptr;
}
inline bool Type::is_array() const {
  return as<ArrayType>() != nullptr;
}
inline bool Type::is_tuple() const {
  return as<TupleType>() != nullptr;
}
inline bool Type::is_vector() const {
  return as<VectorType>() != nullptr;
}
inline size_t Type::hash() const {
  return data_->hash;
}

/// Number of array dimensions ([[float]N]M -> 2).
int array_rank(const Type& t);
/// Lengths outermost first ([[float]N]M -> {M, N}).
std::vector<arith::Expr> array_shape(const Type& t);
/// The type below all array levels.
Type array_base(const Type& t);
/// Whether a vector type occurs anywhere in `t`.
bool contains_vector(const Type& t);
/// Every variable in the array lengths of `t`, sorted by name.
std::vector<arith::Expr> size_vars(const Type& t);

} // namespace liftx::ir

template <>
struct std::hash<liftx::ir::Type> {
  size_t operator()(const liftx::ir::Type& t) const noexcept { return t.hash(); }
};
