// Register and vector rules: sliding windows kept in registers (Lift's mapSeqSlide rules) and
// vector loads/stores (Lift's vectorize rules).
#include "ir/derived.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/rules/match.hpp"

namespace liftx::rewrite {

using namespace match;

namespace {

/// The windows of one output row, `transpose(map(slide(n, s), rows))`: n rows become the row of
/// n x n neighbourhoods.
ir::Expr row_windows(const ir::Expr& rows, const arith::Expr& n, const arith::Expr& s) {
  ir::Expr slid = ir::call(ir::map(ir::slide(n, s)), {rows});
  return ir::call(ir::transpose(), {slid});
}

bool is_vectorisable_scalar(const ir::Type& t) {
  const auto* s = t.as<ir::ScalarType>();
  return s && s->kind != ir::ScalarKind::Bool;
}

bool is_scalar_array(const ir::Type& t) {
  const auto* a = t.as<ir::ArrayType>();
  return a && is_vectorisable_scalar(a->element);
}

/// The number of components when `t` is an array of tuples of (non-bool) scalars, else 0.
size_t scalar_tuple_components(const ir::Type& t) {
  const auto* a = t.as<ir::ArrayType>();
  const auto* tuple = a ? a->element.as<ir::TupleType>() : nullptr;
  if (!tuple || tuple->elements.empty())
    return 0;
  for (const ir::Type& e : tuple->elements)
    if (!is_vectorisable_scalar(e))
      return 0;
  return tuple->elements.size();
}

std::optional<NoMatch> refuse_width(int width) {
  if (width != 2 && width != 4 && width != 8 && width != 16)
    return NoMatch{fmt::format("{} is not an OpenCL vector width", width)};
  return std::nullopt;
}

} // namespace

Rule slide_window_1d() {
  return make_rule("slide-window-1d", "map(f, slide(n, s, x)) => mapSeqSlide(f, n, s, x)",
                   {"opencl", "registers", "stencil"},
                   [](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     std::optional<ir::Fun> f;
                     const ir::Expr* x = nullptr;
                     if (auto m = as_unary_call_of<ir::Map>(site)) {
                       f = m->fun->f;
                       x = &m->arg();
                     } else if (auto q = as_unary_call_of<ir::MapSeq>(site)) {
                       f = q->fun->f;
                       x = &q->arg();
                     } else {
                       return NoMatch{"not a call of map or mapSeq"};
                     }
                     if (!computes(*f))
                       return NoMatch{"the mapped function does not compute"};
                     auto slid = as_unary_call_of<ir::Slide>(*x);
                     if (!slid)
                       return NoMatch{"the argument is not a slide"};
                     return ir::call(ir::map_seq_slide(*f, slid->fun->size, slid->fun->step),
                                     {slid->arg()});
                   });
}

Rule slide_window_2d() {
  return make_rule(
      "slide-window-2d",
      "map(map(f), slide2D(n, s, x)) => mapSeqSlide(rows => map(f, transpose(map(slide(n, s), "
      "rows))), n, s, x)",
      {"opencl", "registers", "stencil"},
      [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto m = as_map_2d(site);
        if (auto* no = std::get_if<NoMatch>(&m))
          return *no;
        const auto& [f, x] = std::get<Map2D>(m);
        auto slid = as_slide_2d(x);
        if (!slid)
          return NoMatch{"the argument is not a slide2D"};
        const arith::Expr n = slid->size;
        const arith::Expr s = slid->step;
        ir::Type rows_type = ir::Type::array(element_of(slid->grid.type()), n);
        // Init-captures: clang 14 (the fuzz build) cannot capture structured bindings.
        ir::Fun per_step = lambda1(rows_type, "rows", [&, f = f](const ir::Expr& rows) {
          return ir::call(ir::map(f), {row_windows(rows, n, s)});
        });
        return ir::call(ir::map_seq_slide(per_step, n, s), {slid->grid});
      });
}

Rule slide_window_2d_zip() {
  return make_rule(
      "slide-window-2d-zip",
      "map(map(f), zip2D(slide2D(n, 1, a), b, ...)) => mapSeqSlide(w => map(f, zip(rows of "
      "windows of map(get(0), w), get(1, w[n-1]), ...)), n, 1, zip(a, pad(n-1, 0, clamp, b), ...))",
      {"opencl", "registers", "stencil"},
      [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto m = as_map_2d(site);
        if (auto* no = std::get_if<NoMatch>(&m))
          return *no;
        const auto& [f, x] = std::get<Map2D>(m);
        auto grids = as_zip_2d(x);
        if (!grids)
          return NoMatch{"the argument is not a zip2D"};
        auto found = find_slide_2d(*grids);
        if (!found)
          return NoMatch{"no zipped grid is a slide2D"};
        const std::optional<Slide2D> slid = found->first;
        const size_t slid_index = found->second;
        if (slid->step != arith::Expr(1))
          return NoMatch{"the slide2D's step is not 1"};
        const arith::Expr n = slid->size;
        // The point-wise grids enter the window with their row aligned to the newest slot
        // (n - 1): padding them by n - 1 rows in front keeps the zip's lengths equal, and the
        // padded rows are read only while the window fills.
        std::vector<ir::Expr> zipped;
        for (size_t i = 0; i < grids->size(); ++i) {
          if (i == slid_index) {
            zipped.push_back(slid->grid);
            continue;
          }
          const ir::Expr& g = (*grids)[i];
          if (array_rank(g.type()) < 2)
            return NoMatch{fmt::format("zipped grid {} is not 2-dimensional", i)};
          zipped.push_back(
              ir::call(ir::pad(n - 1, 0, ir::Boundary{ir::Boundary::Kind::Clamp, 0.0f}), {g}));
        }
        ir::Expr rows = ir::call(ir::zip(), zipped);
        ir::Type window_type = ir::Type::array(element_of(rows.type()), n);
        // Init-captures: clang 14 (the fuzz build) cannot capture structured bindings.
        ir::Fun per_step = lambda1(window_type, "w", [&, f = f](const ir::Expr& w) {
          std::vector<ir::Expr> parts;
          for (size_t i = 0; i < zipped.size(); ++i) {
            if (i == slid_index) {
              ir::Expr a_rows = ir::call(ir::map(ir::get(static_cast<int>(i))), {w});
              parts.push_back(row_windows(a_rows, n, 1));
            } else {
              parts.push_back(
                  ir::call(ir::get(static_cast<int>(i)), {ir::call(ir::at(n - 1), {w})}));
            }
          }
          return ir::call(ir::map(f), {ir::call(ir::zip(), parts)});
        });
        return ir::call(ir::map_seq_slide(per_step, n, 1), {rows});
      });
}

Rule slide_window_3d() {
  return make_rule(
      "slide-window-3d",
      "map3D(f, slide3D(n, s, x)) => mapSeqSlide(planes => map2D(f, map(transpose, "
      "transpose(map(p => slide2D(n, s, p), planes)))), n, s, x)   (also map3D(f, "
      "zip3D(slide3D(n, 1, a), b, ...)): the point-wise grids enter the window padded by n - 1 "
      "planes in front, read from its newest plane)",
      {"opencl", "registers", "stencil"},
      [](const ir::Expr& site, const RuleContext&) -> RuleResult {
        auto mapped = as_map_kd(site, 3);
        if (!mapped)
          return NoMatch{"not a call of map3D"};
        const ir::Fun f = mapped->first;
        const ir::Expr& arg = mapped->second;
        std::optional<ZipKD> zipped = as_zip_kd(arg);
        if (zipped && zipped->rank != 3)
          zipped.reset();
        const std::vector<ir::Expr> grids = zipped ? zipped->arrays : std::vector{arg};
        std::vector<std::optional<Slide3D>> slid;
        std::optional<Slide3D> first;
        for (const ir::Expr& g : grids) {
          slid.push_back(as_slide_3d(g));
          if (slid.back() && !first)
            first = slid.back();
        }
        if (!first)
          return NoMatch{zipped ? "no zipped grid is a slide3D" : "the argument is not a slide3D"};
        const arith::Expr n = first->size;
        const arith::Expr s = first->step;
        for (const std::optional<Slide3D>& other : slid)
          if (other && (other->size != n || other->step != s))
            return NoMatch{"the zipped slide3Ds have different windows"};
        if (zipped && s != arith::Expr(1))
          return NoMatch{"the slide3D's step is not 1"};
        // What the window slides over: the slid grids, and the point-wise ones padded by n - 1
        // planes in front so that plane z of them enters with the window of output z.
        std::vector<ir::Expr> slid_over;
        for (size_t i = 0; i < grids.size(); ++i) {
          if (slid[i]) {
            slid_over.push_back(slid[i]->grid);
            continue;
          }
          if (array_rank(grids[i].type()) < 3)
            return NoMatch{fmt::format("zipped grid {} is not 3-dimensional", i)};
          slid_over.push_back(ir::call(
              ir::pad(n - 1, 0, ir::Boundary{ir::Boundary::Kind::Clamp, 0.0f}), {grids[i]}));
        }
        ir::Expr x = zipped ? ir::call(ir::zip(), slid_over) : slid_over.front();
        ir::Type window_type = ir::Type::array(element_of(x.type()), n);
        ir::Fun per_step = lambda1(window_type, "w", [&](const ir::Expr& w) {
          if (!zipped)
            return ir::call(ir::map_2d(f), {plane_neighbourhoods(w, n, s)});
          std::vector<ir::Expr> parts;
          for (size_t i = 0; i < grids.size(); ++i) {
            ir::Fun component = ir::get(static_cast<int>(i));
            parts.push_back(slid[i] ? plane_neighbourhoods(ir::call(ir::map(component), {w}), n, s)
                                    : ir::call(component, {ir::call(ir::at(n - 1), {w})}));
          }
          return ir::call(ir::map_2d(f), {ir::zip_2d(std::move(parts))});
        });
        return ir::call(ir::map_seq_slide(per_step, n, s), {x});
      });
}

Rule vectorise_outputs(int width) {
  return make_rule(
      fmt::format("vectorise-outputs({})", width),
      "mapSeq(f, x) => asScalar(mapSeq(id, asVector(w, toPrivate(mapSeq(f))(x))))   f computes "
      "scalars: a thread's consecutive outputs are stored as vectors; f computing tuples of "
      "scalars: (p => zip(asScalar(mapSeq(id, asVector(w, map(get(i), p)))), ...))"
      "(toPrivate(mapSeq(f))(x)), a part per component i: each output buffer gets vector stores",
      {"opencl", "vector", "memory"},
      [width](const ir::Expr& site, const RuleContext&) -> RuleResult {
        if (auto r = refuse_width(width))
          return *r;
        auto m = as_unary_call_of<ir::MapSeq>(site);
        if (!m)
          return NoMatch{"not a call of mapSeq"};
        if (m->fun->f.as<ir::Id>())
          return NoMatch{"a copy (mapSeq(id)): vectorise-copy applies"};
        const size_t components = scalar_tuple_components(site.type());
        if (!is_scalar_array(site.type()) && components == 0)
          return NoMatch{"the results are neither scalars nor tuples of scalars"};
        if (auto r = refuse_indivisible(length_of(site.type()), width, "the vector width"))
          return *r;
        if (!length_of(site.type()).as_constant())
          return NoMatch{"the number of outputs is not a constant"};
        ir::Expr computed = ir::call(ir::to_private(ir::map_seq(m->fun->f)), {m->arg()});
        auto stored_as_vectors = [width](const ir::Expr& scalars) {
          ir::Expr vectors = ir::call(ir::as_vector(width), {scalars});
          return ir::call(ir::as_scalar(), {ir::call(ir::map_seq(ir::id()), {vectors})});
        };
        if (components == 0)
          return stored_as_vectors(computed);
        // One output buffer per component (a tuple result's layout): each gets its own vectors,
        // read from the private results computed once (bound to p, not recomputed per part).
        ir::Fun store_components = lambda1(computed.type(), "p", [&](const ir::Expr& p) {
          std::vector<ir::Expr> parts;
          for (size_t i = 0; i < components; ++i)
            parts.push_back(
                stored_as_vectors(ir::call(ir::map(ir::get(static_cast<int>(i))), {p})));
          return ir::call(ir::zip(), parts);
        });
        return ir::call(store_components, {computed});
      });
}

Rule vectorise_copy(int width) {
  return make_rule(fmt::format("vectorise-copy({})", width),
                   "mapSeq(id, x) => asScalar(mapSeq(id, asVector(w, x)))   x an array of scalars",
                   {"opencl", "vector", "memory"},
                   [width](const ir::Expr& site, const RuleContext&) -> RuleResult {
                     if (auto r = refuse_width(width))
                       return *r;
                     auto m = as_unary_call_of<ir::MapSeq>(site);
                     if (!m || !m->fun->f.as<ir::Id>())
                       return NoMatch{"not a call of mapSeq(id)"};
                     if (!is_scalar_array(m->arg().type()))
                       return NoMatch{"the copied elements are not scalars"};
                     if (auto r =
                             refuse_indivisible(length_of(site.type()), width, "the vector width"))
                       return *r;
                     ir::Expr vectors = ir::call(ir::as_vector(width), {m->arg()});
                     return ir::call(ir::as_scalar(), {ir::call(ir::map_seq(ir::id()), {vectors})});
                   });
}

Rule vectorize_map(int width) {
  return make_rule(
      fmt::format("vectorize-map({})", width),
      "map(uf, x) => asScalar(map(vectorize(w, uf), asVector(w, x)))   (zip(a, b, ...): each "
      "array asVector'd) uf a user function of scalars",
      {"opencl", "vector"}, [width](const ir::Expr& site, const RuleContext&) -> RuleResult {
        if (auto r = refuse_width(width))
          return *r;
        auto m = as_unary_call_of<ir::Map>(site);
        if (!m)
          return NoMatch{"not a call of map"};
        const auto* uf = m->fun->f.as<ir::UserFun>();
        if (!uf)
          return NoMatch{"the mapped function is not a user function"};
        if (uf->def->returns_tuple())
          return NoMatch{"the user function returns a tuple (no vector form)"};
        if (auto r = refuse_indivisible(length_of(site.type()), width, "the vector width"))
          return *r;
        const ir::Expr& x = m->arg();
        ir::Expr vectors = x;
        if (auto z = as_call_of<ir::Zip>(x)) {
          std::vector<ir::Expr> parts;
          for (const ir::Expr& a : z->call->args) {
            if (!is_scalar_array(a.type()))
              return NoMatch{"a zipped array does not hold scalars"};
            parts.push_back(ir::call(ir::as_vector(width), {a}));
          }
          vectors = ir::call(ir::zip(), parts);
        } else if (is_scalar_array(x.type())) {
          vectors = ir::call(ir::as_vector(width), {x});
        } else {
          return NoMatch{"the argument is neither an array of scalars nor a zip of them"};
        }
        ir::Fun f = ir::vectorize(width, m->fun->f);
        return ir::call(ir::as_scalar(), {ir::call(ir::map(f), {vectors})});
      });
}

} // namespace liftx::rewrite
