#pragma once
/// Register blocking (and, below, local-memory tiles) of a grid of reductions over pairs (a
/// matrix product). Register blocking: each work-item computes a block of rows x columns outputs,
/// their reductions advanced together one step at a time in a private accumulator (a reduceSeq
/// over an array: registers), so that each step's values of a row and of a column are read once
/// for the whole block instead of once per output.
/// build_register_blocked builds the lowered form directly from the recognised program, in the
/// form these identities give (the builder does not run the rule engine):
///
///  - split-join on both maps: map(f, x) => join(map(map(f), split(b, x))), rows into blocks of
///    `rows`, columns into blocks of `columns`;
///  - reduce-map-fusion, then the reductions of a block fused into one reduction whose
///    accumulator is the block (each step's element is the pair of the block's rows' and
///    columns' k-th elements: zip(transpose(row block), transpose(column block))): the same
///    sums, each in the same order as the original reduction's, so no operator needs to be
///    associative;
///  - the row blocks to mapGlb1, the column blocks to mapGlb0, the accumulator's updates to
///    mapSeq; the step's values copied to private memory first (to-private) or not; the loop
///    over the reduction split into chunks of `unroll` steps (split-reduce's sequential form),
///    which the code generator unrolls.
#include "ir/expr.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace liftx::rewrite {

/// The lowering strategy name in the variant space, and its steps as `liftx variants` prints
/// them.
inline constexpr const char* kRegisterBlockStrategy = "register_block";
inline constexpr const char* kRegisterBlockSteps =
    "split-join(rows) on the rows, split-join(columns) on the columns, reduce-map-fusion, the "
    "block's reductions fused into one over a private array, map-to-mapGlb1, map-to-mapGlb0, "
    "split(unroll) of the steps, to-private step values";

/// A program whose outputs are reductions over the pairs of a row of R and a row of C:
///   map(r => map(c => reduce(f, init, map(g, zip(r, c)))[0], C), R)
/// (map(g, .) optional; C may not depend on r), so out[i][j] = reduce over k of
/// g((R[i][k], C[j][k])). A matrix product is R = A, C = transpose(B), g = mult, f = add.
struct ProductGrid {
  ir::Expr row, column;           ///< the lambdas' parameters r and c
  ir::Expr rows, columns;         ///< R and C
  std::optional<ir::Fun> element; ///< g
  ir::Fun op;                     ///< f
  ir::Expr init;
};

/// The recognised program, or why `program` is not one.
std::variant<ProductGrid, std::string> as_product_grid(const ir::Program& program);

/// The block each work-item computes and how its loop runs.
struct RegisterBlocking {
  int64_t rows = 4;           ///< outputs per work-item along R (a constant >= 1)
  int64_t columns = 4;        ///< outputs per work-item along C
  int64_t unroll = 1;         ///< reduction steps per iteration of the loop (1: not split)
  bool private_copies = true; ///< each step's values of R and C copied to private memory first
  /// The step's values of C copied as vectors of this width (private copies only; columns a
  /// multiple of it): one read of 16 bytes for 4 columns where C's columns lie consecutive at a
  /// step (C = transpose(B) of a row-major B). 1: element by element.
  int64_t vector_width = 1;
};

/// The lowered program (same parameters and result as `program`). Why not, when the program is
/// not a recognised product grid or the blocking does not fit it.
std::variant<ir::Program, std::string> build_register_blocked(const ir::Program& program,
                                                              const RegisterBlocking& blocking);

/// Local-memory tiles: a work-group of threads_y x threads_x work-items computes a tile of
/// (threads_y rows) x (threads_x columns) outputs, each work-item a rows x columns block of it,
/// its accumulators in registers (private memory written by mapLcl: one block per work-item).
/// The reduction runs in chunks of `chunk` steps; each chunk's values of the tile's rows of R and
/// columns of C are first copied to local memory by the whole group (a barrier after each copy
/// and at the chunk's end), so that each value is read from DRAM once per work-group instead of
/// once per work-item that needs it. The identities: split-join on both maps (work-group tiles,
/// then work-item blocks), the block's reductions fused into one (as register blocking), the
/// reduction split into chunks (split-reduce's sequential form), and to-local of each chunk's
/// values, copied by mapLcl1/mapLcl0 along the order the copy reads memory in.
inline constexpr const char* kLocalTilesStrategy = "local_tiles";
inline constexpr const char* kLocalTilesSteps =
    "split-join(tile) on the rows and the columns, map-to-mapWrg1, map-to-mapWrg0, "
    "split-join(block) within a tile, map-to-mapLcl1, map-to-mapLcl0, reduce-map-fusion, the "
    "block's reductions fused into one over private memory held per work-item, split(chunk) of "
    "the steps, to-local of each chunk's row and column values";

struct LocalTiling {
  int64_t threads_y = 8; ///< work-items of a group along R (mapLcl1)
  int64_t threads_x = 8; ///< along C (mapLcl0)
  int64_t rows = 4;      ///< outputs per work-item along R
  int64_t columns = 4;   ///< along C
  int64_t chunk = 8;     ///< reduction steps per tile staged in local memory
  /// How each chunk's values are copied: false, neighbouring work-items copy neighbouring rows
  /// (columns) of the same step; true, neighbouring steps of the same row (column). Which of the
  /// two reads neighbouring addresses depends on how R (C) lies in memory: along the steps for a
  /// row-major A, across them for C = transpose(B) of a row-major B.
  bool rows_copied_along_steps = true;
  bool columns_copied_along_steps = false;
  /// Unused elements after each row of the tiles in local memory (pad-local-rows): a row of the
  /// row tile stored along the steps is `chunk` floats, so work-items of different rows read
  /// the same bank at a stride of rows x chunk words; padding by one spreads them (seed 004).
  int64_t padding = 0;
  /// Which outputs a work-item computes: false, a contiguous block (rows y * rows .., columns
  /// x * columns ..); true, every threads_y-th row from y and every threads_x-th column from x.
  /// Interleaved, neighbouring work-items read neighbouring words of the column tile at each
  /// step (distinct banks) and write neighbouring outputs; contiguous, they read words `columns`
  /// apart, several in one bank (CLBlast's STRM/STRN choice). With vector reads, by groups of
  /// vector_width along each side whose block is a multiple of it: every threads_x-th group of
  /// 4 columns from group x, so that neighbouring work-items read neighbouring vectors.
  bool interleaved = false;
  /// Each step's values of a work-item's block read from local memory as vectors of this many
  /// elements into private memory (to-private of asVector, asScalar back), for each operand whose
  /// block is consecutive there at a step: stored step by step (not copied along the steps), and
  /// a multiple of the width long (interleaved: in groups of the width). 1: read element by
  /// element where used. Refused when neither operand's block is read so (the variant would be
  /// the scalar one).
  int64_t vector_width = 1;
  /// A tile copied along the steps but stored step by step (a transposing copy): neighbouring
  /// work-items read neighbouring steps, as a row-major A needs for its reads to coalesce, and
  /// the block's values at a step lie consecutive for vector reads. The writes of a step's
  /// lanes are a tile's row apart: padding spreads their banks. Only with copied_along_steps.
  bool rows_stored_by_step = false;
  bool columns_stored_by_step = false;
};

/// The lowered program (same parameters and result as `program`). Why not, when the program is
/// not a recognised product grid or the tiling does not fit it.
std::variant<ir::Program, std::string> build_local_tiled(const ir::Program& program,
                                                         const LocalTiling& tiling);

} // namespace liftx::rewrite
