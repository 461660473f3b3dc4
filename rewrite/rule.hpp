#pragma once
/// Rewrite rules: small, named, pure functions from one expression (a call) to a rewritten one or
/// a refusal with its reason. A rule never traverses; the driver (rewrite/walk.hpp) finds the
/// sites and rebuilds the program around the replacement, re-typechecking on the way.
#include "ir/expr.hpp"
#include "ir/primitives.hpp"

#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace liftx::rewrite {

/// Why a rule does not apply at a site: not an error.
struct NoMatch {
  std::string why;
};
using RuleResult = std::variant<ir::Expr, NoMatch>;

/// What a rule may need to know about where its site is.
struct RuleContext {
  /// The loops (maps, reductions, iterates, mapSeqSlide) enclosing the site, outermost first, by
  /// their names in .lift: "map", "mapGlb0", "mapWrg1", "mapSeq", "reduceSeq", ... The queries
  /// below read their entries in the primitive registry (ir/primitives.hpp).
  std::vector<std::string> enclosing;
  bool inside(std::string_view head) const;
  /// Inside a map of `level` of dimension `dim` (of any dimension when dim < 0).
  bool inside(ir::ParallelLevel level, int dim = -1) const;
  /// inside(level, dim) for the level whose maps are called `family` ("mapGlb", "mapWrg",
  /// "mapLcl"); false for any other name.
  bool inside_parallel(std::string_view family, int dim = -1) const;
  /// The innermost enclosing loop; nullptr at the top level.
  const ir::Primitive* innermost() const;
};

struct Rule {
  std::string name;                ///< stable id: "split-join(4)", "map-fusion", "map-to-mapGlb0"
  std::string doc;                 ///< "map(f) => join o map(map(f)) o split(n)"
  std::vector<std::string> labels; ///< "algorithmic", "opencl", "stencil", ...
  std::function<RuleResult(const ir::Expr& site, const RuleContext& context)> apply;
};

bool applied(const RuleResult& r);
const ir::Expr& result_of(const RuleResult& r);
const std::string& reason_of(const RuleResult& r);

} // namespace liftx::rewrite
