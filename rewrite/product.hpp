#pragma once
/// Register blocking of a grid of reductions over pairs (a matrix product): each work-item
/// computes a block of rows x columns outputs, their reductions advanced together one step at a
/// time in a private accumulator (a reduceSeq over an array: registers), so that each step's
/// values of a row and of a column are read once for the whole block instead of once per output.
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
};

/// The lowered program (same parameters and result as `program`). Why not, when the program is
/// not a recognised product grid or the blocking does not fit it.
std::variant<ir::Program, std::string> build_register_blocked(const ir::Program& program,
                                                              const RegisterBlocking& blocking);

} // namespace liftx::rewrite
