// OpenCL lowering rules: parallel and sequential maps, sequential reductions, coarsening and
// memory copies; and the registry of all rules.
#include "rewrite/rules.hpp"
#include "rewrite/rules/match.hpp"

#include <algorithm>

namespace liftx::rewrite {

using namespace match;
using Level = ir::ParallelLevel;

namespace {

void check_dim(const char* rule, int dim) {
  LIFTX_USER_CHECK(dim >= 0 && dim <= 2, "{}: the dimension must be 0, 1 or 2, got {}", rule, dim);
}

/// The first parallel map inside `f` that `forbidden` rejects, as a refusal.
std::optional<NoMatch> refuse_nested(const ir::Fun& f,
                                     const std::function<bool(const ir::Primitive&)>& forbidden) {
  for (const ir::Primitive* p : parallel_maps_inside(f))
    if (forbidden(*p))
      return NoMatch{fmt::format("the mapped function contains a {}", p->name)};
  return std::nullopt;
}

/// Shared shape of the map lowering rules: a plain map whose function computes becomes `lowered`.
RuleResult lower_map(const ir::Expr& site, const std::function<ir::Fun(ir::Fun)>& lowered) {
  auto m = as_unary_call_of<ir::Map>(site);
  if (!m)
    return NoMatch{"not a call of map"};
  if (!computes(m->fun->f))
    return NoMatch{"the mapped function does not compute (a data-layout map stays a map)"};
  return ir::call(lowered(m->fun->f), {m->arg()});
}

/// mapLcl(k-1)(...mapLcl0(id)) for k dimensions (mapSeq nests when `seq`).
std::optional<ir::Fun> copy_of_rank(int rank, bool seq) {
  if (rank < 1 || rank > 3)
    return std::nullopt;
  ir::Fun copy = ir::id();
  for (int d = 0; d < rank; ++d)
    copy = seq ? ir::map_seq(copy) : ir::map_lcl(d, copy);
  return copy;
}

bool is_copy_head(const ir::Fun& f) {
  return f.as<ir::ToLocal>() || f.as<ir::ToLocalPadded>() || f.as<ir::ToPrivate>() ||
         f.as<ir::ToGlobal>();
}

/// Wraps every argument of the site's call accepted by `wrap` (nullopt: leave it).
RuleResult copy_arguments(const ir::Expr& site,
                          const std::function<std::optional<ir::Expr>(const ir::Expr&)>& wrap,
                          std::string_view none) {
  const auto* c = site.as<ir::Call>();
  if (!c)
    return NoMatch{"not a call"};
  if (is_copy_head(c->fun))
    return NoMatch{"the call is already a copy"};
  std::vector<ir::Expr> args = c->args;
  bool changed = false;
  for (ir::Expr& a : args)
    if (auto copied = wrap(a)) {
      a = *copied;
      changed = true;
    }
  if (!changed)
    return NoMatch{std::string(none)};
  return ir::call(c->fun, std::move(args), c->loc);
}

} // namespace

Rule map_to_glb(int dim) {
  check_dim("map-to-mapGlb", dim);
  return make_rule(fmt::format("map-to-mapGlb{}", dim), fmt::format("map(f) => mapGlb{}(f)", dim),
                   {"opencl", "lowering"},
                   [dim](const ir::Expr& site, const RuleContext& context) -> RuleResult {
                     if (context.inside(Level::Global, dim))
                       return NoMatch{fmt::format("already inside a mapGlb{}", dim)};
                     if (context.inside(Level::Workgroup) || context.inside(Level::Local))
                       return NoMatch{"inside a work-group map"};
                     if (auto m = as_unary_call_of<ir::Map>(site)) {
                       if (auto r = refuse_nested(m->fun->f, [&](const ir::Primitive& p) {
                             return (p.level == Level::Global && p.dim == dim) ||
                                    p.level == Level::Workgroup || p.level == Level::Local;
                           }))
                         return *r;
                     }
                     return lower_map(site,
                                      [dim](ir::Fun f) { return ir::map_glb(dim, std::move(f)); });
                   });
}

Rule map_to_wrg(int dim) {
  check_dim("map-to-mapWrg", dim);
  return make_rule(
      fmt::format("map-to-mapWrg{}", dim), fmt::format("map(f) => mapWrg{}(f)", dim),
      {"opencl", "lowering"},
      [dim](const ir::Expr& site, const RuleContext& context) -> RuleResult {
        if (context.inside(Level::Global) || context.inside(Level::Local))
          return NoMatch{"inside a global or local map"};
        if (context.inside(Level::Workgroup, dim))
          return NoMatch{fmt::format("already inside a mapWrg{}", dim)};
        if (auto m = as_unary_call_of<ir::Map>(site)) {
          if (auto r = refuse_nested(m->fun->f, [&](const ir::Primitive& p) {
                return (p.level == Level::Workgroup && p.dim == dim) || p.level == Level::Global;
              }))
            return *r;
        }
        return lower_map(site, [dim](ir::Fun f) { return ir::map_wrg(dim, std::move(f)); });
      });
}

Rule map_to_lcl(int dim) {
  check_dim("map-to-mapLcl", dim);
  return make_rule(fmt::format("map-to-mapLcl{}", dim), fmt::format("map(f) => mapLcl{}(f)", dim),
                   {"opencl", "lowering"},
                   [dim](const ir::Expr& site, const RuleContext& context) -> RuleResult {
                     if (!context.inside(Level::Workgroup, dim))
                       return NoMatch{fmt::format("not inside a mapWrg{}", dim)};
                     if (context.inside(Level::Local, dim))
                       return NoMatch{fmt::format("already inside a mapLcl{}", dim)};
                     if (auto m = as_unary_call_of<ir::Map>(site)) {
                       if (auto r = refuse_nested(m->fun->f, [&](const ir::Primitive& p) {
                             return (p.level == Level::Local && p.dim == dim) ||
                                    p.level == Level::Global || p.level == Level::Workgroup;
                           }))
                         return *r;
                     }
                     return lower_map(site,
                                      [dim](ir::Fun f) { return ir::map_lcl(dim, std::move(f)); });
                   });
}

Rule map_to_seq() {
  return make_rule("map-to-mapSeq", "map(f) => mapSeq(f)   when f computes", {"opencl", "lowering"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     return lower_map(site, [](ir::Fun f) { return ir::map_seq(std::move(f)); });
                   });
}

Rule reduce_to_seq() {
  return make_rule("reduce-to-reduceSeq", "reduce(f, init) => reduceSeq(f, init)",
                   {"opencl", "lowering"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto r = as_unary_call_of<ir::Reduce>(site);
                     if (!r)
                       return NoMatch{"not a call of reduce"};
                     return ir::call(ir::reduce_seq(r->fun->f, r->fun->init), {r->arg()});
                   });
}

Rule chunk_outputs(int64_t n) {
  LIFTX_USER_CHECK(n >= 1, "chunk-outputs: the chunk size must be >= 1, got {}", n);
  return make_rule(fmt::format("chunk-outputs({})", n),
                   "mapGlb(d)(f, x) => join(mapGlb(d)(mapSeq(f), split(n, x)))",
                   {"opencl", "coarsening"},
                   [n](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     auto m = as_unary_call_of<ir::MapGlb>(site);
                     if (!m)
                       return NoMatch{"not a call of mapGlb"};
                     const ir::Expr& x = m->arg();
                     if (auto r = refuse_indivisible(length_of(x.type()), n, "the chunk size"))
                       return *r;
                     ir::Fun per_thread = ir::map_glb(m->fun->dim, ir::map_seq(m->fun->f));
                     ir::Expr chunks = ir::call(ir::split(n), {x});
                     return ir::call(ir::join(), {ir::call(per_thread, {chunks})});
                   });
}

Rule copy_to_local() {
  return make_rule(
      "copy-to-local",
      "g(..., x, ...) => g(..., toLocal(mapLcl(k-1)(...mapLcl0(id)))(x), ...)   x an array "
      "parameter, directly inside a mapWrg",
      {"opencl", "memory"}, [](const ir::Expr& site, const RuleContext& context) -> RuleResult {
        if (const ir::Primitive* p = context.innermost(); !p || p->level != Level::Workgroup)
          return NoMatch{"not directly inside a mapWrg"};
        if (const auto* c = site.as<ir::Call>();
            c && (c->fun.as<ir::MapWrg>() || c->fun.as<ir::MapGlb>()))
          return NoMatch{"the call is a work-group or global map: copy inside it instead"};
        return copy_arguments(
            site,
            [](const ir::Expr& a) -> std::optional<ir::Expr> {
              if (!a.as<ir::Param>() || !a.type().is_array())
                return std::nullopt;
              auto copy = copy_of_rank(array_rank(a.type()), false);
              if (!copy)
                return std::nullopt;
              return ir::call(ir::to_local(*copy), {a});
            },
            "no argument is an array parameter of at most 3 dimensions");
      });
}

Rule copy_to_private() {
  constexpr int64_t max_elements = 64;
  return make_rule(
      "copy-to-private",
      "g(x) => g(toPrivate(mapSeq(id))(x))   x a small constant-size array parameter (nested "
      "mapSeq for 2D), inside a parallel map",
      {"opencl", "memory"}, [](const ir::Expr& site, const RuleContext& context) -> RuleResult {
        if (!context.inside(Level::Global) && !context.inside(Level::Local))
          return NoMatch{"not inside a mapGlb or mapLcl"};
        return copy_arguments(
            site,
            [](const ir::Expr& a) -> std::optional<ir::Expr> {
              if (!a.as<ir::Param>() || !a.type().is_array())
                return std::nullopt;
              int rank = array_rank(a.type());
              if (rank > 2)
                return std::nullopt;
              int64_t elements = 1;
              for (const arith::Expr& len : array_shape(a.type())) {
                auto c = len.as_constant();
                if (!c || *c > max_elements)
                  return std::nullopt;
                elements *= *c;
              }
              if (elements > max_elements)
                return std::nullopt;
              return ir::call(ir::to_private(*copy_of_rank(rank, true)), {a});
            },
            "no argument is an array parameter of constant size (at most 64 elements, 2 "
            "dimensions)");
      });
}

Rule pad_local_rows(int64_t padding) {
  LIFTX_USER_CHECK(padding >= 1, "pad-local-rows: the padding must be at least 1, got {}", padding);
  return make_rule(
      fmt::format("pad-local-rows({})", padding),
      "toLocal(f)(x) => toLocalPadded(p, f)(x)   the local array has two or more dimensions of "
      "scalars; its rows are p elements longer in memory",
      {"opencl", "memory"}, [padding](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto c = as_call_of<ir::ToLocal>(site);
        if (!c)
          return NoMatch{"not a call of toLocal"};
        const ir::Type& type = site.type();
        if (ir::array_rank(type) < 2)
          return NoMatch{"the local array has fewer than two dimensions: no row to pad"};
        if (!ir::array_base(type).is_scalar())
          return NoMatch{"the local array's elements are not scalars"};
        return ir::call(ir::to_local_padded(arith::Expr(padding), c->fun->f), c->call->args);
      });
}

std::vector<Rule> all_rules() {
  return {split_join(4),
          map_fusion(),
          map_fission(),
          map_map_interchange(),
          moving_join(),
          slide_tiling(4),
          tile_stencil_1d(4),
          tile_stencil_2d(16, 8),
          tile_stencil_2d_zip(16, 8),
          transpose_transpose_id(),
          join_split_id(),
          split_join_id(),
          map_to_glb(0),
          map_to_glb(1),
          map_to_wrg(0),
          map_to_wrg(1),
          map_to_lcl(0),
          map_to_lcl(1),
          map_to_seq(),
          reduce_to_seq(),
          chunk_outputs(4),
          copy_to_local(),
          copy_to_private(),
          slide_window_1d(),
          slide_window_2d(),
          slide_window_2d_zip(),
          vectorise_outputs(4),
          vectorise_copy(4),
          vectorize_map(4)};
}

} // namespace liftx::rewrite
