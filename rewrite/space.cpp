#include "rewrite/space.hpp"

#include "rewrite/layout.hpp"

#include "ir/host_iteration.hpp"

#include "rewrite/product.hpp"
#include "rewrite/reduction.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/temporal.hpp"
#include "rewrite/walk.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <random>
#include <sstream>

namespace liftx::rewrite {

namespace {

/// Fused tiles whose halos would recompute more than this many points per useful one are not
/// worth a trip to DRAM saved. Register tiles recompute without loads from local memory or
/// barriers, and narrow ones read coalesced: they may recompute more (on an H100 the fastest
/// fused launches of Jacobi 2D recompute 1.75x, of heat 2D 3.75x: bench/RESULTS.md).
constexpr double kMaxRedundantWork = 2.0;
constexpr double kMaxRedundantRegisterWork = 4.0;
/// Outputs of a register tile: a work-item keeps every step's region of it in registers (3D
/// tiles past this and the 1 KB of private memory spill: 1.4-3.7x slower on an H200,
/// bench/RESULTS.md).
constexpr int64_t kMaxRegisterTile = 64;

struct ProgramHash {
  size_t operator()(const ir::Program& p) const { return p.body.hash(); }
};
struct ProgramEqual {
  bool operator()(const ir::Program& a, const ir::Program& b) const {
    return ir::alpha_equal(a, b);
  }
};
using ProgramSet = std::unordered_set<ir::Program, ProgramHash, ProgramEqual>;

/// Does `f` compute (contain a user function)? Layout-only functions do not.
bool computes(const ir::Fun& f) {
  if (f.as<ir::UserFun>())
    return true;
  bool found = false;
  std::function<void(const ir::Fun&)> on_fun;
  std::function<void(const ir::Expr&)> on_expr;
  on_fun = [&](const ir::Fun& g) {
    if (found)
      return;
    if (g.as<ir::UserFun>()) {
      found = true;
      return;
    }
    ir::for_each_child(g, on_fun, on_expr);
  };
  on_expr = [&](const ir::Expr& e) {
    if (!found)
      ir::for_each_child(e, on_fun, on_expr);
  };
  ir::for_each_child(f, on_fun, on_expr);
  return found;
}

/// Every array length in every type of the program evaluates to an exact positive integer under
/// `sizes` (split and slide divide exactly).
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

/// The length of the array a one-argument call `f(x)` maps over, when it evaluates.
std::optional<int64_t> mapped_length(const ir::Expr& site, const Sizes& sizes) {
  const auto* c = site.as<ir::Call>();
  if (!c || c->args.size() != 1)
    return std::nullopt;
  const auto* a = c->args[0].type().as<ir::ArrayType>();
  if (!a)
    return std::nullopt;
  int64_t n = evaluate_or(a->length, sizes, -1);
  if (n < 1)
    return std::nullopt;
  return n;
}

bool is_computing_map(const ir::Expr& site) {
  const auto* c = site.as<ir::Call>();
  if (!c)
    return false;
  const auto* m = c->fun.as<ir::Map>();
  return m && computes(m->f);
}

std::vector<int64_t> powers_of_two(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t p = from; p <= to; p *= 2)
    v.push_back(p);
  return v;
}

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

/// First words of a message, as a rejection reason.
std::string first_words(std::string text, int words) {
  if (text.rfind("not implemented: ", 0) == 0)
    text = text.substr(17);
  text = text.substr(0, text.find('(')); // drop types and sizes: one reason per kind
  std::istringstream in(text);
  std::string w, out;
  for (int i = 0; i < words && in >> w; ++i)
    out += (i ? " " : "") + w;
  return out;
}

// ---- the high-level stage
// ------------------------------------------------------------------------

enum Family : unsigned { kTile = 1, kSplit = 2, kInterchange = 4 };

/// The variant parameter naming a layout: ("aos", 1) or ("aosoa", block).
std::pair<std::string, int64_t> layout_parameter(const ir::StorageGroup& layout) {
  return layout.layout == ir::StorageGroup::Layout::AoS
             ? std::pair<std::string, int64_t>{"aos", 1}
             : std::pair<std::string, int64_t>{"aosoa", layout.block};
}

struct HighLevel {
  ir::Program program;
  int depth = 0;
  unsigned used = 0;
  std::map<std::string, int64_t> parameters;
};

struct RuleInstance {
  Family family;
  Rule rule;
  std::map<std::string, int64_t> parameters;
  int64_t split = 0; ///< split-join factor (checked against the site's length)
};

} // namespace

// ---- lowering
// --------------------------------------------------------------------------------------

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

std::vector<int64_t> no_parameter(const SpaceOptions&) {
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
       [](const SpaceOptions& o) { return powers_of_two(2, o.max_chunk); },
       1,
       1},
      // One float vector of outputs per work-item: chunks of w outputs stored as a vector of w.
      {"vector1d",
       {glb(0), chunk, sequential(), vectorise},
       "vector",
       [](const SpaceOptions&) {
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
       [](const SpaceOptions&) {
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
       [](const SpaceOptions& o) { return powers_of_two(2, o.max_chunk); }},
      {"window",
       {glb(1), glb(0), window, sequential(), vectorise},
       "vector",
       [](const SpaceOptions&) {
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
  if (found == all.end())
    throw InternalError(fmt::format("unknown lowering strategy {}", strategy), __FILE__, __LINE__);
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

// ---- the stream
// ----------------------------------------------------------------------------------

struct VariantStream::State {
  // An iterated program (iterate(T, f, p) over a parameter) explores its step f: each lowered
  // step is wrapped back into the iteration, which runs as T launches of its kernel.
  std::optional<ir::HostIteration> iteration;
  ir::Program root;
  SpaceOptions options;
  SpaceCounts counts;
  std::vector<RuleInstance> rules;
  std::deque<HighLevel> queue;
  ProgramSet seen_high_level;
  ProgramSet seen_lowered;
  std::unordered_set<std::string> sources;

  /// Fused launches of an iterated 2D stencil step (temporal blocking), lowered after the
  /// step's own variants: (degree, tile) choices not tried yet.
  std::deque<TemporalTiling> temporal;
  /// Work-group reductions of a matrix's rows or columns (rewrite/reduction.hpp), lowered after
  /// the other strategies' variants: tilings not tried yet.
  std::deque<ReductionTiling> reductions;
  /// Register-blocked product grids (rewrite/product.hpp), lowered last: blockings not tried yet.
  std::deque<RegisterBlocking> products;

  std::optional<HighLevel> current;
  std::vector<std::pair<const LoweringStrategy*, int64_t>> strategies; // (strategy, parameter)
  size_t strategy_pos = 0;

  struct Pending {
    ir::Program program;
    std::string strategy;
    std::map<std::string, int64_t> parameters;
    std::shared_ptr<const codegen::Kernel> kernel;
    std::vector<Launch> launches;
    size_t pos = 0;
    int64_t kernel_index = 0;
  };
  std::deque<Pending> pending;

  void reject(const std::string& reason, int64_t n = 1) { counts.rejections[reason] += n; }

  // Several results per point (zip2D of map2Ds) are computed in one map nest: the lowering
  // strategies then map one nest to the threads and read the shared inputs once.
  ir::Program iterated(const ir::Program& step) const {
    return iteration ? ir::iterate_step(step, iteration->count, iteration->input) : step;
  }

  State(ir::Program p, SpaceOptions o)
      : iteration(ir::host_iteration(p)),
        root(apply_until_fixpoint(iteration ? iteration->step : p, zip_of_maps())),
        options(std::move(o)) {
    if (iteration && iteration->tail)
      throw UserError(
          fmt::format("{}: an iterate over another iterate's result has no variant space (the "
                      "two steps would need the same rewrites); iterate one step function",
                      p.name),
          p.loc);
    // Output lengths of the stencil: tile steps must divide them.
    int64_t out_y = -1, out_x = -1;
    if (const auto* a = root.result_type().as<ir::ArrayType>()) {
      out_y = evaluate_or(a->length, options.sizes, -1);
      if (const auto* b = a->element.as<ir::ArrayType>())
        out_x = evaluate_or(b->length, options.sizes, -1);
    }
    // One row of windows per tile (uy = 1) serves the register-window strategy: a work-item's
    // vector of outputs along x without sliding.
    for (int64_t uy : powers_of_two(1, options.max_tile))
      for (int64_t ux : powers_of_two(2, options.max_tile)) {
        if (out_x < 1 || out_y < 1 || out_x % ux != 0 || out_y % uy != 0 || ux >= out_x ||
            uy >= out_y) {
          reject("tile does not divide");
          continue;
        }
        std::map<std::string, int64_t> params{{"tile_x", ux}, {"tile_y", uy}};
        rules.push_back({kTile, tile_stencil_2d(ux, uy), params, 0});
        rules.push_back({kTile, tile_stencil_2d_zip(ux, uy), params, 0});
      }
    // A 1D stencil (a 1D result, or one of reduce's one-element arrays per point): overlapped
    // tiles of u outputs, the work-group tiles of the workgroup1d strategies (the paper's
    // Listing 2).
    const int rank = grid_rank(root.result_type(), options.sizes);
    // A 3D stencil: overlapped tiles of uz x uy x ux outputs, for work-group tiles (one work-item
    // per output, up to 1024 per group) and register windows marching along z.
    if (rank == 3) {
      std::vector<int64_t> out(3, -1);
      const ir::Type* level = &root.result_type();
      for (int64_t& n : out)
        if (const auto* a = level->as<ir::ArrayType>()) {
          n = evaluate_or(a->length, options.sizes, -1);
          level = &a->element;
        }
      for (int64_t uz : powers_of_two(1, options.max_tile))
        for (int64_t uy : powers_of_two(1, options.max_tile))
          for (int64_t ux : powers_of_two(2, options.max_tile)) {
            if (ux * uy * uz > 1024)
              continue;
            if (out[0] % uz != 0 || out[1] % uy != 0 || out[2] % ux != 0 || uz >= out[0] ||
                uy >= out[1] || ux >= out[2]) {
              reject("tile does not divide");
              continue;
            }
            rules.push_back({kTile,
                             tile_stencil_3d(ux, uy, uz),
                             {{"tile_x", ux}, {"tile_y", uy}, {"tile_z", uz}},
                             0});
          }
    }
    if (rank == 1)
      for (int64_t u : powers_of_two(2, options.max_tile)) {
        if (out_y % u != 0 || u >= out_y) {
          reject("tile does not divide");
          continue;
        }
        rules.push_back({kTile, tile_stencil_1d(u), {{"tile_x", u}}, 0});
      }
    for (int64_t n : powers_of_two(2, options.max_tile))
      rules.push_back({kSplit, split_join(n), {{"split", n}}, n});
    rules.push_back({kInterchange, map_map_interchange(), {{"interchange", 1}}, 0});

    for (const LoweringStrategy& s : lowering_strategies())
      if (rank >= s.min_grid_rank && rank <= s.max_grid_rank)
        for (int64_t value : s.parameter_values(options))
          strategies.push_back({&s, value});
    // The strategies lower reductions of non-constant length fused with their maps (no
    // temporary of that length per reduction). plan_reductions reads the unfused root: its
    // builder recognises the map and fuses it itself.
    const ir::Program start = apply_until_fixpoint(root, long_reduce_map_fusion());
    seen_high_level.insert(start);
    queue.push_back({start, 0, 0, {}});
    if (options.layouts)
      for (const ir::StorageGroup& layout : explored_layouts()) {
        std::optional<size_t> iterated;
        if (iteration)
          iterated = iteration->input;
        auto stored = store_grids_together(start, layout, iterated);
        if (const auto* p = std::get_if<ir::Program>(&stored)) {
          if (seen_high_level.insert(*p).second)
            queue.push_back({*p, 0, 0, {layout_parameter(layout)}});
        } else {
          reject("layout: no two grids of one type");
        }
      }
    if (iteration)
      plan_temporal();
    else {
      plan_reductions();
      plan_products();
    }
  }

  /// Work-groups of 32 to 1024 work-items (powers of two within the device's limit). Rows: one
  /// part per work-item, the parts dividing the row. Columns: 1 to 32 parts per column, blocks
  /// of at least 8 columns, both dividing their lengths.
  void plan_reductions() {
    auto recognised = as_matrix_reduction(root);
    if (!std::holds_alternative<MatrixReduction>(recognised))
      return;
    const MatrixReduction& m = std::get<MatrixReduction>(recognised);
    auto length_of = [&](const ir::Type& t) -> int64_t {
      const auto* a = t.as<ir::ArrayType>();
      return a ? evaluate_or(a->length, options.sizes, -1) : -1;
    };
    const int64_t length = length_of(m.data.type());
    const int64_t outputs = length_of(root.result_type());
    if (length < 1 || outputs < 1)
      return;
    const int64_t max_lanes = std::min<int64_t>(
        {1024, options.device.max_work_group_size, options.device.max_work_item_sizes[0]});
    for (int64_t lanes : powers_of_two(32, max_lanes))
      for (int64_t parts : powers_of_two(1, m.columns ? std::min<int64_t>(32, lanes) : lanes)) {
        if (!m.columns && parts != lanes)
          continue;
        const int64_t columns = lanes / parts;
        if (m.columns && columns < 8)
          continue;
        if (length % parts != 0 || parts > length || (m.columns && outputs % columns != 0)) {
          reject("reduction parts do not divide");
          continue;
        }
        reductions.push_back({lanes, parts});
      }
  }

  /// Queues a program a strategy's builder lowered from the root, or rejects it with why not
  /// (`label: ...`) or `indivisible` when its lengths do not divide at these sizes.
  void queue_built(const std::variant<ir::Program, std::string>& lowered, const std::string& label,
                   const std::string& indivisible, const std::string& strategy,
                   std::map<std::string, int64_t> params) {
    if (auto* why = std::get_if<std::string>(&lowered)) {
      reject(label + ": " + first_words(*why, 6));
      return;
    }
    if (!lengths_exact(std::get<ir::Program>(lowered), options.sizes)) {
      reject(indivisible);
      return;
    }
    queue_lowered(std::get<ir::Program>(lowered), strategy, std::move(params), false);
  }

  void lower_next_reduction() {
    const ReductionTiling tiling = reductions.front();
    reductions.pop_front();
    queue_built(build_matrix_reduction(root, tiling), "reduction", "reduction parts do not divide",
                kReductionStrategy, {{"lanes", tiling.lanes}, {"parts", tiling.parts}});
  }

  /// Blocks of 2 to 16 rows by 2 to 8 columns (8 to 128 outputs per work-item); the loop over
  /// the reduction run one step at a time or in unrolled chunks of 4 or 8 steps; each step's
  /// values copied to private memory (the form of the fastest block measured on an H200, 16x8 in
  /// chunks of 4; bench/RESULTS.md). Blocks that do not divide the grid are left out when
  /// lowered.
  void plan_products() {
    if (!std::holds_alternative<ProductGrid>(as_product_grid(root)))
      return;
    for (int64_t rows : {2, 4, 8, 16})
      for (int64_t columns : {2, 4, 8})
        for (int64_t unroll : {1, 4, 8})
          if (rows * columns >= 8)
            products.push_back({rows, columns, unroll, true});
  }

  void lower_next_product() {
    const RegisterBlocking blocking = products.front();
    products.pop_front();
    queue_built(build_register_blocked(root, blocking), "register block",
                "register block does not divide", kRegisterBlockStrategy,
                {{"rows", blocking.rows},
                 {"columns", blocking.columns},
                 {"unroll", blocking.unroll},
                 {"private_copies", blocking.private_copies ? 1 : 0}});
  }

  /// Temporal degrees t up to the step count (T / t launches of t steps, then one launch of the
  /// T mod t steps left, tiled the same way), both forms of a tile dividing the grid (work-group
  /// tiles of powers of two in local memory; work-item tiles of up to 64 outputs, 8 wide, in
  /// registers; 3D: the same with up to 8 outputs along z, and columns of up to 64 streamed along
  /// z), the input tile staged or not where the boundary allows; tiles recomputing too much
  /// (kMaxRedundant*) are left out.
  void plan_temporal() {
    auto recognised = as_stencil_step(iteration->step);
    if (!std::holds_alternative<StencilStep>(recognised))
      return;
    const StencilStep& s = std::get<StencilStep>(recognised);
    std::vector<int64_t> out; // output lengths, outermost first
    for (const arith::Expr& length : ir::array_shape(root.result_type()))
      out.push_back(evaluate_or(length, options.sizes, -1));
    if (static_cast<int>(out.size()) != s.rank)
      return;
    const bool three = s.rank == 3;
    using Memory = TemporalTiling::Memory;
    for (int64_t t : {2, 3, 4, 6, 8}) {
      if (t > iteration->count)
        continue;
      for (Memory memory : {Memory::local, Memory::registers, Memory::stream}) {
        const bool stream = memory == Memory::stream;
        if (stream && (!three || t != 2))
          continue;
        const bool registers = memory != Memory::local;
        for (int64_t tz :
             three ? powers_of_two(stream ? 4 : 1, stream ? 64 : 8) : std::vector<int64_t>{1})
          for (int64_t ty : powers_of_two(registers || three ? 1 : 2,
                                          registers ? (three ? 8 : 32) : options.max_tile))
            for (int64_t tx :
                 powers_of_two(registers ? 1 : 4, registers ? 8 : 2 * options.max_tile))
              for (bool stage : {false, true}) {
                // A stream's registers hold planes of its column, not the column.
                if (registers && (stream ? tx * ty : tx * ty * tz) > kMaxRegisterTile)
                  continue;
                if (stage && s.boundary.kind != ir::Boundary::Kind::Wrap)
                  continue;
                const std::vector<int64_t> tile =
                    three ? std::vector<int64_t>{tz, ty, tx} : std::vector<int64_t>{ty, tx};
                bool divides = true;
                for (size_t d = 0; d < tile.size(); ++d)
                  divides = divides && out[d] > tile[d] && out[d] % tile[d] == 0;
                if (!divides) {
                  reject("tile does not divide");
                  continue;
                }
                TemporalTiling tiling{t, tx, ty, stage, memory};
                tiling.tile_z = tz;
                if (redundant_work_ratio(s, tiling) >
                    (registers ? kMaxRedundantRegisterWork : kMaxRedundantWork)) {
                  reject("temporal tile recomputes too much");
                  continue;
                }
                temporal.push_back(tiling);
              }
      }
    }
  }

  void lower_next_temporal() {
    const TemporalTiling tiling = temporal.front();
    temporal.pop_front();
    const bool registers = tiling.memory != TemporalTiling::Memory::local;
    auto fused = fuse_steps_tiled(iteration->step, tiling);
    if (auto* why = std::get_if<std::string>(&fused)) {
      reject("temporal: " + first_words(*why, 6));
      return;
    }
    if (!lengths_exact(std::get<ir::Program>(fused), options.sizes)) {
      reject("tile does not divide");
      return;
    }
    const int64_t launches = iteration->count / tiling.degree;
    const int64_t remainder = iteration->count % tiling.degree;
    ir::Program lowered =
        ir::iterate_step(std::get<ir::Program>(fused), launches, iteration->input);
    if (remainder > 0) {
      // The steps left over: one launch of them, the same tiles (a register tile's launch is
      // then the same as the fused one's).
      TemporalTiling rest = tiling;
      rest.degree = remainder;
      auto tail = fuse_steps_tiled(iteration->step, rest);
      if (auto* why = std::get_if<std::string>(&tail)) {
        reject("temporal remainder: " + first_words(*why, 6));
        return;
      }
      lowered = ir::iterate_steps(std::get<ir::Program>(fused), launches,
                                  std::get<ir::Program>(tail), 1, iteration->input);
    }
    std::map<std::string, int64_t> parameters{{"steps_per_launch", tiling.degree},
                                              {"tile_x", tiling.tile_x},
                                              {"tile_y", tiling.tile_y},
                                              {"stage", tiling.stage_input ? 1 : 0},
                                              {"registers", registers ? 1 : 0}};
    if (remainder > 0)
      parameters["remainder_steps"] = remainder;
    const bool three = grid_rank(root.result_type(), options.sizes) == 3;
    if (three) {
      parameters["tile_z"] = tiling.tile_z;
      parameters["stream"] = tiling.memory == TemporalTiling::Memory::stream ? 1 : 0;
    }
    // A register tile's work-items need no free-thread loops.
    queue_lowered(lowered, three ? kTemporalStrategy3D : kTemporalStrategy, std::move(parameters),
                  !registers);
  }

  /// Children of a high-level program: one more rewrite of a family not used yet.
  void expand(const HighLevel& h) {
    if (h.depth >= options.depth || h.parameters.contains("tile_z"))
      return;
    std::vector<Site> all = sites(h.program);
    for (const RuleInstance& r : rules) {
      if (h.used & r.family)
        continue;
      for (const Site& s : all) {
        if (r.family == kSplit || r.family == kInterchange) {
          if (!is_computing_map(s.expr))
            continue;
          if (r.family == kSplit) {
            if (s.context.enclosing.empty())
              continue; // split-join on inner maps only
            auto n = mapped_length(s.expr, options.sizes);
            if (!n || *n % r.split != 0 || *n <= r.split) {
              reject("split does not divide");
              continue;
            }
          }
        }
        auto result = apply_at(h.program, r.rule, s);
        const auto* p = std::get_if<ir::Program>(&result);
        if (!p)
          continue;
        if (!lengths_exact(*p, options.sizes)) {
          reject(r.family == kTile ? "tile does not divide" : "split does not divide");
          continue;
        }
        if (!seen_high_level.insert(*p).second) {
          reject("duplicate high-level program");
          continue;
        }
        HighLevel child{*p, h.depth + 1, h.used | r.family, h.parameters};
        for (const auto& [k, v] : r.parameters)
          child.parameters[k] = v;
        queue.push_back(std::move(child));
      }
    }
  }

  std::optional<codegen::Kernel> generate(const ir::Program& p, bool tied) {
    try {
      codegen::Options o;
      o.tie_threads_to_lengths = tied;
      o.source = options.kernel_source;
      return codegen::generate(p, o);
    } catch (const UserError& e) {
      reject("codegen refused: " + first_words(e.message(), 4));
    } catch (const NotImplemented& e) {
      reject("codegen not implemented: " + first_words(e.what(), 6));
    } catch (const InternalError& e) {
      reject("codegen internal error: " + first_words(e.what(), 6));
    }
    return std::nullopt;
  }

  /// Launch configurations of one kernel. `lengths`: the tied global sizes (mapped lengths);
  /// `tied_locals`: for a free-thread kernel of the tied kernel's dimensions, the tied kernel's
  /// local sizes where its launch rule gives them (0 where not).
  std::vector<Launch> launches(const codegen::Kernel& k, bool tied,
                               const std::array<int64_t, 3>& lengths,
                               const std::optional<std::array<int64_t, 3>>& tied_locals) {
    if (codegen::index_overflow(k, options.sizes) ||
        (k.tail && codegen::index_overflow(*k.tail, options.sizes))) {
      reject("index overflows int");
      return {};
    }
    int dims = std::clamp(k.launch.dims, 1, 3);
    int64_t local_bytes = evaluate_or(k.local_bytes(), options.sizes, 0);
    std::array<std::vector<int64_t>, 3> globals, locals_fixed;
    for (int d = 0; d < dims; ++d) {
      if (tied) {
        globals[d] = {k.launch.global[d] ? evaluate_or(*k.launch.global[d], options.sizes, 1) : 1};
      } else {
        int64_t base = 1;
        while (base * 2 <= lengths[d])
          base *= 2;
        for (int h = 0; h <= options.free_global_halvings && base >= 1; ++h, base /= 2)
          globals[d].push_back(base);
      }
      if (tied && k.launch.local[d])
        locals_fixed[d] = {evaluate_or(*k.launch.local[d], options.sizes, 0)};
    }
    std::vector<Launch> out;
    // Odometer over the global choices, then over local choices of each.
    std::function<void(int, Launch&)> choose_global, choose_local;
    choose_local = [&](int d, Launch& l) {
      if (d == dims) {
        // Every launch of the space names its work-group (0 would leave it to the runtime).
        if (std::any_of(l.local.begin(), l.local.begin() + l.dims, [](int64_t v) { return v < 1; }))
          reject("local does not divide global");
        else if (!tied && tied_locals && runs_as_tied_twin(l, lengths, *tied_locals))
          reject("free launch runs as its tied twin");
        else if (std::optional<codegen::LaunchRefusal> refusal =
                     codegen::launch_refusal(k, l, options.sizes, options.device, local_bytes))
          reject(refusal->reason);
        else if (std::optional<codegen::LaunchRefusal> tail_refusal =
                     k.tail ? codegen::launch_refusal(
                                  *k.tail, codegen::tail_launch(*k.tail, l, options.sizes),
                                  options.sizes, options.device)
                            : std::nullopt)
          reject("remainder: " + tail_refusal->reason);
        else
          out.push_back(l);
        return;
      }
      std::vector<int64_t> options_d = locals_fixed[d];
      if (options_d.empty())
        for (int64_t p = 1; p <= l.global[d]; p *= 2)
          if (l.global[d] % p == 0)
            options_d.push_back(p);
      for (int64_t v : options_d) {
        l.local[d] = v;
        choose_local(d + 1, l);
      }
    };
    choose_global = [&](int d, Launch& l) {
      if (d == dims) {
        choose_local(0, l);
        return;
      }
      for (int64_t g : globals[d]) {
        l.global[d] = g;
        choose_global(d + 1, l);
      }
    };
    Launch l;
    l.dims = dims;
    l.tied = tied;
    choose_global(0, l);
    return out;
  }

  /// Whether a free-thread launch asks for exactly the tied kernel's threads: codegen's
  /// prepare_launch then runs the tied kernel (explore, collect, `run --launch` and the
  /// features a database is refreshed with all see that kernel), so the launch is the tied
  /// variant's twin, and ranking it by the free-thread kernel's features would rank a kernel that
  /// never runs.
  static bool runs_as_tied_twin(const Launch& l, const std::array<int64_t, 3>& lengths,
                                const std::array<int64_t, 3>& tied_locals) {
    for (int d = 0; d < l.dims; ++d)
      if (l.global[d] != lengths[d] || (tied_locals[d] > 0 && l.local[d] != tied_locals[d]))
        return false;
    return true;
  }

  /// Lowers the current high-level program with the next strategy; queues its kernels.
  void lower_next() {
    // Not a structured binding: clang 14 (the fuzz build's) cannot capture one in a lambda.
    const auto& strategy = strategies[strategy_pos].first;
    const auto& parameter = strategies[strategy_pos++].second;
    if (strategy->tiles_3d != current->parameters.contains("tile_z"))
      return; // 3D tiles for the 3D tile strategies only, and only them
    auto lowered = lower(current->program, strategy->name, parameter, options.sizes);
    if (auto* why = std::get_if<std::string>(&lowered)) {
      reject(*why);
      return;
    }
    std::map<std::string, int64_t> params = current->parameters;
    if (!strategy->parameter.empty())
      params[strategy->parameter] = parameter;
    queue_lowered(iterated(std::get<ir::Program>(lowered)), strategy->name, std::move(params),
                  !strategy->tiles_3d);
  }

  /// Generates a lowered program's kernels (tied, and free-thread ones when `free_threads`) and
  /// queues their launches.
  void queue_lowered(const ir::Program& p, const std::string& strategy,
                     std::map<std::string, int64_t> params, bool free_threads) {
    if (!seen_lowered.insert(p).second) {
      reject("duplicate lowered program");
      return;
    }
    ++counts.lowered_programs;
    auto tied = generate(p, true);
    if (!tied)
      return;
    if (tied->private_bytes > options.device.private_memory_bytes) {
      reject("private memory over limit");
      return;
    }
    ++counts.kernels;
    std::array<int64_t, 3> lengths{1, 1, 1};
    std::array<int64_t, 3> tied_locals{0, 0, 0};
    const int tied_dims = std::clamp(tied->launch.dims, 1, 3);
    for (int d = 0; d < tied_dims; ++d) {
      if (tied->launch.global[d])
        lengths[d] = evaluate_or(*tied->launch.global[d], options.sizes, 1);
      if (tied->launch.local[d])
        tied_locals[d] = evaluate_or(*tied->launch.local[d], options.sizes, 0);
    }
    auto queue_kernel = [&](codegen::Kernel k, bool is_tied) {
      // A free-thread kernel of other dimensions has no tied twin.
      const bool twin_possible = !is_tied && std::clamp(k.launch.dims, 1, 3) == tied_dims;
      std::vector<Launch> kernel_launches =
          launches(k, is_tied, lengths, twin_possible ? std::optional(tied_locals) : std::nullopt);
      if (kernel_launches.empty())
        return;
      if (options.kernel_source && sources.insert(k.source).second)
        ++counts.distinct_sources;
      pending.push_back(Pending{p, strategy, params,
                                std::make_shared<const codegen::Kernel>(std::move(k)),
                                std::move(kernel_launches), 0, counts.kernels - 1});
    };
    queue_kernel(std::move(*tied), true);
    if (options.free_threads && free_threads) {
      if (auto free = generate(p, false)) {
        ++counts.kernels;
        queue_kernel(std::move(*free), false);
      }
    }
  }

  /// What the variants of a kernel share, into a Variant or a KernelVariants.
  template <class Shared>
  static void copy_shared(const Pending& from, Shared& out) {
    out.strategy = from.strategy;
    out.parameters = from.parameters;
    out.program = from.program;
    out.kernel_index = from.kernel_index;
    out.kernel = from.kernel;
  }

  bool next(Variant& out) {
    if (!fill_pending())
      return false;
    Pending& front = pending.front();
    copy_shared(front, out);
    out.launch = front.launches[front.pos++];
    out.index = counts.variants++;
    ++counts.per_strategy[front.strategy];
    return true;
  }

  bool next_kernel(KernelVariants& out) {
    if (!fill_pending())
      return false;
    Pending& front = pending.front();
    copy_shared(front, out);
    out.launches.assign(front.launches.begin() + ptrdiff_t(front.pos), front.launches.end());
    out.first_index = counts.variants;
    const auto n = static_cast<int64_t>(out.launches.size());
    counts.variants += n;
    counts.per_strategy[front.strategy] += n;
    pending.pop_front();
    return true;
  }

  /// Lowers and generates until a kernel with launches not yet handed out is at the front of
  /// `pending`; false at the end of the stream.
  bool fill_pending() {
    while (true) {
      if (!pending.empty()) {
        if (pending.front().pos < pending.front().launches.size())
          return true;
        pending.pop_front();
        continue;
      }
      if (current && strategy_pos < strategies.size()) {
        lower_next();
        continue;
      }
      if (queue.empty()) {
        current.reset();
        if (!temporal.empty()) {
          lower_next_temporal();
          continue;
        }
        if (!reductions.empty()) {
          lower_next_reduction();
          continue;
        }
        if (products.empty())
          return false;
        lower_next_product();
        continue;
      }
      current = std::move(queue.front());
      queue.pop_front();
      strategy_pos = 0;
      ++counts.high_level_programs;
      expand(*current);
    }
  }
};

VariantStream::VariantStream(ir::Program program, SpaceOptions options)
    : state_(std::make_unique<State>(std::move(program), std::move(options))) {}
VariantStream::~VariantStream() = default;
bool VariantStream::next(Variant& out) {
  return state_->next(out);
}
bool VariantStream::next_kernel(KernelVariants& out) {
  return state_->next_kernel(out);
}
const SpaceCounts& VariantStream::counts() const {
  return state_->counts;
}

const std::string& Variant::kernel_source() const {
  static const std::string none;
  return kernel ? kernel->source : none;
}

int64_t steps_per_launch(const Variant& variant) {
  return steps_per_launch(variant.parameters);
}

int64_t steps_per_launch(const std::map<std::string, int64_t>& parameters) {
  const auto fused = parameters.find("steps_per_launch");
  return fused == parameters.end() ? 1 : fused->second;
}

int64_t remainder_steps(const Variant& variant) {
  const auto rest = variant.parameters.find("remainder_steps");
  return rest == variant.parameters.end() ? 0 : rest->second;
}

std::vector<Variant> sample(VariantStream& stream, int64_t n, uint64_t seed,
                            const std::function<bool(const Variant&)>& keep) {
  std::vector<Variant> reservoir;
  if (n <= 0)
    return reservoir;
  std::mt19937_64 rng(seed);
  Variant v;
  int64_t seen = 0;
  while (stream.next(v)) {
    if (keep && !keep(v))
      continue;
    ++seen;
    if (static_cast<int64_t>(reservoir.size()) < n) {
      reservoir.push_back(v);
    } else {
      int64_t j = static_cast<int64_t>(
          std::uniform_int_distribution<uint64_t>(0, static_cast<uint64_t>(seen - 1))(rng));
      if (j < n)
        reservoir[static_cast<size_t>(j)] = v;
    }
  }
  std::sort(reservoir.begin(), reservoir.end(),
            [](const Variant& a, const Variant& b) { return a.index < b.index; });
  return reservoir;
}

std::string sidecar_json(const Variant& v, const Sizes& sizes) {
  std::string s = "{\n  \"sizes\": {";
  bool first = true;
  for (const auto& [k, val] : sizes) {
    s += fmt::format("{}\"{}\": {}", first ? "" : ", ", k, val);
    first = false;
  }
  auto arr = [&](const std::array<int64_t, 3>& a) {
    std::string t = "[";
    for (int d = 0; d < v.launch.dims; ++d)
      t += fmt::format("{}{}", d ? ", " : "", a[d]);
    return t + "]";
  };
  s += fmt::format("}},\n  \"dims\": {},\n  \"global\": {},\n  \"local\": {},\n  \"tied\": {},\n",
                   v.launch.dims, arr(v.launch.global), arr(v.launch.local),
                   v.launch.tied ? "true" : "false");
  s += fmt::format("  \"strategy\": \"{}\",\n  \"parameters\": {{", v.strategy);
  first = true;
  for (const auto& [k, val] : v.parameters) {
    s += fmt::format("{}\"{}\": {}", first ? "" : ", ", k, val);
    first = false;
  }
  s += "}\n}\n";
  return s;
}

} // namespace liftx::rewrite
