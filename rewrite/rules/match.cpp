#include "rewrite/rules/match.hpp"

#include "ir/derived.hpp"
#include "support/error.hpp"

#include <algorithm>

namespace liftx::rewrite::match {

std::optional<Slide2D> as_slide_2d(const ir::Expr& e) {
  auto swap = as_unary_call_of<ir::Map>(e);
  if (!swap || !swap->fun->f.as<ir::Transpose>())
    return std::nullopt;
  auto outer = as_unary_call_of<ir::Slide>(swap->arg());
  if (!outer)
    return std::nullopt;
  auto rows = as_unary_call_of<ir::Map>(outer->arg());
  if (!rows)
    return std::nullopt;
  const auto* inner = rows->fun->f.as<ir::Slide>();
  if (!inner || inner->size != outer->fun->size || inner->step != outer->fun->step)
    return std::nullopt;
  return Slide2D{inner->size, inner->step, rows->arg()};
}

std::optional<std::vector<ir::Expr>> as_zip_2d(const ir::Expr& e) {
  auto spread = as_unary_call_of<ir::Map>(e);
  if (!spread || !spread->fun->f.as<ir::Zip>())
    return std::nullopt;
  auto zipped = as_call_of<ir::Zip>(spread->arg());
  if (!zipped)
    return std::nullopt;
  return zipped->call->args;
}

namespace {

bool is_computing_head(const ir::Fun& g) {
  const ir::Primitive* p = ir::primitive_of(g);
  return p ? p->computes : g.as<ir::UserFun>() != nullptr;
}

bool search_fun(const ir::Fun& f, const std::function<bool(const ir::Fun&)>& pred);

bool search_expr(const ir::Expr& e, const std::function<bool(const ir::Fun&)>& pred) {
  bool found = false;
  ir::for_each_child(
      e, [&](const ir::Fun& g) { found = found || search_fun(g, pred); },
      [&](const ir::Expr& x) { found = found || search_expr(x, pred); });
  return found;
}

bool search_fun(const ir::Fun& f, const std::function<bool(const ir::Fun&)>& pred) {
  if (pred(f))
    return true;
  bool found = false;
  ir::for_each_child(
      f, [&](const ir::Fun& g) { found = found || search_fun(g, pred); },
      [&](const ir::Expr& x) { found = found || search_expr(x, pred); });
  return found;
}

} // namespace

std::optional<std::pair<Slide2D, size_t>> find_slide_2d(const std::vector<ir::Expr>& grids) {
  for (size_t i = 0; i < grids.size(); ++i)
    if (auto slid = as_slide_2d(grids[i]))
      return std::make_pair(*slid, i);
  return std::nullopt;
}

std::optional<Slide3D> as_slide_3d(const ir::Expr& e) {
  auto swap_inner = as_unary_call_of<ir::Map>(e);
  if (!swap_inner)
    return std::nullopt;
  const auto* inner_map = swap_inner->fun->f.as<ir::Map>();
  if (!inner_map || !inner_map->f.as<ir::Transpose>())
    return std::nullopt;
  auto swap_outer = as_unary_call_of<ir::Map>(swap_inner->arg());
  if (!swap_outer || !swap_outer->fun->f.as<ir::Transpose>())
    return std::nullopt;
  auto planes = as_unary_call_of<ir::Slide>(swap_outer->arg());
  if (!planes)
    return std::nullopt;
  auto per_plane = as_unary_call_of<ir::Map>(planes->arg());
  if (!per_plane)
    return std::nullopt;
  const auto* l = per_plane->fun->f.as<ir::Lambda>();
  if (!l || l->params.size() != 1)
    return std::nullopt;
  auto slid = as_slide_2d(l->body);
  if (!slid || !ir::alpha_equal(slid->grid, l->params[0]) || slid->size != planes->fun->size ||
      slid->step != planes->fun->step)
    return std::nullopt;
  return Slide3D{slid->size, slid->step, per_plane->arg()};
}

std::optional<ZipKD> as_zip_kd(const ir::Expr& e) {
  if (auto z = as_call_of<ir::Zip>(e); z && z->call->args.size() >= 2)
    return ZipKD{1, z->call->args};
  auto outer = as_unary_call_of<ir::Map>(e);
  if (!outer)
    return std::nullopt;
  // map^(K-1)(zip) over a zip(K-1)D.
  int maps = 1;
  ir::Fun f = outer->fun->f;
  while (const auto* m = f.as<ir::Map>()) {
    f = m->f;
    ++maps;
  }
  if (!f.as<ir::Zip>())
    return std::nullopt;
  std::optional<ZipKD> inner = as_zip_kd(outer->arg());
  if (!inner || inner->rank != maps)
    return std::nullopt;
  return ZipKD{maps + 1, inner->arrays};
}

ir::Fun map_k(int rank, ir::Fun f) {
  for (int k = 0; k < rank; ++k)
    f = ir::map(std::move(f));
  return f;
}

ir::Expr plane_neighbourhoods(const ir::Expr& planes, const arith::Expr& n, const arith::Expr& s) {
  ir::Fun plane_windows = lambda1(element_of(planes.type()), "p",
                                  [&](const ir::Expr& p) { return ir::slide_2d(n, s, p); });
  ir::Expr windows = ir::call(ir::map(plane_windows), {planes});
  return ir::call(ir::map(ir::transpose()), {ir::call(ir::transpose(), {windows})});
}

ir::Expr untile(const ir::Expr& tiled_outputs) {
  ir::Expr rows = ir::call(ir::map(ir::transpose()), {tiled_outputs});
  return ir::call(ir::map(ir::join()), {ir::call(ir::join(), {rows})});
}

ir::Expr untile_3d(const ir::Expr& tiled_outputs) {
  // [tz][ty][tx][z][y][x] -> [tz][ty][z][tx][y][x] -> [tz][z][ty][tx][y][x] -> [Z][ty][tx][y][x]
  ir::Expr a = ir::call(ir::map(ir::map(ir::transpose())), {tiled_outputs});
  ir::Expr b = ir::call(ir::join(), {ir::call(ir::map(ir::transpose()), {a})});
  // -> [Z][ty][y][tx][x] -> [Z][Y][tx][x] -> [Z][Y][X]
  ir::Expr c = ir::call(ir::map(ir::map(ir::transpose())), {b});
  ir::Expr d = ir::call(ir::map(ir::join()), {c});
  return ir::call(ir::map(ir::map(ir::join())), {d});
}

ir::Expr zip_k(int rank, std::vector<ir::Expr> arrays) {
  if (rank == 1)
    return ir::call(ir::zip(), std::move(arrays));
  return rank == 2 ? ir::zip_2d(std::move(arrays)) : ir::zip_3d(std::move(arrays));
}

std::optional<std::pair<ir::Fun, ir::Expr>> as_map_kd(const ir::Expr& e, int rank) {
  auto m = as_unary_call_of<ir::Map>(e);
  if (!m)
    return std::nullopt;
  ir::Fun f = m->fun->f;
  for (int k = 1; k < rank; ++k) {
    const auto* inner = f.as<ir::Map>();
    if (!inner)
      return std::nullopt;
    f = inner->f;
  }
  return std::make_pair(f, m->arg());
}

std::variant<Map2D, NoMatch> as_map_2d(const ir::Expr& site) {
  auto outer = as_unary_call_of<ir::Map>(site);
  if (!outer)
    return NoMatch{"not a call of map"};
  const auto* inner = outer->fun->f.as<ir::Map>();
  if (!inner)
    return NoMatch{"the mapped function is not a map"};
  return Map2D{inner->f, outer->arg()};
}

bool computes(const ir::Fun& f) {
  return search_fun(f, is_computing_head);
}
bool computes(const ir::Expr& e) {
  return search_expr(e, is_computing_head);
}

bool contains_fun(const ir::Fun& f, const std::function<bool(const ir::Fun&)>& pred) {
  return search_fun(f, pred);
}

std::vector<const ir::Primitive*> parallel_maps_inside(const ir::Fun& f) {
  std::vector<const ir::Primitive*> maps;
  search_fun(f, [&](const ir::Fun& g) {
    const ir::Primitive* p = ir::primitive_of(g);
    if (p && p->parallel())
      maps.push_back(p);
    return false;
  });
  return maps;
}

ir::Fun lambda1(const ir::Type& t, const std::string& hint,
                const std::function<ir::Expr(const ir::Expr&)>& body) {
  ir::Expr p = ir::param(t, hint);
  return ir::lambda({p}, body(p));
}

bool same_param(const ir::Expr& a, const ir::Expr& b) {
  const auto *x = a.as<ir::Param>(), *y = b.as<ir::Param>();
  return a.same_as(b) || (x && y && x->id == y->id);
}

bool uses_param(const std::vector<ir::Expr>& free, const ir::Expr& p) {
  return std::any_of(free.begin(), free.end(), [&](const ir::Expr& q) { return same_param(q, p); });
}

ir::Expr join_of(ir::Expr e) {
  return ir::call(ir::join(), {std::move(e)});
}
ir::Expr transpose_of(ir::Expr e) {
  return ir::call(ir::transpose(), {std::move(e)});
}
ir::Expr split_of(arith::Expr n, ir::Expr e) {
  return ir::call(ir::split(std::move(n)), {std::move(e)});
}

const ir::Type& element_of(const ir::Type& t) {
  const auto* a = t.as<ir::ArrayType>();
  LIFTX_INTERNAL_CHECK(a != nullptr, "expected an array type, got {}", t.to_string());
  return a->element;
}

const arith::Expr& length_of(const ir::Type& t) {
  const auto* a = t.as<ir::ArrayType>();
  LIFTX_INTERNAL_CHECK(a != nullptr, "expected an array type, got {}", t.to_string());
  return a->length;
}

std::optional<NoMatch> refuse_indivisible(const arith::Expr& length, int64_t n,
                                          std::string_view what) {
  if (auto c = length.as_constant(); c && *c % n != 0)
    return NoMatch{fmt::format("{} {} does not divide the length {}", what, n, *c)};
  return std::nullopt;
}

Rule make_rule(std::string name, std::string doc, std::vector<std::string> labels,
               std::function<RuleResult(const ir::Expr&, const RuleContext&)> apply) {
  auto guarded = [apply = std::move(apply)](const ir::Expr& site,
                                            const RuleContext& context) -> RuleResult {
    try {
      return apply(site, context);
    } catch (const UserError& e) {
      return NoMatch{fmt::format("the rewrite does not type-check: {}", e.message())};
    }
  };
  return Rule{std::move(name), std::move(doc), std::move(labels), std::move(guarded)};
}

} // namespace liftx::rewrite::match
