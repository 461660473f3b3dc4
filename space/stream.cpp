#include "space/stream_state.hpp"

#include "rewrite/layout.hpp"
#include "rewrite/lowering.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/walk.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <sstream>
#include <thread>
#include <utility>

namespace liftx::space {

namespace {

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

/// The length of the array a one-argument call `f(x)` maps over, when it evaluates.
std::optional<int64_t> mapped_length(const ir::Expr& site, const Sizes& sizes) {
  const auto* c = site.as<ir::Call>();
  if (!c || c->args.size() != 1)
    return std::nullopt;
  const auto* a = c->args[0].type().as<ir::ArrayType>();
  if (!a)
    return std::nullopt;
  int64_t n = rewrite::evaluate_or(a->length, sizes, -1);
  if (n < 1)
    return std::nullopt;
  return n;
}

/// A map whose function computes (a split or an interchange of it changes the work).
bool is_computing_map(const ir::Expr& site) {
  const auto* c = site.as<ir::Call>();
  if (!c)
    return false;
  const auto* m = c->fun.as<ir::Map>();
  return m && computes(m->f);
}

/// The variant parameter naming a layout: ("aos", 1) or ("aosoa", block).
std::pair<std::string, int64_t> layout_parameter(const ir::StorageGroup& layout) {
  return layout.layout == ir::StorageGroup::Layout::AoS
             ? std::pair<std::string, int64_t>{"aos", 1}
             : std::pair<std::string, int64_t>{"aosoa", layout.block};
}

} // namespace

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

// Several results per point (zip2D of map2Ds) are computed in one map nest (the root): the
// lowering strategies then map one nest to the threads and read the shared inputs once.
VariantStream::State::State(ir::Program p, SpaceOptions o)
    : iteration(ir::host_iteration(p)),
      root(rewrite::apply_until_fixpoint(iteration ? iteration->step : p, rewrite::zip_of_maps())),
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
    out_y = rewrite::evaluate_or(a->length, options.sizes, -1);
    if (const auto* b = a->element.as<ir::ArrayType>())
      out_x = rewrite::evaluate_or(b->length, options.sizes, -1);
  }
  // Whether some tile shape was offered at all (counts.no_tile_divides).
  int64_t tile_shapes = 0, tile_shapes_refused = 0;
  // One row of windows per tile (uy = 1) serves the register-window strategy: a work-item's
  // vector of outputs along x without sliding.
  for (int64_t uy : rewrite::powers_of_two(1, options.max_tile))
    for (int64_t ux : rewrite::powers_of_two(2, options.max_tile)) {
      if (out_x < 1 || out_y < 1 || out_x % ux != 0 || out_y % uy != 0 || ux >= out_x ||
          uy >= out_y) {
        reject("tile does not divide");
        ++tile_shapes_refused;
        continue;
      }
      ++tile_shapes;
      std::map<std::string, int64_t> params{{"tile_x", ux}, {"tile_y", uy}};
      rules.push_back({kTile, rewrite::tile_stencil_2d(ux, uy), params, 0});
      rules.push_back({kTile, rewrite::tile_stencil_2d_zip(ux, uy), params, 0});
    }
  // A 1D stencil (a 1D result, or one of reduce's one-element arrays per point): overlapped
  // tiles of u outputs, the work-group tiles of the workgroup1d strategies (the paper's
  // Listing 2).
  const int rank = rewrite::grid_rank(root.result_type(), options.sizes);
  // A 3D stencil: overlapped tiles of uz x uy x ux outputs, for work-group tiles (one work-item
  // per output, up to 1024 per group) and register windows marching along z.
  if (rank == 3) {
    std::vector<int64_t> out(3, -1);
    const ir::Type* level = &root.result_type();
    for (int64_t& n : out)
      if (const auto* a = level->as<ir::ArrayType>()) {
        n = rewrite::evaluate_or(a->length, options.sizes, -1);
        level = &a->element;
      }
    for (int64_t uz : rewrite::powers_of_two(1, options.max_tile))
      for (int64_t uy : rewrite::powers_of_two(1, options.max_tile))
        for (int64_t ux : rewrite::powers_of_two(2, options.max_tile)) {
          if (ux * uy * uz > 1024)
            continue;
          if (out[0] % uz != 0 || out[1] % uy != 0 || out[2] % ux != 0 || uz >= out[0] ||
              uy >= out[1] || ux >= out[2]) {
            reject("tile does not divide");
            ++tile_shapes_refused;
            continue;
          }
          ++tile_shapes;
          rules.push_back({kTile,
                           rewrite::tile_stencil_3d(ux, uy, uz),
                           {{"tile_x", ux}, {"tile_y", uy}, {"tile_z", uz}},
                           0});
        }
  }
  if (rank == 1)
    for (int64_t u : rewrite::powers_of_two(2, options.max_tile)) {
      if (out_y % u != 0 || u >= out_y) {
        reject("tile does not divide");
        ++tile_shapes_refused;
        continue;
      }
      ++tile_shapes;
      rules.push_back({kTile, rewrite::tile_stencil_1d(u), {{"tile_x", u}}, 0});
    }
  // Only a stencil (a program that slides windows over its grid) has tilings to lose.
  const std::vector<rewrite::Site> calls = rewrite::sites(root);
  const bool slides = std::any_of(calls.begin(), calls.end(), [](const rewrite::Site& s) {
    const auto* call = s.expr.as<ir::Call>();
    return call && call->fun.as<ir::Slide>();
  });
  counts.no_tile_divides = slides && tile_shapes == 0 && tile_shapes_refused > 0;
  for (int64_t n : rewrite::powers_of_two(2, options.max_tile))
    rules.push_back({kSplit, rewrite::split_join(n), {{"split", n}}, n});
  rules.push_back({kInterchange, rewrite::map_map_interchange(), {{"interchange", 1}}, 0});

  for (const rewrite::LoweringStrategy& s : rewrite::lowering_strategies())
    if (rank >= s.min_grid_rank && rank <= s.max_grid_rank)
      for (int64_t value : s.parameter_values(options.max_chunk))
        strategies.push_back({&s, value});
  // The strategies lower reductions of non-constant length fused with their maps (no
  // temporary of that length per reduction). plan_reductions reads the unfused root: its
  // builder recognises the map and fuses it itself.
  const ir::Program start = rewrite::apply_until_fixpoint(root, rewrite::long_reduce_map_fusion());
  seen_high_level.insert(start);
  queue.push_back({start, 0, 0, {}});
  if (options.layouts)
    for (const ir::StorageGroup& layout : rewrite::explored_layouts()) {
      std::optional<size_t> iterated;
      if (iteration)
        iterated = iteration->input;
      auto stored = rewrite::store_grids_together(start, layout, iterated);
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

void VariantStream::State::expand(const HighLevel& h) {
  if (h.depth >= options.depth || h.parameters.contains("tile_z"))
    return;
  std::vector<rewrite::Site> all = rewrite::sites(h.program);
  for (const RuleInstance& r : rules) {
    if (h.used & r.family)
      continue;
    for (const rewrite::Site& s : all) {
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
      auto result = rewrite::apply_at(h.program, r.rule, s);
      const auto* p = std::get_if<ir::Program>(&result);
      if (!p)
        continue;
      if (!rewrite::lengths_exact(*p, options.sizes)) {
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

void VariantStream::State::lower_next() {
  // Not a structured binding: clang 14 (the fuzz build's) cannot capture one in a lambda.
  const auto& strategy = strategies[strategy_pos].first;
  const auto& parameter = strategies[strategy_pos++].second;
  if (strategy->tiles_3d != current->parameters.contains("tile_z"))
    return; // 3D tiles for the 3D tile strategies only, and only them
  auto lowered = rewrite::lower(current->program, strategy->name, parameter, options.sizes);
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

bool VariantStream::State::next(Variant& out) {
  if (!fill_pending())
    return false;
  Pending& front = pending.front();
  copy_shared(front, out);
  out.launch = front.launches[front.pos++];
  out.index = counts.variants++;
  ++counts.per_strategy[front.strategy];
  return true;
}

bool VariantStream::State::next_kernel(KernelVariants& out) {
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

bool VariantStream::State::fill_pending() {
  while (true) {
    if (!pending.empty()) {
      if (pending.front().pos < pending.front().launches.size())
        return true;
      pending.pop_front();
      continue;
    }
    if (lowered.empty() && lowering_error)
      std::rethrow_exception(std::exchange(lowering_error, nullptr));
    if (lowered.empty() && !lower_more()) {
      add_counts(counts, std::exchange(lowering_counts, SpaceCounts{}));
      return false;
    }
    if (lowered.empty())
      continue;
    if (!lowered.front().generated)
      generate_batch();
    Lowered item = std::move(lowered.front());
    lowered.pop_front();
    process_lowered(item);
  }
}

bool VariantStream::State::lower_more() {
  // What lowering rejects is the next lowered program's to count (Lowered::lowering_counts).
  tally = &lowering_counts;
  struct Restore {
    SpaceCounts*& tally;
    SpaceCounts* counts;
    ~Restore() { tally = counts; }
  } restore{tally, &counts};
  if (current && strategy_pos < strategies.size()) {
    lower_next();
    return true;
  }
  if (queue.empty()) {
    current.reset();
    if (!temporal.empty())
      lower_next_temporal();
    else if (!reductions.empty())
      lower_next_reduction();
    else if (!products.empty())
      lower_next_product();
    else if (!local_tilings.empty())
      lower_next_local_tiling();
    else if (!vector_products.empty())
      lower_next_vector_product();
    else
      return false;
    return true;
  }
  current = std::move(queue.front());
  queue.pop_front();
  strategy_pos = 0;
  ++lowering_counts.high_level_programs;
  expand(*current);
  return true;
}

void VariantStream::State::generate_batch() {
  // Unless told how many, threads are used only where kernels take long to generate (a
  // product's: 10-20 ms each on the 2-core VM): a stencil's take under a millisecond, and more
  // threads then mostly wait on the arithmetic's shared tables while the consumer's threads (a
  // ranking's) lose their cores.
  constexpr int64_t kProbePrograms = 16;
  constexpr double kParallelSeconds = 0.002;
  const bool slow = generated_programs >= kProbePrograms &&
                    generating_seconds >= kParallelSeconds * double(generated_programs);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads =
      options.threads > 0 ? options.threads
      : slow              ? (options.max_threads > 0 ? std::min(options.max_threads, cores) : cores)
                          : 1u;
  // Enough programs that each thread has a few, few enough that the stream stays close to its
  // consumer.
  const size_t batch = threads > 1 ? 4 * size_t(threads) : 1;
  // What lowering ahead throws is thrown where the stream reaches it, after the programs
  // lowered before it.
  try {
    while (!lowering_error && lowered.size() < batch && lower_more()) {
    }
  } catch (...) {
    lowering_error = std::current_exception();
  }
  std::vector<Lowered*> todo;
  for (Lowered& item : lowered)
    if (!item.generated)
      todo.push_back(&item);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < todo.size(); i = next++)
      generate(*todo[i]);
  };
  {
    std::vector<std::jthread> helpers;
    for (unsigned t = 1; t < threads && t < todo.size(); ++t)
      helpers.emplace_back(work);
    work();
  }
}

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

} // namespace liftx::space
