// Temporal blocking: the rules that fuse time steps (unroll-iterate, pad-of-map,
// hoist-wrap-padding, re-clamp-tile-edges) and the fused, tiled lowering of an iterated 2D or 3D
// stencil step.
#include "rewrite/temporal.hpp"
#include "ir/derived.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/rules/match.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace liftx::rewrite {

using namespace match;

namespace {

bool remaps_indices(const ir::Boundary& b) {
  return b.kind != ir::Boundary::Kind::Constant;
}

/// padKD in its expanded form (ir/derived.hpp): per dimension d, outermost first,
/// map^d(pad(low_d, high_d, b)) applied to the padding of the dimensions before it.
struct PadKD {
  std::vector<arith::Expr> low, high;
  ir::Boundary boundary;
  ir::Expr grid;
};

std::optional<PadKD> as_pad_kd(const ir::Expr& e, int rank) {
  std::vector<arith::Expr> low(static_cast<size_t>(rank)), high(static_cast<size_t>(rank));
  std::optional<ir::Boundary> boundary;
  ir::Expr rest = e;
  for (int d = rank - 1; d >= 0; --d) {
    const ir::Pad* p = nullptr;
    if (d == 0) {
      auto rows = as_unary_call_of<ir::Pad>(rest);
      if (!rows)
        return std::nullopt;
      p = rows->fun;
      rest = rows->arg();
    } else {
      auto mapped = as_unary_call_of<ir::Map>(rest);
      if (!mapped)
        return std::nullopt;
      const ir::Fun* f = &mapped->fun->f;
      for (int k = 1; k < d && f->as<ir::Map>(); ++k)
        f = &f->as<ir::Map>()->f;
      p = f->as<ir::Pad>();
      if (!p)
        return std::nullopt;
      rest = mapped->arg();
    }
    if (boundary && !(p->boundary == *boundary))
      return std::nullopt;
    boundary = p->boundary;
    low[static_cast<size_t>(d)] = p->left;
    high[static_cast<size_t>(d)] = p->right;
  }
  return PadKD{std::move(low), std::move(high), *boundary, rest};
}

/// slideKD(size, step, grid) of rank 2 or 3 (as_slide_2d / as_slide_3d).
struct SlideKD {
  arith::Expr size, step;
  ir::Expr grid;
};
std::optional<SlideKD> as_slide_kd(const ir::Expr& e, int rank) {
  if (rank == 2)
    if (auto s = as_slide_2d(e))
      return SlideKD{s->size, s->step, s->grid};
  if (rank == 3)
    if (auto s = as_slide_3d(e))
      return SlideKD{s->size, s->step, s->grid};
  return std::nullopt;
}

/// The element type `depth` array levels below `t` (the type of a tile of a tiled grid).
const ir::Type& element_at_depth(const ir::Type& t, int depth) {
  const ir::Type* element = &t;
  for (int d = 0; d < depth; ++d)
    element = &element_of(*element);
  return *element;
}

/// padKD(low, high, b, x) and slideKD(n, 1, x) of rank 2 or 3.
ir::Expr pad_k(int rank, int64_t low, int64_t high, const ir::Boundary& b, const ir::Expr& x,
               SourceLoc loc = {}) {
  return rank == 3 ? ir::pad_3d(arith::Expr(low), arith::Expr(high), b, x, loc)
                   : ir::pad_2d(arith::Expr(low), arith::Expr(high), b, x, loc);
}
ir::Expr slide_k(int rank, int64_t n, const ir::Expr& x) {
  return rank == 3 ? ir::slide_3d(arith::Expr(n), arith::Expr(1), x)
                   : ir::slide_2d(arith::Expr(n), arith::Expr(1), x);
}

/// liftxTileEdge(i, n): which edges of the grid tile i of n touches along one dimension: 1 the
/// first edge, 2 the last, 3 both (the only tile), 0 neither.
ir::Fun tile_edge() {
  static const ir::UserFunPtr def = ir::UserFunDef::parse(
      "liftxTileEdge", {{"i", ir::ScalarKind::Int}, {"n", ir::ScalarKind::Int}},
      ir::ScalarKind::Int, "return (i == 0 ? 1 : 0) + (i == n - 1 ? 2 : 0);");
  return ir::user_fun(def);
}

/// liftxEdgePick(edge, inner, first, last, both): the candidate that liftxTileEdge's code names.
ir::Fun edge_pick(ir::ScalarKind kind) {
  auto make = [](ir::ScalarKind k) {
    return ir::UserFunDef::parse(
        k == ir::ScalarKind::Double ? "liftxEdgePickDouble" : "liftxEdgePick",
        {{"edge", ir::ScalarKind::Int}, {"inner", k}, {"first", k}, {"last", k}, {"both", k}}, k,
        "if (edge == 0) return inner; if (edge == 1) return first; if (edge == 2) return last; "
        "return both;");
  };
  static const ir::UserFunPtr as_float = make(ir::ScalarKind::Float);
  static const ir::UserFunPtr as_double = make(ir::ScalarKind::Double);
  return ir::user_fun(kind == ir::ScalarKind::Double ? as_double : as_float);
}

/// The four arrays re-clamp-tile-edges picks from, each as long as `region`: the region itself,
/// then its inner elements (those inside the grid when the tile touches its first edge, its last
/// edge, or both) padded back to the region's length by `boundary`.
/// `region` with its first `before` and last `after` elements replaced by `boundary`'s padding of
/// the elements between.
ir::Expr inner_repadded(const ir::Expr& region, int64_t before, int64_t after,
                        const ir::Boundary& boundary) {
  const arith::Expr length = length_of(region.type());
  ir::Expr inner = ir::call(
      ir::at(arith::Expr(before)),
      {ir::call(ir::slide(length - arith::Expr(before + after), arith::Expr(1)), {region})});
  return ir::call(ir::pad(arith::Expr(before), arith::Expr(after), boundary), {inner});
}

std::vector<ir::Expr> edge_candidates(const ir::Expr& region, int64_t lo, int64_t hi,
                                      const ir::Boundary& boundary) {
  return {region, inner_repadded(region, lo, 0, boundary), inner_repadded(region, 0, hi, boundary),
          inner_repadded(region, lo, hi, boundary)};
}

/// How a pick chooses its candidate. NVIDIA's compiler keeps a chain of ifs as branches: cheap
/// where a warp's work-items mostly share the code (a stream's row code; a register tile's, 0 but
/// on the grid's edge), divergent where it differs from lane to lane. Conditional expressions
/// become selects, which evaluate every candidate. On an H100 (bench/RESULTS.md, "Lane picks as
/// selects") a warp stream launch whose every tile picks ran 1.58 ms with branches and 0.57 ms with
/// selects, while register pipelines ran 1.13-1.50x slower with selects.
enum class PickForm { branches, selects };

/// liftxPickOfK(code, c0, ..., cK-1) (PickForm::branches) or liftxSelectOfK (selects):
/// candidate `code` (0 for anything out of range).
ir::Fun pick_of(int64_t count, ir::ScalarKind kind, PickForm form) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, ir::ScalarKind, PickForm>, ir::UserFunPtr> made;
  std::lock_guard lock(mutex);
  ir::UserFunPtr& def = made[{count, kind, form}];
  if (!def) {
    std::vector<ir::UserFunParam> params{{"code", ir::ScalarKind::Int}};
    std::string body = form == PickForm::selects ? "return " : "";
    for (int64_t k = 0; k < count; ++k) {
      params.push_back({fmt::format("c{}", k), kind});
      if (k > 0 && form == PickForm::selects)
        body += fmt::format("code == {} ? c{} : ", k, k);
      else if (k > 0)
        body += fmt::format("if (code == {}) return c{}; ", k, k);
    }
    body += form == PickForm::selects ? "c0;" : "return c0;";
    def = ir::UserFunDef::parse(fmt::format("liftx{}Of{}{}",
                                            form == PickForm::selects ? "Select" : "Pick", count,
                                            kind == ir::ScalarKind::Double ? "Double" : ""),
                                params, kind, body);
  }
  return ir::user_fun(def);
}

/// c => liftxPickOfK(code, c.0, ..., c.K-1) (liftxSelectOfK for PickForm::selects) over a tuple
/// of the `count` candidates.
ir::Fun pick_by_code(const ir::Type& candidate, int64_t count, const ir::Expr& code,
                     ir::ScalarKind kind, PickForm form = PickForm::branches) {
  return lambda1(candidate, "c", [&](const ir::Expr& c) {
    std::vector<ir::Expr> args{code};
    for (int64_t i = 0; i < count; ++i)
      args.push_back(ir::call(ir::get(static_cast<int>(i)), {c}));
    return ir::call(pick_of(count, kind, form), std::move(args));
  });
}

/// `planes` and, in pick_of's order, `planes` with its first d (d = 1..lo), then its last d
/// (d = 1..hi) elements replaced by `boundary`'s padding of the elements between: the candidates
/// of a window that crosses an edge of the grid.
std::vector<ir::Expr> repair_candidates(const ir::Expr& planes, int64_t lo, int64_t hi,
                                        const ir::Boundary& boundary) {
  std::vector<ir::Expr> candidates{planes};
  for (int64_t d = 1; d <= lo; ++d)
    candidates.push_back(inner_repadded(planes, d, 0, boundary));
  for (int64_t d = 1; d <= hi; ++d)
    candidates.push_back(inner_repadded(planes, 0, d, boundary));
  return candidates;
}

/// liftxIndex(i, n) = i: the positions of a generated array.
ir::Fun position() {
  static const ir::UserFunPtr def =
      ir::UserFunDef::parse("liftxIndex", {{"i", ir::ScalarKind::Int}, {"n", ir::ScalarKind::Int}},
                            ir::ScalarKind::Int, "return i;");
  return ir::user_fun(def);
}

/// zip(stream, [0, 1, ...]): each element with its position, for a window's edge code.
ir::Expr with_positions(const ir::Expr& stream) {
  return ir::call(ir::zip(),
                  {stream, ir::call(ir::generate(length_of(stream.type()), position()), {})});
}

/// liftxStreamEdge(edge, j): how the window of a stream that starts at element j crosses the
/// grid's edges along the streamed dimension, as pick_of's code: d (1..lo) when its first d
/// elements lie before the first edge, lo + d (1..hi) when its last d lie beyond the last edge,
/// 0 otherwise (and wherever the window's middle element is outside the grid: that element's
/// value is not used). `edge` is the tile's liftxTileEdge; element j of the window's result lies
/// `lead` elements before the tile's first output, and `last` is j of the tile's last output row
/// counted the same way.
ir::Fun stream_edge(int64_t lead, int64_t last, int64_t lo, int64_t hi) {
  static std::mutex mutex;
  static std::map<std::array<int64_t, 4>, ir::UserFunPtr> made;
  std::lock_guard lock(mutex);
  ir::UserFunPtr& def = made[{lead, last, lo, hi}];
  if (!def)
    def = ir::UserFunDef::parse(
        fmt::format("liftxStreamEdge_{}_{}_{}_{}", lead, last, lo, hi),
        {{"edge", ir::ScalarKind::Int}, {"j", ir::ScalarKind::Int}}, ir::ScalarKind::Int,
        fmt::format("int c = j - {0}; if ((edge == 1 || edge == 3) && c >= 0 && c < {2}) return "
                    "{2} - c; int e = {1} - j; if (edge >= 2 && e >= 0 && e < {3}) return {2} + "
                    "{3} - e; return 0;",
                    lead, last, lo, hi));
  return ir::user_fun(def);
}

/// c => liftxEdgePick(edge, c.0, c.1, c.2, c.3) over a tuple of the four candidates.
ir::Fun pick_candidate(const ir::Type& candidate_type, const ir::Expr& edge, ir::ScalarKind kind) {
  const ir::Fun pick = edge_pick(kind);
  return lambda1(candidate_type, "c", [&](const ir::Expr& c) {
    std::vector<ir::Expr> args{edge};
    for (int i = 0; i < 4; ++i)
      args.push_back(ir::call(ir::get(i), {c}));
    return ir::call(pick, std::move(args));
  });
}

} // namespace

// ---- rules -----------------------------------------------------------------------------------

Rule unroll_iterate(int64_t t) {
  LIFTX_USER_CHECK(t >= 2, "unroll-iterate needs a degree of at least 2, got {}", t);
  return make_rule(
      fmt::format("unroll-iterate({})", t),
      "iterate(T, f, x) => iterate(T mod t, f, iterate(T / t, y => f(...f(y)), x))   (no outer "
      "iterate when t divides T)",
      {"algorithmic", "temporal"}, [t](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto it = as_unary_call_of<ir::Iterate>(site);
        if (!it)
          return NoMatch{"not a call of iterate"};
        std::optional<int64_t> count = it->fun->count.as_constant();
        if (!count)
          return NoMatch{"the iteration count is not a constant"};
        if (*count < t)
          return NoMatch{fmt::format("the iteration count {} is below the degree {}", *count, t)};
        const ir::Fun f = it->fun->f;
        ir::Fun fused = lambda1(it->arg().type(), "x", [&](const ir::Expr& x) {
          ir::Expr e = x;
          for (int64_t k = 0; k < t; ++k)
            e = ir::call(f, {e});
          return e;
        });
        ir::Expr unrolled = ir::call(ir::iterate(arith::Expr(*count / t), fused), {it->arg()});
        if (*count % t == 0)
          return unrolled;
        // The steps left over, unfused, after the fused ones.
        return ir::call(ir::iterate(arith::Expr(*count % t), f), {unrolled});
      });
}

Rule pad_of_map() {
  return make_rule(
      "pad-of-map", "pad(l, r, b, map(f, x)) => map(f, pad(l, r, b, x))   (b not constant)",
      {"algorithmic", "temporal"}, [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto p = as_unary_call_of<ir::Pad>(site);
        if (!p)
          return NoMatch{"not a call of pad"};
        if (!remaps_indices(p->fun->boundary))
          return NoMatch{"a constant boundary is not a computed point"};
        auto m = as_unary_call_of<ir::Map>(p->arg());
        if (!m)
          return NoMatch{"the padded array is not a map"};
        ir::Expr padded =
            ir::call(ir::pad(p->fun->left, p->fun->right, p->fun->boundary), {m->arg()});
        return ir::call(m->call->fun, {padded});
      });
}

Rule hoist_wrap_padding() {
  return make_rule(
      "hoist-wrap-padding",
      "pad2D(a, wrap, map2D(f, slide2D(n, 1, pad2D(b, wrap, x)))) => "
      "map2D(f, slide2D(n, 1, pad2D(a + b, wrap, x)))   (the grid keeps its shape)",
      {"algorithmic", "temporal"}, [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto outer = as_pad_kd(site, 2);
        if (!outer)
          return NoMatch{"not a pad2D"};
        if (outer->boundary.kind != ir::Boundary::Kind::Wrap)
          return NoMatch{"the boundary is not wrap"};
        auto mapped = as_map_kd(outer->grid, 2);
        if (!mapped)
          return NoMatch{"the padded grid is not a map2D"};
        auto slid = as_slide_2d(mapped->second);
        if (!slid)
          return NoMatch{"the mapped grid is not a slide2D"};
        if (slid->step.as_constant() != 1)
          return NoMatch{"the slide's step is not 1"};
        auto inner = as_pad_kd(slid->grid, 2);
        if (!inner || inner->boundary.kind != ir::Boundary::Kind::Wrap)
          return NoMatch{"the slid grid is not a wrap pad2D"};
        // The stencil keeps the grid's shape (window - 1 = padding per dimension), so that its
        // result repeats with the grid's period.
        const arith::Expr reach = slid->size - 1;
        if (!(inner->low[0] + inner->high[0] == reach) ||
            !(inner->low[1] + inner->high[1] == reach))
          return NoMatch{"the stencil does not keep the grid's shape"};
        ir::Expr padded =
            ir::pad_2d({outer->low[0] + inner->low[0], outer->high[0] + inner->high[0]},
                       {outer->low[1] + inner->low[1], outer->high[1] + inner->high[1]},
                       outer->boundary, inner->grid);
        return ir::call(map_k(2, mapped->first), {ir::slide_2d(slid->size, slid->step, padded)});
      });
}

Rule reclamp_tile_edges() {
  return make_rule(
      "re-clamp-tile-edges",
      "slide(t + l + r, t, pad(l, r, b, x)) => map(w => pick(edge, w, pad(l, 0, b, w[l..]), pad(0, "
      "r, b, w[..-r]), pad(l, r, b, w[l..-r])), zip(slide(t + l + r, t, pad(l, r, b, x)), "
      "array(n, tileEdge)))   (b clamp, mirror or constant)",
      {"algorithmic", "temporal"}, [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto tiles = as_unary_call_of<ir::Slide>(site);
        if (!tiles)
          return NoMatch{"not a call of slide"};
        auto padded = as_unary_call_of<ir::Pad>(tiles->arg());
        if (!padded)
          return NoMatch{"the slid array is not a pad"};
        const ir::Boundary& boundary = padded->fun->boundary;
        if (boundary.kind == ir::Boundary::Kind::Wrap)
          return NoMatch{"the boundary is not clamp, mirror or constant (a wrapped tile's halo "
                         "is the other edge's points, not its own)"};
        std::optional<int64_t> size = tiles->fun->size.as_constant(),
                               step = tiles->fun->step.as_constant(),
                               lo = padded->fun->left.as_constant(),
                               hi = padded->fun->right.as_constant();
        if (!size || !step || !lo || !hi)
          return NoMatch{"the tiles or the padding are not constants"};
        if (*size != *step + *lo + *hi)
          return NoMatch{"the tiles do not carry the padding as their halo"};
        if (boundary.kind == ir::Boundary::Kind::Mirror && *step < std::abs(*lo - *hi))
          return NoMatch{"a mirrored halo wider than the tile and the other halo"};
        const ir::Type& tile_type = element_of(site.type());
        const ir::Type& element = element_of(tile_type);
        if (!element.is_scalar())
          return NoMatch{"the tiles' elements are not scalars"};
        const ir::ScalarKind kind = element.as<ir::ScalarType>()->kind;
        ir::Expr with_edges = ir::call(
            ir::zip(), {site, ir::call(ir::generate(length_of(site.type()), tile_edge()), {})});
        ir::Fun per_tile = lambda1(element_of(with_edges.type()), "p", [&](const ir::Expr& p) {
          const ir::Expr edge = ir::call(ir::get(1), {p});
          const ir::Expr tile = ir::call(ir::get(0), {p});
          ir::Expr candidates = ir::call(ir::zip(), edge_candidates(tile, *lo, *hi, boundary));
          return ir::call(ir::map(pick_candidate(element_of(candidates.type()), edge, kind)),
                          {candidates});
        });
        return ir::call(ir::map(per_tile), {with_edges});
      });
}

// ---- the fused lowering ----------------------------------------------------------------------

std::variant<StencilStep, std::string> as_stencil_step(const ir::Program& step) {
  if (step.params.size() != 1)
    return std::string("the step has parameters besides the iterated grid");
  const ir::Type& grid_type = step.params[0].type();
  const int rank = ir::array_base(grid_type).is_scalar() ? ir::array_rank(grid_type) : 0;
  if (rank != 2 && rank != 3)
    return std::string("the iterated grid is not a 2D or 3D grid of scalars");
  auto mapped = as_map_kd(step.body, rank);
  if (!mapped)
    return fmt::format("the step is not a map{}D", rank);
  auto slid = as_slide_kd(mapped->second, rank);
  if (!slid)
    return fmt::format("the step does not map over a slide{}D", rank);
  std::optional<int64_t> window = slid->size.as_constant();
  if (!window || slid->step.as_constant() != 1)
    return std::string("the step's window is not a constant with step 1");
  auto padded = as_pad_kd(slid->grid, rank);
  if (!padded || !padded->grid.as<ir::Param>())
    return std::string("the step does not slide over the padded grid");
  std::optional<int64_t> low = padded->low[0].as_constant(), high = padded->high[0].as_constant();
  bool same_reach = low && high && *low + *high == *window - 1;
  for (int d = 1; d < rank; ++d)
    same_reach =
        same_reach && padded->low[d].as_constant() == low && padded->high[d].as_constant() == high;
  if (!same_reach)
    return std::string("the step's padding is not the same constant reach on every dimension");
  if (padded->grid.as<ir::Param>()->id != step.params[0].as<ir::Param>()->id)
    return std::string("the step does not pad its parameter");
  return StencilStep{rank, mapped->first, *window, *low, *high, padded->boundary, padded->grid};
}

namespace {

/// Outputs per tile along each dimension, outermost first.
std::vector<int64_t> tile_extent(int rank, const TemporalTiling& tiling) {
  if (rank == 3)
    return {tiling.tile_z, tiling.tile_y, tiling.tile_x};
  return {tiling.tile_y, tiling.tile_x};
}

/// f(f(x)) = mapKD(g, slideKD(n, 1, padKD(b, mapKD(g, slideKD(n, 1, padKD(b, x))))))
///         = mapKD(g, slideKD(n, 1, mapKD(g, padKD(b, slideKD(n, 1, padKD(b, x))))))
/// (pad-of-map): the windows of the first step, padded once more, which two steps' tiles are cut
/// from.
ir::Expr padded_first_windows(const StencilStep& step, SourceLoc loc) {
  const ir::Expr first_windows =
      slide_k(step.rank, step.window,
              pad_k(step.rank, step.pad_low, step.pad_high, step.boundary, step.grid, loc));
  return pad_k(step.rank, step.pad_low, step.pad_high, step.boundary, first_windows, loc);
}

/// Overlapped tiles of `source`: the windows of a slideKD with the tile's extent plus `halo`
/// and the tile's extent as step, per dimension.
ir::Expr overlapped_tiles(const std::vector<int64_t>& tile, int64_t halo, const ir::Expr& source) {
  std::vector<ir::DimPair> cuts;
  for (int64_t u : tile)
    cuts.push_back({arith::Expr(u + halo), arith::Expr(u)});
  return cuts.size() == 3 ? ir::slide_3d(cuts[0], cuts[1], cuts[2], source)
                          : ir::slide_2d(cuts[0], cuts[1], source);
}

/// A view of a region with dimension d outermost, and back.
ir::Expr dimension_outermost(const ir::Expr& region, int d) {
  if (d == 0)
    return region;
  if (d == 1)
    return ir::call(ir::transpose(), {region});
  // [z][y][x] -> [z][x][y] -> [x][z][y]
  return ir::call(ir::transpose(), {ir::call(ir::map(ir::transpose()), {region})});
}
ir::Expr dimension_back(const ir::Expr& region, int d) {
  if (d == 0)
    return region;
  if (d == 1)
    return ir::call(ir::transpose(), {region});
  // [x][z][y] -> [z][x][y] -> [z][y][x]
  return ir::call(ir::map(ir::transpose()), {ir::call(ir::transpose(), {region})});
}

} // namespace

double redundant_work_ratio(const StencilStep& step, const TemporalTiling& tiling) {
  const int64_t reach = step.window - 1;
  const std::vector<int64_t> tile = tile_extent(step.rank, tiling);
  double computed = 0, outputs = 1;
  for (int64_t u : tile)
    outputs *= static_cast<double>(u);
  for (int64_t k = 1; k <= tiling.degree; ++k) {
    double region = 1;
    for (int64_t u : tile)
      region *= static_cast<double>(u + (tiling.degree - k) * reach);
    computed += region;
  }
  return computed / (outputs * static_cast<double>(tiling.degree));
}

int64_t stream_window_scalars(const StencilStep& step, const TemporalTiling& tiling) {
  const int64_t reach = step.window - 1;
  const std::vector<int64_t> tile = tile_extent(step.rank, tiling);
  int64_t scalars = 0;
  for (int64_t k = 1; k <= tiling.degree; ++k) {
    int64_t plane = 1;
    for (size_t d = 1; d < tile.size(); ++d)
      plane *= tile[d] + (tiling.degree - k + 1) * reach;
    scalars += step.window * plane;
  }
  return scalars;
}

namespace {

/// Two steps of a 3D stencil streamed along z (TemporalTiling::Memory::stream): the first step's
/// windows, padded once more (pad-of-map), cut into overlapped column tiles; a work-item per
/// tile computes the first step's planes of its tile one by one as they enter a register window
/// of `window` planes (map of computed planes under mapSeqSlide: the code generator produces
/// each element as it loads it), and the second step's plane of outputs from each window.
ir::Expr streamed_steps(const StencilStep& step, const TemporalTiling& tiling, SourceLoc loc) {
  const int64_t n = step.window;
  const ir::Expr tiles =
      overlapped_tiles(tile_extent(3, tiling), n - 1, padded_first_windows(step, loc));
  const ir::Type& tile_type = element_at_depth(tiles.type(), 3);
  auto column = [&](const ir::Expr& tile) {
    // The first step's plane of the column, from one plane of its windows.
    ir::Fun first_plane = ir::to_private(ir::map_seq(ir::map_seq(step.point)));
    ir::Expr planes = ir::call(ir::map(first_plane), {tile});
    const ir::Type& window_type = ir::Type::array(element_of(planes.type()), arith::Expr(n));
    ir::Fun second_plane = lambda1(window_type, "w", [&](const ir::Expr& w) {
      return ir::call(ir::map_seq(ir::map_seq(step.point)),
                      {plane_neighbourhoods(w, arith::Expr(n), arith::Expr(1))});
    });
    return ir::call(ir::map_seq_slide(second_plane, arith::Expr(n), arith::Expr(1)), {planes});
  };
  const ir::Fun per_tile =
      ir::map_glb(2, ir::map_glb(1, ir::map_glb(0, lambda1(tile_type, "tile", column))));
  return untile_3d(ir::call(per_tile, {tiles}));
}

/// liftxLaneEdge(edge, lane): which columns of a warp stream lane's window lie beyond the grid's
/// edges, as pick_of's code over the column repairs' candidates (warp_streamed_steps): lo - s
/// (up to lo) when the window of the lane whose columns start at s = lane * columns starts
/// before the first edge, lo + d when its last d columns lie beyond the last edge, 0 otherwise.
/// Also 0 for the lanes whose outputs all lie before the tile (the rotated row's columns
/// `inside` and on, the left halo): no lane reads their values unrepaired. `edge` is the tile's
/// liftxTileEdge along x; the tile's last edge follows its `outputs` columns.
ir::Fun lane_edge(int64_t columns, int64_t inside, int64_t outputs, int64_t lo, int64_t hi) {
  static std::mutex mutex;
  static std::map<std::array<int64_t, 5>, ir::UserFunPtr> made;
  std::lock_guard lock(mutex);
  ir::UserFunPtr& def = made[{columns, inside, outputs, lo, hi}];
  if (!def)
    def = ir::UserFunDef::parse(
        fmt::format("liftxLaneEdge_{}_{}_{}_{}_{}", columns, inside, outputs, lo, hi),
        {{"edge", ir::ScalarKind::Int}, {"lane", ir::ScalarKind::Int}}, ir::ScalarKind::Int,
        fmt::format(
            "int s = lane * {0}; if (s >= {1}) return 0; if ((edge == 1 || edge == 3) && s < {3}) "
            "return {3} - s; int e = s + {0} + {4} - {2}; if (edge >= 2 && s < {2} && e "
            "> 0) return {3} + e; return 0;",
            columns, inside, outputs, lo, hi));
  return ir::user_fun(def);
}

/// `rows` ([n][X]) with the candidate of `code` (pick_of's) in registers: `candidates` zipped
/// point by point.
ir::Expr picked_rows(const std::vector<ir::Expr>& candidates, const ir::Expr& code,
                     ir::ScalarKind kind, PickForm form) {
  const int64_t count = static_cast<int64_t>(candidates.size());
  const ir::Expr zipped = zip_k(2, candidates);
  const ir::Fun pick = pick_by_code(element_at_depth(zipped.type(), 2), count, code, kind, form);
  return ir::call(ir::to_private(ir::map_seq(ir::map_seq(pick))), {zipped});
}

/// A warp stream of `t` fused steps of a 2D stencil (TemporalTiling::Memory::warp_stream): a
/// work-group of `lanes` work-items per tile of tile_y x tile_x outputs, marching down the
/// tile's rows. Every step's rows are W = lanes x lane_columns wide, work-item l computing
/// columns l * C to l * C + C - 1 of each. A row is rotated by the left halo P: its column s is
/// column (s + P) mod W of the tile's region, so columns 0 to tile_x - 1 are the outputs, then
/// come the right halo and the left halo, and a lane's window is read cyclically (pad wrap of
/// the row): the region's first and last columns are the only ones with a wrong neighbour, and
/// they are at least t reaches from the outputs. Each step's window of n rows is cut into one
/// window of n x (C + reach) per lane; from the second step on, a clamped, mirrored or constant
/// boundary repairs the rows beyond the grid's top or bottom edge (stream_edge) and then the
/// columns beyond its left or right edge (lane_edge) of that window before the lane reads it, as
/// the unfused iteration's padding would have them. The last step's row goes to local memory,
/// from which the group copies the tile_x outputs.
ir::Expr warp_streamed_steps(const StencilStep& step, const TemporalTiling& tiling, SourceLoc loc) {
  const int64_t t = tiling.degree, n = step.window, reach = n - 1;
  const int64_t lanes = tiling.lanes, columns = tiling.lane_columns;
  const int64_t width = lanes * columns, outputs = tiling.tile_x;
  const int64_t left = t * step.pad_low, right = width - outputs - left;
  const bool wrap = step.boundary.kind == ir::Boundary::Kind::Wrap;
  const bool repaired_steps = !wrap && t >= 2;
  const ir::ScalarKind kind = ir::array_base(step.grid.type()).as<ir::ScalarType>()->kind;
  const ir::Boundary cyclic{ir::Boundary::Kind::Wrap};

  // The grid padded by t reaches along y and by the row's halo along x, then cut into
  // overlapped tiles of tile_y + t reaches rows of W columns.
  const ir::Expr rows_padded = ir::call(
      ir::pad(arith::Expr(t * step.pad_low), arith::Expr(t * step.pad_high), step.boundary),
      {step.grid});
  const ir::Expr padded = ir::call(
      ir::map(ir::pad(arith::Expr(left), arith::Expr(right), step.boundary)), {rows_padded});
  // slide2D, but a shifted last tile along x (TemporalTiling::shifted_last) where asked.
  const ir::Fun cut_row = tiling.shifted_last
                              ? ir::slide_shifted(arith::Expr(width), arith::Expr(outputs))
                              : ir::slide(arith::Expr(width), arith::Expr(outputs));
  const ir::Expr row_tiles_of_rows = ir::call(ir::map(cut_row), {padded}, loc);
  // And along y, a shifted last strip (TemporalTiling::shifted_rows) where asked.
  const arith::Expr strip(tiling.tile_y + t * reach), strip_step(tiling.tile_y);
  const ir::Fun cut_strips =
      tiling.shifted_rows ? ir::slide_shifted(strip, strip_step) : ir::slide(strip, strip_step);
  const ir::Expr tiles =
      ir::call(ir::map(ir::transpose()), {ir::call(cut_strips, {row_tiles_of_rows}, loc)}, loc);

  auto rotated = [&](const ir::Expr& row) {
    if (left == 0)
      return row;
    ir::Expr extended = ir::call(ir::pad(arith::Expr(0), arith::Expr(left), cyclic), {row});
    return ir::call(ir::at(arith::Expr(left)),
                    {ir::call(ir::slide(arith::Expr(width), arith::Expr(1)), {extended})});
  };
  // [n][W] -> [lanes][n][C + reach]: each lane's columns and `reach` more, read cyclically.
  auto lane_windows = [&](const ir::Expr& rows) {
    ir::Fun per_row = lambda1(element_of(rows.type()), "r", [&](const ir::Expr& r) {
      ir::Expr cyclic_row =
          ir::call(ir::pad(arith::Expr(step.pad_low), arith::Expr(step.pad_high), cyclic), {r});
      return ir::call(ir::slide(arith::Expr(columns + reach), arith::Expr(columns)), {cyclic_row});
    });
    return ir::call(ir::transpose(), {ir::call(ir::map(per_row), {rows})});
  };
  auto row_repairs = [&](const ir::Expr& planes, const ir::Expr& code) {
    // A row's code is the same for every lane.
    return picked_rows(repair_candidates(planes, step.pad_low, step.pad_high, step.boundary), code,
                       kind, PickForm::branches);
  };
  // A lane's window crosses the last edge by up to C - 1 + pad_high columns (its columns may
  // straddle the edge).
  auto column_repairs = [&](const ir::Expr& planes, const ir::Expr& code) {
    auto each_row = [&](int64_t before, int64_t after) {
      ir::Fun f = lambda1(element_of(planes.type()), "r", [&](const ir::Expr& r) {
        return inner_repadded(r, before, after, step.boundary);
      });
      return ir::call(ir::map(f), {planes});
    };
    std::vector<ir::Expr> candidates{planes};
    for (int64_t d = 1; d <= step.pad_low; ++d)
      candidates.push_back(each_row(d, 0));
    for (int64_t d = 1; d <= columns - 1 + step.pad_high; ++d)
      candidates.push_back(each_row(0, d));
    // A lane's code differs from its neighbours' in a tile on the left or right edge.
    return picked_rows(candidates, code, kind, PickForm::selects);
  };

  // body(x) with x bound to `value`'s parameter: `value` computed once, however often body reads
  // it.
  auto bound = [](const ir::Expr& value, const std::string& hint,
                  const std::function<ir::Expr(const ir::Expr&)>& body) {
    return ir::call(lambda1(value.type(), hint, body), {value});
  };
  auto pipeline = [&](const ir::Expr& tile_in, const std::vector<ir::Expr>& edges) {
    ir::Fun rotate_row = lambda1(element_of(tile_in.type()), "r", rotated);
    ir::Expr stream = ir::call(ir::map(rotate_row), {tile_in});
    for (int64_t k = 1; k <= t; ++k) {
      const bool repaired = repaired_steps && k >= 2;
      ir::Expr input = stream;
      if (repaired)
        input = with_positions(stream);
      const ir::Type window_type = ir::Type::array(element_of(input.type()), arith::Expr(n));
      ir::Fun stage = lambda1(window_type, "w", [&](const ir::Expr& w) {
        ir::Expr rows = repaired ? ir::call(ir::map(ir::get(0)), {w}) : w;
        if (k >= 2) // the previous step's rows, lanes x columns
          rows = ir::call(ir::map(ir::join()), {rows});
        const ir::Expr per_lane =
            ir::call(ir::zip(), {lane_windows(rows),
                                 ir::call(ir::generate(arith::Expr(lanes), position()), {})});
        ir::Fun lane = lambda1(element_of(per_lane.type()), "lane", [&](const ir::Expr& p) {
          // [n][C + reach] -> [C][n][n] -> the lane's C points.
          auto points = [&](const ir::Expr& planes) {
            const ir::Expr neighbourhoods =
                ir::call(ir::transpose(),
                         {ir::call(ir::map(ir::slide(arith::Expr(n), arith::Expr(1))), {planes})});
            return ir::call(ir::map_seq(step.point), {neighbourhoods});
          };
          // The lane's window in its registers, each of its columns read once: the repairs'
          // candidates and the neighbourhoods read it many times, at constant indices. Each
          // computed window is bound to a parameter: an expression used several times would be
          // generated as many times.
          const ir::Expr window = ir::call(ir::to_private(ir::map_seq(ir::map_seq(ir::id()))),
                                           {ir::call(ir::get(0), {p})});
          if (!repaired)
            return bound(window, "window", points);
          const ir::Expr first = ir::call(ir::get(1), {ir::call(ir::at(arith::Expr(0)), {w})});
          const ir::Expr row_code = ir::call(stream_edge((t - k) * step.pad_low,
                                                         tiling.tile_y - 1 + (t - k) * step.pad_low,
                                                         step.pad_low, step.pad_high),
                                             {edges.front(), first});
          const ir::Expr column_code =
              ir::call(lane_edge(columns, width - left, outputs, step.pad_low, step.pad_high),
                       {edges.back(), ir::call(ir::get(1), {p})});
          return bound(window, "window", [&](const ir::Expr& raw) {
            return bound(row_repairs(raw, row_code), "rows", [&](const ir::Expr& rows_inside) {
              return bound(column_repairs(rows_inside, column_code), "planes", points);
            });
          });
        });
        const ir::Expr row = ir::call(ir::to_local(ir::map_lcl(0, lane)), {per_lane});
        if (k < t)
          return row;
        const ir::Expr outputs_of_row = ir::call(
            ir::at(arith::Expr(0)), {ir::call(ir::slide(arith::Expr(outputs), arith::Expr(1)),
                                              {ir::call(ir::join(), {row})})});
        return ir::call(ir::map_lcl(0, ir::id()), {outputs_of_row});
      });
      const int unroll = k == t ? static_cast<int>(tiling.unroll) : 1;
      stream = ir::call(ir::map_seq_slide(stage, arith::Expr(n), arith::Expr(1), unroll), {input});
    }
    return stream;
  };

  // Each tile with its edge codes along y and x (unused by a wrapped boundary).
  auto with_edge = [&](const ir::Expr& level) {
    return ir::call(ir::zip(),
                    {level, ir::call(ir::generate(length_of(level.type()), tile_edge()), {})});
  };
  const ir::Expr tile_rows = with_edge(tiles);
  ir::Fun per_row = lambda1(element_of(tile_rows.type()), "row", [&](const ir::Expr& row) {
    const ir::Expr row_tiles = with_edge(ir::call(ir::get(0), {row}));
    ir::Fun per_tile = lambda1(element_of(row_tiles.type()), "tile", [&](const ir::Expr& tile) {
      return pipeline(ir::call(ir::get(0), {tile}),
                      {ir::call(ir::get(1), {row}), ir::call(ir::get(1), {tile})});
    });
    return ir::call(ir::map_wrg(0, per_tile), {row_tiles});
  });
  const ir::Expr tiled_outputs = ir::call(ir::map_wrg(1, per_row), {tile_rows});
  if (!tiling.shifted_last && !tiling.shifted_rows)
    return untile(tiled_outputs);
  // untile with the tiles joined back over the grid's width and the strips over its height, the
  // last of each shifted where asked. A tile repairs only the edges it touches, so a shifted
  // tile must leave its neighbour's region (the widest intermediate halo past its outputs)
  // inside the grid, and start beyond the first tile's: a margin of (t - 1) reaches.
  const arith::Expr margin(shifted_tile_margin(step, tiling));
  const arith::Expr grid_width = element_of(step.grid.type()).as<ir::ArrayType>()->length;
  const ir::Fun join_row = tiling.shifted_last ? ir::join_shifted(grid_width, margin) : ir::join();
  // [strips][tiles][tile_y][tile_x] -> [strips][tile_y][tiles][tile_x]
  const ir::Expr strips = ir::call(ir::map(ir::transpose()), {tiled_outputs});
  if (!tiling.shifted_rows) // the strips joined first: the kernels measured before shifted rows
    return ir::call(ir::map(join_row), {ir::call(ir::join(), {strips})});
  const arith::Expr grid_height = step.grid.type().as<ir::ArrayType>()->length;
  return ir::call(ir::join_shifted(grid_height, margin),
                  {ir::call(ir::map(ir::map(join_row)), {strips})});
}

} // namespace

int64_t shifted_tile_margin(const StencilStep& step, const TemporalTiling& tiling) {
  const bool repaired = step.boundary.kind != ir::Boundary::Kind::Wrap && tiling.degree >= 2;
  return repaired ? (tiling.degree - 1) * std::max(step.pad_low, step.pad_high) : 0;
}

namespace {

/// Whether `extent` points can be cut into tiles of `tile` with the last one shifted back by
/// the margin's rule (ir::JoinShifted).
bool shifted_fit(int64_t margin, int64_t tile, int64_t extent) {
  return tile >= 1 && extent >= tile + margin && extent - (extent - 1) / tile * tile >= margin;
}

} // namespace

bool shifted_tiles_fit(const StencilStep& step, const TemporalTiling& tiling, int64_t width) {
  return shifted_fit(shifted_tile_margin(step, tiling), tiling.tile_x, width);
}

bool shifted_strips_fit(const StencilStep& step, const TemporalTiling& tiling, int64_t height) {
  return shifted_fit(shifted_tile_margin(step, tiling), tiling.tile_y, height);
}

bool streams_as_pipeline(const StencilStep& step, const TemporalTiling& tiling) {
  if (tiling.memory == TemporalTiling::Memory::shared_stream ||
      tiling.memory == TemporalTiling::Memory::warp_stream)
    return tiling.degree >= 1;
  return tiling.memory == TemporalTiling::Memory::stream && tiling.degree >= 2 &&
         !(step.rank == 3 && tiling.degree == 2 &&
           step.boundary.kind != ir::Boundary::Kind::Constant);
}

std::variant<ir::Program, std::string> fuse_steps_tiled(const ir::Program& program,
                                                        const TemporalTiling& tiling) {
  auto recognised = as_stencil_step(program);
  if (auto* why = std::get_if<std::string>(&recognised))
    return *why;
  const StencilStep& step = std::get<StencilStep>(recognised);
  const bool streamed = tiling.memory == TemporalTiling::Memory::stream;
  const int rank = step.rank;
  const std::vector<int64_t> tile = tile_extent(rank, tiling);
  const int64_t t = tiling.degree;
  if (t < 1)
    return fmt::format("a temporal degree of {} computes nothing", t);
  if ((tiling.shifted_last || tiling.shifted_rows) &&
      tiling.memory != TemporalTiling::Memory::warp_stream)
    return std::string("only a warp stream shifts its last tile");
  if (std::any_of(tile.begin(), tile.end(), [](int64_t u) { return u < 1; }))
    return std::string("a tile needs at least one output along every dimension");
  const bool constant = step.boundary.kind == ir::Boundary::Kind::Constant;
  const bool wrap = step.boundary.kind == ir::Boundary::Kind::Wrap;
  if (streamed && t == 2 && !streams_as_pipeline(step, tiling)) {
    ir::Program fused = program;
    fused.body = streamed_steps(step, tiling, program.loc);
    return fused;
  }
  // A pipeline of t register windows along the outermost dimension (every other stream of two
  // steps or more); a stream's single step, a remainder's launch, is the register tile of the
  // same shape.
  const bool pipelined = streams_as_pipeline(step, tiling);
  if (pipelined && tiling.stage_input)
    return std::string("a stream reads its input rows into its first window: nothing to stage");
  // (Its later steps' windows are repaired at the edges; a single step reads the padded input.)
  if (pipelined && t >= 2 && step.boundary.kind == ir::Boundary::Kind::Mirror &&
      2 * std::max(step.pad_low, step.pad_high) > step.window)
    return std::string("a mirrored window crossing the grid's edge has too few points inside");
  // Clamp and mirror: two steps by pushed padding; more by re-clamping each intermediate region
  // at the grid's edges inside the tile (re-clamp-tile-edges). A constant boundary cannot push
  // its padding into a computation: it is re-padded from two steps on. A pipeline re-clamps
  // from two steps on: the windows of its later steps are re-clamped as they cross the edges.
  const bool reclamped = !wrap && (t >= 3 || ((constant || pipelined) && t >= 2));
  // One step (a remainder's launch) is the hoisted form with nothing hoisted: any boundary.
  const bool hoisted = wrap || t == 1 || reclamped;
  if (tiling.stage_input && !hoisted)
    return std::string("only the hoisted forms (wrap, constant, or three steps or more) read a "
                       "plain input tile to stage");
  const int64_t reach = step.window - 1;
  // Re-clamping repairs the regions of the tiles at the grid's edges only: a tile narrower than
  // the widest halo (t - 1 reaches on one side, the first intermediate step's) would let its
  // neighbour's region cross the edge unrepaired.
  const int64_t widest_halo = (t - 1) * std::max(step.pad_low, step.pad_high);
  if (reclamped &&
      std::any_of(tile.begin(), tile.end(), [&](int64_t u) { return u < widest_halo; }))
    return fmt::format("a re-clamped tile needs at least {} outputs per dimension (the widest "
                       "halo of its steps)",
                       widest_halo);
  const int64_t n = step.window;
  if (tiling.memory == TemporalTiling::Memory::warp_stream) {
    if (rank != 2)
      return std::string("a warp stream streams 2D stencils only");
    if (tiling.lanes < 1 || tiling.lane_columns < 1)
      return std::string("a warp stream needs at least one lane and one column per lane");
    if (tiling.lanes * tiling.lane_columns - tiling.tile_x < t * reach)
      return fmt::format("a warp stream's rows of {} x {} leave less than {} columns of halo",
                         tiling.lanes, tiling.lane_columns, t * reach);
    // A lane's window crosses at most one of the grid's side edges.
    if (reclamped && tiling.tile_x < tiling.lane_columns + reach)
      return fmt::format("a re-clamped warp stream needs at least {} outputs per row (a lane's "
                         "window)",
                         tiling.lane_columns + reach);
    if (reclamped) {
      // The row is rotated: its right halo meets its left halo at column W - t * pad_low, the
      // seam. A lane holding outputs repairs every column of its window from the last edge on,
      // and where its window passes the seam those are left-halo columns, inside the grid in a
      // row's last tile. Its own columns past the seam then compute from the repair's values:
      // harmless while there are at most 2 * pad_low of them, the columns the second step (the
      // first repaired) leaves invalid anyway.
      const int64_t width = tiling.lanes * tiling.lane_columns;
      const int64_t seam = width - t * step.pad_low;
      const int64_t seam_lane = (seam - 1) / tiling.lane_columns * tiling.lane_columns;
      const int64_t past_seam = seam_lane + tiling.lane_columns - seam;
      if (t * step.pad_low > 0 && seam_lane < tiling.tile_x && past_seam > 2 * step.pad_low)
        return fmt::format("a warp stream's lane of columns {} to {} holds outputs and {} columns "
                           "past the rotated row's seam at {}, more than the {} a last-edge "
                           "repair may overwrite",
                           seam_lane, seam_lane + tiling.lane_columns - 1, past_seam, seam,
                           2 * step.pad_low);
    }
    ir::Program fused = program;
    fused.body = warp_streamed_steps(step, tiling, program.loc);
    return fused;
  }

  // The array the tiles are cut from, and the halo each tile carries on top of its outputs.
  ir::Expr source = step.grid;
  int64_t halo = 0;
  if (hoisted) {
    // t steps over the grid padded by t reaches: valid stencils for wrap (hoist-wrap-padding,
    // t - 1 times); for clamp and mirror, exact at the points inside the grid, each region
    // re-clamped at the grid's edges before the next step reads it.
    source =
        pad_k(rank, t * step.pad_low, t * step.pad_high, step.boundary, step.grid, program.loc);
    halo = t * reach;
  } else {
    source = padded_first_windows(step, program.loc);
    halo = reach;
  }
  const ir::Expr tiles = overlapped_tiles(tile, halo, source);

  // Work-group tiles: the points of each step's region shared by the work-items of a group in
  // local memory (a barrier between steps). Register tiles: one work-item computes its tile's
  // steps alone in private arrays (unrolled: registers), no barrier, the halo recomputed.
  const bool registers = tiling.memory == TemporalTiling::Memory::registers ||
                         tiling.memory == TemporalTiling::Memory::stream;
  // The points of a region of `dims` dimensions (a tile's region: rank; a streamed plane: one
  // fewer).
  auto points_of = [&](ir::Fun f, int dims) {
    for (int d = 0; d < dims; ++d)
      f = registers ? ir::map_seq(std::move(f)) : ir::map_lcl(d, std::move(f));
    return f;
  };
  auto keep_of = [&](ir::Fun f, int dims) {
    return registers ? ir::to_private(points_of(std::move(f), dims))
                     : ir::to_local(points_of(std::move(f), dims));
  };
  auto points = [&](ir::Fun f) { return points_of(std::move(f), rank); };
  auto keep = [&](ir::Fun f) { return keep_of(std::move(f), rank); };
  const ir::ScalarKind kind = ir::array_base(step.grid.type()).as<ir::ScalarType>()->kind;

  // re-clamp-tile-edges: the region of step k (the tile grown by `lo` points before and `hi`
  // after along each dimension) holds the step's values at grid points, those outside the grid
  // computed from clamped reads and so wrong. Where the tile touches the grid's first (last) edge
  // along a dimension, the grid's first (last) plane is the region's plane lo (its length - 1 -
  // hi): the planes outside are replaced by the boundary's remapping of the planes inside, a pad
  // of the inner planes. Which of the four views a tile reads is known at run time only (its edge
  // code), so a pick of the four, one dimension after the other.
  auto reclamp_outermost = [&](const ir::Expr& computed, const ir::Expr& edge, int64_t lo,
                               int64_t hi, int dims) {
    // Bound to a parameter, so that the four views read one computed region (an expression
    // used four times would be generated four times).
    auto pick_planes = [&](const ir::Expr& region) {
      ir::Expr candidates = zip_k(dims, edge_candidates(region, lo, hi, step.boundary));
      return ir::call(
          keep_of(pick_candidate(element_at_depth(candidates.type(), dims), edge, kind), dims),
          {candidates});
    };
    return ir::call(lambda1(computed.type(), "region", pick_planes), {computed});
  };
  // The region's `dims` dimensions are the last `dims` of the tile's, whose edge codes `edges`
  // ends with.
  auto reclamp_dims = [&](ir::Expr region, const std::vector<ir::Expr>& edges, int64_t steps_left,
                          int dims) {
    const int64_t lo = steps_left * step.pad_low, hi = steps_left * step.pad_high;
    for (int d = 0; d < dims; ++d)
      region = dimension_back(reclamp_outermost(dimension_outermost(region, d),
                                                edges[edges.size() - size_t(dims) + size_t(d)], lo,
                                                hi, dims),
                              d);
    return region;
  };
  auto reclamp = [&](ir::Expr region, const std::vector<ir::Expr>& edges, int64_t steps_left) {
    return reclamp_dims(std::move(region), edges, steps_left, rank);
  };

  auto fused_tile = [&](const ir::Expr& tile_in, const std::vector<ir::Expr>& edges) {
    ir::Expr level = tile_in;
    if (hoisted) {
      if (tiling.stage_input)
        level = ir::call(keep(ir::id()), {level});
      for (int64_t k = 1; k < t; ++k) {
        level = ir::call(keep(step.point), {slide_k(rank, n, level)});
        if (reclamped)
          level = reclamp(level, edges, t - k);
      }
    } else {
      // The tile holds the first step's windows: their points are kept directly.
      level = ir::call(keep(step.point), {level});
    }
    return ir::call(points(step.point), {slide_k(rank, n, level)});
  };

  // A pipeline: the tile's planes along its outermost dimension (rows in 2D) stream through t
  // register windows of n planes, step k computing a plane from each window of step k - 1's
  // planes as they come (nested mapSeqSlide: the code generator steps each inner window as the
  // outer one reads). A plane's re-clamp along the other dimensions is the region's; along the
  // streamed one, a window of step k >= 2 whose planes cross the grid's edge is repaired
  // before it is read: its planes outside replaced by the boundary's padding of those inside
  // (stream_edge says by how many, from the window's position, carried as a zipped index).
  const int plane_dims = rank - 1;
  auto neighbourhoods = [&](const ir::Expr& planes) {
    if (plane_dims == 2)
      return plane_neighbourhoods(planes, arith::Expr(n), arith::Expr(1));
    // [n][x] -> [n][x'][n] -> [x'][n][n]
    return ir::call(ir::transpose(),
                    {ir::call(ir::map(ir::slide(arith::Expr(n), arith::Expr(1))), {planes})});
  };
  auto repaired_window = [&](const ir::Expr& planes, const ir::Expr& code) {
    std::vector<ir::Expr> candidates =
        repair_candidates(planes, step.pad_low, step.pad_high, step.boundary);
    const int64_t count = static_cast<int64_t>(candidates.size());
    ir::Expr zipped = zip_k(rank, std::move(candidates));
    const ir::Fun pick = pick_by_code(element_at_depth(zipped.type(), rank), count, code, kind);
    // A work-group's shared window: its rows (planes) one after the other, the points of each
    // shared by the group's work-items (the window's length is not a dimension of the group).
    if (tiling.memory == TemporalTiling::Memory::shared_stream)
      return ir::call(ir::to_local(ir::map_seq(points_of(pick, plane_dims))), {zipped});
    return ir::call(keep_of(pick, rank), {zipped});
  };
  auto pipeline = [&](const ir::Expr& tile_in, const std::vector<ir::Expr>& edges) {
    ir::Expr stream = tile_in;
    for (int64_t k = 1; k <= t; ++k) {
      const bool repaired = reclamped && k >= 2;
      ir::Expr input = stream;
      if (repaired)
        input = with_positions(stream);
      const ir::Type window_type = ir::Type::array(element_of(input.type()), arith::Expr(n));
      ir::Fun stage = lambda1(window_type, "w", [&](const ir::Expr& w) {
        ir::Expr planes = w;
        if (repaired) {
          planes = ir::call(ir::map(ir::get(0)), {w});
          const ir::Expr first = ir::call(ir::get(1), {ir::call(ir::at(arith::Expr(0)), {w})});
          const ir::Fun edge_code =
              stream_edge((t - k) * step.pad_low, tile[0] - 1 + (t - k) * step.pad_low,
                          step.pad_low, step.pad_high);
          planes = repaired_window(planes, ir::call(edge_code, {edges.front(), first}));
        }
        if (k == t)
          return ir::call(points_of(step.point, plane_dims), {neighbourhoods(planes)});
        ir::Expr plane = ir::call(keep_of(step.point, plane_dims), {neighbourhoods(planes)});
        return reclamped ? reclamp_dims(plane, edges, t - k, plane_dims) : plane;
      });
      // The last stage's loop is the one the code generator writes (the others step inside it).
      const int unroll = k == t ? static_cast<int>(tiling.unroll) : 1;
      stream = ir::call(ir::map_seq_slide(stage, arith::Expr(n), arith::Expr(1), unroll), {input});
    }
    return stream;
  };
  const std::function<ir::Expr(const ir::Expr&, const std::vector<ir::Expr>&)> per_tile_body =
      pipelined
          ? std::function<ir::Expr(const ir::Expr&, const std::vector<ir::Expr>&)>(pipeline)
          : std::function<ir::Expr(const ir::Expr&, const std::vector<ir::Expr>&)>(fused_tile);
  // Dimension d of the tiles (outermost first) goes to work-group (work-item) dimension
  // rank - 1 - d.
  auto map_tiles = [&](int dim, ir::Fun f) {
    return registers ? ir::map_glb(dim, std::move(f)) : ir::map_wrg(dim, std::move(f));
  };
  // Each tile with its edge code along every dimension, where regions are re-clamped.
  static const char* const kLevelNames[] = {"plane", "row", "tile"};
  std::function<ir::Expr(const ir::Expr&, int, const std::vector<ir::Expr>&)> with_edges =
      [&](const ir::Expr& level, int d, const std::vector<ir::Expr>& outer_edges) {
        ir::Expr zipped = ir::call(
            ir::zip(), {level, ir::call(ir::generate(length_of(level.type()), tile_edge()), {})});
        auto per_element = [&](const ir::Expr& pair) {
          std::vector<ir::Expr> edges = outer_edges;
          edges.push_back(ir::call(ir::get(1), {pair}));
          const ir::Expr inner = ir::call(ir::get(0), {pair});
          return d + 1 == rank ? per_tile_body(inner, edges) : with_edges(inner, d + 1, edges);
        };
        return ir::call(map_tiles(rank - 1 - d, lambda1(element_of(zipped.type()),
                                                        kLevelNames[3 - rank + d], per_element)),
                        {zipped});
      };
  auto each_tile = [&]() {
    ir::Fun per_tile = lambda1(element_at_depth(tiles.type(), rank), "tile",
                               [&](const ir::Expr& x) { return per_tile_body(x, {}); });
    for (int d = 0; d < rank; ++d)
      per_tile = map_tiles(d, std::move(per_tile));
    return ir::call(per_tile, {tiles});
  };
  const ir::Expr per_tiles = reclamped ? with_edges(tiles, 0, {}) : each_tile();
  ir::Program fused = program;
  fused.body = rank == 3 ? untile_3d(per_tiles) : untile(per_tiles);
  return fused;
}

} // namespace liftx::rewrite
