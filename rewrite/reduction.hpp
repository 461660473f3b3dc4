#pragma once
/// Work-group reductions of matrix rows and columns (matrix-vector products and their transposes,
/// row and column sums): each output is one reduction of a row (or column) of a matrix, split
/// into partial reductions that the work-items of a group compute side by side, their results
/// combined in local memory. build_matrix_reduction builds the lowered form directly from the
/// recognised program, in the form these identities give (each also a rule of rewrite/rules.hpp
/// whose table checks it on the interpreter; the builder does not run the rule engine):
///
///  - split-reduce(k): reduce(f, init, x) => reduce(f, init, join(map(reduce(f, init),
///    transpose(split(k, x))))) for f associative and commutative with identity init: k partial
///    reductions of interleaved elements (part l reduces x[l], x[l + k], ...), so that the k
///    work-items reading one row read consecutive addresses at every step;
///  - reduce-map-fusion: reduce(f, init, map(g, x)) => reduce((a, e) => f(a, g(e)), init, x), so
///    that the products of a dot product are never stored;
///  - the matrix's rows (or blocks of columns) to work-groups (map-to-mapWrg0), the partial
///    reductions to work-items (map-to-mapLcl0) into local memory (to-local), the final reduction
///    of each output by one work-item over the partial results after a barrier.
///
/// Rows (y = A x): one work-group per row, `parts` work-items, interleaved parts. Columns (y = A^T
/// x): one work-group per block of `lanes / parts` columns, the work-items of a part of a block
/// reading consecutive columns of one row (coalesced), each reducing every parts-th row of its
/// column.
#include "ir/expr.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace liftx::rewrite {

/// The lowering strategy name of work-group reductions in the variant space, and its steps as
/// `liftx variants` prints them.
inline constexpr const char* kReductionStrategy = "workgroup_reduce";
inline constexpr const char* kReductionSteps =
    "split-reduce(parts), reduce-map-fusion, map-to-mapWrg0, map-to-mapLcl0, to-local partial "
    "results, one work-item per output combines them";

/// A program whose outputs are each one reduction of a row or a column of a matrix:
///   map(v => reduce(f, init, E)[0], A)              rows: output i reduces E(row i of A)
///   map(v => reduce(f, init, E)[0], transpose(A))   columns: output j reduces E(column j)
/// with f associative and commutative and init its identity (add and 0, mult and 1), E an
/// expression of v of the reduction's length (E = map(g, D) keeps g apart, to be fused).
struct MatrixReduction {
  ir::Expr vector;                ///< v, the lambda's parameter
  ir::Expr data;                  ///< D: E without its outer map(g), or E itself
  std::optional<ir::Fun> element; ///< g
  ir::Fun op;                     ///< f
  ir::Expr init;
  ir::Expr matrix; ///< A
  bool columns = false;
};

/// The recognised program, or why `program` is not one.
std::variant<MatrixReduction, std::string> as_matrix_reduction(const ir::Program& program);

/// Whether f is an associative and commutative operator with identity init (the built-in add
/// with 0, mult with 1, of any scalar type), so that a reduction with it may be split and
/// reordered. Why not, when it is not.
std::optional<std::string> refuse_reordering(const ir::Fun& f, const ir::Expr& init);

/// How the work-items of a group share the reductions.
struct ReductionTiling {
  int64_t lanes = 64; ///< work-items per group
  int64_t parts = 64; ///< partial reductions per output (rows: = lanes; columns: divides lanes)
};

/// The lowered program (same parameters and result as `program`). Why not, when the program is
/// not a recognised matrix reduction or the tiling does not fit it.
std::variant<ir::Program, std::string> build_matrix_reduction(const ir::Program& program,
                                                              const ReductionTiling& tiling);

} // namespace liftx::rewrite
