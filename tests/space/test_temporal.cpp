// Temporal blocking: fused, tiled steps of iterated 2D and 3D stencils run on PoCL and verify
// against the interpreter's iterate of the unfused step, for every boundary, at the grid's edges
// of non-square grids; what does not fuse is refused with its reason.
#include "../sanitized.hpp"
#include "codegen/kernel.hpp"
#include "exec/run.hpp"
#include "ir/host_iteration.hpp"
#include "ir/parse/parser.hpp"
#include "rewrite/temporal.hpp"
#include "runtime/device.hpp"
#include "space/default_lowering.hpp"
#include "space/space.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace liftx;

namespace {

runtime::Device& cpu() {
  static runtime::Device device = runtime::select_device("cpu");
  return device;
}

/// A 5-point star with unequal weights (a transposed or shifted window would not verify), or a
/// 3 x 3 box with the reach split unevenly (padding 0 before, 2 after) when `skewed`.
ir::Program heat(int64_t steps, const std::string& boundary, bool skewed = false) {
  const std::string uf = R"(
userfun star(c: float, n: float, s: float, e: float, w: float): float {
  return 0.5f * c + 0.2f * n + 0.1f * s + 0.15f * e + 0.05f * w;
}
)";
  const std::string pad = skewed ? "pad2D(0, 2, 0, 2, " : "pad2D(1, 1, ";
  return parse::parse_module(
             uf + fmt::format("def heat(grid: [[float]N]M) = iterate({}, x => map2D(nbh => "
                              "star(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]), "
                              "slide2D(3, 1, {}{}, x))), grid)",
                              steps, pad, boundary),
             "<test>")
      .main();
}

/// A 7-point 3D star with a weight per direction, or a 3 x 3 x 3 box's corners and centre with
/// the reach split unevenly (padding 0 before, 2 after) when `skewed`.
ir::Program heat3d(int64_t steps, const std::string& boundary, bool skewed = false) {
  const std::string uf = R"(
userfun star7(c: float, f: float, b: float, n: float, s: float, w: float, e: float): float {
  return 0.4f * c + 0.11f * f + 0.09f * b + 0.12f * n + 0.08f * s + 0.13f * w + 0.07f * e;
}
)";
  const std::string pad = skewed ? "pad3D(0, 2, 0, 2, 0, 2, " : "pad3D(1, 1, ";
  return parse::parse_module(
             uf + fmt::format("def heat(grid: [[[float]O]N]M) = iterate({}, x => map3D(nbh => "
                              "star7(nbh[1][1][1], nbh[0][1][1], nbh[2][1][1], nbh[1][0][1], "
                              "nbh[1][2][1], nbh[1][1][0], nbh[0][2][2]), slide3D(3, 1, {}{}, "
                              "x))), grid)",
                              steps, pad, boundary),
             "<test>")
      .main();
}

exec::RunReport run_fused(const ir::Program& program, const rewrite::TemporalTiling& tiling,
                          const Sizes& sizes,
                          codegen::SubgroupRows subgroup_rows = codegen::SubgroupRows::local_memory,
                          bool interior_tiles = false) {
  const std::optional<ir::HostIteration> h = ir::host_iteration(program);
  REQUIRE(h);
  auto fused = rewrite::fuse_steps_tiled(h->step, tiling);
  if (const auto* why = std::get_if<std::string>(&fused))
    FAIL("not fused: " << *why);
  ir::Program lowered =
      ir::iterate_step(std::get<ir::Program>(fused), h->count / tiling.degree, h->input);
  if (const int64_t remainder = h->count % tiling.degree; remainder > 0) {
    rewrite::TemporalTiling rest = tiling;
    rest.degree = remainder;
    auto tail = rewrite::fuse_steps_tiled(h->step, rest);
    if (const auto* why = std::get_if<std::string>(&tail))
      FAIL("remainder not tiled: " << *why);
    lowered = ir::iterate_steps(std::get<ir::Program>(fused), h->count / tiling.degree,
                                std::get<ir::Program>(tail), 1, h->input);
  }
  exec::RunOptions o;
  o.time = false;
  o.roofline = false;
  o.reference = &program;
  o.subgroup_rows = subgroup_rows;
  o.interior_tiles = interior_tiles;
  return exec::run_program(cpu(), lowered, sizes, o);
}

/// `v` run with its launch on PoCL and checked against `reference`'s interpretation.
exec::RunReport run_variant(const ir::Program& reference, const space::Variant& v,
                            const Sizes& sizes) {
  exec::RunOptions run;
  run.time = false;
  run.roofline = false;
  run.reference = &reference;
  const codegen::LaunchRequest request = codegen::request_for(v.launch);
  run.local = request.local;
  run.global = request.global;
  return exec::run_program(cpu(), v.program, sizes, run);
}

/// The space of a 16 x 32 grid with tiles of at most 8, as the NVIDIA profile allows it.
space::SpaceOptions small_grid_space() {
  space::SpaceOptions o;
  o.sizes = {{"M", 16}, {"N", 32}};
  o.device = runtime::named_profile("nvidia").limits();
  o.max_tile = 8;
  o.depth = 0;
  return o;
}

/// The fused (temporal blocking) variants of `program`'s space, in stream order.
std::vector<space::Variant> fused_variants(const ir::Program& program,
                                           const space::SpaceOptions& options) {
  space::VariantStream stream(program, options);
  std::vector<space::Variant> fused;
  space::Variant v;
  while (stream.next(v))
    if (v.strategy == rewrite::kTemporalStrategy)
      fused.push_back(v);
  return fused;
}

/// The fused variants of `program`'s space that carry `parameter` ("shared", "warp").
std::vector<space::Variant> fused_variants_with(const ir::Program& program,
                                                const space::SpaceOptions& options,
                                                const std::string& parameter) {
  std::vector<space::Variant> with;
  for (space::Variant& v : fused_variants(program, options))
    if (v.parameters.count(parameter) > 0)
      with.push_back(std::move(v));
  return with;
}

} // namespace

TEST_CASE("fused steps verify against iterate at the edges of non-square grids") {
  const Sizes sizes{{"M", 20}, {"N", 24}};
  using Memory = rewrite::TemporalTiling::Memory;
  struct Row {
    const char* boundary;
    int64_t steps, degree, tile_x, tile_y;
    bool stage, skewed;
    Memory memory = Memory::local;
    int64_t unroll = 1; ///< a pipeline's loop along the stream
  };
  const Row rows[] = {
      {"clamp", 4, 2, 8, 4, false, false},
      {"clamp", 2, 2, 4, 10, false, true},
      {"mirror", 6, 2, 8, 5, false, false},
      {"wrap", 4, 2, 8, 4, false, false},
      {"wrap", 6, 3, 4, 4, false, false},
      {"wrap", 6, 3, 8, 5, true, true},
      {"wrap", 8, 4, 12, 10, true, false},
      {"wrap", 6, 6, 6, 4, false, false},
      {"clamp", 4, 2, 4, 2, false, false, Memory::registers},
      {"mirror", 2, 2, 2, 4, false, true, Memory::registers},
      {"wrap", 6, 3, 4, 4, true, false, Memory::registers},
      {"wrap", 4, 4, 2, 2, false, true, Memory::registers},
      // T not a multiple of t: T / t fused launches, then one launch of the steps left over
      // (one step: the tile alone, any boundary; more: fused as well).
      {"clamp", 5, 2, 8, 4, false, false},
      {"mirror", 3, 2, 4, 10, false, true},
      {"wrap", 7, 3, 8, 5, true, false},
      {"wrap", 7, 4, 12, 10, false, true},
      {"clamp", 5, 2, 4, 2, false, true, Memory::registers},
      {"mirror", 7, 2, 2, 4, false, false, Memory::registers},
      {"wrap", 11, 4, 4, 4, true, false, Memory::registers},
      {"wrap", 3, 2, 2, 2, false, true, Memory::registers},
      // Clamp and mirror past two steps: each intermediate region re-clamped at the grid's
      // edges inside the tile (the first, the last and the only tile along a dimension).
      {"clamp", 6, 3, 4, 4, false, false, Memory::registers},
      {"clamp", 8, 4, 4, 4, false, false, Memory::registers},
      {"clamp", 7, 3, 8, 10, false, true, Memory::registers},
      {"clamp", 6, 3, 8, 5, true, false},
      {"clamp", 4, 4, 24, 4, false, false},
      {"mirror", 6, 3, 4, 4, false, false, Memory::registers},
      {"mirror", 9, 4, 8, 10, false, true, Memory::registers},
      {"mirror", 6, 3, 12, 10, true, true},
      // A constant boundary, re-padded from two steps on (the constant at every step's edge).
      {"constant(0.5f)", 4, 2, 4, 2, false, false, Memory::registers},
      {"constant(0.5f)", 7, 3, 8, 5, false, true},
      {"constant(-1.0f)", 6, 3, 4, 4, true, false, Memory::registers},
      {"constant(0.5f)", 9, 4, 12, 10, false, false},
      // Streamed along y: a pipeline of register windows of rows, one per step, each window
      // of a later step re-clamped as it crosses the grid's first or last row.
      {"clamp", 4, 2, 4, 5, false, false, Memory::stream},
      {"clamp", 7, 3, 4, 4, false, true, Memory::stream},
      {"clamp", 6, 6, 8, 10, false, false, Memory::stream},
      {"mirror", 9, 4, 4, 10, false, false, Memory::stream},
      {"wrap", 8, 4, 2, 4, false, true, Memory::stream},
      // Unrolled along the stream by one or two windows, the tile's rows not a multiple of it.
      {"clamp", 7, 3, 4, 10, false, true, Memory::stream, 3},
      {"mirror", 6, 3, 4, 5, false, false, Memory::stream, 6},
      {"constant(0.5f)", 5, 2, 4, 4, false, false, Memory::stream, 3},
      {"wrap", 11, 5, 1, 10, false, false, Memory::stream},
      {"constant(0.5f)", 7, 3, 4, 5, false, true, Memory::stream},
      {"constant(-1.0f)", 10, 5, 6, 4, false, false, Memory::stream},
      // Streamed by a work-group: each step's last rows in a ring of local memory shared by
      // the group's work-items (a remainder's single step streamed the same way).
      {"clamp", 5, 2, 4, 5, false, false, Memory::shared_stream},
      {"clamp", 7, 3, 8, 10, false, true, Memory::shared_stream},
      {"clamp", 9, 4, 6, 5, false, false, Memory::shared_stream, 3},
      {"clamp", 6, 6, 8, 10, false, false, Memory::shared_stream},
      {"mirror", 7, 3, 4, 10, false, false, Memory::shared_stream},
      {"wrap", 8, 4, 8, 4, false, true, Memory::shared_stream},
      {"wrap", 11, 5, 12, 10, false, false, Memory::shared_stream, 6},
      {"constant(0.5f)", 7, 3, 6, 5, false, false, Memory::shared_stream},
      {"constant(-1.0f)", 5, 2, 12, 4, false, true, Memory::shared_stream},
  };
  for (const Row& row : rows) {
    CAPTURE(row.boundary);
    CAPTURE(row.degree);
    CAPTURE(row.tile_x);
    CAPTURE(row.tile_y);
    CAPTURE(row.stage);
    CAPTURE(row.skewed);
    CAPTURE(row.memory == Memory::registers);
    CAPTURE(row.memory == Memory::stream);
    CAPTURE(row.memory == Memory::shared_stream);
    CAPTURE(row.unroll);
    rewrite::TemporalTiling tiling{row.degree, row.tile_x, row.tile_y, row.stage, row.memory};
    tiling.unroll = row.unroll;
    const ir::Program program = heat(row.steps, row.boundary, row.skewed);
    if (row.unroll > 1) {
      auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
      REQUIRE(std::holds_alternative<ir::Program>(fused));
      CHECK(codegen::generate(std::get<ir::Program>(fused))
                .source.find(fmt::format("#pragma unroll {}", row.unroll)) != std::string::npos);
    }
    if (row.memory == Memory::shared_stream) {
      // The rows live in the work-group's local memory, not in each work-item's registers.
      auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
      REQUIRE(std::holds_alternative<ir::Program>(fused));
      const std::string source = codegen::generate(std::get<ir::Program>(fused)).source;
      CHECK(source.find("win_") == std::string::npos);
      CHECK(source.find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos);
    }
    const exec::RunReport r = run_fused(program, tiling, sizes);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
    CHECK(r.verification.passed);
    CHECK(r.verification.elements == 20 * 24);
    CHECK(r.launches == row.steps / row.degree + (row.steps % row.degree > 0 ? 1 : 0));
  }
}

TEST_CASE("interior tiles get a copy of their code without repairs, and verify") {
  // 3 x 4 tiles and more: interior tiles take the copy, edge tiles the code that repairs.
  const Sizes sizes{{"M", 20}, {"N", 24}};
  using Memory = rewrite::TemporalTiling::Memory;
  struct Row {
    const char* boundary;
    int64_t steps, degree, tile_x, tile_y;
    Memory memory;
    int64_t lanes = 0, columns = 0; ///< a warp stream's
  };
  // Work-groups' tiles, with barriers: every work-item of a group takes the same copy.
  const Row rows[] = {
      {"clamp", 6, 3, 8, 5, Memory::local},
      {"clamp", 5, 2, 8, 5, Memory::warp_stream, 4, 3},
      {"mirror", 5, 2, 8, 5, Memory::warp_stream, 4, 4},
      {"constant(0.5f)", 7, 3, 8, 5, Memory::warp_stream, 4, 4},
  };
  for (const Row& row : rows) {
    CAPTURE(row.boundary);
    CAPTURE(static_cast<int>(row.memory));
    rewrite::TemporalTiling tiling{row.degree, row.tile_x, row.tile_y, false, row.memory};
    tiling.lanes = row.lanes;
    tiling.lane_columns = row.columns;
    const ir::Program program = heat(row.steps, row.boundary);
    auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
    REQUIRE(std::holds_alternative<ir::Program>(fused));
    codegen::Options o;
    o.interior_tiles = true;
    const codegen::Kernel copied = codegen::generate(std::get<ir::Program>(fused), o);
    const codegen::Kernel once = codegen::generate(std::get<ir::Program>(fused));
    // Interior tiles' code (between the two conditions) asks no edge; the records (what the
    // features read) are one copy's.
    const size_t interior = copied.source.find(") == 0) {");
    const size_t edges = copied.source.find("if (!(liftxTileEdge(");
    REQUIRE(interior != std::string::npos);
    REQUIRE(edges != std::string::npos);
    const std::string copy = copied.source.substr(interior, edges - interior);
    CHECK(copy.find("liftxTileEdge(") == std::string::npos);
    CHECK(copied.source.substr(edges).find("liftxTileEdge(", 5) != std::string::npos);
    // With the copy the work-groups take the edge tiles first (codegen/tile_order.hpp); with one
    // copy, or edge_tiles_first off, the natural order.
    CHECK(copied.source.find(" = liftxEdgeTilesFirst2(") != std::string::npos);
    CHECK(once.source.find("liftxEdgeTilesFirst") == std::string::npos);
    codegen::Options natural = o;
    natural.edge_tiles_first = false;
    const codegen::Kernel in_order = codegen::generate(std::get<ir::Program>(fused), natural);
    CHECK(in_order.source.find("liftxEdgeTilesFirst") == std::string::npos);
    CHECK(in_order.source.find("get_group_id(1);") != std::string::npos);
    CHECK(copied.accesses.size() == once.accesses.size());
    CHECK(copied.loops.size() == once.loops.size());
    CHECK(copied.barriers.size() == once.barriers.size());
    // A copy with barriers ends with one more, which PoCL needs between the two copies.
    const bool barriers = !once.barriers.empty();
    const std::string after_copy = copy.substr(copy.rfind("}\n"));
    CHECK((after_copy.find("barrier(") != std::string::npos) == barriers);
    for (const codegen::SubgroupRows rows_in :
         {codegen::SubgroupRows::local_memory, codegen::SubgroupRows::emulated_shuffle}) {
      if (row.memory != Memory::warp_stream && rows_in != codegen::SubgroupRows::local_memory)
        continue;
      const exec::RunReport r = run_fused(program, tiling, sizes, rows_in, true);
      INFO(r.message);
      CHECK(r.status == runtime::Status::ok);
      CHECK(r.verification.passed);
    }
  }
  // A work-item's tile (register and streamed pipelines, mapGlb) keeps one copy, byte for byte:
  // copied, they ran slower on an H100.
  for (const Row& row :
       {Row{"clamp", 8, 4, 4, 4, Memory::registers}, Row{"mirror", 7, 3, 4, 5, Memory::stream}}) {
    CAPTURE(row.boundary);
    rewrite::TemporalTiling tiling{row.degree, row.tile_x, row.tile_y, false, row.memory};
    auto fused =
        rewrite::fuse_steps_tiled(ir::host_iteration(heat(row.steps, row.boundary))->step, tiling);
    REQUIRE(std::holds_alternative<ir::Program>(fused));
    codegen::Options o;
    o.interior_tiles = true;
    const std::string source = codegen::generate(std::get<ir::Program>(fused), o).source;
    CHECK(source.find("liftxTileEdge(") != std::string::npos);
    CHECK(source == codegen::generate(std::get<ir::Program>(fused)).source);
  }
  // A shared stream (a work-group's rows in local memory) keeps one copy: PoCL computes it wrong
  // copied, so the copy could not be checked.
  {
    rewrite::TemporalTiling shared{2, 8, 5, false, Memory::shared_stream};
    auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(heat(5, "mirror"))->step, shared);
    REQUIRE(std::holds_alternative<ir::Program>(fused));
    codegen::Options o;
    o.interior_tiles = true;
    const std::string source = codegen::generate(std::get<ir::Program>(fused), o).source;
    CHECK(source.find("liftxTileEdge(") != std::string::npos);
    CHECK(source.find(") == 0) {") == std::string::npos);
  }
  // A check at sizes with no interior tile (2 x 2 tiles of 4) would not run the interior copy:
  // it is made at sizes doubled until it does (16 x 16), or at the run's. Sizes the tiles do not
  // divide (6 or 14 rows) are doubled too (12 x 16, or the run's 20 x 24: no smaller check).
  // (These rows pass with the tile counts' test alone; collect --check-size in test_explore is
  // the case only the divisibility test catches.)
  {
    rewrite::TemporalTiling tiling{3, 4, 4, false, Memory::local};
    const ir::Program program = heat(6, "clamp");
    const std::optional<ir::HostIteration> h = ir::host_iteration(program);
    const ir::Program lowered = ir::iterate_step(
        std::get<ir::Program>(rewrite::fuse_steps_tiled(h->step, tiling)), 2, h->input);
    exec::RunOptions o;
    o.time = false;
    o.roofline = false;
    o.reference = &program;
    o.interior_tiles = true;
    const Sizes run_sizes{{"M", 20}, {"N", 24}};
    for (const auto& [check, checked] :
         {std::pair{Sizes{{"M", 8}, {"N", 8}}, Sizes{{"M", 16}, {"N", 16}}},
          std::pair{Sizes{{"M", 12}, {"N", 16}}, Sizes{{"M", 12}, {"N", 16}}},
          std::pair{Sizes{{"M", 4}, {"N", 24}}, Sizes{{"M", 16}, {"N", 24}}},
          std::pair{Sizes{{"M", 6}, {"N", 8}}, Sizes{{"M", 12}, {"N", 16}}},
          std::pair{Sizes{{"M", 14}, {"N", 16}}, Sizes{}}}) {
      o.check_sizes = check;
      const exec::RunReport r = exec::run_program(cpu(), lowered, run_sizes, o);
      INFO(r.message);
      CHECK(r.verification.passed);
      CHECK(r.verification.checked_sizes == checked);
    }
  }
}

TEST_CASE("fused 3D steps verify against iterate at the edges of non-cubic grids") {
  const Sizes sizes{{"M", 8}, {"N", 12}, {"O", 16}};
  using Memory = rewrite::TemporalTiling::Memory;
  struct Row {
    const char* boundary;
    int64_t steps, degree, tile_x, tile_y, tile_z;
    bool stage, skewed;
    Memory memory = Memory::local;
    int64_t unroll = 1;
  };
  const Row rows[] = {
      {"clamp", 4, 2, 8, 4, 2, false, false},
      {"mirror", 3, 2, 4, 6, 4, false, true},
      {"wrap", 4, 2, 8, 4, 2, false, false},
      {"wrap", 7, 3, 4, 4, 4, true, true},
      {"clamp", 4, 2, 4, 2, 2, false, false, Memory::registers},
      {"mirror", 5, 2, 2, 3, 1, false, true, Memory::registers},
      {"wrap", 6, 3, 2, 2, 2, true, false, Memory::registers},
      // Past two steps: re-clamped along every dimension (a tile alone along z).
      {"clamp", 6, 3, 4, 4, 2, false, false, Memory::registers},
      {"clamp", 7, 3, 8, 6, 8, false, true},
      {"mirror", 4, 4, 4, 4, 4, false, false},
      {"mirror", 6, 3, 8, 4, 4, false, false},
      {"constant(0.5f)", 5, 2, 4, 4, 2, false, true, Memory::registers},
      {"constant(0.5f)", 6, 3, 8, 4, 4, false, false},
      // Streamed along z: the first step's planes computed once each in a register window.
      {"clamp", 4, 2, 4, 2, 4, false, false, Memory::stream},
      {"wrap", 5, 2, 2, 4, 8, false, false, Memory::stream},
      {"mirror", 4, 2, 1, 3, 2, false, true, Memory::stream},
      // More steps, or a constant boundary: a pipeline of windows of planes.
      {"clamp", 6, 3, 2, 2, 4, false, false, Memory::stream},
      {"wrap", 7, 3, 1, 3, 2, false, true, Memory::stream},
      {"clamp", 7, 3, 2, 2, 4, false, false, Memory::stream, 3},
      {"constant(0.5f)", 5, 2, 2, 2, 4, false, false, Memory::stream},
      // Streamed by a work-group: each step's last planes in a ring of local memory.
      {"clamp", 5, 2, 4, 4, 4, false, false, Memory::shared_stream},
      {"wrap", 7, 3, 8, 6, 4, false, true, Memory::shared_stream},
      {"mirror", 6, 3, 4, 4, 2, false, false, Memory::shared_stream},
      {"constant(0.5f)", 5, 2, 8, 4, 2, false, false, Memory::shared_stream},
      {"clamp", 7, 3, 4, 6, 4, false, true, Memory::shared_stream, 3},
  };
  for (const Row& row : rows) {
    CAPTURE(row.boundary);
    CAPTURE(row.steps);
    CAPTURE(row.degree);
    CAPTURE(row.tile_x);
    CAPTURE(row.tile_y);
    CAPTURE(row.tile_z);
    CAPTURE(row.stage);
    CAPTURE(row.skewed);
    CAPTURE(row.memory == Memory::registers);
    CAPTURE(row.memory == Memory::shared_stream);
    CAPTURE(row.unroll);
    rewrite::TemporalTiling tiling{row.degree, row.tile_x, row.tile_y, row.stage, row.memory};
    tiling.tile_z = row.tile_z;
    tiling.unroll = row.unroll;
    const exec::RunReport r = run_fused(heat3d(row.steps, row.boundary, row.skewed), tiling, sizes);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
    CHECK(r.verification.passed);
    CHECK(r.verification.elements == 8 * 12 * 16);
    CHECK(r.launches == row.steps / row.degree + (row.steps % row.degree > 0 ? 1 : 0));
  }
}

TEST_CASE("3D work-group tiles get the interior copy and the edge tiles first, and verify") {
  // 4 x 3 x 4 tiles: the helper of rank 3 orders them (codegen/tile_order.hpp).
  const Sizes sizes{{"M", 8}, {"N", 12}, {"O", 16}};
  for (const char* boundary : {"clamp", "constant(0.5f)"}) {
    CAPTURE(boundary);
    rewrite::TemporalTiling tiling{3, 4, 4, false, rewrite::TemporalTiling::Memory::local};
    tiling.tile_z = 2;
    const ir::Program program = heat3d(7, boundary);
    auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
    REQUIRE(std::holds_alternative<ir::Program>(fused));
    codegen::Options o;
    o.interior_tiles = true;
    const codegen::Kernel copied = codegen::generate(std::get<ir::Program>(fused), o);
    CHECK(copied.source.find("int liftxEdgeTilesFirst3(") != std::string::npos);
    CHECK(copied.source.find(") == 0) {") != std::string::npos);
    const exec::RunReport r =
        run_fused(program, tiling, sizes, codegen::SubgroupRows::local_memory, true);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
    CHECK(r.verification.passed);
    CHECK(r.verification.elements == 8 * 12 * 16);
    CHECK(r.kernel_source.find(" = liftxEdgeTilesFirst3(") != std::string::npos);
  }
}

TEST_CASE("one tiled step (a remainder's launch) works for every boundary, constant included") {
  using Memory = rewrite::TemporalTiling::Memory;
  const Sizes sizes{{"M", 12}, {"N", 20}};
  for (const char* boundary : {"clamp", "mirror", "wrap", "constant(0.5f)"})
    for (Memory memory : {Memory::local, Memory::registers, Memory::shared_stream}) {
      CAPTURE(boundary);
      CAPTURE(memory == Memory::registers);
      CAPTURE(memory == Memory::shared_stream);
      const exec::RunReport r = run_fused(heat(3, boundary, true), {1, 4, 2, false, memory}, sizes);
      INFO(r.message);
      CHECK(r.status == runtime::Status::ok);
      CHECK(r.launches == 3);
    }
  auto zero = rewrite::fuse_steps_tiled(ir::host_iteration(heat(2, "clamp"))->step, {0, 4, 2});
  REQUIRE(std::holds_alternative<std::string>(zero));
  CHECK(std::get<std::string>(zero) == "a temporal degree of 0 computes nothing");
}

TEST_CASE("a fused launch of the wrong degree is caught by the check") {
  // Two fused launches of three steps against the reference's four steps must fail.
  const ir::Program four = heat(4, "wrap");
  const std::optional<ir::HostIteration> h = ir::host_iteration(heat(6, "wrap"));
  REQUIRE(h);
  auto fused = rewrite::fuse_steps_tiled(h->step, {3, 8, 4, false});
  REQUIRE(std::holds_alternative<ir::Program>(fused));
  exec::RunOptions o;
  o.time = false;
  o.roofline = false;
  o.reference = &four;
  const exec::RunReport r =
      exec::run_program(cpu(), ir::iterate_step(std::get<ir::Program>(fused), 2, h->input),
                        {{"M", 16}, {"N", 16}}, o);
  CHECK(r.status == runtime::Status::wrong_result);
}

TEST_CASE("what does not fuse is refused with its reason") {
  auto refusal = [](const ir::Program& p, const rewrite::TemporalTiling& t) {
    auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(p)->step, t);
    REQUIRE(std::holds_alternative<std::string>(fused));
    return std::get<std::string>(fused);
  };
  rewrite::TemporalTiling streamed{2, 4, 4, true, rewrite::TemporalTiling::Memory::stream};
  CHECK(refusal(heat(4, "wrap"), streamed) ==
        "a stream reads its input rows into its first window: nothing to stage");
  streamed.stage_input = false;
  CHECK(refusal(heat(4, "mirror", true), streamed) ==
        "a mirrored window crossing the grid's edge has too few points inside");
  CHECK(refusal(heat(4, "mirror"), {2, 8, 4, true}) ==
        "only the hoisted forms (wrap, constant, or three steps or more) read a plain input "
        "tile to stage");
  // A tile narrower than the halo of its first intermediate step: the neighbouring tile's
  // region would cross the grid's edge where nothing re-clamps it.
  CHECK(refusal(heat(6, "mirror", true), {3, 2, 4, false}) ==
        "a re-clamped tile needs at least 4 outputs per dimension (the widest halo of its steps)");
  CHECK(refusal(heat(4, "clamp"), {4, 2, 4, false}) ==
        "a re-clamped tile needs at least 3 outputs per dimension (the widest halo of its steps)");
  const ir::Program two_grids =
      parse::parse_module("userfun plus(a: float, b: float): float { return a + b; }\n"
                          "def s(q: [[float]N]M, g: [[float]N]M) = iterate(2, x => map2D((a, b) "
                          "=> plus(a, b), zip2D(x, q)), g)",
                          "<test>")
          .main();
  CHECK(refusal(two_grids, {2, 8, 4, false}) ==
        "the step has parameters besides the iterated grid");
  CHECK(rewrite::redundant_work_ratio(std::get<rewrite::StencilStep>(rewrite::as_stencil_step(
                                          ir::host_iteration(heat(4, "wrap"))->step)),
                                      {2, 8, 4, false}) ==
        doctest::Approx((10.0 * 6 + 8 * 4) / (2.0 * 8 * 4)));
}

TEST_CASE("the space of an iterated stencil holds fused launches that verify") {
  const space::SpaceOptions o = small_grid_space();
  auto fused_variants = [&](const ir::Program& p) { return ::fused_variants(p, o); };
  // Clamp: 2, 3 and 4 steps per launch (three and four re-clamp each intermediate region), the
  // input never staged; wrap: the same degrees, the input tile staged or not.
  const std::vector<space::Variant> clamp = fused_variants(heat(4, "clamp"));
  REQUIRE_FALSE(clamp.empty());
  std::set<int64_t> clamp_degrees;
  std::map<int64_t, size_t> first_of_degree;
  for (size_t i = 0; i < clamp.size(); ++i) {
    const space::Variant& v = clamp[i];
    const int64_t degree = space::steps_per_launch(v);
    clamp_degrees.insert(degree);
    first_of_degree.emplace(degree, i);
    CHECK(v.parameters.at("stage") == 0);
    CHECK(ir::host_iteration(v.program)->count * degree + space::remainder_steps(v) == 4);
  }
  CHECK(clamp_degrees == std::set<int64_t>{2, 3, 4});
  const std::vector<space::Variant> wrap = fused_variants(heat(4, "wrap"));
  std::set<int64_t> degrees, stages;
  for (const space::Variant& v : wrap) {
    degrees.insert(v.parameters.at("steps_per_launch"));
    stages.insert(v.parameters.at("stage"));
  }
  CHECK(degrees == std::set<int64_t>{2, 3, 4}); // 3: one launch of three steps, one of one
  CHECK(stages == std::set<int64_t>{0, 1});
  // Constant: re-padded from two steps on, so the same degrees as clamp.
  const std::vector<space::Variant> constant = fused_variants(heat(4, "constant(0.25f)"));
  std::set<int64_t> constant_degrees;
  for (const space::Variant& v : constant)
    constant_degrees.insert(space::steps_per_launch(v));
  CHECK(constant_degrees == std::set<int64_t>{2, 3, 4});
  CHECK(fused_variants(heat(3, "wrap")).size() > 0); // 3 steps per launch, or 2 and 1
  // Five steps: no degree divides them; each fused variant's launches add up to five.
  std::set<std::pair<int64_t, int64_t>> splits;
  for (const space::Variant& v : fused_variants(heat(5, "wrap"))) {
    const std::optional<ir::HostIteration> h = ir::host_iteration(v.program);
    REQUIRE(h);
    const int64_t degree = space::steps_per_launch(v);
    const int64_t rest = space::remainder_steps(v);
    CHECK(h->count * degree + rest == 5);
    CHECK(h->tail_count == (rest > 0 ? 1 : 0));
    splits.insert({degree, rest});
  }
  CHECK(splits == std::set<std::pair<int64_t, int64_t>>{{2, 1}, {3, 2}, {4, 1}});
  // A program that is already two iterations (a variant printed with its remainder) has no space:
  // its two steps would need the same rewrites.
  const std::optional<ir::HostIteration> five = ir::host_iteration(heat(5, "wrap"));
  const ir::Program two_iterations = ir::iterate_steps(five->step, 2, five->step, 3, five->input);
  CHECK_THROWS_WITH_AS(space::VariantStream(two_iterations, o),
                       doctest::Contains("an iterate over another iterate's result"), UserError);

  // Sampled fused variants, tied and free, verify against the unfused iterate; with five steps
  // every one has a remainder launch.
  const std::vector<space::Variant> clamp_odd = fused_variants(heat(5, "clamp"));
  REQUIRE_FALSE(clamp_odd.empty());
  std::vector<std::pair<ir::Program, space::Variant>> to_verify;
  for (size_t i = 0; i < clamp.size();
       i += std::max<size_t>(1, clamp.size() / test::verified_sample(6)))
    to_verify.emplace_back(heat(4, "clamp"), clamp[i]);
  for (const auto& [degree, i] : first_of_degree)
    to_verify.emplace_back(heat(4, "clamp"), clamp[i]);
  for (size_t i = 0; i < constant.size();
       i += std::max<size_t>(1, constant.size() / test::verified_sample(4)))
    to_verify.emplace_back(heat(4, "constant(0.25f)"), constant[i]);
  for (size_t i = 0; i < clamp_odd.size();
       i += std::max<size_t>(1, clamp_odd.size() / test::verified_sample(6))) {
    CHECK(space::remainder_steps(clamp_odd[i]) > 0);
    to_verify.emplace_back(heat(5, "clamp"), clamp_odd[i]);
  }
  for (const auto& entry : to_verify) {
    const ir::Program& reference = entry.first;
    const space::Variant& v = entry.second;
    CAPTURE(v.index);
    const exec::RunReport r = run_variant(reference, v, o.sizes);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
  }
}

TEST_CASE("a shared stream's steps run a window ahead: one barrier per row publishes them all") {
  using Memory = rewrite::TemporalTiling::Memory;
  const Sizes sizes{{"M", 20}, {"N", 24}};
  // Wrap: the steps have no barriers of their own (no re-clamped rows), so the barrier that ends
  // each row's iteration is the only thing between a step writing a row and its reader.
  const ir::Program program = heat(7, "wrap");
  rewrite::TemporalTiling tiling{3, 8, 10, false, Memory::shared_stream};
  auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
  REQUIRE(std::holds_alternative<ir::Program>(fused));
  const std::string source = codegen::generate(std::get<ir::Program>(fused)).source;
  const size_t loop = source.find("for (int s_");
  REQUIRE(loop != std::string::npos);
  const std::string body = source.substr(loop);
  const auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = body.find(text); at != std::string::npos; at = body.find(text, at + 1))
      ++n;
    return n;
  };
  CHECK(count("barrier(") == 1);
  // Rings of 4 slots: a window of 3 rows and the row being written.
  CHECK(count("% 4)") >= 3);
  // Work-items that loop over a row's points (fewer than the points) still see each other's
  // rows; PoCL serialises work-items between barriers, so a missing one shows.
  for (const int64_t threads : {int64_t(0), int64_t(4), int64_t(3)}) {
    CAPTURE(threads);
    // Two launches of three steps, then the remaining step.
    const std::optional<ir::HostIteration> h = ir::host_iteration(program);
    rewrite::TemporalTiling rest = tiling;
    rest.degree = h->count % 3;
    const ir::Program lowered = ir::iterate_steps(
        std::get<ir::Program>(fused), h->count / 3,
        std::get<ir::Program>(rewrite::fuse_steps_tiled(h->step, rest)), 1, h->input);
    exec::RunOptions o;
    o.time = false;
    o.roofline = false;
    o.reference = &program;
    if (threads > 0)
      o.local = {threads, 1};
    const exec::RunReport r = exec::run_program(cpu(), lowered, sizes, o);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
    CHECK(r.verification.passed);
  }
}

TEST_CASE("warp streams verify against iterate at every boundary, whatever their lanes") {
  const Sizes sizes{{"M", 20}, {"N", 24}};
  using Memory = rewrite::TemporalTiling::Memory;
  struct Row {
    const char* boundary;
    int64_t steps, degree, tile_x, tile_y, lanes, columns;
    bool skewed;
    int64_t unroll = 1;
  };
  const Row rows[] = {
      // T not a multiple of t (a remainder's launch of one step or more); lanes whose columns
      // straddle the grid's last edge (3 does not divide 8); no left halo (skewed: the row is
      // not rotated); the only tile of a row (24 outputs).
      {"clamp", 5, 2, 8, 5, 4, 3, false},
      {"clamp", 5, 2, 8, 5, 5, 3, false},
      {"clamp", 7, 3, 8, 10, 5, 3, true},
      {"clamp", 9, 4, 12, 5, 7, 3, false, 3},
      {"clamp", 6, 6, 8, 10, 5, 4, false},
      {"clamp", 4, 2, 24, 4, 7, 4, false},
      {"mirror", 7, 3, 8, 10, 4, 4, false},
      {"mirror", 5, 2, 6, 4, 3, 4, false},
      {"wrap", 8, 4, 6, 4, 8, 2, true},
      {"wrap", 11, 5, 12, 10, 11, 2, false, 4},
      // Unrolled by the rings' slots by hand: rounds only, then rounds and a remainder.
      {"clamp", 6, 3, 8, 20, 5, 3, false, 4},
      {"mirror", 5, 2, 8, 20, 4, 4, false, 8},
      {"wrap", 3, 3, 4, 20, 10, 1, false},
      {"constant(0.5f)", 7, 3, 6, 5, 3, 4, false},
      {"constant(-1.0f)", 5, 2, 12, 4, 16, 1, true},
  };
  for (const Row& row : rows) {
    CAPTURE(std::string(row.boundary));
    CAPTURE(row.steps);
    CAPTURE(row.degree);
    CAPTURE(row.tile_x);
    CAPTURE(row.tile_y);
    CAPTURE(row.lanes);
    CAPTURE(row.columns);
    CAPTURE(row.skewed);
    rewrite::TemporalTiling tiling{row.degree, row.tile_x, row.tile_y, false, Memory::warp_stream};
    tiling.unroll = row.unroll;
    tiling.lanes = row.lanes;
    tiling.lane_columns = row.columns;
    const ir::Program program = heat(row.steps, row.boundary, row.skewed);
    auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
    REQUIRE(std::holds_alternative<ir::Program>(fused));
    // A work-group is the lanes, sharing the rows in local memory.
    const codegen::Kernel kernel = codegen::generate(std::get<ir::Program>(fused));
    REQUIRE(kernel.launch.local[0]);
    CHECK(arith::evaluate(*kernel.launch.local[0], sizes) == row.lanes);
    CHECK(kernel.source.find("win_") == std::string::npos);
    CHECK(kernel.source.find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos);
    // The rows in local memory, then in the lanes' registers, another lane's columns read
    // through the exchange a shuffle makes (emulated with local memory: PoCL has no shuffle).
    for (const codegen::SubgroupRows rows_in :
         {codegen::SubgroupRows::local_memory, codegen::SubgroupRows::emulated_shuffle}) {
      CAPTURE(static_cast<int>(rows_in));
      const exec::RunReport r = run_fused(program, tiling, sizes, rows_in);
      INFO(r.message);
      CHECK(r.status == runtime::Status::ok);
      CHECK(r.verification.passed);
      CHECK(r.verification.elements == 20 * 24);
      CHECK(r.launches == row.steps / row.degree + (row.steps % row.degree > 0 ? 1 : 0));
    }
  }
}

TEST_CASE("warp streams keep their rows in registers where the device shuffles") {
  rewrite::TemporalTiling tiling{3, 8, 5, false, rewrite::TemporalTiling::Memory::warp_stream};
  tiling.lanes = 5;
  tiling.lane_columns = 3;
  const ir::Program program = heat(6, "clamp");
  const auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
  REQUIRE(std::holds_alternative<ir::Program>(fused));
  auto source_of = [&](codegen::SubgroupRows rows) {
    codegen::Options o;
    o.subgroup_rows = rows;
    return codegen::generate(std::get<ir::Program>(fused), o).source;
  };
  const auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  const std::string local = source_of(codegen::SubgroupRows::local_memory);
  const std::string shuffled = source_of(codegen::SubgroupRows::nvidia_shuffle);
  CHECK(count(local, "liftx_lane_read") == 0);
  // The five lanes of one warp exchange another lane's columns (mask 0x1f); the two steps'
  // rings need no barrier, only the last step's row in local memory does.
  CHECK(count(shuffled, "shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0x1f;") == 1);
  CHECK(count(shuffled, "liftx_lane_read(") > 1);
  CHECK(count(shuffled, "barrier(") < count(local, "barrier("));
  CHECK(count(shuffled, "barrier(") >= 1);
  // Unrolled by its rings' slots (a window of 3 rows and the row being written), every copy
  // reads and writes them at constant slots: no compiler has to fold `% 4` to keep them in
  // registers. The loop runs 16 rows in rounds of 4 copies.
  tiling.tile_y = 16;
  tiling.unroll = 4;
  const auto unrolled = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
  REQUIRE(std::holds_alternative<ir::Program>(unrolled));
  codegen::Options o;
  o.subgroup_rows = codegen::SubgroupRows::nvidia_shuffle;
  const std::string constant_slots = codegen::generate(std::get<ir::Program>(unrolled), o).source;
  const std::string loop = constant_slots.substr(constant_slots.find("for (int s_"));
  CHECK(loop.substr(0, loop.find('{')).find("< 4;") != std::string::npos);
  CHECK(count(loop, "% 4)") == 0);
  // Each copy's temporaries (its window, repaired at the clamped edges) are dead once its row
  // is stored: the copies hold what the rolled loop's single body holds live, so the private
  // memory limit refuses neither more often (it refused the Jacobi streams unrolled by 4, the
  // fastest measured, at 1,332 bytes against the rolled loop's 792).
  tiling.unroll = 1;
  const auto rolled = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
  REQUIRE(std::holds_alternative<ir::Program>(rolled));
  const codegen::Kernel rolled_kernel = codegen::generate(std::get<ir::Program>(rolled), o);
  const codegen::Kernel unrolled_kernel = codegen::generate(std::get<ir::Program>(unrolled), o);
  CHECK(unrolled_kernel.private_bytes > rolled_kernel.private_bytes);
  CHECK(unrolled_kernel.live_private_bytes() == rolled_kernel.live_private_bytes());
}

TEST_CASE(
    "the space lowers warp streams as the device runs them, rows in registers if it shuffles") {
  // The kernel the space checks against the device's limits, and hands to the features, is the
  // one `liftx run` builds there.
  space::SpaceOptions o = small_grid_space();
  o.sizes = {{"M", 128}, {"N", 256}};
  o.free_global_halvings = 0;
  o.warp_streams = true;
  REQUIRE(o.device.subgroup_shuffle); // the nvidia profile
  const ir::Program program = heat(5, "clamp");
  const std::vector<space::Variant> in_registers = fused_variants_with(program, o, "warp");
  o.device.subgroup_shuffle = false;
  const std::vector<space::Variant> in_local = fused_variants_with(program, o, "warp");
  REQUIRE_FALSE(in_registers.empty());
  REQUIRE_FALSE(in_local.empty());
  // Rings in registers need constant slots: their loops are unrolled by the slots (a window of
  // 3 rows and the row being written), never rolled; rings in local memory may be either.
  std::set<int64_t> unrolls_in_local;
  for (const space::Variant& v : in_registers) {
    CAPTURE(v.index);
    CHECK(v.kernel_source().find("shfl.sync") != std::string::npos);
    CHECK(v.parameters.at("unroll") == 4);
  }
  for (const space::Variant& v : in_local) {
    CAPTURE(v.index);
    CHECK(v.kernel_source().find("liftx_lane_read") == std::string::npos);
    unrolls_in_local.insert(v.parameters.at("unroll"));
  }
  CHECK(unrolls_in_local == std::set<int64_t>{1, 4});
  // Rings in registers are private memory, which a work-item has less of than its group has
  // local memory: no warp stream fits registers that does not fit local memory.
  CHECK(in_registers.size() <= in_local.size());
}

TEST_CASE("a warp stream picks its lanes' columns by selects and its rows by branches") {
  // A lane's code differs from its neighbours' in a tile on the left or right edge: picked by
  // branches, those lanes diverge. A row's code is the same for every lane.
  rewrite::TemporalTiling tiling{3, 8, 5, false, rewrite::TemporalTiling::Memory::warp_stream};
  tiling.lanes = 5;
  tiling.lane_columns = 3;
  const auto fused = rewrite::fuse_steps_tiled(ir::host_iteration(heat(6, "clamp"))->step, tiling);
  REQUIRE(std::holds_alternative<ir::Program>(fused));
  const std::string source = codegen::generate(std::get<ir::Program>(fused)).source;
  auto definition = [&](const std::string& name) {
    const size_t at = source.find("float " + name + "(");
    REQUIRE(at != std::string::npos);
    return source.substr(at, source.find("\n}", at) - at);
  };
  const std::string lanes = definition("liftxSelectOf5");
  CHECK(lanes.find(" ? ") != std::string::npos);
  CHECK(lanes.find("if (") == std::string::npos);
  CHECK(source.find("liftxSelectOf5(liftxLaneEdge_") != std::string::npos);
  const std::string rows = definition("liftxPickOf3");
  CHECK(rows.find("if (") != std::string::npos);
  CHECK(source.find("liftxPickOf3(liftxStreamEdge_") != std::string::npos);
  CHECK(source.find("liftxPickOf5") == std::string::npos);
}

TEST_CASE("warp streams refuse rows without room for their halo and lanes across both edges") {
  using Memory = rewrite::TemporalTiling::Memory;
  const ir::Program program = heat(4, "clamp");
  const ir::Program step = ir::host_iteration(program)->step;
  rewrite::TemporalTiling tiling{4, 8, 8, false, Memory::warp_stream};
  tiling.lanes = 4;
  tiling.lane_columns = 4; // 16 columns: 8 outputs and 8 of halo, exactly 4 reaches
  CHECK(std::holds_alternative<ir::Program>(rewrite::fuse_steps_tiled(step, tiling)));
  tiling.lane_columns = 3;
  const auto narrow = rewrite::fuse_steps_tiled(step, tiling);
  REQUIRE(std::holds_alternative<std::string>(narrow));
  CHECK(std::get<std::string>(narrow).find("halo") != std::string::npos);
  // Two outputs per row: a lane's window of 4 + 2 columns could cross both edges.
  tiling = rewrite::TemporalTiling{2, 2, 8, false, Memory::warp_stream};
  tiling.lanes = 4;
  tiling.lane_columns = 4;
  const auto thin = rewrite::fuse_steps_tiled(step, tiling);
  REQUIRE(std::holds_alternative<std::string>(thin));
  CHECK(std::get<std::string>(thin).find("outputs per row") != std::string::npos);
}

namespace {

/// A warp stream of 4 lanes x 4 columns per row (the shifted-tile tests' shape).
rewrite::TemporalTiling four_lane_warp_stream(int64_t degree, int64_t tile_x, int64_t tile_y) {
  rewrite::TemporalTiling tiling{degree, tile_x, tile_y, false,
                                 rewrite::TemporalTiling::Memory::warp_stream};
  tiling.lanes = 4;
  tiling.lane_columns = 4;
  return tiling;
}

rewrite::StencilStep stencil_step_of(const ir::Program& iterated) {
  return std::get<rewrite::StencilStep>(
      rewrite::as_stencil_step(ir::host_iteration(iterated)->step));
}

/// `tiling` of `program` verifies at `sizes` with its rows in local memory and as emulated
/// shuffles, every point checked.
void check_warp_stream_verifies(const ir::Program& program, const rewrite::TemporalTiling& tiling,
                                const Sizes& sizes) {
  for (const codegen::SubgroupRows rows_in :
       {codegen::SubgroupRows::local_memory, codegen::SubgroupRows::emulated_shuffle}) {
    const exec::RunReport r = run_fused(program, tiling, sizes, rows_in, true);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
    CHECK(r.verification.passed);
    CHECK(r.verification.elements == sizes.at("M") * sizes.at("N"));
  }
}

/// `tiling` at `short_sizes` leaves its shifted tile or strip less than its margin: refused
/// before a launch, not miscomputed. And only a warp stream shifts.
void check_short_of_margin_refused(const ir::Program& program, rewrite::TemporalTiling tiling,
                                   const Sizes& short_sizes) {
  CHECK_THROWS_WITH_AS(run_fused(program, tiling, short_sizes),
                       doctest::Contains("must add at least its margin"), UserError);
  tiling.memory = rewrite::TemporalTiling::Memory::registers;
  const auto not_warp = rewrite::fuse_steps_tiled(ir::host_iteration(program)->step, tiling);
  REQUIRE(std::holds_alternative<std::string>(not_warp));
  CHECK(std::get<std::string>(not_warp).find("only a warp stream") != std::string::npos);
}

} // namespace

TEST_CASE("a warp stream's lane across the rotated row's seam: verified with two columns past it, "
          "refused with three (its last-edge repair would overwrite left-halo columns)") {
  // 4 lanes x 6 columns, two steps, 20 outputs: the row's seam (left halo after right halo) is
  // at column 22, inside the lane of columns 18 to 23, which also holds outputs: two columns
  // past the seam, the most the second step leaves invalid anyway.
  rewrite::TemporalTiling tiling{2, 20, 5, false, rewrite::TemporalTiling::Memory::warp_stream};
  tiling.lanes = 4;
  tiling.lane_columns = 6;
  for (const char* boundary : {"clamp", "constant(0.5f)", "mirror"}) {
    CAPTURE(std::string(boundary));
    check_warp_stream_verifies(heat(5, boundary), tiling, {{"M", 20}, {"N", 40}});
  }
  // 4 lanes x 8 columns, three steps, 26 outputs (the 32-lane, 8-column, 250-output shape
  // scaled down): the lane of columns 24 to 31 crosses the seam at 29 by three.
  tiling = rewrite::TemporalTiling{3, 26, 5, false, rewrite::TemporalTiling::Memory::warp_stream};
  tiling.lanes = 4;
  tiling.lane_columns = 8;
  for (const char* boundary : {"clamp", "constant(0.5f)", "mirror"}) {
    CAPTURE(std::string(boundary));
    const auto refused =
        rewrite::fuse_steps_tiled(ir::host_iteration(heat(7, boundary))->step, tiling);
    REQUIRE(std::holds_alternative<std::string>(refused));
    CHECK(std::get<std::string>(refused).find("3 columns past the rotated row's seam at 29") !=
          std::string::npos);
  }
  // A wrapped row repairs nothing: the same shape verifies.
  check_warp_stream_verifies(heat(7, "wrap"), tiling, {{"M", 20}, {"N", 52}});
}

TEST_CASE("a warp stream's last tile shifted back to the grid's edge verifies at widths no tile "
          "divides, and refuses widths that leave less than its margin") {
  struct Row {
    const char* boundary;
    int64_t steps, degree, tile_x, tile_y, width;
  };
  // Rows of 4 lanes x 4 columns. The margin is (degree - 1) reaches where the edges are repaired
  // (2 for three steps), 0 for wrap: at width 29 the last of the 9-column tiles adds exactly 2.
  // The last two rows carry every output their 16 columns leave after exactly t reaches of halo,
  // as the space's full-warp shapes do.
  const Row rows[] = {
      {"clamp", 7, 3, 9, 5, 31},  {"clamp", 7, 3, 9, 5, 29},          {"mirror", 5, 2, 10, 4, 29},
      {"wrap", 8, 4, 7, 4, 30},   {"constant(0.5f)", 7, 3, 9, 5, 25}, {"clamp", 4, 2, 10, 4, 12},
      {"clamp", 7, 3, 10, 5, 29}, {"mirror", 5, 2, 12, 4, 29},
  };
  for (const Row& row : rows) {
    CAPTURE(std::string(row.boundary));
    CAPTURE(row.degree);
    CAPTURE(row.tile_x);
    CAPTURE(row.width);
    rewrite::TemporalTiling tiling = four_lane_warp_stream(row.degree, row.tile_x, row.tile_y);
    tiling.shifted_last = true;
    const ir::Program program = heat(row.steps, row.boundary);
    CHECK(rewrite::shifted_tiles_fit(stencil_step_of(program), tiling, row.width));
    check_warp_stream_verifies(program, tiling, {{"M", 20}, {"N", row.width}});
  }
  // At width 28 the last 9-column tile adds one column: the second-to-last tile's region would
  // cross the edge, which only the last repairs.
  rewrite::TemporalTiling tiling = four_lane_warp_stream(3, 9, 5);
  tiling.shifted_last = true;
  const ir::Program program = heat(7, "clamp");
  CHECK_FALSE(rewrite::shifted_tiles_fit(stencil_step_of(program), tiling, 28));
  check_short_of_margin_refused(program, tiling, {{"M", 20}, {"N", 28}});
}

TEST_CASE("a warp stream's last strip shifted up to the grid's last row verifies at heights no "
          "strip divides, with or without a shifted last tile, and refuses heights short of its "
          "margin") {
  struct Case {
    const char* boundary;
    int64_t steps, degree, tile_x, tile_y, width, height;
    bool shifted_x;
  };
  // The margin as along x: at height 22 the last 5-row strip adds exactly 2.
  const Case cases[] = {
      {"clamp", 7, 3, 9, 5, 31, 23, true},          {"clamp", 7, 3, 8, 5, 32, 22, false},
      {"mirror", 5, 2, 10, 4, 29, 19, true},        {"wrap", 8, 4, 7, 4, 30, 21, true},
      {"constant(0.5f)", 7, 3, 9, 5, 25, 24, true},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.boundary));
    CAPTURE(c.degree);
    CAPTURE(c.width);
    CAPTURE(c.height);
    rewrite::TemporalTiling tiling = four_lane_warp_stream(c.degree, c.tile_x, c.tile_y);
    tiling.shifted_last = c.shifted_x;
    tiling.shifted_rows = true;
    const ir::Program program = heat(c.steps, c.boundary);
    CHECK(rewrite::shifted_strips_fit(stencil_step_of(program), tiling, c.height));
    check_warp_stream_verifies(program, tiling, {{"M", c.height}, {"N", c.width}});
  }
  // At height 21 the last 5-row strip adds one row: the strip above it would reach past the
  // bottom edge, which only the last strip repairs.
  rewrite::TemporalTiling tiling = four_lane_warp_stream(3, 9, 5);
  tiling.shifted_rows = true;
  const ir::Program program = heat(7, "clamp");
  CHECK_FALSE(rewrite::shifted_strips_fit(stencil_step_of(program), tiling, 21));
  check_short_of_margin_refused(program, tiling, {{"M", 21}, {"N", 27}});
}

TEST_CASE("warp streams are in the space where sub-groups shuffle or when asked for, a warp's "
          "lanes each, and verify") {
  space::SpaceOptions o = small_grid_space();
  o.sizes = {{"M", 128}, {"N", 256}};
  o.free_global_halvings = 0;
  const ir::Program program = heat(5, "clamp");
  REQUIRE(o.device.subgroup_shuffle); // the nvidia profile
  CHECK_FALSE(fused_variants_with(program, o, "warp").empty());
  o.device.subgroup_shuffle = false;
  CHECK(fused_variants_with(program, o, "warp").empty());
  o.warp_streams = true;
  const std::vector<space::Variant> warp = fused_variants_with(program, o, "warp");
  REQUIRE_FALSE(warp.empty());
  std::set<int64_t> degrees;
  for (const space::Variant& v : warp) {
    CAPTURE(v.index);
    degrees.insert(space::steps_per_launch(v));
    const int64_t lanes = v.parameters.at("lanes"), columns = v.parameters.at("columns");
    // One sub-group per work-group, mostly busy, its rows holding the outputs and the halo.
    CHECK(lanes <= 32);
    CHECK(lanes >= 24);
    CHECK(lanes * columns >= v.parameters.at("tile_x") + 2 * space::steps_per_launch(v));
    CHECK(v.launch.tied);
    CHECK(v.launch.local[0] == lanes);
    CHECK(v.launch.local[1] == 1);
    CHECK(v.parameters.at("stream") == 1);
  }
  CHECK(degrees.size() >= 2);
  CHECK(degrees.count(5) == 1);
  // The space's first (the fewest steps per launch, then a remainder's launch) and its first of
  // all five steps.
  const auto five = std::find_if(warp.begin(), warp.end(), [](const space::Variant& v) {
    return space::steps_per_launch(v) == 5;
  });
  for (const space::Variant* sampled : {&warp.front(), &*five}) {
    const space::Variant& v = *sampled;
    CAPTURE(space::steps_per_launch(v));
    CAPTURE(v.index);
    const exec::RunReport r = run_variant(program, v, o.sizes);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
    CHECK(r.verification.passed);
  }
}

TEST_CASE("warp streams with a shifted last strip are in the space only when asked for, at "
          "heights no strip divides, and verify") {
  space::SpaceOptions o = small_grid_space();
  o.sizes = {{"M", 200}, {"N", 256}};
  o.free_global_halvings = 0;
  const ir::Program program = heat(3, "clamp");
  REQUIRE(o.device.subgroup_shuffle); // the nvidia profile: warp streams planned
  CHECK(fused_variants_with(program, o, "shifted_rows").empty());
  o.shifted_strips = true;
  const std::vector<space::Variant> shifted = fused_variants_with(program, o, "shifted_rows");
  REQUIRE_FALSE(shifted.empty());
  for (const space::Variant& v : shifted) {
    CAPTURE(v.index);
    const int64_t tile_y = v.parameters.at("tile_y");
    CHECK(v.parameters.at("lanes") == 32);
    CHECK(tile_y % 8 == 0);
    CHECK(200 % tile_y != 0);
    CHECK(tile_y < 200);
  }
  const space::Variant& first = shifted.front();
  CAPTURE(first.index);
  const exec::RunReport r = run_variant(program, first, o.sizes);
  INFO(r.message);
  CHECK(r.status == runtime::Status::ok);
  CHECK(r.verification.passed);
}

TEST_CASE("shared streams are in the space only when asked for, and verify") {
  space::SpaceOptions o = small_grid_space();
  o.sizes = {{"M", 128}, {"N", 256}};
  o.free_global_halvings = 0;
  const ir::Program program = heat(5, "clamp");
  CHECK(fused_variants_with(program, o, "shared").empty());
  o.shared_streams = true;
  const std::vector<space::Variant> shared = fused_variants_with(program, o, "shared");
  REQUIRE_FALSE(shared.empty());
  std::set<int64_t> degrees;
  for (const space::Variant& v : shared) {
    degrees.insert(space::steps_per_launch(v));
    CHECK(v.parameters.at("registers") == 0);
    CHECK(v.parameters.at("stream") == 1);
  }
  CHECK(degrees == std::set<int64_t>{2, 3, 4, 5});
  // A row's points are the work-items' (mapLcl0); the rows are the group's (no mapLcl1): more
  // work-items along y would each compute the whole column again, so there are none.
  bool free_launch = false;
  for (const space::Variant& v : shared) {
    CAPTURE(v.index);
    CHECK(v.launch.local[1] == 1);
    free_launch = free_launch || !v.launch.tied;
  }
  CHECK(free_launch);
  // Where the work-items do split y (mapLcl1: the register pipelines), free launches still give
  // them rows.
  bool several_rows = false;
  for (const space::Variant& v : fused_variants(program, o))
    several_rows = several_rows ||
                   (v.parameters.count("shared") == 0 && !v.launch.tied && v.launch.local[1] > 1);
  CHECK(several_rows);
  // Tied and free launches of a sample, a remainder launch wherever five steps do not divide.
  // Rows unrolled are checked at two fused steps only: PoCL's LLVM 15 spent 23 minutes in loop
  // invariant code motion on five steps unrolled by three, so a deeper sample steps back to its
  // nearest variant that computes one row at a time.
  const auto cheap_to_build = [](const space::Variant& v) {
    return v.parameters.at("unroll") == 1 || space::steps_per_launch(v) <= 2;
  };
  for (size_t i = 0; i < shared.size();
       i += std::max<size_t>(1, shared.size() / test::verified_sample(4))) {
    size_t pick = i;
    while (pick > 0 && !cheap_to_build(shared[pick]))
      --pick;
    const space::Variant& v = shared[pick];
    CAPTURE(v.index);
    CAPTURE(v.parameters.at("unroll"));
    const exec::RunReport r = run_variant(program, v, o.sizes);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
    CHECK(r.verification.passed);
  }
}

TEST_CASE("the space of an iterated 3D stencil holds fused launches that verify") {
  space::SpaceOptions o;
  o.sizes = {{"M", 8}, {"N", 8}, {"O", 16}};
  o.device = runtime::named_profile("nvidia").limits();
  o.max_tile = 4;
  o.depth = 0;
  for (const char* boundary : {"clamp", "wrap"}) {
    CAPTURE(boundary);
    const ir::Program program = heat3d(4, boundary);
    space::VariantStream stream(program, o);
    std::vector<space::Variant> fused;
    std::set<int64_t> degrees, depths, streamed;
    space::Variant v;
    while (stream.next(v)) {
      CHECK(v.strategy != rewrite::kTemporalStrategy);
      if (v.strategy != rewrite::kTemporalStrategy3D)
        continue;
      degrees.insert(space::steps_per_launch(v));
      depths.insert(v.parameters.at("tile_z"));
      streamed.insert(v.parameters.at("stream"));
      fused.push_back(v);
    }
    REQUIRE_FALSE(fused.empty());
    // Three steps or more recompute too much on tiles this small (3D halos grow on six faces).
    CHECK(degrees == std::set<int64_t>{2});
    CHECK(depths.size() > 1);
    CHECK(streamed == std::set<int64_t>{0, 1}); // columns streamed along z, and not
    // A sample, and the first variant of every degree and placement, verify against the unfused
    // iterate.
    std::vector<const space::Variant*> to_verify;
    std::set<int64_t> seen;
    for (size_t i = 0; i < fused.size();
         i += std::max<size_t>(1, fused.size() / test::verified_sample(4)))
      to_verify.push_back(&fused[i]);
    for (const space::Variant& f : fused)
      if (seen.insert(space::steps_per_launch(f) * 10 + f.parameters.at("stream")).second)
        to_verify.push_back(&f);
    for (const space::Variant* f : to_verify) {
      CAPTURE(f->index);
      const exec::RunReport r = run_variant(program, *f, o.sizes);
      INFO(r.message);
      CHECK(r.status == runtime::Status::ok);
    }
  }
}

TEST_CASE("a fused variant checked on one launch and its remainder, then timed over every step") {
  // Eleven steps of a wrapped star: a fused launch of 3 steps runs three times, then a remainder
  // launch of 2 steps. The shortened check runs one fused launch and the remainder (5 steps).
  const space::SpaceOptions o = small_grid_space();
  const ir::Program eleven = heat(11, "wrap");
  std::optional<space::Variant> fused;
  for (const space::Variant& v : fused_variants(eleven, o))
    if (!fused && space::steps_per_launch(v) == 3 && space::remainder_steps(v) == 2)
      fused = v;
  REQUIRE(fused);
  REQUIRE(ir::host_iteration(fused->program)->count == 3);
  exec::RunOptions run;
  run.roofline = false;
  run.repeat = 2;
  run.warmup = 0;
  run.check_launches = 1;
  run.steps_per_launch = 3;
  run.reference = &eleven;
  const codegen::LaunchRequest request = codegen::request_for(fused->launch);
  run.local = request.local;
  run.global = request.global;
  const exec::RunReport r = exec::run_program(cpu(), fused->program, o.sizes, run);
  INFO(r.message);
  CHECK(r.status == runtime::Status::ok);
  CHECK(r.verification.passed);
  CHECK(r.verification.steps_checked == 5);
  CHECK(r.verification.steps == 11);
  CHECK(exec::describe_check(r.verification) == "checked on 5 of 11 steps");
  REQUIRE(r.timing);
  CHECK(r.launches == 4); // timed over every launch of the full program
  const exec::RunReport json = exec::report_from_json(exec::to_json(r));
  CHECK(json.verification.steps_checked == 5);

  // A kernel of the wrong boundary fails the shortened check, which says what it checked.
  const ir::Program clamped = heat(11, "clamp");
  run.reference = &clamped;
  const exec::RunReport wrong = exec::run_program(cpu(), fused->program, o.sizes, run);
  CHECK(wrong.status == runtime::Status::wrong_result);
  CHECK(wrong.message.find("checked on 5 of 11 steps") != std::string::npos);
  CHECK_FALSE(wrong.timing);

  // Without a shorter iteration to check (as many launches as asked), or without the steps a
  // launch computes where a remainder hides them, every step is checked.
  run.reference = &eleven;
  run.check_launches = 3;
  const exec::RunReport whole = exec::run_program(cpu(), fused->program, o.sizes, run);
  CHECK(whole.status == runtime::Status::ok);
  CHECK(whole.verification.steps == 0);
  run.check_launches = 1;
  run.steps_per_launch = 0;
  CHECK(exec::run_program(cpu(), fused->program, o.sizes, run).verification.steps == 0);

  // The unfused iteration (one step a launch, no remainder): one launch checked.
  run.global.clear();
  run.local.clear();
  const ir::Program unfused = space::default_lowering(eleven, o.sizes).first;
  REQUIRE(ir::host_iteration(unfused)->count == 11);
  const exec::RunReport single = exec::run_program(cpu(), unfused, o.sizes, run);
  INFO(single.message);
  CHECK(single.status == runtime::Status::ok);
  CHECK(exec::describe_check(single.verification) == "checked on 1 of 11 steps");
}
