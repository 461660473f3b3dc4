#pragma once
/// The kind of a high-level program, as the cost model's regression suite groups its inputs: the
/// kinds differ in what bounds their variants (a stencil's halo reuse, a reduction's partial
/// results, a product's register blocks, a fused step's on-chip stages), so a ranking that carries
/// on one kind may not carry on another, and each is judged on its own (`liftx evaluate --model`).
#include "ir/expr.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::rewrite {

/// In order of precedence: a program of several kinds is the first that applies (an iterated
/// multi-output step is `time_steps`).
enum class ProgramKind {
  time_steps,   ///< an iterate(T, step): fused time steps
  product,      ///< a grid of reductions over pairs of rows (matrix product, contraction)
  reduction,    ///< another reduction along the input (matrix-vector products, row sums); a
                ///< stencil's sums over its window do not count
  layout,       ///< input grids stored together (a `layout` clause)
  multi_output, ///< a tuple per point
  stencil3d,    ///< a map over a 3D grid
  stencil2d,    ///< anything else: a map over a 1D or 2D grid
};

/// Every kind, in precedence order.
const std::vector<ProgramKind>& program_kinds();
std::string_view kind_name(ProgramKind kind);
/// The kind named `name` (as kind_name spells it), nullopt for another name.
std::optional<ProgramKind> parse_program_kind(std::string_view name);

ProgramKind program_kind(const ir::Program& program);

} // namespace liftx::rewrite
