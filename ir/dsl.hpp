#pragma once
/// A C++ embedded DSL for writing liftx programs, mirroring the .lift surface syntax:
///
///   using namespace liftx::dsl;
///   Fn jacobi5 = userfun("jacobi5", {{"c", ScalarKind::Float}, ...}, ScalarKind::Float,
///                        "return 0.2f * (c + n + s + e + w);");
///   ir::Program p = program("jacobi2d5pt", {{"grid", array_of(Type::float_(), "N", "M")}},
///       [&](Expr grid) {
///         return map2D(Fn({"nbh"}, [&](Expr nbh) {
///                        return jacobi5(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]);
///                      }),
///                      slide2D(3, 1, pad2D(1, 1, clamp, grid)));
///       });
///
/// A `Fn` is a function whose parameter types are not known yet: C++ lambdas over `Expr` become
/// typed ir lambdas (eta-reduced) when the argument types are known, i.e. when the Fn is applied or
/// handed to a primitive that is applied. Every builder has an unapplied form returning Fn
/// (`split(4)`) and an applied form returning Expr (`split(4, x)`); type errors are the IR's
/// UserErrors, thrown when the expression is built.
#include "ir/derived.hpp"
#include "ir/expr.hpp"

#include <concepts>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace liftx::dsl {

using ir::Expr;
using ir::ScalarKind;
using ir::Type;

namespace detail {
template <class F, size_t K>
constexpr bool invocable_with_exprs() {
  return []<size_t... I>(std::index_sequence<I...>) {
    return std::is_invocable_r_v<Expr, const F&, decltype((void)I, std::declval<Expr>())...>;
  }
  (std::make_index_sequence<K>{});
}
/// Number of Expr parameters of a C++ callable (0..6), or -1.
template <class F>
constexpr int expr_arity() {
  if constexpr (invocable_with_exprs<F, 1>())
    return 1;
  else if constexpr (invocable_with_exprs<F, 2>())
    return 2;
  else if constexpr (invocable_with_exprs<F, 3>())
    return 3;
  else if constexpr (invocable_with_exprs<F, 4>())
    return 4;
  else if constexpr (invocable_with_exprs<F, 5>())
    return 5;
  else if constexpr (invocable_with_exprs<F, 6>())
    return 6;
  else if constexpr (invocable_with_exprs<F, 0>())
    return 0;
  else
    return -1;
}
template <class F, size_t K>
Expr invoke_with(const F& f, const std::vector<Expr>& args) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return Expr(f(args[I]...));
  }
  (std::make_index_sequence<K>{});
}
/// Parameter types for a function of `arity` parameters applied to `args` (spreading one tuple
/// argument of `arity` components, as the IR does). UserError naming `what` on a count mismatch.
std::vector<Type> parameter_types(size_t arity, std::span<const Type> args, const char* what);
/// Builds `params => body(params)` with typed parameters named from `names` (default "x").
ir::Fun make_lambda(const std::vector<Type>& types, const std::vector<std::string>& names,
                    const std::function<Expr(const std::vector<Expr>&)>& body);
} // namespace detail

class Fn;
/// A C++ callable taking 0..6 Exprs and returning an Expr.
template <class F>
concept ExprFunction =
    !std::is_same_v<std::decay_t<F>, Fn> && detail::expr_arity<std::decay_t<F>>() >= 0;

/// A function under construction; becomes an ir::Fun once its argument types are known.
class Fn {
public:
  /// Produces the ir::Fun for the given argument types.
  using Maker = std::function<ir::Fun(std::span<const Type>)>;

  Fn(ir::Fun f);          ///< NOLINT(implicit): already typed; used as is
  Fn(ir::UserFunPtr def); ///< NOLINT(implicit)
  /// A C++ lambda taking 0..6 Exprs; parameters are named "x" when printed.
  template <ExprFunction F>
  Fn(F f) : Fn(std::vector<std::string>{}, std::move(f)) {} ///< NOLINT(implicit)
  /// A C++ lambda whose parameters print with the given names.
  template <ExprFunction F>
  Fn(std::vector<std::string> names, F f) {
    constexpr size_t k = static_cast<size_t>(detail::expr_arity<std::decay_t<F>>());
    make_ = [names = std::move(names), f = std::move(f)](std::span<const Type> args) {
      return detail::make_lambda(
          detail::parameter_types(k, args, "lambda"), names,
          [&f](const std::vector<Expr>& ps) { return detail::invoke_with<F, k>(f, ps); });
    };
  }
  static Fn from_maker(Maker make);

  /// The typed function for arguments of these types.
  ir::Fun instantiate(std::span<const Type> arg_types) const { return make_(arg_types); }
  ir::Fun instantiate(std::initializer_list<Type> arg_types) const {
    return make_(std::span<const Type>(arg_types.begin(), arg_types.size()));
  }
  /// Applies the function: `f(a, b)`.
  Expr apply(std::vector<Expr> args) const;
  template <class... A>
  requires(std::convertible_to<A, Expr>&&...) Expr operator()(const A&... args) const {
    return apply(std::vector<Expr>{Expr(args)...});
  }

private:
  Fn() = default;
  Maker make_;
};

// ---- types
// ----------------------------------------------------------------------------------------
/// An array length: a size variable by name (range >= 1) or an arithmetic expression.
struct Size {
  arith::Expr value;
  Size(const char* name) : value(arith::size_var(name)) {}        ///< NOLINT(implicit)
  Size(const std::string& name) : value(arith::size_var(name)) {} ///< NOLINT(implicit)
  Size(int n) : value(n) {}                                       ///< NOLINT(implicit)
  Size(int64_t n) : value(n) {}                                   ///< NOLINT(implicit)
  Size(arith::Expr e) : value(std::move(e)) {}                    ///< NOLINT(implicit)
};
/// `array_of(Type::float_(), "N", "M")` is [[float]N]M: lengths innermost first.
Type array_of(Type element, std::initializer_list<Size> lengths);
template <class... S>
Type array_of(Type element, const S&... lengths) {
  return array_of(std::move(element), {Size(lengths)...});
}
template <class... T>
Type tuple_of(const T&... elements) {
  return Type::tuple({Type(elements)...});
}

// ---- literals and user functions
// ------------------------------------------------------------------
Expr lit(float v);
Expr lit(double v);
Expr lit(int v);
Expr lit(bool v);
/// A user function; `body` is C (the text between the braces).
Fn userfun(std::string name, std::vector<ir::UserFunParam> params, ScalarKind result,
           std::string_view body);
/// A user function returning a tuple of these kinds; `body` returns `{a, b, ...}`.
Fn userfun(std::string name, std::vector<ir::UserFunParam> params, std::vector<ScalarKind> results,
           std::string_view body);
/// Built-ins resolved by argument type: add/add_int/add_double, mult/mult_int/mult_double.
extern const Fn add;
extern const Fn mult;

// ---- primitives: unapplied (Fn) and applied (Expr)
// --------------------------------------------------
Fn map(Fn f);
Expr map(Fn f, Expr x);
Fn mapSeq(Fn f);
Expr mapSeq(Fn f, Expr x);
Fn mapGlb(int dim, Fn f);
Expr mapGlb(int dim, Fn f, Expr x);
Fn mapWrg(int dim, Fn f);
Expr mapWrg(int dim, Fn f, Expr x);
Fn mapLcl(int dim, Fn f);
Expr mapLcl(int dim, Fn f, Expr x);
/// f is instantiated at (init's type, element type).
Fn reduce(Fn f, Expr init);
Expr reduce(Fn f, Expr init, Expr x);
Fn reduceSeq(Fn f, Expr init);
Expr reduceSeq(Fn f, Expr init, Expr x);
Fn iterate(arith::Expr count, Fn f);
Expr iterate(arith::Expr count, Fn f, Expr x);

Fn zip();
template <class... E>
requires(std::convertible_to<E, Expr>&&...) Expr
    zip(const Expr& a, const Expr& b, const E&... more) {
  return ir::call(ir::zip(), {a, b, Expr(more)...});
}
/// tuple(a, b, ...): several values per point (a tuple result is stored as one output each).
template <class... E>
requires(std::convertible_to<E, Expr>&&...) Expr
    tuple(const Expr& a, const Expr& b, const E&... more) {
  return ir::call(ir::tuple(), {a, b, Expr(more)...});
}
Fn split(arith::Expr chunk);
Expr split(arith::Expr chunk, Expr x);
Fn join();
Expr join(Expr x);
Fn slide(arith::Expr size, arith::Expr step);
Expr slide(arith::Expr size, arith::Expr step, Expr x);

/// A boundary for pad: clamp, mirror, wrap or constant(v).
struct Border {
  ir::Boundary value;
};
inline const Border clamp{ir::Boundary{ir::Boundary::Kind::Clamp}};
inline const Border mirror{ir::Boundary{ir::Boundary::Kind::Mirror}};
inline const Border wrap{ir::Boundary{ir::Boundary::Kind::Wrap}};
Border constant(ir::Scalar value);
Fn pad(arith::Expr left, arith::Expr right, Border b);
Expr pad(arith::Expr left, arith::Expr right, Border b, Expr x);

/// `x[i]` also works (ir::Expr::operator[]).
Fn at(arith::Expr index);
Expr at(arith::Expr index, Expr x);
Expr at(Expr x, arith::Expr index);
Fn get(int index);
Expr get(int index, Expr x);
Fn transpose();
Expr transpose(Expr x);
Fn id();
Expr id(Expr x);
/// `array(n, (i, n) => f)`: f is instantiated with two int parameters.
Expr array(arith::Expr length, Fn f);

Fn toGlobal(Fn f);
Fn toLocal(Fn f);
Fn toLocalPadded(int padding, Fn f);
Fn toPrivate(Fn f);

/// Vectors: `asVector(4, x)` views [float]n as [float4](n/4), `asScalar` back; `vectorize(4, uf)`
/// applies a user function per component of vector arguments.
Fn asVector(int width);
Expr asVector(int width, Expr x);
Fn asScalar();
Expr asScalar(Expr x);
Fn vectorize(int width, Fn user_function);
/// `mapSeqSlide(f, size, step, x)` = map(f, slide(size, step, x)), computed sequentially with the
/// window in registers; f is instantiated at the window type [T]size.
Fn mapSeqSlide(Fn f, arith::Expr size, arith::Expr step);
Expr mapSeqSlide(Fn f, arith::Expr size, arith::Expr step, Expr x);

// ---- derived forms (ir/derived.hpp)
// ----------------------------------------------------------------
Fn map2D(Fn f);
Expr map2D(Fn f, Expr x);
Fn map3D(Fn f);
Expr map3D(Fn f, Expr x);
Fn slide2D(arith::Expr size, arith::Expr step);
Expr slide2D(arith::Expr size, arith::Expr step, Expr x);
Fn slide3D(arith::Expr size, arith::Expr step);
Expr slide3D(arith::Expr size, arith::Expr step, Expr x);
Fn pad2D(arith::Expr left, arith::Expr right, Border b);
Expr pad2D(arith::Expr left, arith::Expr right, Border b, Expr x);
Fn pad3D(arith::Expr left, arith::Expr right, Border b);
Expr pad3D(arith::Expr left, arith::Expr right, Border b, Expr x);
// A pair per dimension, outermost first (as in .lift).
Fn slide2D(arith::Expr size_y, arith::Expr step_y, arith::Expr size_x, arith::Expr step_x);
Expr slide2D(arith::Expr size_y, arith::Expr step_y, arith::Expr size_x, arith::Expr step_x,
             Expr x);
Fn slide3D(arith::Expr size_z, arith::Expr step_z, arith::Expr size_y, arith::Expr step_y,
           arith::Expr size_x, arith::Expr step_x);
Expr slide3D(arith::Expr size_z, arith::Expr step_z, arith::Expr size_y, arith::Expr step_y,
             arith::Expr size_x, arith::Expr step_x, Expr x);
Fn pad2D(arith::Expr left_y, arith::Expr right_y, arith::Expr left_x, arith::Expr right_x,
         Border b);
Expr pad2D(arith::Expr left_y, arith::Expr right_y, arith::Expr left_x, arith::Expr right_x,
           Border b, Expr x);
Fn pad3D(arith::Expr left_z, arith::Expr right_z, arith::Expr left_y, arith::Expr right_y,
         arith::Expr left_x, arith::Expr right_x, Border b);
Expr pad3D(arith::Expr left_z, arith::Expr right_z, arith::Expr left_y, arith::Expr right_y,
           arith::Expr left_x, arith::Expr right_x, Border b, Expr x);
template <class... E>
requires(std::convertible_to<E, Expr>&&...) Expr
    zip2D(const Expr& a, const Expr& b, const E&... more) {
  return ir::zip_2d({a, b, Expr(more)...});
}
template <class... E>
requires(std::convertible_to<E, Expr>&&...) Expr
    zip3D(const Expr& a, const Expr& b, const E&... more) {
  return ir::zip_3d({a, b, Expr(more)...});
}

// ---- programs
// -------------------------------------------------------------------------------------
/// `def name(p1: T1, ...) = body(p1, ...)`; `body` is a C++ callable taking one Expr per parameter.
template <class F>
ir::Program program(std::string name, std::vector<std::pair<std::string, Type>> params,
                    const F& body) {
  constexpr int k = detail::expr_arity<F>();
  static_assert(k >= 0, "program body must take Exprs and return an Expr");
  std::vector<Expr> ps;
  for (auto& [param_name, type] : params)
    ps.push_back(ir::param(type, param_name));
  LIFTX_USER_CHECK(ps.size() == static_cast<size_t>(k),
                   "program {}: {} parameters declared, but the body takes {}", name, ps.size(), k);
  Expr result = detail::invoke_with<F, static_cast<size_t>(k)>(body, ps);
  return ir::Program{std::move(name), std::move(ps), std::move(result), {}};
}
/// A module of these programs and the user functions they call (built-ins excluded), in order of
/// first use; `print` of it is a complete .lift file.
ir::Module module(std::vector<ir::Program> programs);

} // namespace liftx::dsl
