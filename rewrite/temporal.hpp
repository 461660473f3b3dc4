#pragma once
/// Temporal blocking of iterated 2D and 3D stencils (written here for 2D; 3D is the same with a
/// third tile dimension, each re-clamp done per dimension): one launch computes `degree` time
/// steps of a tile, the intermediate steps of the tile (and of a halo that shrinks by the
/// stencil's reach per step) in local memory or registers, so that a trip through DRAM is paid once
/// per `degree` steps instead of once per step. fuse_steps_tiled builds the fused step directly
/// from the recognised step, in the form the identities below give (each also a rule of
/// rewrite/rules.hpp whose table checks it on the interpreter; the builder does not run the rule
/// engine), then tiles it:
///
///  - time unrolling:  iterate(T, f) => iterate(T / t, f o ... o f)            (unroll-iterate(t))
///  - every step of f o f is map2D(g, slide2D(n, 1, pad2D(l, r, b, .))). The inner steps are made
///    tile-local in one of three ways, all exact at the grid's edges:
///      * pushed padding (t = 2, clamp/mirror/wrap): pad2D(b, map2D(g, W)) = map2D(g, pad2D(b, W))
///        (pad-of-map: an index-remapping pad of computed points is the computation at the
///        remapped points), so the first step's points are computed from the input read through
///        the composed views, the second step from local memory;
///      * hoisted padding (wrap, any t): pad2D(a, wrap, map2D(g, slide2D(n, 1, pad2D(b, wrap, x))))
///        = map2D(g, slide2D(n, 1, pad2D(a + b, wrap, x))) (a periodic grid's steps commute with
///        the periodic extension), so t steps are t valid stencils over the input padded by t
///        reaches, each computed over a shrinking region of the tile in local memory;
///      * hoisted and re-clamped padding (clamp/mirror, t >= 3; constant, t >= 2): the same t
///        steps over the input padded by t reaches, exact at the points inside the grid; after
///        every intermediate step the region's points beyond the grid's edge are replaced by the
///        boundary's padding of its points inside (re-clamp-tile-edges: re-padding the
///        overlapped tiles of a padded array changes nothing; for a constant boundary the points
///        beyond the edge become the constant, as the unfused step's padding makes them). A tile
///        learns at run time which edges it touches (its edge code along y and x, an array zipped
///        with the tiles), so each re-clamp is a pick among four views of the region: as it is, or
///        its inner part padded again before, after or on both sides. Only the edge tiles are
///        repaired, so a tile is at least as wide as the widest halo, (t - 1) reaches.
///    A constant boundary does not commute with a computation (g of constant windows is not the
///    constant), so it has neither pushed nor hoisted padding: it fuses re-padded only, which is
///    why it streams nothing along z.
///  - overlapped tiling of the last step, the work-groups mapped to tiles, the work-items of a
///    group to the points of each intermediate region (toLocal, a barrier between steps), or one
///    work-item per (small) tile keeping every intermediate region in registers (toPrivate).
#include "ir/expr.hpp"

#include <cstdint>
#include <string>
#include <variant>

namespace liftx::rewrite {

/// The lowering strategy name of fused launches in the variant space, and its steps as
/// `liftx variants` prints them.
inline constexpr const char* kTemporalStrategy = "temporal2d";
inline constexpr const char* kTemporalStrategy3D = "temporal3d";
inline constexpr const char* kTemporalSteps =
    "unroll-iterate(t), pad-of-map | hoist-wrap-padding | re-clamp-tile-edges, tile-stencil-2d, "
    "map-to-mapWrg1/0, map-to-mapLcl1/0, to-local per intermediate step";
inline constexpr const char* kTemporalSteps3D =
    "unroll-iterate(t), pad-of-map | hoist-wrap-padding | re-clamp-tile-edges, tile-stencil-3d, "
    "map-to-mapWrg2/1/0, map-to-mapLcl2/1/0, to-local per intermediate step";

/// A 2D or 3D stencil step as temporal blocking needs it: the step program's body is
/// mapKD(point, slideKD(window, 1, padKD(pad_low, pad_high, boundary, p))) with p the step's only
/// parameter, a cubic window and padding that keeps the grid's shape.
struct StencilStep {
  int rank = 2;  ///< 2 or 3
  ir::Fun point; ///< the function of one window
  int64_t window = 0;
  int64_t pad_low = 0;  ///< padding before each dimension (the stencil's reach up and left)
  int64_t pad_high = 0; ///< after (down and right); pad_low + pad_high = window - 1
  ir::Boundary boundary;
  ir::Expr grid; ///< the step's parameter
};

/// The recognised step, or why `step` (a step program as ir::host_iteration makes it) is not one.
std::variant<StencilStep, std::string> as_stencil_step(const ir::Program& step);

/// How one fused launch is tiled.
struct TemporalTiling {
  int64_t degree = 2; ///< time steps per launch (t)
  int64_t tile_x = 16;
  int64_t tile_y = 8;
  /// Hoisted form only: copy the input tile (with its t reaches of halo) to local memory (or
  /// registers) before the first step, rather than reading it through the caches.
  bool stage_input = false;
  /// Where the intermediate steps of a tile live: `local`, a work-group per tile, a work-item
  /// per point of each step's region, barriers between steps; `registers`, a work-item per tile
  /// computing every step of it in private arrays (unrolled), no barrier.
  /// `stream`: a work-item per column of tile_y x tile_x outputs marching along y in 2D (of
  /// tile_z x tile_y x tile_x along z in 3D), each step's planes (rows in 2D) computed once as
  /// they enter the next step's register window of `window` planes: a pipeline of t windows
  /// (nested mapSeqSlide), the halo recomputed across the column's sides only. Two steps of a
  /// 3D stencil with a boundary that remaps indices take the 2.5D form instead: the first step's
  /// planes computed from the input's windows padded once more (pad-of-map), no re-clamp.
  /// `shared_stream`: the same pipeline with a work-group per column (tile_x wide in 2D,
  /// tile_y x tile_x in 3D) marching along the streamed dimension, each step's last `window`
  /// rows (planes) in a ring of local memory shared by the group's work-items, which compute
  /// each new row's points together (AN5D's N.5D blocking): the halo is recomputed across the
  /// work-group's sides only, not each work-item's. Any degree from 1 (a remainder's launch)
  /// and every boundary.
  /// `warp_stream`: a shared stream whose work-group is a single sub-group (NVIDIA's warp) of
  /// `lanes` work-items, each owning `lane_columns` adjacent columns of every row: all rows are
  /// lanes x lane_columns wide (the tile_x outputs and a halo of the rest, at least degree
  /// reaches), stored rotated so that the outputs come first and read cyclically, so that every
  /// lane reads its window at the same offsets from its own columns, whatever the lane. The
  /// halo is recomputed across the sub-group's sides only, and a lane's window is repaired at the
  /// grid's edges before it is read. The rows live in local memory; on a device whose sub-groups
  /// exchange registers, that is the form the code generator can keep in registers (2D only).
  enum class Memory { local, registers, stream, shared_stream, warp_stream };
  Memory memory = Memory::local;
  int64_t tile_z = 1; ///< 3D steps: outputs per tile along z (2D: unused)
  /// A pipeline's loop along the stream, unrolled by this many rows (planes): by the window's
  /// size, its registers are renamed rather than rotated (mapSeqSlide's unroll). The other
  /// forms (a remainder's single step, the 2.5D stream) have no such loop and ignore it.
  int64_t unroll = 1;
  /// warp_stream only: work-items of the sub-group, and the adjacent columns each owns.
  int64_t lanes = 32;
  int64_t lane_columns = 4;
  /// warp_stream only: tile_x need not divide the grid's width. Each row's last tile is shifted
  /// back to end at the grid's last column (slideShifted, joinShifted: Halide's ShiftInwards),
  /// overlapping its neighbour, whose outputs it computes again and stores alike. So a warp's
  /// rows can carry as many outputs as its lanes' columns leave after the halo (76 of 96 columns
  /// at ten steps of a 3-point reach) where a dividing tile would carry 64.
  bool shifted_last = false;
  /// warp_stream only: tile_y need not divide the grid's height. Each column's last strip is
  /// shifted up to end at the grid's last row, as shifted_last does along x, so that a strip's
  /// height can be chosen for the launch's waves rather than among the height's divisors.
  bool shifted_rows = false;
};

/// Whether `tiling` of `step` streams as a pipeline of windows: every shared stream, and every
/// register stream of two steps or more but the two-step 3D stream of a boundary that remaps
/// indices.
bool streams_as_pipeline(const StencilStep& step, const TemporalTiling& tiling);

/// The fused, tiled and lowered step program: same parameters as `step`, its body `degree` steps
/// of it computed by work-groups of (tile_z x) tile_y x tile_x outputs (degree 1: the step alone,
/// tiled the same way, for the launches of a remainder; any boundary). Why not, when the step is
/// not a recognised 2D or 3D stencil step, the boundary does not allow the degree, a re-clamped
/// tile is narrower than its widest halo ((degree - 1) reaches), or a tile does not divide.
std::variant<ir::Program, std::string> fuse_steps_tiled(const ir::Program& step,
                                                        const TemporalTiling& tiling);

/// The margin of a shifted last tile (TemporalTiling::shifted_last; ir::JoinShifted): the fewest
/// columns by which it must start past the grid's first and add past its neighbour's, so that
/// no tile's region crosses an edge it does not repair. 0 where nothing is repaired.
int64_t shifted_tile_margin(const StencilStep& step, const TemporalTiling& tiling);

/// Whether a grid `width` columns wide can be tiled with tiling's shifted last tile: one tile
/// and the margin fit, and the last tile adds at least the margin.
bool shifted_tiles_fit(const StencilStep& step, const TemporalTiling& tiling, int64_t width);

/// The same along y (TemporalTiling::shifted_rows): one strip of tile_y rows and the margin fit
/// a grid `height` rows high, and the last strip adds at least the margin.
bool shifted_strips_fit(const StencilStep& step, const TemporalTiling& tiling, int64_t height);

/// Scalars a work-item of a streamed launch holds in its register windows: n planes per step,
/// step k's window holding planes of step k - 1 (the first step's, input planes), each plane
/// the tile's cross-section grown by the reaches of the steps still to come.
int64_t stream_window_scalars(const StencilStep& step, const TemporalTiling& tiling);

/// Redundant work of a fused launch: points computed by all of its steps per output point and
/// step (1 when nothing is recomputed), a cost the tiles' halos pay for the DRAM trips saved.
double redundant_work_ratio(const StencilStep& step, const TemporalTiling& tiling);

} // namespace liftx::rewrite
