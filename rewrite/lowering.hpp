#pragma once
/// Lowering strategies: how a high-level stencil becomes an OpenCL-level program. A strategy is a
/// list of steps (rules applied once at a chosen site, or every remaining map/reduce made
/// sequential); the variant space (space/space.hpp) tries each on each high-level program, and the
/// default lowering (space/default_lowering.hpp) takes the first that gives a kernel. Pure IR to
/// IR: nothing here generates code.
#include "ir/expr.hpp"
#include "rewrite/rule.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace liftx::rewrite {

/// One step of a lowering strategy: rules applied once (alternatives, tried in order: the first
/// that applies is the step), or turning every remaining map/reduce sequential.
struct LoweringStep {
  enum class Kind { rule, sequentialise };
  /// Which site the rule is tried at first: the outermost, the innermost, or the first inside
  /// every work-group dimension (a tile copy belongs there, as in Lift's addIdForMapWrgParam).
  enum class Site { first, last, inside_all_work_groups };
  Kind kind = Kind::rule;
  std::string name; ///< as printed: "map-to-mapGlb1", "chunk-outputs(n)", "sequential"
  /// The rules of a rule step, made with the strategy's parameter (chunk size, vector width).
  std::function<std::vector<Rule>(int64_t parameter)> rules;
  Site site = Site::first;
  bool skip_unless_parameter_above_1 = false; ///< vectorise-outputs(1) would be the identity
};

/// A lowering strategy as data: its steps are both what lower() runs and what describe() prints.
struct LoweringStrategy {
  std::string name;
  std::vector<LoweringStep> steps;
  /// The strategy's parameter as a variant's parameters name it ("chunk", "vector"; empty: none)
  /// and the values the space tries given its largest chunk (one 0 when there is none).
  std::string parameter;
  std::function<std::vector<int64_t>(int64_t max_chunk)> parameter_values;
  /// The stencils it is tried on: those whose result grid has from `min_grid_rank` to
  /// `max_grid_rank` dimensions (array levels, a reduction's one-element arrays not counted).
  int min_grid_rank = 1;
  int max_grid_rank = 3;
  /// A strategy of 3D tiles (tile-stencil-3d): it lowers the 3D-tiled programs, which no other
  /// strategy lowers, and its threads are tied to the tiles (free 3D launches would multiply a
  /// kernel's variants by the thousand, three dimensions of global and local choices, for
  /// work-items that loop over tiles). 3D-tiled programs get no further high-level rewrite.
  bool tiles_3d = false;
};

/// Dimensions of a stencil's result grid: its array levels down to the first of length 1 (a
/// reduction's one-element result per point); a length the sizes do not fix counts.
int grid_rank(const ir::Type& result, const Sizes& sizes = {});
/// Every lowering strategy of the space, in the order the space tries them.
const std::vector<LoweringStrategy>& lowering_strategies();
/// "map-to-mapGlb1, map-to-mapGlb0, chunk-outputs(n), sequential".
std::string describe(const LoweringStrategy& strategy);

/// Applies a named lowering strategy with its parameter (chunk size or 0) to a high-level
/// program: the lowered program or the reason it does not apply.
std::variant<ir::Program, std::string> lower(const ir::Program& program,
                                             const std::string& strategy, int64_t parameter,
                                             const Sizes& sizes);

/// Every array length in every type of the program evaluates to an exact positive integer under
/// `sizes` (split and slide divide exactly).
bool lengths_exact(const ir::Program& program, const Sizes& sizes);
/// `e` evaluated under `sizes`, or `fallback` where a size it names is missing.
int64_t evaluate_or(const arith::Expr& e, const Sizes& sizes, int64_t fallback);
/// from, 2 from, 4 from, ... up to `to`.
std::vector<int64_t> powers_of_two(int64_t from, int64_t to);

} // namespace liftx::rewrite
