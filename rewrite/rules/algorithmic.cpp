// Algorithmic rules: split-join, fusion, fission, interchange, moving join and stencil tiling.
#include "ir/derived.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/rules/match.hpp"

#include <algorithm>

namespace liftx::rewrite {

using namespace match;

namespace {

/// The step of a slide as a constant that divides the tile width `u`, or the reason it is not.
std::optional<NoMatch> refuse_tile(const arith::Expr& step, int64_t u, std::string_view what) {
  auto s = step.as_constant();
  if (!s)
    return NoMatch{fmt::format("the slide step {} is not a constant", step.to_string())};
  if (u % *s != 0)
    return NoMatch{fmt::format("the slide step {} does not divide the {} {}", *s, what, u)};
  return std::nullopt;
}

/// Overlapped 2D tiles of `uy` x `ux` windows of size n, step s:
/// map(transpose, slide(uy + n - s, uy, map(slide(ux + n - s, ux), x))). With n == s this is a
/// partition into uy x ux blocks.
ir::Expr tile_grid(const ir::Expr& x, const arith::Expr& n, const arith::Expr& s, int64_t ux,
                   int64_t uy) {
  ir::Expr rows = ir::call(ir::map(ir::slide(ux + n - s, ux)), {x});
  ir::Expr tiles = ir::call(ir::slide(uy + n - s, uy), {rows});
  return ir::call(ir::map(ir::transpose()), {tiles});
}

template <class M>
RuleResult fuse(const CallOf<M>& outer, ir::Fun (*rebuild)(ir::Fun)) {
  auto inner = as_unary_call_of<M>(outer.arg());
  if (!inner)
    return NoMatch{"the argument is not a map of the same kind"};
  const ir::Fun& f = outer.fun->f;
  const ir::Fun& g = inner->fun->f;
  const ir::Expr& x = inner->arg();
  ir::Fun fused = lambda1(element_of(x.type()), "y",
                          [&](const ir::Expr& y) { return ir::call(f, {ir::call(g, {y})}); });
  return ir::call(rebuild(fused), {x});
}

template <class M>
RuleResult fission(const CallOf<M>& m, ir::Fun (*rebuild)(ir::Fun)) {
  const ir::Lambda* l = m.fun->f.template as<ir::Lambda>();
  if (!l)
    return NoMatch{"the mapped function is not a lambda"};
  if (l->params.size() != 1)
    return NoMatch{"the lambda takes more than one parameter"};
  const auto* body = l->body.as<ir::Call>();
  if (!body || body->args.size() != 1)
    return NoMatch{"the lambda body is not a call of one argument"};
  const ir::Expr& y = l->params[0];
  if (uses_param(ir::free_params(body->fun), y))
    return NoMatch{"the outer function uses the lambda's parameter"};
  const ir::Expr& e = body->args[0];
  if (e.as<ir::Param>())
    return NoMatch{"nothing to split: the argument is the parameter itself"};
  if (!uses_param(ir::free_params(e), y))
    return NoMatch{"the argument does not use the lambda's parameter"};
  ir::Expr inner = ir::call(rebuild(ir::lambda({y}, e)), {m.arg()});
  return ir::call(rebuild(body->fun), {inner});
}

} // namespace

Rule split_join(int64_t n) {
  LIFTX_USER_CHECK(n >= 1, "split-join: the chunk size must be >= 1, got {}", n);
  return make_rule(fmt::format("split-join({})", n), "map(f, x) => join(map(map(f), split(n, x)))",
                   {"algorithmic"}, [n](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto m = as_unary_call_of<ir::Map>(site);
                     if (!m)
                       return NoMatch{"not a call of map"};
                     const ir::Expr& x = m->arg();
                     if (auto r = refuse_indivisible(length_of(x.type()), n, "the split size"))
                       return *r;
                     ir::Expr chunks = ir::call(ir::split(n), {x});
                     return ir::call(ir::join(), {ir::call(ir::map(ir::map(m->fun->f)), {chunks})});
                   });
}

Rule map_fusion() {
  return make_rule("map-fusion", "map(f, map(g, x)) => map(y => f(g(y)), x)   (mapSeq alike)",
                   {"algorithmic", "fusion"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     if (auto m = as_unary_call_of<ir::Map>(site))
                       return fuse(*m, &ir::map);
                     if (auto m = as_unary_call_of<ir::MapSeq>(site))
                       return fuse(*m, &ir::map_seq);
                     return NoMatch{"not a call of map or mapSeq"};
                   });
}

Rule map_fission() {
  return make_rule("map-fission", "map(y => f(e), x) => map(f, map(y => e, x))   (mapSeq alike)",
                   {"algorithmic", "fusion"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     if (auto m = as_unary_call_of<ir::Map>(site))
                       return fission(*m, &ir::map);
                     if (auto m = as_unary_call_of<ir::MapSeq>(site))
                       return fission(*m, &ir::map_seq);
                     return NoMatch{"not a call of map or mapSeq"};
                   });
}

Rule map_map_interchange() {
  return make_rule("map-map-interchange", "map(map(f), x) => transpose(map(map(f), transpose(x)))",
                   {"algorithmic"}, [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto m = as_map_2d(site);
                     if (auto* no = std::get_if<NoMatch>(&m))
                       return *no;
                     const auto& [f, x] = std::get<Map2D>(m);
                     ir::Expr swapped = ir::call(ir::transpose(), {x});
                     ir::Expr mapped = ir::call(ir::map(ir::map(f)), {swapped});
                     return ir::call(ir::transpose(), {mapped});
                   });
}

Rule moving_join() {
  return make_rule("moving-join", "map(f, join(x)) => join(map(map(f), x))", {"algorithmic"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto m = as_unary_call_of<ir::Map>(site);
                     if (!m)
                       return NoMatch{"not a call of map"};
                     auto j = as_unary_call_of<ir::Join>(m->arg());
                     if (!j)
                       return NoMatch{"the argument is not a join"};
                     ir::Expr mapped = ir::call(ir::map(ir::map(m->fun->f)), {j->arg()});
                     return ir::call(ir::join(), {mapped});
                   });
}

Rule slide_tiling(int64_t u) {
  LIFTX_USER_CHECK(u >= 1, "slide-tiling: the tile size must be >= 1, got {}", u);
  return make_rule(fmt::format("slide-tiling({})", u),
                   "slide(n, s, x) => join(map(slide(n, s), slide(u + n - s, u, x)))",
                   {"algorithmic", "stencil", "tiling"},
                   [u](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto s = as_unary_call_of<ir::Slide>(site);
                     if (!s)
                       return NoMatch{"not a call of slide"};
                     const auto& [size, step] = *s->fun;
                     if (auto r = refuse_tile(step, u, "tile size"))
                       return *r;
                     ir::Expr tiles = ir::call(ir::slide(u + size - step, u), {s->arg()});
                     ir::Expr windows = ir::call(ir::map(ir::slide(size, step)), {tiles});
                     return ir::call(ir::join(), {windows});
                   });
}

Rule tile_stencil_1d(int64_t u) {
  LIFTX_USER_CHECK(u >= 1, "tile-stencil-1d: the tile size must be >= 1, got {}", u);
  return make_rule(
      fmt::format("tile-stencil-1d({})", u),
      "map(f, slide(n, s, x)) => join(map(t => map(f, slide(n, s, t)), slide(u + n - s, u, x)))",
      {"algorithmic", "stencil", "tiling"},
      [u](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto m = as_unary_call_of<ir::Map>(site);
        if (!m)
          return NoMatch{"not a call of map"};
        auto s = as_unary_call_of<ir::Slide>(m->arg());
        if (!s)
          return NoMatch{"the argument is not a slide"};
        const auto& [size, step] = *s->fun;
        if (auto r = refuse_tile(step, u, "tile size"))
          return *r;
        ir::Expr tiles = ir::call(ir::slide(u + size - step, u), {s->arg()});
        const ir::Fun& f = m->fun->f;
        // Init-captures: clang 14 (the fuzz build) cannot capture structured bindings.
        ir::Fun work = lambda1(
            element_of(tiles.type()), "tile", [&, size = size, step = step](const ir::Expr& t) {
              return ir::call(ir::map(f), {ir::call(ir::slide(size, step), {t})});
            });
        return ir::call(ir::join(), {ir::call(ir::map(work), {tiles})});
      });
}

Rule tile_stencil_2d(int64_t ux, int64_t uy) {
  LIFTX_USER_CHECK(ux >= 1 && uy >= 1, "tile-stencil-2d: tile sizes must be >= 1, got {}x{}", ux,
                   uy);
  return make_rule(
      fmt::format("tile-stencil-2d({},{})", ux, uy),
      "map(map(f), slide2D(n, s, x)) => map(join, join(map(transpose, map(map(t => map(map(f), "
      "slide2D(n, s, t))), map(transpose, slide(uy + n - s, uy, map(slide(ux + n - s, ux), "
      "x)))))))",
      {"algorithmic", "stencil", "tiling"},
      [ux, uy](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto m = as_map_2d(site);
        if (auto* no = std::get_if<NoMatch>(&m))
          return *no;
        const auto& [f, windows] = std::get<Map2D>(m);
        auto slid = as_slide_2d(windows);
        if (!slid)
          return NoMatch{"the argument is not a slide2D"};
        if (auto r = refuse_tile(slid->step, ux, "tile width"))
          return *r;
        if (auto r = refuse_tile(slid->step, uy, "tile height"))
          return *r;
        ir::Expr tiles = tile_grid(slid->grid, slid->size, slid->step, ux, uy);
        ir::Fun work =
            // Init-captures: clang 14 (the fuzz build) cannot capture structured bindings.
            lambda1(element_of(element_of(tiles.type())), "tile", [&, f = f](const ir::Expr& t) {
              return ir::call(ir::map_2d(f), {ir::slide_2d(slid->size, slid->step, t)});
            });
        return untile(ir::call(ir::map_2d(work), {tiles}));
      });
}

Rule tile_stencil_3d(int64_t ux, int64_t uy, int64_t uz) {
  LIFTX_USER_CHECK(ux >= 1 && uy >= 1 && uz >= 1,
                   "tile-stencil-3d: tile sizes must be >= 1, got {}x{}x{}", ux, uy, uz);
  return make_rule(
      fmt::format("tile-stencil-3d({},{},{})", ux, uy, uz),
      "map3D(f, slide3D(n, s, x)) => untile3D(map3D(t => map3D(f, slide3D(n, s, t)), "
      "slide3D((uz + n - s, uz), (uy + n - s, uy), (ux + n - s, ux), x)))   (also "
      "map3D(f, zip3D(slide3D(n, s, a), b, ...)): overlapped tiles of every slid grid, plain tiles "
      "of the others)",
      {"algorithmic", "stencil", "tiling"},
      [ux, uy, uz](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto mapped = as_map_kd(site, 3);
        if (!mapped)
          return NoMatch{"not a call of map3D"};
        const ir::Fun& f = mapped->first;
        const ir::Expr& arg = mapped->second;
        std::optional<ZipKD> zipped = as_zip_kd(arg);
        if (zipped && zipped->rank != 3)
          zipped.reset();
        const std::vector<ir::Expr> grids = zipped ? zipped->arrays : std::vector{arg};
        std::vector<std::optional<Slide3D>> slid;
        for (const ir::Expr& g : grids)
          slid.push_back(as_slide_3d(g));
        if (std::none_of(slid.begin(), slid.end(), [](const auto& s) { return s.has_value(); }))
          return NoMatch{zipped ? "no zipped grid is a slide3D" : "the argument is not a slide3D"};
        std::vector<ir::Expr> tiled;
        for (size_t i = 0; i < grids.size(); ++i) {
          if (const std::optional<Slide3D>& s = slid[i]) {
            for (auto [u, what] : {std::pair{ux, "tile width"}, std::pair{uy, "tile height"},
                                   std::pair{uz, "tile depth"}})
              if (auto r = refuse_tile(s->step, u, what))
                return *r;
            // Overlapped tiles are the windows of a slide3D with the tile's extent and step.
            const arith::Expr& n = s->size;
            const arith::Expr& st = s->step;
            tiled.push_back(
                ir::slide_3d({uz + n - st, uz}, {uy + n - st, uy}, {ux + n - st, ux}, s->grid));
          } else {
            if (array_rank(grids[i].type()) < 3)
              return NoMatch{fmt::format("zipped grid {} is not 3-dimensional", i)};
            tiled.push_back(ir::slide_3d({uz, uz}, {uy, uy}, {ux, ux}, grids[i]));
          }
        }
        std::vector<ir::Expr> params;
        std::vector<ir::Expr> inner;
        for (size_t i = 0; i < tiled.size(); ++i) {
          ir::Expr t = ir::param(element_of(element_of(element_of(tiled[i].type()))),
                                 slid[i] ? "tile" : "ptile");
          params.push_back(t);
          inner.push_back(slid[i] ? ir::slide_3d(slid[i]->size, slid[i]->step, t) : t);
        }
        ir::Expr body =
            ir::call(ir::map_3d(f), {zipped ? zip_k(3, std::move(inner)) : inner.front()});
        ir::Fun work = ir::lambda(std::move(params), body);
        return untile_3d(
            ir::call(ir::map_3d(work), {zipped ? zip_k(3, std::move(tiled)) : tiled.front()}));
      });
}

Rule zip_of_maps() {
  return make_rule(
      "zip-of-maps",
      "zipKD(mapKD(f1, x1), ..., mapKD(fn, xn)) => mapKD(p => tuple(f1(p.1), ..., fn(p.n)), "
      "zipKD(x1, ..., xn))",
      {"algorithmic", "fusion"}, [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        std::optional<ZipKD> zipped = as_zip_kd(site);
        if (!zipped)
          return NoMatch{"not a zip, zip2D or zip3D"};
        // Maps over equal arrays share them (the same windows feed several results, as in
        // zip2D(map2D(f, slide2D(3, 1, g)), map2D(h, slide2D(3, 1, g)))): the fused nest then
        // has the form of a one-result stencil, which the tiling rules recognise.
        std::vector<ir::Fun> fs;
        std::vector<size_t> input_of;
        std::vector<ir::Expr> xs;
        for (const ir::Expr& a : zipped->arrays) {
          auto m = as_map_kd(a, zipped->rank);
          if (!m)
            return NoMatch{
                fmt::format("a zipped array is not a {}D map: {}", zipped->rank, ir::print(a))};
          if (!computes(m->first))
            return NoMatch{"a zipped map only rearranges data (a view: nothing to fuse)"};
          fs.push_back(m->first);
          auto same = std::find_if(xs.begin(), xs.end(), [&](const ir::Expr& x) {
            return ir::alpha_equal(x, m->second);
          });
          input_of.push_back(static_cast<size_t>(same - xs.begin()));
          if (same == xs.end())
            xs.push_back(m->second);
        }
        const bool shared = xs.size() == 1;
        ir::Expr inputs = shared ? xs.front() : zip_k(zipped->rank, xs);
        ir::Type point = inputs.type();
        for (int k = 0; k < zipped->rank; ++k)
          point = element_of(point);
        ir::Fun each = lambda1(point, "p", [&](const ir::Expr& p) {
          std::vector<ir::Expr> results;
          for (size_t i = 0; i < fs.size(); ++i) {
            ir::Expr input = shared ? p : ir::call(ir::get(static_cast<int>(input_of[i])), {p});
            results.push_back(ir::call(fs[i], {input}));
          }
          return ir::call(ir::tuple(), std::move(results));
        });
        return ir::call(map_k(zipped->rank, each), {inputs});
      });
}

Rule tile_stencil_2d_zip(int64_t ux, int64_t uy) {
  LIFTX_USER_CHECK(ux >= 1 && uy >= 1, "tile-stencil-2d-zip: tile sizes must be >= 1, got {}x{}",
                   ux, uy);
  return make_rule(
      fmt::format("tile-stencil-2d-zip({},{})", ux, uy),
      "map(map(f), zip2D(slide2D(n, s, a), b, ...)) => map(join, join(map(transpose, "
      "map(map((ta, tb, ...) => map(map(f), zip2D(slide2D(n, s, ta), tb, ...))), "
      "zip2D(overlapped tiles of a, uy x ux tiles of b, ...)))))",
      {"algorithmic", "stencil", "tiling"},
      [ux, uy](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto m = as_map_2d(site);
        if (auto* no = std::get_if<NoMatch>(&m))
          return *no;
        const auto& [f, zipped] = std::get<Map2D>(m);
        auto grids = as_zip_2d(zipped);
        if (!grids)
          return NoMatch{"the argument is not a zip2D"};
        // Every slid grid gets overlapped tiles (several fields read with a
        // neighbourhood each, as a shallow-water step), the others plain tiles.
        std::vector<std::optional<Slide2D>> slid;
        for (const ir::Expr& g : *grids)
          slid.push_back(as_slide_2d(g));
        if (std::none_of(slid.begin(), slid.end(), [](const auto& s) { return s.has_value(); }))
          return NoMatch{"no zipped grid is a slide2D"};
        for (const std::optional<Slide2D>& s : slid) {
          if (!s)
            continue;
          if (auto r = refuse_tile(s->step, ux, "tile width"))
            return *r;
          if (auto r = refuse_tile(s->step, uy, "tile height"))
            return *r;
        }
        std::vector<ir::Expr> tiled;
        for (size_t i = 0; i < grids->size(); ++i) {
          if (const std::optional<Slide2D>& s = slid[i]) {
            tiled.push_back(tile_grid(s->grid, s->size, s->step, ux, uy));
          } else {
            const ir::Type& t = (*grids)[i].type();
            if (array_rank(t) < 2)
              return NoMatch{fmt::format("zipped grid {} is not 2-dimensional", i)};
            tiled.push_back(tile_grid((*grids)[i], 1, 1, ux, uy));
          }
        }
        std::vector<ir::Expr> params;
        std::vector<ir::Expr> inner_grids;
        for (size_t i = 0; i < tiled.size(); ++i) {
          ir::Expr t =
              ir::param(element_of(element_of(tiled[i].type())), slid[i] ? "tile" : "ptile");
          params.push_back(t);
          inner_grids.push_back(slid[i] ? ir::slide_2d(slid[i]->size, slid[i]->step, t) : t);
        }
        ir::Expr body = ir::call(ir::map_2d(f), {ir::zip_2d(std::move(inner_grids))});
        ir::Fun work = ir::lambda(std::move(params), body);
        return untile(ir::call(ir::map_2d(work), {ir::zip_2d(std::move(tiled))}));
      });
}

} // namespace liftx::rewrite
