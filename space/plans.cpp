#include "space/stream_state.hpp"

#include "rewrite/lowering.hpp"

#include <algorithm>
#include <bit>
#include <initializer_list>

namespace liftx::space {

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
/// Scalars a streamed launch's work-item may hold in its register windows: an H200 work-item
/// has 255 registers, which the windows share with the planes computed and the addresses.
constexpr int64_t kMaxStreamScalars = 192;

/// Whether tiles of `tile` outputs cut the outputs of lengths `out` (outermost first) exactly,
/// into more than one tile along every dimension.
bool tile_divides(const std::vector<int64_t>& tile, const std::vector<int64_t>& out) {
  for (size_t d = 0; d < tile.size(); ++d)
    if (out[d] <= tile[d] || out[d] % tile[d] != 0)
      return false;
  return true;
}

} // namespace

void VariantStream::State::plan_reductions() {
  auto recognised = rewrite::as_matrix_reduction(root);
  if (!std::holds_alternative<rewrite::MatrixReduction>(recognised))
    return;
  const rewrite::MatrixReduction& m = std::get<rewrite::MatrixReduction>(recognised);
  auto length_of = [&](const ir::Type& t) -> int64_t {
    const auto* a = t.as<ir::ArrayType>();
    return a ? rewrite::evaluate_or(a->length, options.sizes, -1) : -1;
  };
  const int64_t length = length_of(m.data.type());
  const int64_t outputs = length_of(root.result_type());
  if (length < 1 || outputs < 1)
    return;
  const int64_t max_lanes = std::min<int64_t>(
      {1024, options.device.max_work_group_size, options.device.max_work_item_sizes[0]});
  for (int64_t lanes : rewrite::powers_of_two(32, max_lanes))
    for (int64_t parts :
         rewrite::powers_of_two(1, m.columns ? std::min<int64_t>(32, lanes) : lanes)) {
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

void VariantStream::State::queue_built(const std::variant<ir::Program, std::string>& lowered,
                                       const std::string& label, const std::string& indivisible,
                                       const std::string& strategy,
                                       std::map<std::string, int64_t> params) {
  if (auto* why = std::get_if<std::string>(&lowered)) {
    reject(label + ": " + first_words(*why, 6));
    return;
  }
  if (!rewrite::lengths_exact(std::get<ir::Program>(lowered), options.sizes)) {
    reject(indivisible);
    return;
  }
  queue_lowered(std::get<ir::Program>(lowered), strategy, std::move(params), false);
}

void VariantStream::State::lower_next_reduction() {
  const rewrite::ReductionTiling tiling = reductions.front();
  reductions.pop_front();
  queue_built(rewrite::build_matrix_reduction(root, tiling), "reduction",
              "reduction parts do not divide", rewrite::kReductionStrategy,
              {{"lanes", tiling.lanes}, {"parts", tiling.parts}});
}

void VariantStream::State::plan_products() {
  if (!std::holds_alternative<rewrite::ProductGrid>(rewrite::as_product_grid(root)))
    return;
  for (int64_t rows : {2, 4, 8, 16})
    for (int64_t columns : {2, 4, 8})
      for (int64_t unroll : {1, 4, 8})
        if (rows * columns >= 8) {
          products.push_back({rows, columns, unroll, true});
          if (columns % 4 == 0)
            vector_products.push_back({rows, columns, unroll, true, 4});
        }
  // Every work-group, block, chunk and way of copying each operand, in the space's order.
  const auto each_tiling = [](const auto& visit) {
    for (auto [threads_y, threads_x] :
         {std::pair<int64_t, int64_t>{8, 8}, {16, 8}, {8, 16}, {16, 16}})
      for (int64_t rows : {2, 4, 8})
        for (int64_t columns : {2, 4, 8})
          for (int64_t chunk : {4, 8, 16})
            for (bool rows_along : {true, false})
              for (bool columns_along : {false, true})
                visit(rewrite::LocalTiling{threads_y, threads_x, rows, columns, chunk, rows_along,
                                           columns_along});
  };
  each_tiling([&](rewrite::LocalTiling tiling) {
    for (int64_t padding : {0, 1})
      for (bool interleaved : {false, true}) {
        tiling.padding = padding;
        tiling.interleaved = interleaved;
        local_tilings.push_back(tiling);
      }
  });
  // Vector reads of the blocks from local memory, after the scalar tilings (whose indices they
  // keep): contiguous blocks, tiles unpadded so that every step's row of a tile stays aligned,
  // at least one block consecutive at a step (the builder refuses the others).
  each_tiling([&](rewrite::LocalTiling tiling) {
    if ((tiling.rows_copied_along_steps || tiling.rows % 4 != 0) &&
        (tiling.columns_copied_along_steps || tiling.columns % 4 != 0))
      return;
    tiling.vector_width = 4;
    local_tilings.push_back(tiling);
  });
  // Vector reads of A's blocks copied by a transposing copy (reads along A's rows coalesce),
  // tiles unpadded or padded by 4 (aligned, the copy's writes spread over banks); then the
  // same with outputs interleaved by vectors (neighbouring work-items read neighbouring float4s
  // of a step, distinct banks), blocks of 4 or 8 along each side and larger chunks.
  const auto transposing_tilings = [&](std::initializer_list<int64_t> column_counts,
                                       std::initializer_list<int64_t> chunks, bool interleaved) {
    for (auto [threads_y, threads_x] :
         {std::pair<int64_t, int64_t>{8, 8}, {16, 8}, {8, 16}, {16, 16}})
      for (int64_t rows : {4, 8})
        for (int64_t columns : column_counts)
          for (int64_t chunk : chunks)
            for (int64_t padding : {0, 4}) {
              rewrite::LocalTiling tiling{threads_y, threads_x, rows,  columns,
                                          chunk,     true,      false, padding};
              tiling.vector_width = 4;
              tiling.rows_stored_by_step = true;
              tiling.interleaved = interleaved;
              local_tilings.push_back(tiling);
            }
  };
  transposing_tilings({2, 4, 8}, {4, 8, 16}, false);
  transposing_tilings({4, 8}, {8, 16}, true);
}

void VariantStream::State::lower_next_product() {
  const rewrite::RegisterBlocking blocking = products.front();
  products.pop_front();
  lower_product(blocking);
}

void VariantStream::State::lower_next_vector_product() {
  const rewrite::RegisterBlocking blocking = vector_products.front();
  vector_products.pop_front();
  lower_product(blocking);
}

void VariantStream::State::lower_product(const rewrite::RegisterBlocking& blocking) {
  std::map<std::string, int64_t> params{{"rows", blocking.rows},
                                        {"columns", blocking.columns},
                                        {"unroll", blocking.unroll},
                                        {"private_copies", blocking.private_copies ? 1 : 0}};
  // Only vector variants name their width: the others' parameters stay as they were.
  if (blocking.vector_width > 1)
    params.emplace("vector_width", blocking.vector_width);
  queue_built(rewrite::build_register_blocked(root, blocking), "register block",
              "register block does not divide", rewrite::kRegisterBlockStrategy, std::move(params));
}

void VariantStream::State::lower_next_local_tiling() {
  const rewrite::LocalTiling tiling = local_tilings.front();
  local_tilings.pop_front();
  std::map<std::string, int64_t> params{
      {"threads_y", tiling.threads_y},
      {"threads_x", tiling.threads_x},
      {"rows", tiling.rows},
      {"columns", tiling.columns},
      {"chunk", tiling.chunk},
      {"rows_along_steps", tiling.rows_copied_along_steps ? 1 : 0},
      {"columns_along_steps", tiling.columns_copied_along_steps ? 1 : 0},
      {"padding", tiling.padding},
      {"interleaved", tiling.interleaved ? 1 : 0}};
  // Only vector variants name their width: the scalar ones' parameters stay as they were.
  if (tiling.vector_width > 1)
    params.emplace("vector_width", tiling.vector_width);
  if (tiling.rows_stored_by_step)
    params.emplace("rows_stored_by_step", 1);
  if (tiling.columns_stored_by_step)
    params.emplace("columns_stored_by_step", 1);
  queue_built(rewrite::build_local_tiled(root, tiling), "local tiles", "local tiles do not divide",
              rewrite::kLocalTilesStrategy, std::move(params));
}

void VariantStream::State::plan_temporal() {
  auto recognised = rewrite::as_stencil_step(iteration->step);
  if (!std::holds_alternative<rewrite::StencilStep>(recognised))
    return;
  const rewrite::StencilStep& s = stencil_step.emplace(std::get<rewrite::StencilStep>(recognised));
  std::vector<int64_t> out; // output lengths, outermost first
  for (const arith::Expr& length : ir::array_shape(root.result_type()))
    out.push_back(rewrite::evaluate_or(length, options.sizes, -1));
  if (static_cast<int>(out.size()) != s.rank)
    return;
  const bool three = s.rank == 3;
  using Memory = rewrite::TemporalTiling::Memory;
  for (int64_t t : {2, 3, 4, 6, 8}) {
    if (t > iteration->count)
      continue;
    for (Memory memory : {Memory::local, Memory::registers, Memory::stream}) {
      const bool stream = memory == Memory::stream;
      // (The other streams, pipelines of windows, are planned by plan_streams.)
      if (stream && (!three || t != 2 || s.boundary.kind == ir::Boundary::Kind::Constant))
        continue;
      const bool registers = memory != Memory::local;
      for (int64_t tz : three ? rewrite::powers_of_two(stream ? 4 : 1, stream ? 64 : 8)
                              : std::vector<int64_t>{1})
        for (int64_t ty : rewrite::powers_of_two(registers || three ? 1 : 2,
                                                 registers ? (three ? 8 : 32) : options.max_tile))
          for (int64_t tx :
               rewrite::powers_of_two(registers ? 1 : 4, registers ? 8 : 2 * options.max_tile))
            for (bool stage : {false, true}) {
              // A stream's registers hold planes of its column, not the column.
              if (registers && (stream ? tx * ty : tx * ty * tz) > kMaxRegisterTile)
                continue;
              if (stage && s.boundary.kind != ir::Boundary::Kind::Wrap)
                continue;
              const std::vector<int64_t> tile =
                  three ? std::vector<int64_t>{tz, ty, tx} : std::vector<int64_t>{ty, tx};
              if (!tile_divides(tile, out)) {
                reject("tile does not divide");
                continue;
              }
              rewrite::TemporalTiling tiling{t, tx, ty, stage, memory};
              tiling.tile_z = tz;
              if (rewrite::redundant_work_ratio(s, tiling) >
                  (registers ? kMaxRedundantRegisterWork : kMaxRedundantWork)) {
                reject("temporal tile recomputes too much");
                continue;
              }
              temporal.push_back(tiling);
            }
    }
  }
  plan_streams(s, out);
}

void VariantStream::State::plan_streams(const rewrite::StencilStep& s,
                                        const std::vector<int64_t>& out) {
  // Pipelines of register windows (the two-step 3D stream of a boundary that remaps indices is
  // planned above): many steps on narrow columns, long along the streamed dimension so that the
  // rows (planes) its first windows fill before any output are a small share.
  const bool three = s.rank == 3;
  const bool constant = s.boundary.kind == ir::Boundary::Kind::Constant;
  const std::vector<int64_t> along =
      three ? std::vector<int64_t>{8, 16, 32, 64} : std::vector<int64_t>{16, 32, 64, 128};
  const std::vector<int64_t> across =
      three ? std::vector<int64_t>{1, 2, 4} : std::vector<int64_t>{1, 2, 4, 8};
  for (int64_t t : {2, 3, 4, 5, 6, 8}) {
    if (t > iteration->count || (three && t == 2 && !constant))
      continue;
    for (int64_t streamed : along)
      for (int64_t ty : three ? across : std::vector<int64_t>{streamed})
        for (int64_t tx : across) {
          rewrite::TemporalTiling tiling{t, tx, three ? ty : streamed, false,
                                         rewrite::TemporalTiling::Memory::stream};
          tiling.tile_z = three ? streamed : 1;
          const std::vector<int64_t> tile =
              three ? std::vector<int64_t>{streamed, ty, tx} : std::vector<int64_t>{streamed, tx};
          if (!tile_divides(tile, out)) {
            reject("tile does not divide");
            continue;
          }
          if (rewrite::stream_window_scalars(s, tiling) > kMaxStreamScalars) {
            reject("stream windows exceed the registers");
            continue;
          }
          if (rewrite::redundant_work_ratio(s, tiling) > kMaxRedundantRegisterWork) {
            reject("temporal tile recomputes too much");
            continue;
          }
          // The loop along the stream rolled, or unrolled by one or two windows: which is best
          // varies with the registers the windows take (bench/RESULTS.md, "Streamed pipelines").
          for (int64_t unroll : {int64_t{1}, s.window, 2 * s.window}) {
            if (unroll > ir::kMaxSlideUnroll)
              continue;
            tiling.unroll = unroll;
            temporal.push_back(tiling);
          }
        }
  }
  if (options.shared_streams)
    plan_shared_streams(s, out);
  if ((options.warp_streams || options.device.subgroup_shuffle) && s.rank == 2)
    plan_warp_streams(s, out);
}

void VariantStream::State::plan_rolled_and_unrolled(rewrite::TemporalTiling tiling,
                                                    int64_t copies) {
  for (int64_t unroll : {int64_t{1}, copies}) {
    if (unroll > ir::kMaxSlideUnroll)
      continue;
    tiling.unroll = unroll;
    temporal.push_back(tiling);
  }
}

void VariantStream::State::plan_shared_streams(const rewrite::StencilStep& s,
                                               const std::vector<int64_t>& out) {
  // Pipelines streamed by a work-group, each step's last rows (planes) in local memory shared by
  // its work-items (AN5D's N.5D blocking): wide columns, whose halo across the sides is a small
  // share, and up to ten steps (AN5D's deepest); long along the stream, so that the rows filling
  // the pipeline before its first output are few.
  const bool three = s.rank == 3;
  using Plane = std::pair<int64_t, int64_t>; // outputs across: y, x (2D: 1, x)
  const std::vector<int64_t> along =
      three ? std::vector<int64_t>{16, 32, 64, 128} : std::vector<int64_t>{64, 128, 256};
  const std::vector<Plane> planes =
      three ? std::vector<Plane>{{4, 32}, {8, 32}, {8, 64}, {16, 16}, {16, 32}}
            : std::vector<Plane>{{1, 32}, {1, 64}, {1, 128}, {1, 256}};
  for (int64_t t : {2, 3, 4, 5, 6, 8, 10}) {
    if (t > iteration->count)
      continue;
    for (int64_t streamed : along)
      for (const auto& [ty, tx] : planes) {
        rewrite::TemporalTiling tiling{t, tx, three ? ty : streamed, false,
                                       rewrite::TemporalTiling::Memory::shared_stream};
        tiling.tile_z = three ? streamed : 1;
        const std::vector<int64_t> tile =
            three ? std::vector<int64_t>{streamed, ty, tx} : std::vector<int64_t>{streamed, tx};
        if (!tile_divides(tile, out)) {
          reject("tile does not divide");
          continue;
        }
        if (rewrite::redundant_work_ratio(s, tiling) > kMaxRedundantWork) {
          reject("temporal tile recomputes too much");
          continue;
        }
        // Rolled, or unrolled by the window.
        plan_rolled_and_unrolled(tiling, s.window);
      }
  }
}

void VariantStream::State::plan_warp_streams(const rewrite::StencilStep& s,
                                             const std::vector<int64_t>& out) {
  // A sub-group per column: rows of lanes x columns, the outputs and at least t reaches of halo,
  // on at most one warp's 32 work-items and at least 24 of them (a warp three quarters busy).
  constexpr int64_t kMaxLanes = 32, kMinLanes = 24;
  const int64_t reach = s.window - 1;
  for (int64_t t : {2, 3, 4, 5, 6, 8, 10}) {
    if (t > iteration->count)
      continue;
    for (int64_t streamed : {64, 128, 256})
      for (int64_t tile_x : {32, 64, 128, 256})
        for (int64_t columns : {2, 3, 4, 5, 6, 8}) {
          const int64_t lanes = (tile_x + t * reach + columns - 1) / columns;
          if (lanes > kMaxLanes || lanes < kMinLanes)
            continue;
          rewrite::TemporalTiling tiling{t, tile_x, streamed, false,
                                         rewrite::TemporalTiling::Memory::warp_stream};
          tiling.lanes = lanes;
          tiling.lane_columns = columns;
          if (!tile_divides({streamed, tile_x}, out)) {
            reject("tile does not divide");
            continue;
          }
          if (static_cast<double>(lanes * columns) / static_cast<double>(tile_x) >
              kMaxRedundantWork) {
            reject("temporal tile recomputes too much");
            continue;
          }
          plan_warp_stream_loops(s, tiling);
        }
    // A full warp whose rows carry every output its columns leave after the halo, the last tile
    // of a row shifted back to the grid's edge (TemporalTiling::shifted_last): at ten steps of
    // a 3-point reach, 76 outputs in 96 columns where a dividing tile carries 64.
    // With options.shifted_strips, also strips of every height from 72 to 512 rows in steps of
    // 8, the last one shifted up where they do not divide the grid's: fine enough to put a
    // launch's last wave near full (docs/results.md, "The last wave").
    std::vector<int64_t> heights{64, 128, 256};
    for (int64_t h = 72; options.shifted_strips && h <= 512; h += 8)
      if (h != 128 && h != 256)
        heights.push_back(h);
    for (int64_t streamed : heights)
      for (int64_t columns : {2, 3, 4, 5, 6, 8}) {
        const int64_t tile_x = kMaxLanes * columns - t * reach;
        const bool divides = tile_x >= 1 && out[1] % tile_x == 0;
        const bool standard_height = streamed == 64 || streamed == 128 || streamed == 256;
        if (tile_x < 1 ||
            (standard_height && divides && std::has_single_bit(static_cast<uint64_t>(tile_x)) &&
             tile_x >= 32 && tile_x <= 256))
          continue; // planned above
        rewrite::TemporalTiling tiling{t, tile_x, streamed, false,
                                       rewrite::TemporalTiling::Memory::warp_stream};
        tiling.lanes = kMaxLanes;
        tiling.lane_columns = columns;
        tiling.shifted_last = !divides;
        tiling.shifted_rows = out[0] % streamed != 0;
        if (out[0] <= streamed || (tiling.shifted_rows && standard_height) || out[1] <= tile_x) {
          reject("tile does not divide");
          continue;
        }
        if (tiling.shifted_last && !rewrite::shifted_tiles_fit(s, tiling, out[1])) {
          reject("shifted tile short of its margin");
          continue;
        }
        if (tiling.shifted_rows && !rewrite::shifted_strips_fit(s, tiling, out[0])) {
          reject("shifted strip short of its margin");
          continue;
        }
        if (static_cast<double>(kMaxLanes * columns) / static_cast<double>(tile_x) >
            kMaxRedundantWork) {
          reject("temporal tile recomputes too much");
          continue;
        }
        plan_warp_stream_loops(s, tiling);
      }
  }
}

void VariantStream::State::plan_warp_stream_loops(const rewrite::StencilStep& s,
                                                  rewrite::TemporalTiling tiling) {
  // Rolled, or unrolled by its rings' slots (a window and the row being written): each copy
  // then reads the registers of a ring at constant slots. Where the rows are registers (the
  // device shuffles), a rolled loop indexes its rings by the row modulo the slots, which keeps
  // them out of registers: on an H100 each rolled warp stream ran 3.2-5.2x slower than its shape
  // unrolled (six pairs, docs/results.md), so only the unrolled one is planned there.
  const int64_t copies = s.window + 1;
  if (options.device.subgroup_shuffle && copies <= ir::kMaxSlideUnroll) {
    tiling.unroll = copies;
    temporal.push_back(tiling);
  } else {
    plan_rolled_and_unrolled(tiling, copies);
  }
}

void VariantStream::State::lower_next_temporal() {
  const rewrite::TemporalTiling tiling = temporal.front();
  temporal.pop_front();
  using Memory = rewrite::TemporalTiling::Memory;
  const bool registers = tiling.memory == Memory::registers || tiling.memory == Memory::stream;
  auto fused = rewrite::fuse_steps_tiled(iteration->step, tiling);
  if (auto* why = std::get_if<std::string>(&fused)) {
    reject("temporal: " + first_words(*why, 6));
    return;
  }
  if (!rewrite::lengths_exact(std::get<ir::Program>(fused), options.sizes)) {
    reject("tile does not divide");
    return;
  }
  const int64_t launches = iteration->count / tiling.degree;
  const int64_t remainder = iteration->count % tiling.degree;
  ir::Program lowered = ir::iterate_step(std::get<ir::Program>(fused), launches, iteration->input);
  if (remainder > 0) {
    // The steps left over: one launch of them, the same tiles (a register tile's launch is
    // then the same as the fused one's).
    rewrite::TemporalTiling rest = tiling;
    rest.degree = remainder;
    auto tail = rewrite::fuse_steps_tiled(iteration->step, rest);
    if (auto* why = std::get_if<std::string>(&tail)) {
      reject("temporal remainder: " + first_words(*why, 6));
      return;
    }
    lowered = ir::iterate_steps(std::get<ir::Program>(fused), launches, std::get<ir::Program>(tail),
                                1, iteration->input);
  }
  std::map<std::string, int64_t> parameters{{"steps_per_launch", tiling.degree},
                                            {"tile_x", tiling.tile_x},
                                            {"tile_y", tiling.tile_y},
                                            {"stage", tiling.stage_input ? 1 : 0},
                                            {"registers", registers ? 1 : 0}};
  if (remainder > 0)
    parameters["remainder_steps"] = remainder;
  const bool three = rewrite::grid_rank(root.result_type(), options.sizes) == 3;
  const bool shared = tiling.memory == Memory::shared_stream;
  const bool streamed = tiling.memory == Memory::stream || shared;
  if (three) {
    parameters["tile_z"] = tiling.tile_z;
    parameters["stream"] = streamed ? 1 : 0;
  } else if (streamed) {
    parameters["stream"] = 1;
  }
  // The rows of a shared stream live in the work-group's local memory.
  if (shared)
    parameters["shared"] = 1;
  // A warp stream's work-group is its lanes: its launch is the tied one only.
  const bool warp = tiling.memory == Memory::warp_stream;
  if (warp) {
    parameters["stream"] = 1;
    parameters["warp"] = 1;
    parameters["lanes"] = tiling.lanes;
    parameters["columns"] = tiling.lane_columns;
    if (tiling.shifted_last)
      parameters["shifted"] = 1;
    if (tiling.shifted_rows)
      parameters["shifted_rows"] = 1;
  }
  if (rewrite::streams_as_pipeline(*stencil_step, tiling))
    parameters["unroll"] = tiling.unroll;
  // A register tile's work-items need no free-thread loops.
  queue_lowered(lowered, three ? rewrite::kTemporalStrategy3D : rewrite::kTemporalStrategy,
                std::move(parameters), !registers && !warp);
}

} // namespace liftx::space
