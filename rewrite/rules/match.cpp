#include "rewrite/rules/match.hpp"

#include "support/error.hpp"

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

std::optional<std::vector<ir::Expr>> as_zip_3d(const ir::Expr& e) {
  auto spread = as_unary_call_of<ir::Map>(e);
  const auto* inner = spread ? spread->fun->f.as<ir::Map>() : nullptr;
  if (!inner || !inner->f.as<ir::Zip>())
    return std::nullopt;
  return as_zip_2d(spread->arg());
}

std::optional<ir::Fun> as_map_3d_fun(const ir::Expr& site) {
  auto m = as_unary_call_of<ir::Map>(site);
  const auto* m2 = m ? m->fun->f.as<ir::Map>() : nullptr;
  const auto* m3 = m2 ? m2->f.as<ir::Map>() : nullptr;
  if (!m3)
    return std::nullopt;
  return m3->f;
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
