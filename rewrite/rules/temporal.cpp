// Temporal blocking: the rules that fuse time steps (unroll-iterate, pad-of-map,
// hoist-wrap-padding) and the fused, tiled lowering of an iterated 2D stencil step.
#include "rewrite/temporal.hpp"
#include "ir/derived.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/rules/match.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace liftx::rewrite {

using namespace match;

namespace {

bool remaps_indices(const ir::Boundary& b) {
  return b.kind != ir::Boundary::Kind::Constant;
}

/// pad2D(l_y, r_y, l_x, r_x, b, x) in its expanded form map(pad(l_x, r_x, b))(pad(l_y, r_y, b)(x)).
struct Pad2D {
  arith::Expr low_y, high_y, low_x, high_x;
  ir::Boundary boundary;
  ir::Expr grid;
};

std::optional<Pad2D> as_pad_2d(const ir::Expr& e) {
  auto columns = as_unary_call_of<ir::Map>(e);
  if (!columns)
    return std::nullopt;
  const auto* x = columns->fun->f.as<ir::Pad>();
  auto rows = as_unary_call_of<ir::Pad>(columns->arg());
  if (!x || !rows || !(x->boundary == rows->fun->boundary))
    return std::nullopt;
  return Pad2D{rows->fun->left, rows->fun->right, x->left, x->right, x->boundary, rows->arg()};
}

/// [[s]N]M with s a scalar.
bool is_scalar_grid_2d(const ir::Type& t) {
  const auto* rows = t.as<ir::ArrayType>();
  const auto* row = rows ? rows->element.as<ir::ArrayType>() : nullptr;
  return row && row->element.is_scalar();
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
std::vector<ir::Expr> edge_candidates(const ir::Expr& region, int64_t lo, int64_t hi,
                                      const ir::Boundary& boundary) {
  const arith::Expr length = length_of(region.type());
  auto inner_padded = [&](int64_t before, int64_t after) {
    ir::Expr inner = ir::call(
        ir::at(arith::Expr(before)),
        {ir::call(ir::slide(length - arith::Expr(before + after), arith::Expr(1)), {region})});
    return ir::call(ir::pad(arith::Expr(before), arith::Expr(after), boundary), {inner});
  };
  return {region, inner_padded(lo, 0), inner_padded(0, hi), inner_padded(lo, hi)};
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
        auto outer = as_pad_2d(site);
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
        auto inner = as_pad_2d(slid->grid);
        if (!inner || inner->boundary.kind != ir::Boundary::Kind::Wrap)
          return NoMatch{"the slid grid is not a wrap pad2D"};
        // The stencil keeps the grid's shape (window - 1 = padding per dimension), so that its
        // result repeats with the grid's period.
        const arith::Expr reach = slid->size - 1;
        if (!(inner->low_y + inner->high_y == reach) || !(inner->low_x + inner->high_x == reach))
          return NoMatch{"the stencil does not keep the grid's shape"};
        ir::Expr padded = ir::pad_2d({outer->low_y + inner->low_y, outer->high_y + inner->high_y},
                                     {outer->low_x + inner->low_x, outer->high_x + inner->high_x},
                                     outer->boundary, inner->grid);
        return ir::call(map_k(2, mapped->first), {ir::slide_2d(slid->size, slid->step, padded)});
      });
}

Rule reclamp_tile_edges() {
  return make_rule(
      "re-clamp-tile-edges",
      "slide(t + l + r, t, pad(l, r, b, x)) => map(w => pick(edge, w, pad(l, 0, b, w[l..]), pad(0, "
      "r, b, w[..-r]), pad(l, r, b, w[l..-r])), zip(slide(t + l + r, t, pad(l, r, b, x)), "
      "array(n, tileEdge)))   (b clamp or mirror)",
      {"algorithmic", "temporal"}, [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto tiles = as_unary_call_of<ir::Slide>(site);
        if (!tiles)
          return NoMatch{"not a call of slide"};
        auto padded = as_unary_call_of<ir::Pad>(tiles->arg());
        if (!padded)
          return NoMatch{"the slid array is not a pad"};
        const ir::Boundary& boundary = padded->fun->boundary;
        if (boundary.kind != ir::Boundary::Kind::Clamp &&
            boundary.kind != ir::Boundary::Kind::Mirror)
          return NoMatch{"the boundary is not clamp or mirror"};
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

std::variant<StencilStep2D, std::string> as_stencil_step_2d(const ir::Program& step) {
  if (step.params.size() != 1)
    return std::string("the step has parameters besides the iterated grid");
  auto mapped = as_map_kd(step.body, 2);
  if (!mapped)
    return std::string("the step is not a map2D");
  auto slid = as_slide_2d(mapped->second);
  if (!slid)
    return std::string("the step does not map over a slide2D");
  std::optional<int64_t> window = slid->size.as_constant();
  if (!window || slid->step.as_constant() != 1)
    return std::string("the step's window is not a constant with step 1");
  auto padded = as_pad_2d(slid->grid);
  if (!padded || !padded->grid.as<ir::Param>())
    return std::string("the step does not slide over the padded grid");
  std::optional<int64_t> low = padded->low_y.as_constant(), high = padded->high_y.as_constant();
  if (!low || !high || padded->low_x.as_constant() != low || padded->high_x.as_constant() != high ||
      *low + *high != *window - 1)
    return std::string("the step's padding is not the same constant reach on both dimensions");
  if (padded->grid.as<ir::Param>()->id != step.params[0].as<ir::Param>()->id)
    return std::string("the step does not pad its parameter");
  if (!is_scalar_grid_2d(step.params[0].type()))
    return std::string("the iterated grid is not a 2D grid of scalars");
  return StencilStep2D{mapped->first, *window, *low, *high, padded->boundary, padded->grid};
}

int64_t max_temporal_degree(const ir::Boundary& boundary, int64_t max_degree) {
  switch (boundary.kind) {
  case ir::Boundary::Kind::Wrap:
  case ir::Boundary::Kind::Clamp:
  case ir::Boundary::Kind::Mirror:
    return max_degree;
  case ir::Boundary::Kind::Constant:
    return 1;
  }
  return 1;
}

double redundant_work_ratio(const StencilStep2D& step, const TemporalTiling& tiling) {
  const int64_t reach = step.window - 1;
  double computed = 0;
  for (int64_t k = 1; k <= tiling.degree; ++k)
    computed += static_cast<double>(tiling.tile_x + (tiling.degree - k) * reach) *
                static_cast<double>(tiling.tile_y + (tiling.degree - k) * reach);
  return computed /
         (static_cast<double>(tiling.tile_x * tiling.tile_y) * static_cast<double>(tiling.degree));
}

std::variant<ir::Program, std::string> fuse_steps_tiled(const ir::Program& program,
                                                        const TemporalTiling& tiling) {
  auto recognised = as_stencil_step_2d(program);
  if (auto* why = std::get_if<std::string>(&recognised))
    return *why;
  const StencilStep2D& step = std::get<StencilStep2D>(recognised);
  const int64_t t = tiling.degree;
  if (t < 1)
    return fmt::format("a temporal degree of {} computes nothing", t);
  if (step.boundary.kind == ir::Boundary::Kind::Constant && t > 1)
    return std::string("a constant boundary does not fuse steps (a step of constant windows is "
                       "not the constant)");
  // Clamp and mirror: two steps by pushed padding; more by re-clamping each intermediate region
  // at the grid's edges inside the tile (re-clamp-tile-edges).
  const bool reclamped = step.boundary.kind != ir::Boundary::Kind::Wrap && t >= 3;
  // One step (a remainder's launch) is the hoisted form with nothing hoisted: any boundary.
  const bool hoisted = step.boundary.kind == ir::Boundary::Kind::Wrap || t == 1 || reclamped;
  if (tiling.stage_input && !hoisted)
    return std::string("only the hoisted forms (wrap, or three steps or more) read a plain input "
                       "tile to stage");
  const int64_t reach = step.window - 1;
  // A mirrored edge reflects the points the region holds beyond the grid's edge into the tile;
  // with uneven reach, the halo on one side may be wider than the tile and the other halo.
  const int64_t uneven = (t - 1) * std::abs(step.pad_low - step.pad_high);
  if (reclamped && step.boundary.kind == ir::Boundary::Kind::Mirror &&
      (tiling.tile_x < uneven || tiling.tile_y < uneven))
    return std::string("a mirror boundary needs tiles as wide as the halo they reflect");
  const arith::Expr one(1), n(step.window);

  // The array the tiles are cut from, and the halo each tile carries on top of its outputs.
  ir::Expr source = step.grid;
  int64_t halo = 0;
  if (hoisted) {
    // t steps over the grid padded by t reaches: valid stencils for wrap (hoist-wrap-padding,
    // t - 1 times); for clamp and mirror, exact at the points inside the grid, each region
    // re-clamped at the grid's edges before the next step reads it.
    source = ir::pad_2d(arith::Expr(t * step.pad_low), arith::Expr(t * step.pad_high),
                        step.boundary, step.grid, program.loc);
    halo = t * reach;
  } else {
    // f(f(x)) = map2D(g, slide2D(n, 1, pad2D(b, map2D(g, slide2D(n, 1, pad2D(b, x))))))
    //         = map2D(g, slide2D(n, 1, map2D(g, pad2D(b, slide2D(n, 1, pad2D(b, x))))))
    // (pad-of-map): the tiles are cut from the windows of the first step, padded once more.
    ir::Expr first_windows = ir::slide_2d(
        n, one,
        ir::pad_2d(arith::Expr(step.pad_low), arith::Expr(step.pad_high), step.boundary, step.grid),
        program.loc);
    source = ir::pad_2d(arith::Expr(step.pad_low), arith::Expr(step.pad_high), step.boundary,
                        first_windows, program.loc);
    halo = reach;
  }
  const arith::Expr tile_w(tiling.tile_x + halo), tile_h(tiling.tile_y + halo);
  ir::Expr tiles = ir::call(
      ir::map(ir::transpose()),
      {ir::call(ir::slide(tile_h, arith::Expr(tiling.tile_y)),
                {ir::call(ir::map(ir::slide(tile_w, arith::Expr(tiling.tile_x))), {source})})});
  const ir::Type& tile_row_type = element_of(tiles.type());
  const ir::Type& tile_type = element_of(tile_row_type);

  // Work-group tiles: the points of each step's region shared by the work-items of a group in
  // local memory (a barrier between steps). Register tiles: one work-item computes its tile's
  // steps alone in private arrays (unrolled: registers), no barrier, the halo recomputed.
  const bool registers = tiling.memory == TemporalTiling::Memory::registers;
  auto points = [&](ir::Fun f) {
    return registers ? ir::map_seq(ir::map_seq(std::move(f)))
                     : ir::map_lcl(1, ir::map_lcl(0, std::move(f)));
  };
  auto keep = [&](ir::Fun f) {
    return registers ? ir::to_private(points(std::move(f))) : ir::to_local(points(std::move(f)));
  };
  const ir::ScalarKind kind = element_of(element_of(step.grid.type())).as<ir::ScalarType>()->kind;

  // re-clamp-tile-edges: the region of step k (the tile grown by `lo` points before and `hi`
  // after along y) holds the step's values at grid points, those outside the grid computed from
  // clamped reads and so wrong. Where the tile touches the grid's first (last) edge, the grid's
  // first (last) row is the region's row lo (its length - 1 - hi): the rows outside are replaced
  // by the boundary's remapping of the rows inside, a pad of the inner rows. Which of the four
  // views a tile reads is known at run time only (its edge code), so a pick of the four.
  auto reclamp_rows = [&](const ir::Expr& computed, const ir::Expr& edge, int64_t lo, int64_t hi) {
    // Bound to a parameter, so that the four views read one computed region (an expression
    // used four times would be generated four times).
    auto pick_rows = [&](const ir::Expr& region) {
      ir::Expr candidates = ir::zip_2d(edge_candidates(region, lo, hi, step.boundary));
      return ir::call(keep(pick_candidate(element_of(element_of(candidates.type())), edge, kind)),
                      {candidates});
    };
    return ir::call(lambda1(computed.type(), "region", pick_rows), {computed});
  };
  auto reclamp = [&](const ir::Expr& region, const ir::Expr& edge_y, const ir::Expr& edge_x,
                     int64_t steps_left) {
    const int64_t lo = steps_left * step.pad_low, hi = steps_left * step.pad_high;
    ir::Expr by_rows = reclamp_rows(region, edge_y, lo, hi);
    ir::Expr columns = ir::call(ir::transpose(), {by_rows});
    return ir::call(ir::transpose(), {reclamp_rows(columns, edge_x, lo, hi)});
  };

  auto fused_tile = [&](const ir::Expr& tile, const ir::Expr* edge_y, const ir::Expr* edge_x) {
    ir::Expr level = tile;
    if (hoisted) {
      if (tiling.stage_input)
        level = ir::call(keep(ir::id()), {level});
      for (int64_t k = 1; k < t; ++k) {
        level = ir::call(keep(step.point), {ir::slide_2d(n, one, level)});
        if (reclamped)
          level = reclamp(level, *edge_y, *edge_x, t - k);
      }
    } else {
      // The tile holds the first step's windows: their points are kept directly.
      level = ir::call(keep(step.point), {level});
    }
    return ir::call(points(step.point), {ir::slide_2d(n, one, level)});
  };
  auto map_tiles = [&](int dim, ir::Fun f) {
    return registers ? ir::map_glb(dim, std::move(f)) : ir::map_wrg(dim, std::move(f));
  };
  // Each tile with its edge codes along y and x, where regions are re-clamped.
  auto each_row = [&]() {
    const ir::Fun edge = tile_edge();
    auto edges = [&](const arith::Expr& count) { return ir::call(ir::generate(count, edge), {}); };
    ir::Expr rows_with_edges = ir::call(ir::zip(), {tiles, edges(length_of(tiles.type()))});
    auto per_row = [&](const ir::Expr& row) {
      const ir::Expr edge_y = ir::call(ir::get(1), {row});
      ir::Expr with_edges =
          ir::call(ir::zip(), {ir::call(ir::get(0), {row}), edges(length_of(tile_row_type))});
      auto per_tile = [&](const ir::Expr& pair) {
        const ir::Expr edge_x = ir::call(ir::get(1), {pair});
        return fused_tile(ir::call(ir::get(0), {pair}), &edge_y, &edge_x);
      };
      return ir::call(map_tiles(0, lambda1(element_of(with_edges.type()), "tile", per_tile)),
                      {with_edges});
    };
    return ir::call(map_tiles(1, lambda1(element_of(rows_with_edges.type()), "row", per_row)),
                    {rows_with_edges});
  };
  auto plain_tile = [&](const ir::Expr& tile) { return fused_tile(tile, nullptr, nullptr); };
  const ir::Expr per_tiles =
      reclamped
          ? each_row()
          : ir::call(map_tiles(1, map_tiles(0, lambda1(tile_type, "tile", plain_tile))), {tiles});
  ir::Expr grid =
      ir::call(ir::map(ir::join()),
               {ir::call(ir::join(), {ir::call(ir::map(ir::transpose()), {per_tiles})})});
  ir::Program fused = program;
  fused.body = grid;
  return fused;
}

} // namespace liftx::rewrite
