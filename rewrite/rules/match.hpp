#pragma once
/// Matcher and builder helpers shared by the rule files (private to rewrite/rules/).
#include "ir/expr.hpp"
#include "ir/primitives.hpp"
#include "rewrite/rule.hpp"

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace liftx::rewrite::match {

/// A call whose function is the primitive node N: `call` and `fun` point into the site's nodes.
template <class N>
struct CallOf {
  const ir::Call* call;
  const N* fun;
  const ir::Expr& arg(size_t i = 0) const { return call->args.at(i); }
};

template <class N>
std::optional<CallOf<N>> as_call_of(const ir::Expr& e) {
  const auto* c = e.as<ir::Call>();
  if (!c)
    return std::nullopt;
  const auto* n = c->fun.as<N>();
  if (!n)
    return std::nullopt;
  return CallOf<N>{c, n};
}

/// The single argument of a one-argument call of N, if `e` is one.
template <class N>
std::optional<CallOf<N>> as_unary_call_of(const ir::Expr& e) {
  auto c = as_call_of<N>(e);
  if (!c || c->call->args.size() != 1)
    return std::nullopt;
  return c;
}

/// `slide2D(size, step, x)` in its expanded form (ir/derived.hpp):
/// map(transpose)(slide(size, step)(map(slide(size, step))(x))).
struct Slide2D {
  arith::Expr size;
  arith::Expr step;
  ir::Expr grid;
};
std::optional<Slide2D> as_slide_2d(const ir::Expr& e);

/// `slide3D(size, step, x)` in its expanded form (ir/derived.hpp), one window and step for every
/// dimension: map(map(transpose))(map(transpose)(slide(size, step)(map(p => slide2D(size, step,
/// p))(x)))).
struct Slide3D {
  arith::Expr size;
  arith::Expr step;
  ir::Expr grid;
};
std::optional<Slide3D> as_slide_3d(const ir::Expr& e);

/// zipKD(x1, ..., xn) in its expanded form (ir/derived.hpp): zip(...) for K = 1,
/// map^(K-1)(zip) of a zip(K-1)D; its rank K and the zipped arrays.
struct ZipKD {
  int rank;
  std::vector<ir::Expr> arrays;
};
std::optional<ZipKD> as_zip_kd(const ir::Expr& e);
/// zip, zip2D or zip3D of `arrays` for rank 1, 2 or 3.
ir::Expr zip_k(int rank, std::vector<ir::Expr> arrays);
/// map^rank(f).
ir::Fun map_k(int rank, ir::Fun f);
/// A register window's n planes [n][y][x] as the y' x x' neighbourhoods [y'][x'][n][n][n] of its
/// middle plane (each plane slid by slide2D(n, s)).
ir::Expr plane_neighbourhoods(const ir::Expr& planes, const arith::Expr& n, const arith::Expr& s);
/// Reassembles a grid of tiles of outputs [[ [[U]ux]uy ]tx]ty into [[U](ux*tx)](uy*ty).
ir::Expr untile(const ir::Expr& tiled_outputs);
/// Reassembles a 3D grid of 3D tiles [[[ [[[U]ux]uy]uz ]tx]ty]tz into
/// [[[U](ux*tx)](uy*ty)](uz*tz): maps of transpose and join only, so the code generator writes
/// the tiles' outputs straight to their places (writes through invertible layout).
ir::Expr untile_3d(const ir::Expr& tiled_outputs);
/// f and x when `e` is mapKD(f, x) with plain maps (K = rank).
std::optional<std::pair<ir::Fun, ir::Expr>> as_map_kd(const ir::Expr& e, int rank);

/// `map(map(f), x)` (plain maps): the inner function f and x, or why not.
struct Map2D {
  ir::Fun f;
  ir::Expr x;
};
std::variant<Map2D, NoMatch> as_map_2d(const ir::Expr& site);

/// `zip2D(a, b, ...)` expanded: map(zip)(zip(a, b, ...)); the zipped grids.
std::optional<std::vector<ir::Expr>> as_zip_2d(const ir::Expr& e);

/// The first of zipped `grids` that is a slide2D, and its position.
std::optional<std::pair<Slide2D, size_t>> find_slide_2d(const std::vector<ir::Expr>& grids);

/// True if applying `f` performs computation (user functions, copies, lowered maps, reductions,
/// iterate) rather than pure data layout; the code generator's notion of a map that must be
/// lowered.
bool computes(const ir::Fun& f);
bool computes(const ir::Expr& e);

/// True if `pred` holds for `f` or any function nested in it (lambda bodies included).
bool contains_fun(const ir::Fun& f, const std::function<bool(const ir::Fun&)>& pred);

/// The parallel maps inside `f` (mapGlb, mapWrg, mapLcl of any dimension), in pre-order.
std::vector<const ir::Primitive*> parallel_maps_inside(const ir::Fun& f);

/// `x => body(x)` with a fresh parameter of type `t` (eta-reduced by ir::lambda).
ir::Fun lambda1(const ir::Type& t, const std::string& hint,
                const std::function<ir::Expr(const ir::Expr&)>& body);

/// Whether `a` and `b` are the same parameter (one node, or two handles of one parameter id).
bool same_param(const ir::Expr& a, const ir::Expr& b);
/// Whether parameter `p` is among `free` (what ir::free_params found in an expression).
bool uses_param(const std::vector<ir::Expr>& free, const ir::Expr& p);

/// Calls of the layout primitives: join(e), transpose(e) and split(n, e).
ir::Expr join_of(ir::Expr e);
ir::Expr transpose_of(ir::Expr e);
ir::Expr split_of(arith::Expr n, ir::Expr e);

/// The element type of an array type (InternalError otherwise: callers check first).
const ir::Type& element_of(const ir::Type& t);
/// The length of an array type.
const arith::Expr& length_of(const ir::Type& t);

/// NoMatch when `n` provably does not divide `length` (a constant that leaves a remainder).
std::optional<NoMatch> refuse_indivisible(const arith::Expr& length, int64_t n,
                                          std::string_view what);

/// A rule whose `apply` turns a UserError raised while building the rewritten expression (a
/// rewrite that does not type-check, e.g. an inexact division of constant lengths) into NoMatch.
Rule make_rule(std::string name, std::string doc, std::vector<std::string> labels,
               std::function<RuleResult(const ir::Expr&, const RuleContext&)> apply);

} // namespace liftx::rewrite::match
