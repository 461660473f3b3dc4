#pragma once
/// The functional IR: expressions (parameters, literals, calls) and functions (lambdas, user
/// functions and primitives). Nodes are immutable and shared behind cheap handles; every
/// expression carries its type, inferred and checked when it is built, so an ill-typed
/// application is a UserError at construction and no pass re-typechecks. Codegen state never lives
/// on nodes (later passes keep side tables keyed by node pointer).
///
// clang-format off
/// Primitive semantics and typing (Lift's):
///   map(f)            [T]n -> [U]n               f : T -> U   (mapSeq, mapGlb/Wrg/Lcl(d) alike)
///   reduce(f, init)   [T]n -> [U]1               f : (U, T) -> U, init : U   (reduceSeq alike)
///   zip               ([T1]n, ..., [Tk]n) -> [(T1, ..., Tk)]n             (k >= 2 arguments)
///   split(m)          [T]n -> [[T]m](n /^ m)
///   join              [[T]m]n -> [T](m*n)
///   slide(size, step) [T]n -> [[T]size]((n - size + step) /^ step)
///   pad(l, r, b)      [T]n -> [T](l + n + r)     b: clamp | mirror | wrap | constant(v)
///   at(i)  (x[i])     [T]n -> T                  0 <= i < n
///   get(i)            (T0, ..., Tk) -> Ti
///   transpose         [[T]m]n -> [[T]n]m
///   id                T -> T                     (a copy once lowered)
///   iterate(k, f)     T -> T                     f : T -> T applied k times
///   array(n, f)       () -> [T]n                 f : (int i, int n) -> T
///   toGlobal/toLocal/toPrivate(f)  same type as f; where f writes its result
///   asVector(w)       [S]n -> [Sw](n /^ w)       S a scalar kind, w in {2, 4, 8, 16}
///   asScalar          [Sw]n -> [S](n*w)
///   vectorize(w, uf)  (Sw, ...) -> Rw            the user function uf applied per component
///   mapSeqSlide(f, size, step)  [T]n -> [U]((n - size + step) /^ step)   f : [T]size -> U;
///                     map(f) . slide(size, step), computed sequentially with the window kept in
///                     registers (each step loads only `step` new elements)
// clang-format on
/// A function with k >= 2 parameters applied to one tuple of k components receives the
/// components (Lift's rule for user functions; also for lambdas and zip).
/// `/^` is exact division (see ir/arith/expr.hpp): split and slide require the division to be
/// exact, which is checked whenever sizes are known.
#include "ir/arith/expr.hpp"
#include "ir/type.hpp"
#include "ir/userfun/userfun.hpp"
#include "support/error.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace liftx::ir {

struct ExprData;
struct FunData;

/// Handle to an immutable expression node. Cheap to copy; never null once built.
class Expr {
public:
  explicit Expr(std::shared_ptr<const ExprData> d) : data_(std::move(d)) {}
  const ExprData& data() const { return *data_; }
  const Type& type() const;
  template <class T>
  const T* as() const;
  /// Pointer identity: the "unchanged" fast path of rewriting.
  bool same_as(const Expr& o) const { return data_ == o.data_; }
  /// Structural hash; parameters hash by type only, so alpha-equivalent expressions collide.
  size_t hash() const;
  const void* identity() const { return data_.get(); }
  /// `x[i]`: the element at `index` of this array (call(at(index), {*this})).
  Expr operator[](const arith::Expr& index) const;

private:
  std::shared_ptr<const ExprData> data_;
};

/// Handle to an immutable function node (lambda, user function or primitive).
class Fun {
public:
  explicit Fun(std::shared_ptr<const FunData> d) : data_(std::move(d)) {}
  const FunData& data() const { return *data_; }
  template <class T>
  const T* as() const;
  bool same_as(const Fun& o) const { return data_ == o.data_; }
  size_t hash() const;
  const void* identity() const { return data_.get(); }

private:
  std::shared_ptr<const FunData> data_;
};

// ---- expression nodes ---------------------------------------------------------------------------
/// A lambda or program parameter. Identity is `id` (unique per process); `name` is a printing hint.
struct Param {
  uint64_t id;
  std::string name;
};
struct Literal {
  Scalar value;
};
struct Call {
  Fun fun;
  std::vector<Expr> args;
  SourceLoc loc; ///< where the call was written, if parsed; not part of equality or hash
};
using ExprNode = std::variant<Param, Literal, Call>;

// ---- function nodes -----------------------------------------------------------------------------
struct Lambda {
  std::vector<Expr> params; ///< each a Param expression
  Expr body;
};
struct UserFun {
  UserFunPtr def;
};
struct Map {
  Fun f;
};
struct MapSeq {
  Fun f;
};
struct MapGlb {
  int dim;
  Fun f;
};
struct MapWrg {
  int dim;
  Fun f;
};
struct MapLcl {
  int dim;
  Fun f;
};
struct Reduce {
  Fun f;
  Expr init;
};
struct ReduceSeq {
  Fun f;
  Expr init;
};
struct Iterate {
  arith::Expr count;
  Fun f;
};
struct Zip {};
/// tuple(a, b, ...): the tuple of its arguments (several values per point: tuple results).
struct Tuple {};
struct Split {
  arith::Expr chunk;
};
struct Join {};
struct Slide {
  arith::Expr size;
  arith::Expr step;
};
/// slide whose step need not divide: ceil((n - size) / step) + 1 windows, window i starting at
/// min(i * step, n - size), so the last one ends at the array's end (Halide's ShiftInwards
/// tail). A tiling of a size no tile divides: the last tile overlaps its neighbour instead of
/// reaching past the array.
struct SlideShifted {
  arith::Expr size;
  arith::Expr step;
};
/// The inverse layout of slideShifted's tiles: [k][m] -> [length], element (i, j) at
/// min(i * m, length - m) + j, with k = ceil(length / m). Where the last row overlaps its
/// neighbour, both hold the same values (tiles of one computation): reading takes the earlier
/// row's, and writing stores both. `margin` is what the tiles' computation needs to be exact at
/// the array's edges (a fused tile repairs only the edges it touches): the last row starts at
/// least `margin` elements in, and adds at least `margin` elements past the others; lengths
/// for which it does not are refused (launches, the interpreter).
struct JoinShifted {
  arith::Expr length;
  arith::Expr margin;
};
struct Boundary {
  enum class Kind : uint8_t { Clamp, Mirror, Wrap, Constant };
  Kind kind = Kind::Clamp;
  Scalar value = 0.0f; ///< Constant only
  bool operator==(const Boundary&) const = default;
};
struct Pad {
  arith::Expr left;
  arith::Expr right;
  Boundary boundary;
};
struct At {
  arith::Expr index;
};
struct Get {
  int index;
};
struct Transpose {};
struct Id {};
struct Generate {
  arith::Expr length;
  Fun f;
};
struct ToGlobal {
  Fun f;
};
struct AsVector {
  int width;
};
struct AsScalar {};
struct Vectorize {
  int width;
  Fun f; ///< a user function
};
struct MapSeqSlide {
  Fun f;
  arith::Expr size;
  arith::Expr step;
  /// Windows per iteration of the loop the code generator writes (1: rolled). A schedule, not a
  /// meaning: unrolled by the window size, the rotations of a register window become renamings.
  int unroll = 1;
};
struct ToLocal {
  Fun f;
};
/// toLocal whose local array keeps rows `padding` elements longer than their length (the last
/// dimension's stride grows; the values and the type are toLocal's): against bank conflicts.
struct ToLocalPadded {
  arith::Expr padding;
  Fun f;
};
struct ToPrivate {
  Fun f;
};

using FunNode = std::variant<Lambda, UserFun, Map, MapSeq, MapGlb, MapWrg, MapLcl, Reduce,
                             ReduceSeq, Iterate, Zip, Split, Join, Slide, Pad, At, Get, Transpose,
                             Id, Generate, ToGlobal, ToLocal, ToLocalPadded, ToPrivate, AsVector,
                             AsScalar, Vectorize, MapSeqSlide, Tuple, SlideShifted, JoinShifted>;

struct ExprData {
  ExprNode node;
  Type type;
  size_t hash = 0;
};
struct FunData {
  FunNode node;
  size_t hash = 0;
};

inline const Type& Expr::type() const {
  return data_->type;
}
template <class T>
const T* Expr::as() const {
  return std::get_if<T>(&data_->node);
}
inline size_t Expr::hash() const {
  return data_->hash;
}
template <class T>
const T* Fun::as() const {
  return std::get_if<T>(&data_->node);
}
inline size_t Fun::hash() const {
  return data_->hash;
}

// ---- construction (type-checked) ---------------------------------------------------------------
Expr param(Type type, std::string name_hint = "x");
Expr literal(Scalar value);
/// Applies `fun` to `args`, inferring the result type. Throws UserError naming the primitive, the
/// expected and the actual type (located at `loc` when given).
Expr call(const Fun& fun, std::vector<Expr> args, SourceLoc loc = {});
/// The result type of applying `fun` to arguments of these types (the typing rules above).
Type result_type(const Fun& fun, std::span<const Type> args);

/// `params => body`, eta-reduced: `x => f(x)` is `f` when x does not occur in f.
Fun lambda(std::vector<Expr> params, Expr body);
Fun user_fun(UserFunPtr def);
Fun map(Fun f);
Fun map_seq(Fun f);
Fun map_glb(int dim, Fun f); ///< dim in 0..2, else UserError
Fun map_wrg(int dim, Fun f);
Fun map_lcl(int dim, Fun f);
Fun reduce(Fun f, Expr init);
Fun reduce_seq(Fun f, Expr init);
Fun iterate(arith::Expr count, Fun f); ///< count a non-negative constant
Fun zip();
Fun tuple();
Fun split(arith::Expr chunk); ///< chunk provably >= 1
Fun join();
Fun slide(arith::Expr size, arith::Expr step);                   ///< size >= 1, step >= 1
Fun slide_shifted(arith::Expr size, arith::Expr step);           ///< size >= 1, step >= 1
Fun join_shifted(arith::Expr length, arith::Expr margin);        ///< length >= 1, margin >= 0
Fun pad(arith::Expr left, arith::Expr right, Boundary boundary); ///< left, right >= 0
Fun at(arith::Expr index);
Fun get(int index);
Fun transpose();
Fun id();
Fun generate(arith::Expr length, Fun f);
Fun to_global(Fun f);
Fun to_local(Fun f);
Fun to_local_padded(arith::Expr padding, Fun f); ///< padding a constant in 1..4096, else UserError
Fun to_private(Fun f);
Fun as_vector(int width); ///< width 2, 4, 8 or 16, else UserError
Fun as_scalar();
Fun vectorize(int width, Fun user_function); ///< UserError unless a user function
/// The most windows per iteration a mapSeqSlide's loop may be unrolled by.
inline constexpr int kMaxSlideUnroll = 64;
/// size >= 1, step >= 1, unroll in 1..kMaxSlideUnroll, else UserError.
Fun map_seq_slide(Fun f, arith::Expr size, arith::Expr step, int unroll = 1);

/// The .lift name of a function's head: "map", "mapGlb0", "reduceSeq", "split", "lambda",
/// the user function's name, ...
std::string fun_name(const Fun& f);

// ---- programs ----------------------------------------------------------------------------------
/// `def name(p1: T1, ...) = body`. Parameters stay explicit (never eta-reduced away) because they
/// carry the input types.
/// How a group of input grids of one type is stored: as the fields of one record per element
/// (MATOG's layouts), in one buffer. Grids in no group are stored one buffer each (struct of
/// arrays, the layout of a zip). The layout is a storage decision only: a program means the same
/// under every grouping, and the host packs and unpacks the buffers.
struct StorageGroup {
  enum class Layout : uint8_t {
    AoS,  ///< array of structs: element i's fields side by side
    AoSoA ///< blocks of `block` elements, each a struct of arrays
  };
  Layout layout = Layout::AoS;
  int64_t block = 1;          ///< AoSoA: elements per block
  std::vector<size_t> fields; ///< indices into Program::params, in field order
  bool operator==(const StorageGroup&) const = default;
};

struct Program {
  std::string name;
  std::vector<Expr> params;
  Expr body;
  SourceLoc loc;
  /// Input grids stored together (ir/storage.hpp); empty: every grid in a buffer of its own.
  std::vector<StorageGroup> storage = {};
  /// Size variables occurring in parameter types, sorted by name.
  std::vector<arith::Expr> size_vars() const;
  const Type& result_type() const { return body.type(); }
};

/// A parsed .lift file: user functions and definitions in source order.
struct Module {
  std::vector<UserFunPtr> userfuns;
  std::vector<Program> programs;
  /// The program run by default: the last definition. UserError if there is none.
  const Program& main() const;
  const Program* find(std::string_view name) const;
};

// ---- traversal ---------------------------------------------------------------------------------
/// Calls `on_fun` / `on_expr` on the direct children of a node, in order: a call's function then
/// its arguments; a lambda's parameters then body; a primitive's function argument, then its init
/// expression (reduce).
void for_each_child(const Expr& e, const std::function<void(const Fun&)>& on_fun,
                    const std::function<void(const Expr&)>& on_expr);
void for_each_child(const Fun& f, const std::function<void(const Fun&)>& on_fun,
                    const std::function<void(const Expr&)>& on_expr);
/// Appends to `out` the user functions `e` calls that are not built in and not in `out` yet (the
/// same definition), in order of first call.
void collect_userfuns(const Expr& e, std::vector<UserFunPtr>& out);
/// Parameters used in `e` but not bound inside it, in order of first occurrence.
std::vector<Expr> free_params(const Expr& e);
std::vector<Expr> free_params(const Fun& f);

// ---- equality modulo renaming ------------------------------------------------------------------
/// Structural equality where bound parameters are matched by position (alpha-equivalence) and
/// free parameters by identity. Source locations are ignored.
bool alpha_equal(const Expr& a, const Expr& b);
bool alpha_equal(const Fun& a, const Fun& b);
/// Programs: parameters matched by position (types must be equal), bodies alpha-equal; the
/// program names are not compared.
bool alpha_equal(const Program& a, const Program& b);

struct StructuralHash {
  size_t operator()(const Expr& e) const { return e.hash(); }
  size_t operator()(const Fun& f) const { return f.hash(); }
};
struct AlphaEqual {
  bool operator()(const Expr& a, const Expr& b) const { return alpha_equal(a, b); }
  bool operator()(const Fun& a, const Fun& b) const { return alpha_equal(a, b); }
};

// ---- printing (.lift surface syntax; parses back to an alpha-equal program) ---------------------
std::string print(const Expr& e);
std::string print(const Fun& f);
std::string print(const Program& p);
/// User functions first, then definitions, each followed by a newline.
std::string print(const Module& m);
/// A pad boundary as written in .lift: `clamp`, `mirror`, `wrap`, `constant(0.0f)`.
std::string boundary_text(const Boundary& b);

} // namespace liftx::ir
