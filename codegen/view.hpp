#pragma once
/// Views: what an IR value is while generating code. Data-layout primitives never copy; they
/// compose index functions, and only a user-function call finally reads memory, at an index that
/// the arithmetic simplifies (Lift's views, as closures instead of a view tree).
///
/// - A Value is a scalar (an OpenCL C expression), a tuple of values, or an array whose element i
///   is computed on demand by `at(i)`.
/// - A Target is where a computation writes: a scalar lvalue, or an array of targets.
/// Writes through layout primitives use the inverse view: writing X where the program returns
/// join(X) writes X[i][j] to out[i*m + j].
#include "codegen/kernel.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace liftx::codegen {

/// A memory element a scalar expression reads (buffer, space, index, kind; `is_store` unused).
using Load = MemoryAccess;

/// A scalar, or an OpenCL vector (width > 1). Vectors exist only as values: memory holds
/// scalars, and vectors are loaded and stored through asVector/asScalar.
struct ScalarValue {
  std::string text; ///< OpenCL C expression
  ir::ScalarKind kind;
  std::vector<Load> loads = {};           ///< the array elements the expression reads
  std::vector<ir::UserFunPtr> calls = {}; ///< the user functions the expression calls
  int width = 1;
  /// Vectors: each component as a scalar expression (reading a component never re-reads the
  /// whole vector).
  std::vector<ScalarValue> parts = {};
  /// The value when known at generation time (literals, constant indices, user functions of
  /// constants): calls of user functions on constants fold to literals.
  std::optional<ir::Scalar> constant = std::nullopt;
};
struct TupleValue;
struct ArrayValue;
using Value =
    std::variant<ScalarValue, std::shared_ptr<const TupleValue>, std::shared_ptr<const ArrayValue>>;

struct TupleValue {
  std::vector<Value> elements;
};
struct ArrayValue {
  ir::Type type; ///< an array type; its length bounds the index
  std::function<Value(const arith::Expr& index)> at;
  bool reads_private = false; ///< some element comes from private memory (needs constant indices)
  /// Private memory distributed over the work-items of a group (Target::lane_dim): the dimension
  /// of the mapLcl whose work-items hold one element each, and the element of this work-item.
  int lane_dim = -1;
  std::function<Value()> own;
};

struct Target;
using TargetPtr = std::shared_ptr<const Target>;
struct Target {
  ir::Type type;
  AddressSpace space;
  std::string lvalue;                  ///< scalar targets (aligned vector targets too)
  std::optional<MemoryAccess> element; ///< scalar targets in an array: the element written
  std::function<TargetPtr(const arith::Expr& index)> at; ///< array targets
  /// Private memory written by a mapLcl whose work-items run one iteration each: every work-item
  /// holds only its own element (Lift's private memory inside mapLcl), so `at` accepts the index
  /// of the enclosing mapLcl of dimension lane_dim only, and `own` gives that element where no
  /// index is at hand (an accumulator copied whole). -1: an ordinary array.
  int lane_dim = -1;
  std::function<TargetPtr()> own;
  /// Private memory held per work-item whose other work-items' elements are readable too (a warp
  /// stream's ring in registers, Generator::lane_read): element `index` as a value. Empty: reads
  /// go through `at`, the work-item's own element only.
  std::function<Value(const arith::Expr& index)> read;
  /// Vector targets: one scalar target per component. When they are consecutive in global or
  /// local memory, `element` is the vector access and either `lvalue` is set (provably aligned:
  /// `*(global float4*)(p)`) or `pointer` is (stored with vstoreN); otherwise component-wise.
  std::vector<TargetPtr> components;
  std::string pointer;
  /// Tuple targets: one target per element (their storage need not be adjacent: a tuple result
  /// lands in one buffer per component).
  std::vector<TargetPtr> fields;
};

const ScalarValue* as_scalar(const Value& v);
const ArrayValue* as_array(const Value& v);
const TupleValue* as_tuple(const Value& v);

Value make_array(ir::Type type, std::function<Value(const arith::Expr&)> at,
                 bool reads_private = false);

/// Row-major memory `name` holding a value of `type` from element `offset` on.
Value memory_value(const std::string& name, const ir::Type& type, const arith::Expr& offset,
                   AddressSpace space);
/// Field `field` of the grids `group` stores together in global buffer `name`: a grid of `type`
/// whose element i lies at ir::stored_index(group, i, field).
Value stored_field_value(const std::string& name, const ir::Type& type,
                         const ir::StorageGroup& group, size_t field);
/// With `row_padding` p, every innermost row of `type` is followed by p unused elements (the
/// layout of toLocalPadded; padded_scalar_count is then its size).
TargetPtr memory_target(const std::string& name, const ir::Type& type, const arith::Expr& offset,
                        AddressSpace space, const arith::Expr& row_padding = arith::Expr(0));
/// Number of scalars in a value of `type` (arrays of scalars, nested).
arith::Expr scalar_count(const ir::Type& type);
/// The same with every innermost row longer by `row_padding` elements.
arith::Expr padded_scalar_count(const ir::Type& type, const arith::Expr& row_padding);
/// A target of `type` whose tuple elements land in `leaves` (one per stored_components(type)).
TargetPtr zip_targets(const ir::Type& type, std::vector<TargetPtr> leaves);
/// The target of element k of zip(X0, X1, ...) when the zip lands in `target`:
/// Xk[i] lands in field k of target[i].
TargetPtr unzip_target(const TargetPtr& target, size_t k, const ir::Type& xk_type);
/// The scalar kind at the bottom of nested arrays; UserError for tuples in memory.
ir::ScalarKind memory_kind(const ir::Type& type, const char* what);

// Layout views (reads).
Value split_view(const Value& x, const arith::Expr& chunk, const ir::Type& result);
Value join_view(const Value& x, const ir::Type& result);
Value slide_view(const Value& x, const arith::Expr& size, const arith::Expr& step,
                 const ir::Type& result);
/// slideShifted: window i starts at min(i * step, n - size).
Value slide_shifted_view(const Value& x, const arith::Expr& size, const arith::Expr& step,
                         const ir::Type& result);
/// joinShifted: element p of row min(p / m, rows - 1), the row that holds it first.
Value join_shifted_view(const Value& x, const ir::Type& result);
Value pad_view(const Value& x, const arith::Expr& left, const arith::Expr& right,
               const ir::Boundary& boundary, const ir::Type& result);
Value transpose_view(const Value& x, const ir::Type& result);
Value zip_view(const std::vector<Value>& xs, const ir::Type& result);

// Inverse views (writes): the target of X when the result of P(X) must land in `target`.
TargetPtr join_inverse(const TargetPtr& target, const arith::Expr& chunk, const ir::Type& x_type);
/// result = joinShifted(length, X): X[i][j] lands in result[min(i * m, length - m) + j]; the
/// overlapping rows both store (the same values).
TargetPtr join_shifted_inverse(const TargetPtr& target, const arith::Expr& length,
                               const ir::Type& x_type);
TargetPtr split_inverse(const TargetPtr& target, const arith::Expr& chunk, const ir::Type& x_type);
TargetPtr transpose_inverse(const TargetPtr& target, const ir::Type& x_type);

/// Divisibility facts about size variables (name -> divisor), from the program's exact divisions.
using SizeDivisors = std::map<std::string, int64_t, std::less<>>;
/// True when `index` is provably a multiple of `width` given the facts.
bool provably_aligned(const arith::Expr& index, int64_t width, const SizeDivisors& divisors);
/// The element `value` reads when it is exactly one element of memory (`buf[index]`), else null.
const Load* direct_load(const ScalarValue& value);
/// Names of buffers.
using BufferNames = std::set<std::string, std::less<>>;
/// A vector value made of `parts` (scalars of one kind): one vector load when they are
/// consecutive elements of one global or local buffer, else `(float4)(a, b, c, d)`. The load is
/// a cast (`*(const global float4*)(p)`, which the compiler may issue as one wide access) when the
/// index is provably aligned and the buffer's first element is: every global buffer, and the local
/// buffers in `aligned_local` (declared in the kernel, aligned, when such a read needs it: see
/// Kernel::local_arrays); vloadN otherwise, which needs only element alignment.
ScalarValue vector_of(std::vector<ScalarValue> parts, const SizeDivisors& divisors,
                      const BufferNames* aligned_local = nullptr);
/// asVector(w): element i is the vector of x[i*w .. i*w + w).
Value as_vector_view(const Value& x, int width, const ir::Type& result,
                     const SizeDivisors& divisors, const BufferNames* aligned_local = nullptr);
/// asScalar: element j is component j % w of x[j / w] (j % w must be a constant).
Value as_scalar_view(const Value& x, int width, const ir::Type& result);
/// Writes through asScalar: the program returns asScalar(X), so X[i] lands in
/// target[i*w .. i*w + w).
TargetPtr as_scalar_inverse(const TargetPtr& target, int width, const ir::Type& x_type,
                            const SizeDivisors& divisors);
/// The OpenCL type name of a value: `float`, `float4`.
std::string value_type_name(ir::ScalarKind kind, int width);

/// The value a target holds once written (reads back what was stored).
Value target_value(const TargetPtr& target);

} // namespace liftx::codegen
