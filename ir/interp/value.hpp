#pragma once
/// Runtime values of the interpreter (internal to liftx_interp).
///
/// A value is a scalar, a tuple or an array. An array is a reference into an ArrayNode: a node
/// resolves `rank()` array levels at once (a 2D storage, a split view, ...) and the reference
/// carries the indices already chosen in the outer levels (its prefix). Indexing an array therefore
/// allocates nothing until all the node's levels are fixed, and then asks the node for the leaf,
/// which may itself be an array of another node. Views (split, slide, pad, transpose, zip, ...)
/// are nodes computing their leaves from a source array, so layout primitives never copy data.
#include "ir/userfun/scalar.hpp"
#include "support/error.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

namespace liftx::interp {

struct Value;
struct ArrayNode;

/// Most array levels one node resolves at once.
inline constexpr int kMaxNodeRank = 4;

struct Tuple {
  std::vector<Value> items;
};

struct ArrayRef {
  std::shared_ptr<const ArrayNode> node;
  std::array<int64_t, kMaxNodeRank> prefix{};
  int prefix_length = 0;
};

struct Value {
  std::variant<ir::Scalar, Tuple, ArrayRef> v;

  Value() : v(ir::Scalar(0.0f)) {}
  Value(ir::Scalar s) : v(s) {}          // NOLINT(implicit)
  Value(Tuple t) : v(std::move(t)) {}    // NOLINT(implicit)
  Value(ArrayRef a) : v(std::move(a)) {} // NOLINT(implicit)

  bool is_scalar() const { return v.index() == 0; }
  bool is_tuple() const { return v.index() == 1; }
  bool is_array() const { return v.index() == 2; }
  const ir::Scalar& scalar() const;
  const Tuple& tuple() const;
  const ArrayRef& array() const;
};

/// A non-owning array reference, used while resolving index chains so that walking through views
/// touches no reference counts. Valid while the value it was reached from is alive: a node only
/// refers to nodes built before it, and resolving never builds nodes.
struct ArrayCursor {
  const ArrayNode* node = nullptr;
  std::array<int64_t, kMaxNodeRank> prefix{};
  int prefix_length = 0;
};
inline ArrayCursor cursor(const ArrayRef& a) {
  return ArrayCursor{a.node.get(), a.prefix, a.prefix_length};
}

/// What an index chain leads to, without owning it where possible: a scalar, an array, a value
/// stored inside a node (a tuple, a padding constant) or a value built on the fly (a zip's tuple).
struct Resolved {
  enum class Kind : uint8_t { Scalar, Array, Stored, Made };
  Kind kind = Kind::Scalar;
  ir::Scalar scalar;
  ArrayCursor array;
  const Value* stored = nullptr;
  std::unique_ptr<Value> made; ///< Made only (boxed: keeps Resolved cheap to move and destroy)

  static Resolved of_scalar(const ir::Scalar& s) {
    Resolved r;
    r.scalar = s;
    return r;
  }
  static Resolved of_array(const ArrayCursor& a) {
    Resolved r;
    r.kind = Kind::Array;
    r.array = a;
    return r;
  }
  /// A value that lives in a node: scalars and arrays are taken apart, others pointed to.
  static inline Resolved of_stored(const Value& v);
  static Resolved of_made(Value v);
};

/// A node resolving `shape.size()` array levels; `leaf` receives one in-range index per level.
/// Always owned by a shared_ptr (make_node), so a cursor can become an owning ArrayRef again.
struct ArrayNode : std::enable_shared_from_this<ArrayNode> {
  explicit ArrayNode(std::vector<int64_t> shape);
  virtual ~ArrayNode() = default;
  int rank() const { return static_cast<int>(shape.size()); }
  virtual Resolved leaf(const int64_t* indices) const = 0;

  std::vector<int64_t> shape;
};

/// a[i0]...[i(n-1)] without taking ownership (see index_path for the bounds rules).
Resolved resolve(const ArrayCursor& a, const int64_t* indices, int n, bool from_program = false);
Resolved resolve(const ArrayRef& a, const int64_t* indices, int n, bool from_program = false);
/// The owning value of a resolution.
Value to_value(Resolved r);

inline Resolved Resolved::of_stored(const Value& v) {
  if (const auto* s = std::get_if<ir::Scalar>(&v.v))
    return of_scalar(*s);
  Resolved r; // arrays too are pointed to: resolving continues from the stored reference

  r.kind = Kind::Stored;
  r.stored = &v;
  return r;
}

/// Length of the outermost level of an array.
int64_t length(const ArrayRef& a);
/// Element i (0 <= i < length, else InternalError).
Value element(const ArrayRef& a, int64_t i);
/// a[i0][i1]...[i(n-1)]. An index out of bounds is a UserError when the indices come from the
/// program (`from_program`), else an InternalError.
Value index_path(const ArrayRef& a, const int64_t* indices, int n, bool from_program = false);
/// Wraps a node as an array value.
Value make_array(std::shared_ptr<const ArrayNode> node);
template <class T, class... Args>
std::shared_ptr<const ArrayNode> make_node(Args&&... args) {
  return std::make_shared<const T>(std::forward<Args>(args)...);
}

ir::Scalar make_scalar(ir::ScalarKind kind, double value);

// ---- storage nodes ------------------------------------------------------------------------------
/// Dense row-major scalars; with tuple_width > 0, each leaf is a tuple of that many components
/// stored innermost (the HostArray layout of tuple arrays).
struct ScalarStorage final : ArrayNode {
  ScalarStorage(ir::ScalarKind kind, std::vector<int64_t> shape, std::vector<double> data,
                int tuple_width = 0);
  Resolved leaf(const int64_t* indices) const override;

  ir::ScalarKind kind;
  std::vector<double> data;
  int tuple_width;
  std::vector<int64_t> strides; // in leaves
};

/// One level of arbitrary values (results of map over non-scalar elements).
struct ValueStorage final : ArrayNode {
  explicit ValueStorage(std::vector<Value> items);
  Resolved leaf(const int64_t* indices) const override {
    return Resolved::of_stored(items[static_cast<size_t>(indices[0])]);
  }

  std::vector<Value> items;
};

// ---- views --------------------------------------------------------------------------------------
struct SplitView final : ArrayNode {
  SplitView(ArrayRef source, int64_t chunk);
  Resolved leaf(const int64_t* indices) const override;
  ArrayRef source;
  int64_t chunk;
};

struct JoinView final : ArrayNode {
  JoinView(ArrayRef source, int64_t outer, int64_t inner);
  Resolved leaf(const int64_t* indices) const override;
  ArrayRef source;
  int64_t inner;
};

struct SlideView final : ArrayNode {
  SlideView(ArrayRef source, int64_t windows, int64_t size, int64_t step);
  Resolved leaf(const int64_t* indices) const override;
  ArrayRef source;
  int64_t step;
};

/// slideShifted: window i starts at min(i * step, last), last = length - size.
struct SlideShiftedView final : ArrayNode {
  SlideShiftedView(ArrayRef source, int64_t windows, int64_t size, int64_t step, int64_t last);
  Resolved leaf(const int64_t* indices) const override;
  ArrayRef source;
  int64_t step;
  int64_t last;
};

/// joinShifted: element p of the row that holds it first (the last row starts at length - m).
struct JoinShiftedView final : ArrayNode {
  JoinShiftedView(ArrayRef source, int64_t rows, int64_t row, int64_t length);
  Resolved leaf(const int64_t* indices) const override;
  ArrayRef source;
  int64_t rows;
  int64_t row;
};

enum class PadMode : uint8_t { Clamp, Mirror, Wrap, Constant };
/// Maps index i of the padded array (original length n, left padding l) to the source index, or
/// -1 for a constant element. Exposed for tests.
int64_t pad_source_index(PadMode mode, int64_t i, int64_t left, int64_t n);

struct PadView final : ArrayNode {
  PadView(ArrayRef source, int64_t left, int64_t right, PadMode mode, Value constant);
  Resolved leaf(const int64_t* indices) const override;
  ArrayRef source;
  int64_t left;
  int64_t source_length;
  PadMode mode;
  Value constant; ///< the padding element (Constant mode), shaped like the source elements
};

struct TransposeView final : ArrayNode {
  TransposeView(ArrayRef source, int64_t outer, int64_t inner);
  Resolved leaf(const int64_t* indices) const override;
  ArrayRef source;
};

struct ZipView final : ArrayNode {
  ZipView(std::vector<ArrayRef> sources, int64_t n);
  Resolved leaf(const int64_t* indices) const override;
  std::vector<ArrayRef> sources;
};

/// Every element equal to `element` (padding of non-scalar elements).
struct ConstantView final : ArrayNode {
  ConstantView(int64_t n, Value element);
  Resolved leaf(const int64_t*) const override { return Resolved::of_stored(element); }
  Value element;
};

/// A value shaped like `sample` whose every scalar is `v` converted to the sample's kind.
Value constant_like(const Value& sample, const ir::Scalar& v);

/// Copies an array whose leaves are scalars (or tuples of scalars of one kind) into one dense
/// ScalarStorage, so that views are not chained across iterations. Other values are returned as
/// they are.
Value compact(const Value& v);

} // namespace liftx::interp
