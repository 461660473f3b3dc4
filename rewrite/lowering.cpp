#include "rewrite/lowering.hpp"

#include "ir/host_iteration.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/walk.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <unordered_set>

namespace liftx::rewrite {

bool lengths_exact(const ir::Program& p, const Sizes& sizes) {
  std::unordered_set<const void*> seen;
  bool ok = true;
  std::function<void(const ir::Type&)> on_type = [&](const ir::Type& t) {
    if (const auto* a = t.as<ir::ArrayType>()) {
      try {
        if (arith::evaluate(a->length, sizes) < 1)
          ok = false;
      } catch (const UserError&) {
        ok = false;
      }
      if (ok)
        on_type(a->element);
    } else if (const auto* tup = t.as<ir::TupleType>()) {
      for (const ir::Type& e : tup->elements)
        on_type(e);
    }
  };
  std::function<void(const ir::Fun&)> on_fun;
  std::function<void(const ir::Expr&)> on_expr;
  on_fun = [&](const ir::Fun& f) {
    if (ok && seen.insert(f.identity()).second)
      ir::for_each_child(f, on_fun, on_expr);
  };
  on_expr = [&](const ir::Expr& e) {
    if (!ok || !seen.insert(e.identity()).second)
      return;
    on_type(e.type());
    ir::for_each_child(e, on_fun, on_expr);
  };
  on_expr(p.body);
  return ok;
}

int64_t evaluate_or(const arith::Expr& e, const Sizes& sizes, int64_t fallback) {
  try {
    return arith::evaluate(e, sizes);
  } catch (const UserError&) {
    return fallback;
  }
}

std::vector<int64_t> powers_of_two(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t p = from; p <= to; p *= 2)
    v.push_back(p);
  return v;
}

namespace {

/// Applies `rule` at the first (or last) site of the program where it applies.
std::optional<ir::Program> apply_once(const ir::Program& p, const Rule& rule, bool last = false,
                                      bool inside_all_work_groups = false) {
  std::vector<Site> all = sites(p);
  if (last)
    std::reverse(all.begin(), all.end());
  // The tile copy belongs inside every work-group dimension the program maps (Lift's
  // addIdForMapWrgParam): both for a 2D tile, dimension 0 for a 1D one.
  std::array<bool, 3> work_group_dims{};
  for (const Site& s : all)
    for (int d = 0; d < 3; ++d)
      work_group_dims[size_t(d)] =
          work_group_dims[size_t(d)] || s.context.inside_parallel("mapWrg", d);
  auto inside_every_work_group = [&](const Site& s) {
    for (int d = 0; d < 3; ++d)
      if (work_group_dims[size_t(d)] && !s.context.inside_parallel("mapWrg", d))
        return false;
    return true;
  };
  for (const Site& s : all) {
    if (inside_all_work_groups && !inside_every_work_group(s))
      continue;
    auto r = apply_at(p, rule, s);
    if (auto* q = std::get_if<ir::Program>(&r))
      return *q;
  }
  return std::nullopt;
}

} // namespace

// ---- the strategies
// -------------------------------------------------------------------------------------

namespace {

LoweringStep rule_step(std::string name, std::function<std::vector<Rule>(int64_t)> rules,
                       LoweringStep::Site site = LoweringStep::Site::first) {
  LoweringStep step;
  step.name = std::move(name);
  step.rules = std::move(rules);
  step.site = site;
  return step;
}
LoweringStep glb(int dim) {
  return rule_step(fmt::format("map-to-mapGlb{}", dim),
                   [dim](int64_t) { return std::vector{map_to_glb(dim)}; });
}
LoweringStep wrg(int dim) {
  return rule_step(fmt::format("map-to-mapWrg{}", dim),
                   [dim](int64_t) { return std::vector{map_to_wrg(dim)}; });
}
LoweringStep lcl(int dim) {
  return rule_step(fmt::format("map-to-mapLcl{}", dim),
                   [dim](int64_t) { return std::vector{map_to_lcl(dim)}; });
}
LoweringStep sequential() {
  LoweringStep step;
  step.kind = LoweringStep::Kind::sequentialise;
  step.name = "sequential";
  return step;
}

std::vector<int64_t> no_parameter(int64_t) {
  return {0};
}

std::vector<LoweringStrategy> make_strategies() {
  using Site = LoweringStep::Site;
  LoweringStep copy_tile = rule_step(
      "copy-to-local", [](int64_t) { return std::vector{copy_to_local()}; },
      Site::inside_all_work_groups);
  LoweringStep chunk = rule_step(
      "chunk-outputs(n)", [](int64_t n) { return std::vector{chunk_outputs(n)}; }, Site::last);
  // The register-window strategy: each work-item owns a tile (rows x columns of outputs), slides
  // a window of the stencil's rows down it in registers, and stores its rows of outputs as
  // vectors of the parameter's width (1: scalar stores).
  LoweringStep window = rule_step("slide-window-2d | slide-window-2d-zip", [](int64_t) {
    return std::vector{slide_window_2d(), slide_window_2d_zip()};
  });
  LoweringStep window_3d =
      rule_step("slide-window-3d", [](int64_t) { return std::vector{slide_window_3d()}; });
  LoweringStep window_1d =
      rule_step("slide-window-1d", [](int64_t) { return std::vector{slide_window_1d()}; });
  LoweringStep vectorise = rule_step("vectorise-outputs(w)", [](int64_t w) {
    return std::vector{vectorise_outputs(static_cast<int>(w))};
  });
  vectorise.skip_unless_parameter_above_1 = true;
  return {
      {"global2d_10", {glb(1), glb(0), sequential()}, "", no_parameter},
      {"global2d_01", {glb(0), glb(1), sequential()}, "", no_parameter},
      {"global1d", {glb(0), sequential()}, "", no_parameter},
      // 3D grids: a work-item per point, x on dimension 0 (coalesced) or on dimension 2.
      {"global3d_210", {glb(2), glb(1), glb(0), sequential()}, "", no_parameter, 3},
      {"global3d_012", {glb(0), glb(1), glb(2), sequential()}, "", no_parameter, 3},
      {"workgroup1d", {wrg(0), lcl(0), sequential()}, "", no_parameter},
      // 1D stencils only (on the rows of a 2D one they add lowered programs by the thousand and
      // variants by the tens).
      {"workgroup1d_local", {wrg(0), lcl(0), copy_tile, sequential()}, "", no_parameter, 1, 1},
      {"chunks1d",
       {glb(0), chunk, sequential()},
       "chunk",
       [](int64_t max_chunk) { return powers_of_two(2, max_chunk); },
       1,
       1},
      // One float vector of outputs per work-item: chunks of w outputs stored as a vector of w.
      {"vector1d",
       {glb(0), chunk, sequential(), vectorise},
       "vector",
       [](int64_t) {
         return std::vector<int64_t>{2, 4, 8};
       },
       1,
       1},
      // A register window sliding along the tile, scalar stores (a window's outputs come one per
      // step, so there is no run of outputs to store as a vector).
      {"window1d", {glb(0), window_1d, sequential()}, "", no_parameter, 1, 1},
      // 3D work-group tiles, one work-item per output, with and without a local copy of the
      // tile and its halo.
      {"workgroup3d",
       {wrg(2), wrg(1), wrg(0), lcl(2), lcl(1), lcl(0), sequential()},
       "",
       no_parameter,
       3,
       3,
       true},
      {"workgroup3d_local",
       {wrg(2), wrg(1), wrg(0), lcl(2), lcl(1), lcl(0), copy_tile, sequential()},
       "",
       no_parameter,
       3,
       3,
       true},
      // The 2.5D scheme in registers: a work-item per tile column of uy x ux outputs marches its
      // tile's uz planes along z with a window of the stencil's planes, storing its rows as
      // vectors of the parameter's width (1: scalar stores).
      {"window3d",
       {glb(2), glb(1), glb(0), window_3d, sequential(), vectorise},
       "vector",
       [](int64_t) {
         return std::vector<int64_t>{1, 2, 4, 8};
       },
       3,
       3,
       true},
      {"workgroup2d", {wrg(1), wrg(0), lcl(1), lcl(0), sequential()}, "", no_parameter},
      {"workgroup2d_local",
       {wrg(1), wrg(0), lcl(1), lcl(0), copy_tile, sequential()},
       "",
       no_parameter},
      {"chunks",
       {glb(1), glb(0), chunk, sequential()},
       "chunk",
       [](int64_t max_chunk) { return powers_of_two(2, max_chunk); }},
      {"window",
       {glb(1), glb(0), window, sequential(), vectorise},
       "vector",
       [](int64_t) {
         return std::vector<int64_t>{1, 2, 4, 8};
       }},
  };
}

} // namespace

int grid_rank(const ir::Type& result, const Sizes& sizes) {
  int rank = 0;
  for (const ir::Type* t = &result; const auto* a = t->as<ir::ArrayType>(); t = &a->element) {
    if (evaluate_or(a->length, sizes, -1) == 1)
      break;
    ++rank;
  }
  return rank;
}

const std::vector<LoweringStrategy>& lowering_strategies() {
  static const std::vector<LoweringStrategy> strategies = make_strategies();
  return strategies;
}

std::string describe(const LoweringStrategy& strategy) {
  std::string out;
  for (const LoweringStep& step : strategy.steps)
    out += (out.empty() ? "" : ", ") + step.name;
  return out;
}

std::variant<ir::Program, std::string> lower(const ir::Program& program,
                                             const std::string& strategy, int64_t parameter,
                                             const Sizes& sizes) {
  const std::vector<LoweringStrategy>& all = lowering_strategies();
  auto found = std::find_if(all.begin(), all.end(),
                            [&](const LoweringStrategy& s) { return s.name == strategy; });
  LIFTX_INTERNAL_CHECK(found != all.end(), "unknown lowering strategy {}", strategy);
  if (std::optional<ir::HostIteration> iteration = ir::host_iteration(program)) {
    auto step = lower(iteration->step, strategy, parameter, sizes);
    const auto* lowered = std::get_if<ir::Program>(&step);
    if (!lowered || !iteration->tail)
      return lowered ? ir::iterate_step(*lowered, iteration->count, iteration->input) : step;
    auto tail = lower(*iteration->tail, strategy, parameter, sizes);
    if (const auto* lowered_tail = std::get_if<ir::Program>(&tail))
      return ir::iterate_steps(*lowered, iteration->count, *lowered_tail, iteration->tail_count,
                               iteration->input);
    return tail;
  }
  ir::Program p = program;
  for (const LoweringStep& step : found->steps) {
    if (step.kind == LoweringStep::Kind::sequentialise) {
      p = apply_until_fixpoint(p, map_to_seq());
      p = apply_until_fixpoint(p, reduce_to_seq());
      continue;
    }
    if (step.skip_unless_parameter_above_1 && parameter <= 1)
      continue;
    const std::vector<Rule> rules = step.rules(parameter);
    std::optional<ir::Program> applied;
    for (const Rule& rule : rules) {
      applied = apply_once(p, rule, step.site == LoweringStep::Site::last,
                           step.site == LoweringStep::Site::inside_all_work_groups);
      if (applied)
        break;
    }
    if (!applied)
      return fmt::format("strategy does not apply: {}", rules.front().name);
    p = *applied;
  }
  if (!lengths_exact(p, sizes))
    return std::string("split does not divide");
  return p;
}

} // namespace liftx::rewrite
