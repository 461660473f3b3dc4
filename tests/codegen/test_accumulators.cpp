// reduceSeq whose accumulator is an array or a tuple (register blocking: several outputs per
// work-item, summed in private memory). Each kernel is verified on PoCL against the interpreter
// on random inputs; the register-blocked products against the high-level mm of stencils/linalg/.
#include "codegen/kernel.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include "pocl.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <regex>
#include <string>

using namespace liftx;

namespace {

const char* const kUserFuns = R"(
userfun madd(acc: float, a: float, b: float): float { return acc + a * b; }
userfun zero(i: int, n: int): float { return 0.0f; }
userfun ramp(i: int, n: int): float { return (float)(i * i) - 1.5f; }
userfun halfadd(a: float, x: float): float { return 0.5f * a + x; }
userfun sum_max_step(s: float, m: float, x: float): (float, float) { return {s + x, fmax(m, x)}; }
)";

ir::Module parse_text(const std::string& text) {
  return parse::parse_module(std::string(kUserFuns) + text, "<test>");
}

/// C = A B with each work-item computing a rows x cols block of C, the loop over k unrolled
/// `unroll` times (1: not split).
std::string blocked_mm(int rows, int cols, int unroll) {
  const std::string step = "(acc, x) => mapSeq((acc_row, a) => mapSeq((c, b) => madd(c, a, b), "
                           "zip(acc_row, get(1, x))), zip(acc, get(0, x)))";
  const std::string init = fmt::format("array({}, (i, n) => array({}, zero))", rows, cols);
  const std::string pairs = "zip(transpose(rows), transpose(columns))";
  const std::string reduce =
      unroll == 1 ? fmt::format("reduceSeq({}, {}, {})", step, init, pairs)
                  : fmt::format("reduceSeq((outer, chunk) => join(reduceSeq({}, outer, chunk)), "
                                "{}, split({}, {}))",
                                step, init, unroll, pairs);
  return fmt::format(R"(
def mm(A: [[float]K]M, B: [[float]N]K) =
  join(mapGlb1(rows => map(join, transpose(mapGlb0(columns => join({}),
    split({}, transpose(B))))), split({}, A)))
)",
                     reduce, cols, rows);
}

/// C = A B by work-groups of ly x lx work-items, each computing a rows x cols block of a
/// (ly rows) x (lx cols) tile of C; k in chunks of `chunk`, each chunk's A and B tiles first
/// staged in local memory by the whole group (a barrier after each copy). The accumulators start
/// from an array of zeros, or (accumulators_per_work_item) from zeros each work-item writes with
/// mapLcl into private memory, so that each holds only its own block.
std::string local_tiled_mm(int ly, int lx, int rows, int cols, int chunk,
                           bool accumulators_per_work_item = false) {
  const std::string block =
      "join(reduceSeq((a2, x) => mapSeq((accR, a) => mapSeq((c, b) => madd(c, a, b), "
      "zip(accR, get(1, x))), zip(a2, get(0, x))), accBlk, zip(transpose(aBlk), "
      "transpose(bBlk))))";
  const std::string per_item =
      fmt::format("mapLcl1((accRow, aBlk) => mapLcl0((accBlk, bBlk) => {}, zip(accRow, split({}, "
                  "transpose(lb)))), zip(acc, split({}, transpose(la))))",
                  block, cols, rows);
  const std::string staged =
      fmt::format("((la, lb) => {})(toLocal(mapLcl1(mapLcl0(id)))(map(get(0), chunk)), "
                  "toLocal(mapLcl1(mapLcl0(id)))(map(get(1), chunk)))",
                  per_item);
  std::string init =
      fmt::format("array({}, (i, n) => array({}, (j, m) => array({}, (k, p) => array({}, zero))))",
                  ly, lx, rows, cols);
  if (accumulators_per_work_item)
    init = fmt::format("toPrivate(mapLcl1(mapLcl0(mapSeq(mapSeq(id)))))({})", init);
  const std::string reduce =
      fmt::format("join(reduceSeq((acc, chunk) => {}, {}, split({}, zip(transpose(aRows), "
                  "transpose(bCols)))))",
                  staged, init, chunk);
  const std::string tile = fmt::format(
      "map(join, join(map(transpose, toGlobal(mapLcl1(mapLcl0(mapSeq(mapSeq(id)))))({}))))",
      reduce);
  return fmt::format("def mm(A: [[float]K]M, B: [[float]N]K) =\n"
                     "  join(mapWrg1(aRows => map(join, transpose(mapWrg0(bCols => {}, split({}, "
                     "transpose(B))))), split({}, A)))\n",
                     tile, lx * cols, ly * rows);
}

} // namespace

TEST_CASE("register-blocked products equal the high-level mm, their accumulators in registers") {
  const ir::Module reference =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  struct Case {
    int rows, cols, unroll;
  };
  for (const Case c : {Case{1, 4, 1}, Case{4, 4, 1}, Case{8, 4, 1}, Case{2, 8, 4}, Case{4, 2, 8}}) {
    INFO(c.rows << "x" << c.cols << " unrolled " << c.unroll);
    const ir::Module m = parse_text(blocked_mm(c.rows, c.cols, c.unroll));
    // Non-square, k a multiple of the unrolling.
    const Sizes sizes{{"M", 16}, {"N", 24}, {"K", 40}};
    test::check_verified(m.main(), sizes, 16 * 24, &reference.main());
    // Constant indices only: the accumulators become scalars (registers), not arrays.
    const std::string source = codegen::generate(m.main()).source;
    CHECK(source.find("priv_") != std::string::npos);
    CHECK(source.find("priv_3[") == std::string::npos);
    CHECK(source.find(fmt::format("priv_3_{}", c.rows * c.cols - 1)) != std::string::npos);
  }
}

TEST_CASE("a step may read any element of the accumulator: it writes a second copy") {
  // acc'[i] = acc[p(i)] / 2 + x with p = (0 2 1 3) and an accumulator that starts uneven: an
  // update in place would read acc[1] after writing it.
  const ir::Module m = parse_text(R"(
def permuted(xs: [[float]N]M) =
  mapGlb0(row => join(reduceSeq((acc, x) => mapSeq(a => halfadd(a, x), join(transpose(split(2, acc)))),
                                array(4, ramp), row)), xs)
)");
  test::check_verified(m.main(), {{"M", 8}, {"N", 13}}, 8 * 4);
}

TEST_CASE("a tuple accumulator: the sum and the largest value of each row in one pass") {
  const ir::Module m = parse_text(R"(
def sum_max(xs: [[float]N]M) =
  mapGlb0(row => reduceSeq((acc, x) => sum_max_step(get(0, acc), get(1, acc), x),
                           tuple(0.0f, -1000.0f), row)[0], xs)
)");
  test::check_verified(m.main(), {{"M", 12}, {"N", 17}}, 2 * 12);
}

TEST_CASE("an accumulator whose length is not a constant is refused at its source position") {
  const ir::Module m = parse_text(R"(
def varlen(xs: [[float]N]M) =
  mapGlb0(row => join(reduceSeq((acc, x) => mapSeq(a => add(a, x), acc), array(N, zero), row)), xs)
)");
  try {
    (void)codegen::generate(m.main());
    FAIL("generated an accumulator of a length known only at run time");
  } catch (const UserError& e) {
    const std::string what = e.what();
    CHECK(what.find("needs constant array lengths") != std::string::npos);
    CHECK(what.find("[float]N") != std::string::npos);
  }
}

TEST_CASE("tiles staged in local memory per step of a reduction share one tile's memory") {
  // A matrix product's K loop stages each chunk's A and B tiles in local memory: every step
  // reuses the same tiles (one, not K / chunk of them) and ends with a barrier, so that no
  // work-item overwrites a tile another still reads.
  const ir::Module reference =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  const ir::Module m = parse_text(local_tiled_mm(4, 4, 2, 2, 4));
  const codegen::Kernel kernel = codegen::generate(m.main());
  // An 8 x 4 tile of A and a 4 x 8 tile of B, whatever K is.
  CHECK(kernel.local_bytes() == arith::Expr(2 * 8 * 4 * 4));
  // One after both copies (they are independent arguments: neither reads the other, so their
  // reads of global memory overlap), and one at the end of each step.
  CHECK(kernel.barriers.size() == 2);
  const size_t first_copy = kernel.source.find("lcl_");
  const size_t barrier = kernel.source.find("barrier(");
  REQUIRE(first_copy != std::string::npos);
  REQUIRE(barrier != std::string::npos);
  CHECK(kernel.source.find("] = B[", first_copy) < barrier); // B's copy before the first barrier
  for (const Sizes& sizes :
       {Sizes{{"M", 16}, {"N", 24}, {"K", 40}}, Sizes{{"M", 8}, {"N", 8}, {"K", 4}},
        Sizes{{"M", 32}, {"N", 16}, {"K", 256}}}) {
    const int64_t outputs = sizes.at("M") * sizes.at("N");
    test::check_verified(m.main(), sizes, outputs, &reference.main());
  }
  // Only A staged: the barrier its copy owes comes after the last argument (B, read from global
  // memory where used, emits none), before any work-item reads the tile.
  std::string a_only = local_tiled_mm(4, 4, 2, 2, 4);
  const std::string b_copy = "toLocal(mapLcl1(mapLcl0(id)))(map(get(1), chunk))";
  REQUIRE(a_only.find(b_copy) != std::string::npos);
  a_only.replace(a_only.find(b_copy), b_copy.size(), "map(get(1), chunk)");
  const ir::Module staged_a = parse_text(a_only);
  const codegen::Kernel a_kernel = codegen::generate(staged_a.main());
  CHECK(a_kernel.barriers.size() == 2);
  test::check_verified(staged_a.main(), {{"M", 16}, {"N", 24}, {"K", 40}}, 16 * 24,
                       &reference.main());
}

TEST_CASE("accumulators written by mapLcl in private memory are held one block per work-item") {
  // Work-groups of 16 x 16 work-items, each summing a 4 x 4 block of a 64 x 64 tile of C: private
  // memory for the work-group's whole accumulator would be 16 x 16 x 4 x 4 floats per work-item
  // (64 KiB); held per work-item it is the block, twice (the reduction's two copies), and the
  // zeros it starts from.
  const ir::Module reference =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  const ir::Module m = parse_text(local_tiled_mm(16, 16, 4, 4, 8, true));
  const Sizes sizes{{"M", 128}, {"N", 192}, {"K", 24}};
  const codegen::Kernel kernel = codegen::generate(m.main());
  CHECK(kernel.private_bytes <= 3 * 4 * 4 * 4 + 64);
  CHECK(kernel.local_bytes() == arith::Expr(2 * 64 * 8 * 4));
  // The copies' 64 columns over 16 work-items: 4 rounds each, a loop of a constant count.
  CHECK(std::regex_search(
      kernel.source, std::regex(R"(for \(int (r_\d+) = 0; \1 < 4; \1 \+= 1\) \{\s*int lid0_\d+ = )"
                                R"(get_local_id\(0\) \+ 16 \* \1;)")));
  CHECK(kernel.source.find("+= get_local_size(") == std::string::npos);
  test::check_verified(m.main(), sizes, 128 * 192, &reference.main());
  // Small blocks, a work-group wider than the blocks' mapLcl (work-items without a block).
  const ir::Module small = parse_text(local_tiled_mm(4, 4, 2, 2, 4, true));
  test::check_verified(small.main(), {{"M", 16}, {"N", 24}, {"K", 40}}, 16 * 24, &reference.main());
}

TEST_CASE("an element held per work-item is refused where another work-item's is read") {
  // p is written by mapLcl0 into private memory: each work-item holds its own element only, so
  // reading p[0] in every work-item would read what only work-item 0 holds.
  const ir::Module m = parse_text(R"(
def shifted(xs: [float]N) =
  join(mapWrg0(g => ((p) => toGlobal(mapLcl0(x => add(x, p[0])))(g))(toPrivate(mapLcl0(id))(g)),
               split(32, xs)))
)");
  try {
    (void)codegen::generate(m.main());
    FAIL("read another work-item's private element");
  } catch (const UserError& e) {
    const std::string what = e.what();
    CHECK(what.find("holds one element per work-item") != std::string::npos);
    CHECK(what.find("<test>:") != std::string::npos);
  }
}
