#pragma once
/// The floating-point operations a program performs: the arithmetic rate of a run report and its
/// arithmetic intensity (flops per byte moved) are built on it. The count is of the program as
/// written, at concrete sizes: for the high-level program, the algorithm (a matrix product at
/// M x N x K counts 2 M N K), whatever lowering ran it.
#include "ir/expr.hpp"

namespace liftx::exec {

/// The floating-point operations of one evaluation of `program` at `sizes`. A user function call
/// counts its + - * / and builtin calls on float or double values along its costliest path
/// (ir::OpCounts::floating_point; int index arithmetic, comparisons and logic are none), times
/// the applications of the maps, reductions, iterations, arrays and sliding windows around it (a
/// vectorised call once per component). Data movement (zip, split, slide, pad, transpose, ...)
/// costs nothing; a sub-expression inside a map counts once per element, as written. A lowering
/// that splits a reduction adds the combining of its partial sums: count the high-level program
/// for the algorithm's figure. UserError when a length does not evaluate at `sizes`.
double count_flops(const ir::Program& program, const Sizes& sizes);

} // namespace liftx::exec
