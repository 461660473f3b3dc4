// Construction of expressions and functions: parameter validation, structural hashes, eta
// reduction, and the typing rules of ir/expr.hpp (result_type).
#include "ir/expr.hpp"

#include "ir/fields.hpp"
#include "ir/primitives.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

namespace liftx::ir {
namespace {

size_t mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

size_t scalar_hash(const Scalar& s) {
  size_t h = mix(0x11u, s.index());
  return std::visit(
      [h](auto v) -> size_t {
        using V = decltype(v);
        if constexpr (std::is_same_v<V, float>)
          return mix(h, std::bit_cast<uint32_t>(v));
        else if constexpr (std::is_same_v<V, double>)
          return mix(h, std::bit_cast<uint64_t>(v));
        else
          return mix(h, static_cast<size_t>(static_cast<int64_t>(v)));
      },
      s);
}

size_t boundary_hash(const Boundary& b) {
  size_t h = mix(0xb0u, static_cast<size_t>(b.kind));
  return b.kind == Boundary::Kind::Constant ? mix(h, scalar_hash(b.value)) : h;
}

// One overload per field type of ir/fields.hpp.
void mix_field(size_t& h, int v) {
  h = mix(h, static_cast<size_t>(v));
}
void mix_field(size_t& h, const arith::Expr& e) {
  h = mix(h, e.hash());
}
void mix_field(size_t& h, const Expr& e) {
  h = mix(h, e.hash());
}
void mix_field(size_t& h, const Fun& f) {
  h = mix(h, f.hash());
}
void mix_field(size_t& h, const Boundary& b) {
  h = mix(h, boundary_hash(b));
}
void mix_field(size_t& h, const std::vector<Expr>& params) {
  h = mix(h, params.size());
  for (const Expr& p : params)
    h = mix(h, p.hash());
}
void mix_field(size_t& h, const UserFunPtr& def) {
  h = mix(h, std::hash<std::string>{}(def->name()));
  h = mix(h, def->params().size());
}

/// Hash of a function node from its kind and fields in order; child hashes are already cached.
size_t fun_node_hash(const FunNode& node) {
  size_t h = mix(0xf00u, node.index());
  std::visit([&](const auto& n) { for_each_field(n, [&](const auto& x) { mix_field(h, x); }); },
             node);
  return h;
}

Fun make_fun(FunNode node) {
  size_t h = fun_node_hash(node);
  return Fun(std::make_shared<const FunData>(FunData{std::move(node), h}));
}

std::string types_text(std::span<const Type> types) {
  std::string out = "(";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += types[i].to_string();
  }
  return out + ")";
}

/// How a function's head reads in error messages: `split(4)`, `mapGlb0`, `userfun jacobi5`: its
/// name and the parameters that are not functions or values.
std::string head_label(const Fun& f) {
  if (const auto* u = f.as<UserFun>())
    return "userfun " + u->def->name();
  if (const auto* v = f.as<Vectorize>())
    return fmt::format("vectorize({}, {})", v->width, fun_name(v->f));
  std::string sizes;
  auto add = [&sizes](const auto& field) {
    using T = std::decay_t<decltype(field)>;
    std::string text;
    if constexpr (std::is_same_v<T, arith::Expr>)
      text = field.to_string();
    else if constexpr (std::is_same_v<T, int>)
      text = std::to_string(field);
    else if constexpr (std::is_same_v<T, Boundary>)
      text = boundary_text(field);
    else
      return; // functions and values are not part of the label
    sizes += (sizes.empty() ? "" : ", ") + text;
  };
  std::visit(
      [&](const auto& n) {
        if constexpr (!requires { n.dim; }) // the dimension is part of the name: mapGlb0
          for_each_field(n, add);
      },
      f.data().node);
  return sizes.empty() ? fun_name(f) : fmt::format("{}({})", fun_name(f), sizes);
}

[[noreturn]] void type_error(const Fun& f, const std::string& what) {
  throw UserError(fmt::format("{}: {}", head_label(f), what));
}

/// Lift's argument spreading: a function of k >= 2 parameters applied to one tuple of k
/// components receives the components.
std::vector<Type> spread(std::span<const Type> args, size_t arity) {
  if (arity >= 2 && args.size() == 1) {
    if (const auto* t = args[0].as<TupleType>(); t && t->elements.size() == arity)
      return t->elements;
  }
  return {args.begin(), args.end()};
}

const ArrayType& expect_one_array(const Fun& f, std::span<const Type> args) {
  if (args.size() != 1)
    type_error(f, fmt::format("expected 1 argument, got {} {}", args.size(), types_text(args)));
  const auto* a = args[0].as<ArrayType>();
  if (!a)
    type_error(f, fmt::format("expected an array, got {}", args[0].to_string()));
  return *a;
}

/// The type of `f` applied to `element`, with an error that says which element type failed.
Type apply_to_element(const Fun& outer, const Fun& f, std::span<const Type> arg_types) {
  try {
    return result_type(f, arg_types);
  } catch (const UserError& inner) {
    type_error(outer,
               fmt::format("function applied to {} {}: {}",
                           arg_types.size() == 1 ? "element type" : "argument types",
                           arg_types.size() == 1 ? arg_types[0].to_string() : types_text(arg_types),
                           inner.message()));
  }
}

/// True when `e` is provably a non-integer constant: an exact division that cannot be exact.
bool is_fractional_constant(const arith::Expr& e) {
  return e.node().kind == arith::Kind::Cst && e.node().value.den != 1;
}

bool same_length(const arith::Expr& a, const arith::Expr& b) {
  return a == b || arith::prove_eq(a, b);
}

/// The number of windows of `size` every `step` over `length` (slide, mapSeqSlide): a type error
/// when the window is longer than the array or the step does not divide what is left.
arith::Expr window_count(const Fun& fun, const arith::Expr& length, const arith::Expr& size,
                         const arith::Expr& step) {
  if (arith::prove_lt(length, size))
    type_error(fun, fmt::format("window size {} is larger than the array length {}",
                                size.to_string(), length.to_string()));
  arith::Expr windows = arith::exact_div(length - size + step, step);
  if (is_fractional_constant(windows))
    type_error(fun, fmt::format("step {} does not divide the array length {} minus the window "
                                "size {}",
                                step.to_string(), length.to_string(), size.to_string()));
  return windows;
}

Type map_like_type(const Fun& self, const Fun& f, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(self, args);
  try {
    return Type::array(result_type(f, std::span<const Type>(&a.element, 1)), a.length);
  } catch (const UserError& inner) {
    type_error(self, fmt::format("function applied to element type {} (of {}): {}",
                                 a.element.to_string(), args[0].to_string(), inner.message()));
  }
}

Type reduce_like_type(const Fun& self, const Fun& f, const Expr& init, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(self, args);
  Type operands[] = {init.type(), a.element};
  Type result = apply_to_element(self, f, operands);
  if (result != init.type())
    type_error(self,
               fmt::format("function must map (U, T) -> U with U = {} (the init's type), "
                           "but maps {} -> {}",
                           init.type().to_string(), types_text(operands), result.to_string()));
  return Type::array(init.type(), arith::Expr(1));
}

Type lambda_type(const Fun& self, const Lambda& l, std::span<const Type> raw_args) {
  std::vector<Type> args = spread(raw_args, l.params.size());
  std::vector<Type> expected;
  for (const Expr& p : l.params)
    expected.push_back(p.type());
  if (args != expected)
    type_error(self, fmt::format("expected {} argument{} {}, got {}", expected.size(),
                                 expected.size() == 1 ? "" : "s", types_text(expected),
                                 types_text(raw_args)));
  return l.body.type();
}

Type userfun_type(const Fun& self, const UserFunDef& def, std::span<const Type> raw_args) {
  std::vector<Type> args = spread(raw_args, def.params().size());
  std::vector<Type> expected;
  for (const UserFunParam& p : def.params())
    expected.push_back(Type::scalar(p.kind));
  if (args != expected)
    type_error(self, fmt::format("expected {} argument{} {}, got {}", expected.size(),
                                 expected.size() == 1 ? "" : "s", types_text(expected),
                                 types_text(raw_args)));
  if (def.returns_tuple()) {
    std::vector<Type> components;
    for (ScalarKind k : def.results())
      components.push_back(Type::scalar(k));
    return Type::tuple(std::move(components));
  }
  return Type::scalar(def.result());
}

Type zip_type(const Fun& self, std::span<const Type> raw_args) {
  std::vector<Type> args(raw_args.begin(), raw_args.end());
  if (args.size() == 1) {
    if (const auto* t = args[0].as<TupleType>())
      args = t->elements;
  }
  if (args.size() < 2)
    type_error(self, fmt::format("expected at least 2 arrays, got {}", types_text(raw_args)));
  std::vector<Type> elements;
  const ArrayType* first = nullptr;
  for (const Type& t : args) {
    const auto* a = t.as<ArrayType>();
    if (!a)
      type_error(self, fmt::format("expected arrays, got {}", types_text(raw_args)));
    if (!first)
      first = a;
    else if (!same_length(first->length, a->length))
      type_error(self, fmt::format("arrays of different lengths {} and {}",
                                   first->length.to_string(), a->length.to_string()));
    elements.push_back(a->element);
  }
  return Type::array(Type::tuple(std::move(elements)), first->length);
}

void check_boundary_fits(const Fun& self, const Boundary& b, const Type& element) {
  if (b.kind != Boundary::Kind::Constant)
    return;
  Type base = array_base(element);
  const auto* s = base.as<ScalarType>();
  if (!s || s->kind != kind_of(b.value))
    type_error(self, fmt::format("constant boundary of type {} for elements of type {}",
                                 scalar_name(kind_of(b.value)), element.to_string()));
}

void check_size_at_least(const arith::Expr& e, int64_t least, const char* what,
                         const std::string& prim) {
  LIFTX_USER_CHECK(arith::prove_le(arith::Expr(least), e), "{}: {} must be >= {}, got {}", prim,
                   what, least, e.to_string());
}

void check_dim(const char* prim, int dim) {
  LIFTX_USER_CHECK(dim >= 0 && dim <= 2, "{}: dimension must be 0, 1 or 2, got {}", prim, dim);
}

void check_vector_width(const char* prim, int width) {
  LIFTX_USER_CHECK(width == 2 || width == 4 || width == 8 || width == 16,
                   "{}: width {} is not an OpenCL vector width (2, 4, 8 or 16)", prim, width);
}

// The checks of each node's constructor, applied by make() whichever way a node is built.
void check(const auto&) {}
void check(const UserFun& n) {
  LIFTX_INTERNAL_CHECK(n.def != nullptr, "user_fun of a null definition");
}
void check(const MapGlb& n) {
  check_dim("mapGlb", n.dim);
}
void check(const MapWrg& n) {
  check_dim("mapWrg", n.dim);
}
void check(const MapLcl& n) {
  check_dim("mapLcl", n.dim);
}
void check(const Iterate& n) {
  auto k = n.count.as_constant();
  LIFTX_USER_CHECK(k && *k >= 0, "iterate: count must be a non-negative constant, got {}",
                   n.count.to_string());
}
void check(const Split& n) {
  check_size_at_least(n.chunk, 1, "chunk size", "split");
}
void check(const Slide& n) {
  check_size_at_least(n.size, 1, "window size", "slide");
  check_size_at_least(n.step, 1, "step", "slide");
}
void check(const Pad& n) {
  check_size_at_least(n.left, 0, "left padding", "pad");
  check_size_at_least(n.right, 0, "right padding", "pad");
}
void check(const At& n) {
  LIFTX_USER_CHECK(!arith::prove_lt(n.index, arith::Expr(0)), "at: index must be >= 0, got {}",
                   n.index.to_string());
}
void check(const Get& n) {
  LIFTX_USER_CHECK(n.index >= 0, "get: index must be >= 0, got {}", n.index);
}
void check(const ToLocalPadded& n) {
  auto p = n.padding.as_constant();
  // A row longer by more than 4096 elements is more local memory than any device has.
  LIFTX_USER_CHECK(p && *p >= 1 && *p <= 4096,
                   "toLocalPadded: padding must be a constant from 1 to 4096, got {}",
                   n.padding.to_string());
}
void check(const Generate& n) {
  check_size_at_least(n.length, 0, "length", "array");
}
void check(const AsVector& n) {
  check_vector_width("asVector", n.width);
}
void check(const Vectorize& n) {
  check_vector_width("vectorize", n.width);
  const auto* u = n.f.as<UserFun>();
  LIFTX_USER_CHECK(u != nullptr, "vectorize: expected a user function, got {}", fun_name(n.f));
  LIFTX_USER_CHECK(!u->def->returns_tuple(),
                   "vectorize: {} returns a tuple; only scalar user functions have vector forms",
                   u->def->name());
  LIFTX_USER_CHECK(
      u->def->result() != ScalarKind::Bool &&
          std::none_of(u->def->params().begin(), u->def->params().end(),
                       [](const UserFunParam& p) { return p.kind == ScalarKind::Bool; }),
      "vectorize: {} takes or returns bool, which has no OpenCL vector type", u->def->name());
}
void check(const MapSeqSlide& n) {
  check_size_at_least(n.size, 1, "window size", "mapSeqSlide");
  check_size_at_least(n.step, 1, "step", "mapSeqSlide");
  LIFTX_USER_CHECK(n.unroll >= 1 && n.unroll <= kMaxSlideUnroll,
                   "mapSeqSlide: unroll must be in 1..{}, got {}", kMaxSlideUnroll, n.unroll);
}

std::atomic<uint64_t> next_param_id{1};

} // namespace

// ---- construction ------------------------------------------------------------------------------

Expr param(Type type, std::string name_hint) {
  size_t h = mix(0x9a7u, type.hash());
  uint64_t id = next_param_id.fetch_add(1, std::memory_order_relaxed);
  return Expr(std::make_shared<const ExprData>(
      ExprData{Param{id, std::move(name_hint)}, std::move(type), h}));
}

Expr literal(Scalar value) {
  Type type = Type::scalar(kind_of(value));
  size_t h = scalar_hash(value);
  return Expr(std::make_shared<const ExprData>(ExprData{Literal{value}, std::move(type), h}));
}

Expr call(const Fun& fun, std::vector<Expr> args, SourceLoc loc) {
  std::vector<Type> types;
  types.reserve(args.size());
  for (const Expr& a : args)
    types.push_back(a.type());
  Type result = [&] {
    try {
      return result_type(fun, types);
    } catch (const UserError& e) {
      throw e.located(loc);
    }
  }();
  size_t h = mix(mix(0xca11u, fun.hash()), args.size());
  for (const Expr& a : args)
    h = mix(h, a.hash());
  return Expr(std::make_shared<const ExprData>(
      ExprData{Call{fun, std::move(args), std::move(loc)}, std::move(result), h}));
}

namespace {

template <typename N, typename... Ts>
constexpr bool is_one_of = (std::is_same_v<N, Ts> || ...);

// ---- primitives that apply a function (besides the maps and reductions) ----

Type applying_type(const Fun& fun, const Iterate& n, std::span<const Type> args) {
  if (args.size() != 1)
    type_error(fun, fmt::format("expected 1 argument, got {}", types_text(args)));
  Type result = apply_to_element(fun, n.f, args);
  if (result != args[0])
    type_error(fun, fmt::format("function must preserve the type, but maps {} -> {}",
                                args[0].to_string(), result.to_string()));
  return result;
}

Type applying_type(const Fun& fun, const Generate& n, std::span<const Type> args) {
  if (!args.empty())
    type_error(fun, fmt::format("expected no arguments, got {}", types_text(args)));
  Type indices[] = {Type::int_(), Type::int_()};
  return Type::array(apply_to_element(fun, n.f, indices), n.length);
}

Type applying_type(const Fun& fun, const MapSeqSlide& n, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  arith::Expr windows = window_count(fun, a.length, n.size, n.step);
  Type window = Type::array(a.element, n.size);
  return Type::array(apply_to_element(fun, n.f, std::span<const Type>(&window, 1)), windows);
}

// ---- tuples ----

Type tuple_op_type(const Fun& fun, const Tuple&, std::span<const Type> args) {
  if (args.size() < 2)
    type_error(fun, fmt::format("expected at least 2 arguments, got {}", types_text(args)));
  return Type::tuple(std::vector<Type>(args.begin(), args.end()));
}

Type tuple_op_type(const Fun& fun, const Get& n, std::span<const Type> args) {
  if (args.size() != 1)
    type_error(fun, fmt::format("expected 1 argument, got {}", types_text(args)));
  const auto* t = args[0].as<TupleType>();
  if (!t)
    type_error(fun, fmt::format("expected a tuple, got {}", args[0].to_string()));
  if (static_cast<size_t>(n.index) >= t->elements.size())
    type_error(fun, fmt::format("index {} out of range for {}", n.index, args[0].to_string()));
  return t->elements[static_cast<size_t>(n.index)];
}

// ---- reshaping and reading one array ----

Type reshape_type(const Fun& fun, const Split& n, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  arith::Expr chunks = arith::exact_div(a.length, n.chunk);
  if (is_fractional_constant(chunks) || arith::prove_lt(a.length, n.chunk))
    type_error(fun, fmt::format("array length {} is not divisible by {}", a.length.to_string(),
                                n.chunk.to_string()));
  return Type::array(Type::array(a.element, n.chunk), chunks);
}

Type reshape_type(const Fun& fun, const Join&, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  const auto* inner = a.element.as<ArrayType>();
  if (!inner)
    type_error(fun, fmt::format("expected an array of arrays, got {}", args[0].to_string()));
  return Type::array(inner->element, inner->length * a.length);
}

Type reshape_type(const Fun& fun, const Slide& n, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  arith::Expr windows = window_count(fun, a.length, n.size, n.step);
  return Type::array(Type::array(a.element, n.size), windows);
}

Type reshape_type(const Fun& fun, const SlideShifted& n, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  if (arith::prove_lt(n.size, arith::Expr(1)) || arith::prove_lt(n.step, arith::Expr(1)))
    type_error(fun, fmt::format("needs a window size and a step of at least 1, got {} and {}",
                                n.size.to_string(), n.step.to_string()));
  if (arith::prove_lt(a.length, n.size))
    type_error(fun, fmt::format("window size {} is larger than the array length {}",
                                n.size.to_string(), a.length.to_string()));
  // ceil((length - size) / step) + 1 windows.
  arith::Expr windows = (a.length - n.size + n.step - arith::Expr(1)) / n.step + arith::Expr(1);
  return Type::array(Type::array(a.element, n.size), windows);
}

Type reshape_type(const Fun& fun, const JoinShifted& n, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  const auto* inner = a.element.as<ArrayType>();
  if (!inner)
    type_error(fun, fmt::format("expected an array of arrays, got {}", args[0].to_string()));
  if (arith::prove_lt(inner->length, arith::Expr(1)) || arith::prove_lt(n.margin, arith::Expr(0)))
    type_error(fun, fmt::format("needs rows of at least 1 element and a margin of at least 0, got "
                                "{} and {}",
                                inner->length.to_string(), n.margin.to_string()));
  if (arith::prove_lt(n.length, inner->length + n.margin))
    type_error(fun,
               fmt::format("rows of {} and a margin of {} do not fit a length of {}",
                           inner->length.to_string(), n.margin.to_string(), n.length.to_string()));
  // The rows that cover the length, the last shifted back: ceil(length / m).
  const arith::Expr rows = (n.length + inner->length - arith::Expr(1)) / inner->length;
  if (arith::prove_lt(a.length, rows) || arith::prove_lt(rows, a.length))
    type_error(fun,
               fmt::format("{} rows of {} do not cover a length of {} exactly once each",
                           a.length.to_string(), inner->length.to_string(), n.length.to_string()));
  return Type::array(inner->element, n.length);
}

Type reshape_type(const Fun& fun, const Pad& n, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  check_boundary_fits(fun, n.boundary, a.element);
  return Type::array(a.element, n.left + a.length + n.right);
}

Type reshape_type(const Fun& fun, const At& n, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  if (arith::prove_lt(n.index, arith::Expr(0)) || arith::prove_le(a.length, n.index))
    type_error(fun, fmt::format("index {} is outside [0, {}) of {}", n.index.to_string(),
                                a.length.to_string(), args[0].to_string()));
  return a.element;
}

Type reshape_type(const Fun& fun, const Transpose&, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  const auto* inner = a.element.as<ArrayType>();
  if (!inner)
    type_error(fun, fmt::format("expected an array of arrays, got {}", args[0].to_string()));
  return Type::array(Type::array(inner->element, a.length), inner->length);
}

// ---- OpenCL vectors ----

Type vector_op_type(const Fun& fun, const AsVector& n, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  const auto* s = a.element.as<ScalarType>();
  if (!s || s->kind == ScalarKind::Bool)
    type_error(
        fun, fmt::format("expected an array of int, float or double, got {}", args[0].to_string()));
  arith::Expr vectors = arith::exact_div(a.length, arith::Expr(n.width));
  if (is_fractional_constant(vectors) || arith::prove_lt(a.length, arith::Expr(n.width)))
    type_error(
        fun, fmt::format("array length {} is not divisible by {}", a.length.to_string(), n.width));
  return Type::array(Type::vector(s->kind, n.width), vectors);
}

Type vector_op_type(const Fun& fun, const AsScalar&, std::span<const Type> args) {
  const ArrayType& a = expect_one_array(fun, args);
  const auto* v = a.element.as<VectorType>();
  if (!v)
    type_error(fun, fmt::format("expected an array of vectors, got {}", args[0].to_string()));
  return Type::array(Type::scalar(v->kind), a.length * arith::Expr(v->width));
}

Type vector_op_type(const Fun& fun, const Vectorize& n, std::span<const Type> args) {
  const UserFunDef& def = *n.f.as<UserFun>()->def;
  std::vector<Type> spread_args = spread(args, def.params().size());
  std::vector<Type> expected;
  for (const UserFunParam& p : def.params())
    expected.push_back(Type::vector(p.kind, n.width));
  if (spread_args != expected)
    type_error(fun, fmt::format("expected {}, got {}", types_text(expected), types_text(args)));
  return Type::vector(def.result(), n.width);
}

} // namespace

Type result_type(const Fun& fun, std::span<const Type> args) {
  return std::visit(
      [&](const auto& n) -> Type {
        using N = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<N, Lambda>) {
          return lambda_type(fun, n, args);
        } else if constexpr (std::is_same_v<N, UserFun>) {
          return userfun_type(fun, *n.def, args);
        } else if constexpr (is_one_of<N, Map, MapSeq, MapGlb, MapWrg, MapLcl>) {
          return map_like_type(fun, n.f, args);
        } else if constexpr (is_one_of<N, Reduce, ReduceSeq>) {
          return reduce_like_type(fun, n.f, n.init, args);
        } else if constexpr (is_one_of<N, Iterate, Generate, MapSeqSlide>) {
          return applying_type(fun, n, args);
        } else if constexpr (std::is_same_v<N, Zip>) {
          return zip_type(fun, args);
        } else if constexpr (is_one_of<N, Tuple, Get>) {
          return tuple_op_type(fun, n, args);
        } else if constexpr (is_one_of<N, Split, Join, Slide, SlideShifted, JoinShifted, Pad, At,
                                       Transpose>) {
          return reshape_type(fun, n, args);
        } else if constexpr (std::is_same_v<N, Id>) {
          if (args.size() != 1)
            type_error(fun, fmt::format("expected 1 argument, got {}", types_text(args)));
          return args[0];
        } else if constexpr (is_one_of<N, AsVector, AsScalar, Vectorize>) {
          return vector_op_type(fun, n, args);
        } else {
          static_assert(is_one_of<N, ToGlobal, ToLocal, ToLocalPadded, ToPrivate>);
          return result_type(n.f, args);
        }
      },
      fun.data().node);
}

Fun lambda(std::vector<Expr> params, Expr body) {
  for (size_t i = 0; i < params.size(); ++i) {
    LIFTX_USER_CHECK(params[i].as<Param>() != nullptr, "lambda parameter {} is not a parameter", i);
    for (size_t j = 0; j < i; ++j)
      LIFTX_USER_CHECK(params[j].as<Param>()->id != params[i].as<Param>()->id,
                       "lambda parameter '{}' is bound twice", params[i].as<Param>()->name);
  }
  // Eta reduction: `(a, b) => f(a, b)` is f when neither a nor b occurs in f.
  if (const auto* c = body.as<Call>(); c && !params.empty() && c->args.size() == params.size()) {
    bool args_are_params = true;
    for (size_t i = 0; i < params.size() && args_are_params; ++i) {
      const auto* arg = c->args[i].as<Param>();
      args_are_params = arg && arg->id == params[i].as<Param>()->id;
    }
    if (args_are_params) {
      bool captured = false;
      for (const Expr& free : free_params(c->fun))
        for (const Expr& p : params)
          captured |= free.as<Param>()->id == p.as<Param>()->id;
      if (!captured)
        return c->fun;
    }
  }
  return make_fun(Lambda{std::move(params), std::move(body)});
}

Fun make(FunNode node) {
  if (auto* l = std::get_if<Lambda>(&node))
    return lambda(std::move(l->params), std::move(l->body));
  std::visit([](const auto& n) { check(n); }, node);
  return make_fun(std::move(node));
}

Fun user_fun(UserFunPtr def) {
  return make(UserFun{std::move(def)});
}
Fun map(Fun f) {
  return make(Map{std::move(f)});
}
Fun map_seq(Fun f) {
  return make(MapSeq{std::move(f)});
}
Fun map_glb(int dim, Fun f) {
  return make(MapGlb{dim, std::move(f)});
}
Fun map_wrg(int dim, Fun f) {
  return make(MapWrg{dim, std::move(f)});
}
Fun map_lcl(int dim, Fun f) {
  return make(MapLcl{dim, std::move(f)});
}
Fun reduce(Fun f, Expr init) {
  return make(Reduce{std::move(f), std::move(init)});
}
Fun reduce_seq(Fun f, Expr init) {
  return make(ReduceSeq{std::move(f), std::move(init)});
}
Fun iterate(arith::Expr count, Fun f) {
  return make(Iterate{std::move(count), std::move(f)});
}
Fun zip() {
  return make(Zip{});
}
Fun tuple() {
  return make(Tuple{});
}
Fun split(arith::Expr chunk) {
  return make(Split{std::move(chunk)});
}
Fun join() {
  return make(Join{});
}
Fun slide(arith::Expr size, arith::Expr step) {
  return make(Slide{std::move(size), std::move(step)});
}
Fun slide_shifted(arith::Expr size, arith::Expr step) {
  return make(SlideShifted{std::move(size), std::move(step)});
}
Fun join_shifted(arith::Expr length, arith::Expr margin) {
  return make(JoinShifted{std::move(length), std::move(margin)});
}
Fun pad(arith::Expr left, arith::Expr right, Boundary boundary) {
  return make(Pad{std::move(left), std::move(right), boundary});
}
Fun at(arith::Expr index) {
  return make(At{std::move(index)});
}
Expr Expr::operator[](const arith::Expr& index) const {
  return call(at(index), {*this});
}
Fun get(int index) {
  return make(Get{index});
}
Fun transpose() {
  return make(Transpose{});
}
Fun id() {
  return make(Id{});
}
Fun generate(arith::Expr length, Fun f) {
  return make(Generate{std::move(length), std::move(f)});
}
Fun to_global(Fun f) {
  return make(ToGlobal{std::move(f)});
}
Fun to_local(Fun f) {
  return make(ToLocal{std::move(f)});
}
Fun to_local_padded(arith::Expr padding, Fun f) {
  return make(ToLocalPadded{std::move(padding), std::move(f)});
}
Fun to_private(Fun f) {
  return make(ToPrivate{std::move(f)});
}
Fun as_vector(int width) {
  return make(AsVector{width});
}
Fun as_scalar() {
  return make(AsScalar{});
}
Fun vectorize(int width, Fun user_function) {
  return make(Vectorize{width, std::move(user_function)});
}
Fun map_seq_slide(Fun f, arith::Expr size, arith::Expr step, int unroll) {
  return make(MapSeqSlide{std::move(f), std::move(size), std::move(step), unroll});
}

std::string fun_name(const Fun& f) {
  if (const Primitive* p = primitive_of(f))
    return std::string(p->name);
  if (const auto* u = f.as<UserFun>())
    return u->def->name();
  return "lambda";
}

// ---- programs -----------------------------------------------------------------------------------

std::vector<arith::Expr> Program::size_vars() const {
  std::vector<Type> types;
  for (const Expr& p : params)
    types.push_back(p.type());
  std::vector<arith::Expr> vars;
  for (const Type& t : types)
    for (const arith::Expr& v : ir::size_vars(t))
      vars.push_back(v);
  std::sort(vars.begin(), vars.end(), [](const arith::Expr& a, const arith::Expr& b) {
    if (a.node().name != b.node().name)
      return a.node().name < b.node().name;
    return std::less<const void*>{}(a.get(), b.get());
  });
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  return vars;
}

const Program& Module::main() const {
  LIFTX_USER_CHECK(!programs.empty(), "the module has no definition (def) to run");
  return programs.back();
}

const Program* Module::find(std::string_view name) const {
  for (const Program& p : programs)
    if (p.name == name)
      return &p;
  return nullptr;
}

} // namespace liftx::ir
