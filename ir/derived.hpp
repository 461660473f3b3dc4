#pragma once
/// Derived multi-dimensional forms (Lift's 2D/3D helpers), built from the primitives of
/// ir/expr.hpp, so the IR itself has no such nodes and every pass sees plain primitives.
///   map2D(f)              = map(map(f))
///   slide2D(size, step)   = map(transpose) o slide(size, step) o map(slide(size, step))
///       [[T]n]m -> [[ [[T]size]size ]n']m'   with n' = (n - size + step) /^ step, m' likewise
///   slide3D(size, step)   slides all three dimensions, windows innermost:
///       [[[T]o]n]m -> [[[ [[[T]size]size]size ]o']n']m'
///   pad2D(l, r, b)        = map(pad(l, r, b)) o pad(l, r, b)   (the same on both dimensions)
///   pad3D(l, r, b)        = map(map(pad)) o map(pad) o pad
/// slide and pad also take one pair per dimension, outermost first: slide2D(size_y, step_y,
/// size_x, step_x), slide3D(size_z, step_z, size_y, step_y, size_x, step_x), pad2D(left_y,
/// right_y, left_x, right_x, b), pad3D(left_z, right_z, left_y, right_y, left_x, right_x, b).
///   zip2D(a, b, ...)      = map(zip) o zip(a, b, ...)   (map(zip) spreads each tuple of rows)
///   zip3D(a, b, ...)      = map(map(zip)) o zip2D(a, b, ...)
#include "ir/expr.hpp"

namespace liftx::ir {

inline Fun map_2d(Fun f) {
  return map(map(std::move(f)));
}
inline Fun map_3d(Fun f) {
  return map(map(map(std::move(f))));
}

/// A (size, step) or (left, right) pair of one dimension.
struct DimPair {
  arith::Expr first, second;
};

/// slide2D with its own window and step per dimension: `y` the rows, `x` the columns.
inline Expr slide_2d(const DimPair& y, const DimPair& x_dim, const Expr& x, SourceLoc loc = {}) {
  Expr rows_slid = call(map(slide(x_dim.first, x_dim.second)), {x}, loc); // [[ [T]sx ]n']m
  Expr windows = call(slide(y.first, y.second), {rows_slid}, loc);        // [[ [[T]sx]n' ]sy]m'
  return call(map(transpose()), {windows}, loc);                          // [[ [[T]sx]sy ]n']m'
}

inline Expr slide_2d(const arith::Expr& size, const arith::Expr& step, const Expr& x,
                     SourceLoc loc = {}) {
  return slide_2d({size, step}, {size, step}, x, loc);
}

/// slide3D: slide2D on every plane, slide the planes, then move the new window dimension inside:
/// per group of planes [s][n'][o']W2 -> transpose -> [n'][s][o']W2 -> map(transpose) ->
/// [n'][o'][s]W2.
inline Expr slide_3d(const DimPair& z, const DimPair& y, const DimPair& x_dim, const Expr& x,
                     SourceLoc loc = {}) {
  const auto* outer = x.type().as<ArrayType>();
  if (!outer || !outer->element.is_array())
    throw UserError(
        fmt::format("slide3D expects a 3-dimensional array, got {}", x.type().to_string()), loc);
  Expr plane = param(outer->element, "plane");
  Expr planes_slid = call(map(lambda({plane}, slide_2d(y, x_dim, plane, loc))), {x}, loc);
  Expr plane_windows = call(slide(z.first, z.second), {planes_slid}, loc);
  Expr swapped = call(map(transpose()), {plane_windows}, loc);
  return call(map(map(transpose())), {swapped}, loc);
}

inline Expr slide_3d(const arith::Expr& size, const arith::Expr& step, const Expr& x,
                     SourceLoc loc = {}) {
  return slide_3d({size, step}, {size, step}, {size, step}, x, loc);
}

inline Expr pad_2d(const DimPair& y, const DimPair& x_dim, const Boundary& boundary, const Expr& x,
                   SourceLoc loc = {}) {
  Expr rows_padded = call(pad(y.first, y.second, boundary), {x}, loc);
  return call(map(pad(x_dim.first, x_dim.second, boundary)), {rows_padded}, loc);
}

inline Expr pad_2d(const arith::Expr& left, const arith::Expr& right, const Boundary& boundary,
                   const Expr& x, SourceLoc loc = {}) {
  return pad_2d({left, right}, {left, right}, boundary, x, loc);
}

inline Expr pad_3d(const DimPair& z, const DimPair& y, const DimPair& x_dim,
                   const Boundary& boundary, const Expr& x, SourceLoc loc = {}) {
  Expr planes_padded = call(pad(z.first, z.second, boundary), {x}, loc);
  return call(map(map(pad(x_dim.first, x_dim.second, boundary))),
              {call(map(pad(y.first, y.second, boundary)), {planes_padded}, loc)}, loc);
}

inline Expr pad_3d(const arith::Expr& left, const arith::Expr& right, const Boundary& boundary,
                   const Expr& x, SourceLoc loc = {}) {
  return pad_3d({left, right}, {left, right}, {left, right}, boundary, x, loc);
}

inline Expr zip_2d(std::vector<Expr> arrays, SourceLoc loc = {}) {
  return call(map(zip()), {call(zip(), std::move(arrays), loc)}, loc);
}

inline Expr zip_3d(std::vector<Expr> arrays, SourceLoc loc = {}) {
  return call(map(map(zip())), {zip_2d(std::move(arrays), loc)}, loc);
}

} // namespace liftx::ir
