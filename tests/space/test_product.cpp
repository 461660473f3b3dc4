// Register blocking and local-memory tiles of product grids (rewrite/product.hpp): which programs
// are recognised, what the builders refuse, and that what they build computes the program (on
// the interpreter, for operators that are neither associative nor commutative: the sums keep
// their order), and how their vector reads come out in OpenCL.
#include "codegen/kernel.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"
#include "rewrite/product.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <regex>
#include <string>
#include <variant>

using namespace liftx;

namespace {

ir::Module parse_text(const std::string& text) {
  return parse::parse_module(
      "userfun sub(a: float, b: float): float { return a - b; }\n"
      "userfun muladd(a: float, b: float): float { return 0.5f * a + b; }\n" +
          text,
      "<test>");
}

std::string refusal(const std::variant<rewrite::ProductGrid, std::string>& r) {
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

std::string why(const std::variant<ir::Program, std::string>& r) {
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

rewrite::LocalTiling vector_tiling(rewrite::LocalTiling t, int64_t width) {
  t.vector_width = width;
  return t;
}

/// A tiling whose row tile is copied along the steps and stored step by step.
rewrite::LocalTiling transposing_copy(rewrite::LocalTiling t) {
  t.rows_stored_by_step = true;
  return t;
}

} // namespace

TEST_CASE("product grids: mm, a grid without a map, and what is not one") {
  const ir::Module mm =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  auto grid = rewrite::as_product_grid(mm.main());
  REQUIRE(std::holds_alternative<rewrite::ProductGrid>(grid));
  CHECK(std::get<rewrite::ProductGrid>(grid).element.has_value()); // map(mult) kept apart

  auto plain = rewrite::as_product_grid(
      parse_text("def f(a: [[float]K]M, b: [[float]K]N) = "
                 "map(r => map(c => reduce((s, p) => add(s, sub(get(0, p), get(1, p))), 0.0f, "
                 "zip(r, c))[0], b), a)")
          .main());
  REQUIRE(std::holds_alternative<rewrite::ProductGrid>(plain));
  CHECK(!std::get<rewrite::ProductGrid>(plain).element.has_value());

  CHECK(refusal(rewrite::as_product_grid(
            parse_text("def f(a: [[float]K]M, b: [[float]K]N) = map(r => map(c => reduce(add, "
                       "0.0f, map(mult, zip(c, r)))[0], b), a)")
                .main())) == "a reduction is not over zip(row, column)");
  CHECK(refusal(rewrite::as_product_grid(
            parse_text("def f(a: [[float]K]M) = map(r => map(c => reduce(add, 0.0f, map(mult, "
                       "zip(r, c)))[0], map(x => map(y => add(y, r[0]), x), a)), a)")
                .main())) == "the columns depend on the row");
  CHECK(refusal(rewrite::as_product_grid(
            parse_text("def f(a: [[float]K]M, b: [[float]K]N) = map(r => map(c => reduce((s, p) "
                       "=> add(s, mult(get(0, p), r[0])), 0.0f, zip(r, c))[0], b), a)")
                .main())) == "the reduction's functions read the row or the column");
  CHECK(refusal(rewrite::as_product_grid(parse_text("def f(a: [[float]K]M, b: [[float]K]N) = "
                                                    "map(r => map(c => add(r[0], c[0]), b), a)")
                                             .main())) ==
        "an output is not the result of one reduction");
  CHECK(refusal(rewrite::as_product_grid(
            parse_text("def f(a: [[float]K]M) = map(r => reduce(add, 0.0f, r)[0], a)").main())) ==
        "a row's outputs are not a map over columns");
  CHECK(refusal(rewrite::as_product_grid(
            parse_text("def f(x: [float]N) = reduce(add, 0.0f, x)").main())) ==
        "the program is not a map over rows");
}

TEST_CASE("the builder refuses blocks that do not fit the grid") {
  const ir::Module mm =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  const ir::Module fixed =
      parse_text("def f(a: [[float]12]6, b: [[float]12]10) = "
                 "map(r => map(c => reduce(add, 0.0f, map(mult, zip(r, c)))[0], b), a)");
  CHECK(why(rewrite::build_register_blocked(mm.main(), {16, 8, 4, true})).empty());
  CHECK(why(rewrite::build_register_blocked(fixed.main(), {2, 5, 3, false})).empty());
  CHECK(why(rewrite::build_register_blocked(fixed.main(), {4, 2, 1, true})) ==
        "a row block of 4 does not divide the length 6");
  CHECK(why(rewrite::build_register_blocked(fixed.main(), {2, 4, 1, true})) ==
        "a column block of 4 does not divide the length 10");
  CHECK(why(rewrite::build_register_blocked(fixed.main(), {2, 2, 5, true})) ==
        "a chunk of steps of 5 does not divide the length 12");
  CHECK(why(rewrite::build_register_blocked(mm.main(), {0, 4, 1, true})) ==
        "a block needs at least one row, one column and one step");
  CHECK(why(rewrite::build_register_blocked(mm.main(), {16, 8, 4, true, 4})).empty());
  CHECK(why(rewrite::build_register_blocked(mm.main(), {4, 2, 4, true, 4})) ==
        "vector reads of 4 columns need private copies and a multiple of 4 columns");
  CHECK(why(rewrite::build_register_blocked(mm.main(), {4, 4, 4, false, 4})) ==
        "vector reads of 4 columns need private copies and a multiple of 4 columns");
}

TEST_CASE("a register-blocked grid computes the grid, every sum in its order") {
  // 0.5 s + (a - b): neither associative nor commutative, so a block that reordered the steps
  // of a sum, or paired a row with the wrong column, would differ.
  const ir::Module grid =
      parse_text("def f(a: [[float]K]M, b: [[float]K]N) = "
                 "map(r => map(c => reduce(muladd, 1.0f, map(sub, zip(r, c)))[0], b), a)");
  const Sizes sizes{{"M", 8}, {"N", 12}, {"K", 8}};
  std::mt19937_64 rng(7);
  std::vector<interp::HostArray> inputs;
  for (const ir::Expr& p : grid.main().params)
    inputs.push_back(interp::random_input(p.type(), sizes, rng));
  const interp::HostArray expected = interp::evaluate(grid.main(), inputs, sizes);
  for (const rewrite::RegisterBlocking b :
       {rewrite::RegisterBlocking{2, 4, 1, true}, rewrite::RegisterBlocking{4, 3, 4, false},
        rewrite::RegisterBlocking{8, 2, 8, true}, rewrite::RegisterBlocking{1, 12, 2, true},
        rewrite::RegisterBlocking{2, 4, 4, true, 4}, rewrite::RegisterBlocking{4, 12, 1, true, 4},
        rewrite::RegisterBlocking{2, 6, 2, true, 2}}) {
    CAPTURE(b.rows);
    CAPTURE(b.columns);
    CAPTURE(b.unroll);
    CAPTURE(b.vector_width);
    auto built = rewrite::build_register_blocked(grid.main(), b);
    REQUIRE(why(built).empty());
    const interp::HostArray blocked = interp::evaluate(std::get<ir::Program>(built), inputs, sizes);
    CHECK(blocked.shape == expected.shape);
    CHECK(blocked.data == expected.data); // bit for bit: the same operations in the same order
  }
}

TEST_CASE("the local-tile builder refuses tiles that do not fit the grid") {
  const ir::Module mm =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  const ir::Module fixed =
      parse_text("def f(a: [[float]12]16, b: [[float]12]24) = "
                 "map(r => map(c => reduce(add, 0.0f, map(mult, zip(r, c)))[0], b), a)");
  CHECK(why(rewrite::build_local_tiled(mm.main(), {16, 16, 4, 4, 8, true, false})).empty());
  CHECK(why(rewrite::build_local_tiled(fixed.main(), {4, 4, 4, 2, 6, false, true})).empty());
  CHECK(why(rewrite::build_local_tiled(fixed.main(), {4, 4, 8, 2, 4, true, false})) ==
        "a row tile of 32 does not divide the length 16");
  CHECK(why(rewrite::build_local_tiled(fixed.main(), {4, 4, 2, 4, 4, true, false})) ==
        "a column tile of 16 does not divide the length 24");
  CHECK(why(rewrite::build_local_tiled(fixed.main(), {2, 2, 2, 2, 5, true, false})) ==
        "a chunk of steps of 5 does not divide the length 12");
  CHECK(why(rewrite::build_local_tiled(mm.main(), {0, 8, 4, 4, 8, true, false})) ==
        "a tile needs at least one work-item, output and step along each side");
  CHECK(why(rewrite::build_local_tiled(mm.main(), {8, 8, 4, 4, 8, true, false, -1})) ==
        "a tile's rows cannot be padded by a negative count");
  // Vector reads apply to an operand whose block lies consecutive at a step: stored step by step,
  // contiguous, a multiple of the width long; a tiling where neither does is the scalar one.
  CHECK(why(rewrite::build_local_tiled(mm.main(), vector_tiling({8, 8, 4, 4, 8, false, false}, 4)))
            .empty());
  CHECK(why(rewrite::build_local_tiled(mm.main(), vector_tiling({8, 8, 2, 4, 8, true, false}, 4)))
            .empty());
  CHECK(why(rewrite::build_local_tiled(mm.main(), vector_tiling({8, 8, 4, 4, 8, true, true}, 4))) ==
        "neither operand's block is 4 consecutive elements of local memory at a step");
  // Interleaved, the outputs go by groups of the width: blocks of 4 still read as float4s.
  CHECK(why(rewrite::build_local_tiled(mm.main(),
                                       vector_tiling({8, 8, 4, 4, 8, false, false, 0, true}, 4)))
            .empty());
  CHECK(why(rewrite::build_local_tiled(mm.main(),
                                       vector_tiling({8, 8, 2, 2, 8, false, false, 0, true}, 4))) ==
        "neither operand's block is 4 consecutive elements of local memory at a step");
  CHECK(
      why(rewrite::build_local_tiled(mm.main(), vector_tiling({8, 8, 2, 2, 8, false, false}, 4))) ==
      "neither operand's block is 4 consecutive elements of local memory at a step");
  CHECK(
      why(rewrite::build_local_tiled(mm.main(), transposing_copy({8, 8, 4, 4, 8, false, false}))) ==
      "a tile copied step by step is stored so already");
  CHECK(why(rewrite::build_local_tiled(
                mm.main(), transposing_copy(vector_tiling({8, 8, 4, 4, 8, true, true}, 4))))
            .empty());
  CHECK(
      why(rewrite::build_local_tiled(parse_text("def f(x: [float]N) = reduce(add, 0.0f, x)").main(),
                                     {})) == "the program is not a map over rows");
}

TEST_CASE("a grid in local-memory tiles computes the grid, every sum in its order") {
  // As for register blocks: 0.5 s + (a - b), so that a reordered sum or a row paired with the
  // wrong column differs, for work-groups of several shapes, chunks, ways of copying and
  // padded tiles.
  const ir::Module grid =
      parse_text("def f(a: [[float]K]M, b: [[float]K]N) = "
                 "map(r => map(c => reduce(muladd, 1.0f, map(sub, zip(r, c)))[0], b), a)");
  const Sizes sizes{{"M", 16}, {"N", 24}, {"K", 8}};
  std::mt19937_64 rng(11);
  std::vector<interp::HostArray> inputs;
  for (const ir::Expr& p : grid.main().params)
    inputs.push_back(interp::random_input(p.type(), sizes, rng));
  const interp::HostArray expected = interp::evaluate(grid.main(), inputs, sizes);
  for (const rewrite::LocalTiling& t :
       {rewrite::LocalTiling{2, 4, 2, 3, 4, true, false},
        rewrite::LocalTiling{4, 2, 4, 6, 8, false, true},
        rewrite::LocalTiling{8, 3, 2, 2, 2, true, true, 1},
        rewrite::LocalTiling{1, 1, 16, 24, 1, false, false},
        rewrite::LocalTiling{2, 4, 2, 3, 4, true, false, 0, true},
        rewrite::LocalTiling{4, 2, 4, 6, 8, false, true, 1, true},
        rewrite::LocalTiling{8, 3, 2, 2, 2, true, true, 0, true},
        vector_tiling({2, 2, 4, 4, 4, false, false}, 4),
        vector_tiling({4, 2, 4, 2, 2, false, true, 1}, 2),
        vector_tiling({2, 4, 2, 6, 8, true, false}, 2),
        transposing_copy(vector_tiling({2, 2, 4, 4, 4, true, false}, 4)),
        transposing_copy(vector_tiling({4, 2, 2, 3, 8, true, true, 4}, 2)),
        transposing_copy({2, 4, 2, 3, 4, true, false, 1}),
        // Interleaved by vectors: both sides in groups of 4 (2), or the rows element by element
        // (2 rows: no group of 4) and the columns in groups of 4.
        transposing_copy(vector_tiling({2, 2, 4, 4, 4, true, false, 0, true}, 4)),
        vector_tiling({2, 3, 4, 2, 8, false, false, 0, true}, 2),
        vector_tiling({4, 3, 2, 4, 4, false, false, 1, true}, 4)}) {
    CAPTURE(t.threads_y);
    CAPTURE(t.threads_x);
    CAPTURE(t.rows);
    CAPTURE(t.columns);
    CAPTURE(t.chunk);
    CAPTURE(t.interleaved);
    CAPTURE(t.vector_width);
    CAPTURE(t.rows_stored_by_step);
    auto built = rewrite::build_local_tiled(grid.main(), t);
    REQUIRE(why(built).empty());
    const interp::HostArray tiled = interp::evaluate(std::get<ir::Program>(built), inputs, sizes);
    CHECK(tiled.shape == expected.shape);
    CHECK(tiled.data == expected.data);
  }
}

TEST_CASE(
    "vector reads of products: aligned local arrays declared in the kernel, vloadN, B in float4s") {
  const ir::Module mm =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  auto kernel_of = [&](const rewrite::LocalTiling& t) {
    auto built = rewrite::build_local_tiled(mm.main(), t);
    REQUIRE(why(built).empty());
    return codegen::generate(std::get<ir::Program>(built));
  };
  auto local_args = [](const codegen::Kernel& k) {
    return std::count_if(k.args.begin(), k.args.end(), [](const codegen::KernelArg& a) {
      return a.role == codegen::KernelArg::Role::Local;
    });
  };
  // Both blocks (4 rows, 4 columns) consecutive at a step in unpadded tiles: each step reads a
  // float4 of each from arrays the kernel declares aligned, in place of two local arguments.
  const codegen::Kernel scalar = kernel_of({8, 8, 4, 4, 8, false, false});
  const codegen::Kernel vector = kernel_of(vector_tiling({8, 8, 4, 4, 8, false, false}, 4));
  CHECK(local_args(scalar) == 2);
  CHECK(local_args(vector) == 0);
  REQUIRE(vector.local_arrays.size() == 2);
  CHECK(vector.local_arrays[0].alignment == 16);
  CHECK(vector.local_bytes() == scalar.local_bytes());
  CHECK(vector.local_bytes() == arith::Expr(2 * 32 * 8 * 4));
  CHECK(vector.source.find("__attribute__((aligned(16)));") != std::string::npos);
  CHECK(vector.source.find("(*(const local float4*)(" + vector.local_arrays[0].buffer.name) !=
        std::string::npos);
  CHECK(scalar.source.find("float4") == std::string::npos);
  // A register block's columns of B at a step: one aligned float4 read from global memory,
  // held whole, where the scalar block reads four floats.
  auto blocked = rewrite::build_register_blocked(mm.main(), {4, 4, 4, true, 4});
  REQUIRE(why(blocked).empty());
  const codegen::Kernel block = codegen::generate(std::get<ir::Program>(blocked));
  CHECK(block.source.find("const float4 vec_") != std::string::npos);
  CHECK(block.source.find("(*(const global float4*)(B + ") != std::string::npos);
  CHECK(std::count_if(block.accesses.begin(), block.accesses.end(), [](const auto& a) {
          return a.buffer == "B" && a.width == 4;
        }) == 4); // one per step of the chunk of 4
  // Padded by one, a tile's rows are 33 floats apart: step 0's reads stay aligned casts, the
  // other steps' are vload4 (which needs element alignment only).
  const codegen::Kernel padded = kernel_of(vector_tiling({8, 8, 4, 4, 8, false, false, 1}, 4));
  CHECK(padded.local_arrays.size() == 2);
  CHECK(padded.source.find("vload4(0, lcl_") != std::string::npos);
  CHECK(padded.source.find("(*(const local float4*)(") != std::string::npos);
  // Interleaved by float4s: work-item x reads the vectors at 4x and 4x + 32 of a step's 64
  // columns (8 work-items), neighbouring work-items neighbouring vectors.
  const codegen::Kernel interleaved =
      kernel_of(vector_tiling({8, 8, 4, 8, 8, false, false, 0, true}, 4));
  const std::regex lane_vector(
      R"(\(\*\(const local float4\*\)\(lcl_\d+ \+ \(?\(4 \* lid0_\d+\)( \+ \d+\))?\)\))");
  const auto reads = std::distance(
      std::sregex_iterator(interleaved.source.begin(), interleaved.source.end(), lane_vector),
      std::sregex_iterator());
  CHECK(reads == 2 * 8); // two float4s of the column block per step, 8 steps
  CHECK(std::regex_search(interleaved.source, std::regex(R"(\(\(4 \* lid0_\d+\) \+ 32\)\)\))")));
}

TEST_CASE("unrolled steps of a product reuse their private copies: live memory counts one step") {
  const ir::Module mm =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  auto private_bytes = [&](const std::variant<ir::Program, std::string>& built) {
    REQUIRE(why(built).empty());
    const codegen::Kernel k = codegen::generate(std::get<ir::Program>(built));
    CHECK(k.live_private_bytes() <= k.private_bytes); // the registers' estimate keeps them all
    return k.live_private_bytes();
  };
  // A step's copies of its row and column values are dead once the step is in the accumulator,
  // so 16 unrolled steps need the memory of one live at once, as the rolled loop does.
  const int64_t chunk4 = private_bytes(
      rewrite::build_local_tiled(mm.main(), vector_tiling({16, 16, 8, 8, 4, false, false}, 4)));
  const int64_t chunk16 = private_bytes(
      rewrite::build_local_tiled(mm.main(), vector_tiling({16, 16, 8, 8, 16, false, false}, 4)));
  CHECK(chunk16 == chunk4);
  CHECK(chunk16 <= 1024); // the GPU profiles' limit: 8x8 blocks in chunks of 16 stay in the space
  CHECK(private_bytes(rewrite::build_register_blocked(mm.main(), {8, 8, 8, true, 4})) ==
        private_bytes(rewrite::build_register_blocked(mm.main(), {8, 8, 2, true, 4})));
}
