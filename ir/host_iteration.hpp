#pragma once
/// Host-side iteration: a program whose whole body is `iterate(T, f, p)` over one of its
/// parameters p cannot run as one kernel (every application of f reads all of the previous one:
/// a global synchronisation), but it runs as T launches of f's kernel, the output of one launch
/// the input p of the next (two device buffers swapped between launches). The variant space
/// lowers the step f alone and wraps each lowered step back into the iteration; the code
/// generator then emits f's kernel and the launch count.
#include "ir/expr.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace liftx::ir {

struct HostIteration {
  int64_t count = 0; ///< T: launches of the step's kernel
  size_t input = 0;  ///< index of the iterated parameter p in the program's parameters
  /// One step as a program of its own: the program's parameters with p replaced by the step's
  /// parameter (of p's type), the step's body as its body.
  Program step;
  /// A second iteration over the first one's result, `iterate(R, g, iterate(T, f, p))`: R launches
  /// of g's kernel after the T of f's (temporal blocking's remainder: T launches of t fused steps,
  /// then R of the steps left over). 0 and nullopt when there is none.
  int64_t tail_count = 0;
  std::optional<Program> tail;
};

/// The host iteration of `program` when its body is `iterate(T, f, p)` with T a constant >= 1
/// and p one of its parameters, or `iterate(R, g, iterate(T, f, p))` with R >= 1 (a tail);
/// nullopt otherwise (including an iterate inside a map, which a kernel runs itself).
std::optional<HostIteration> host_iteration(const Program& program);

/// `step` (a step program as host_iteration makes it, possibly rewritten or lowered since: the
/// same parameters) iterated `count` times over its parameter `input`: the program
/// `def name(..., p, ...) = iterate(count, x => step.body, p)` with p a fresh parameter of x's
/// type and name.
Program iterate_step(const Program& step, int64_t count, size_t input);

/// iterate_step with a tail: `iterate(tail_count, x => tail.body, iterate(count, x => step.body,
/// p))`; `tail` has the same parameters as `step`.
Program iterate_steps(const Program& step, int64_t count, const Program& tail, int64_t tail_count,
                      size_t input);

} // namespace liftx::ir
