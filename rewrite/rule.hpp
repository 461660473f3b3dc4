#pragma once
/// Rewrite rules: small, named, pure functions from one expression (a call) to a rewritten one or
/// a refusal with its reason. A rule never traverses; the driver (rewrite/walk.hpp) finds the
/// sites and rebuilds the program around the replacement, re-typechecking on the way.
#include "ir/expr.hpp"

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
  /// The function heads of the maps (and reductions, iterates) enclosing the site, outermost
  /// first: "map", "mapGlb0", "mapWrg1", "mapLcl0", "mapSeq", "reduceSeq", ...
  std::vector<std::string> enclosing;
  bool inside(std::string_view head) const;
  /// Inside any mapGlb/mapWrg/mapLcl of dimension `dim` (or any dimension when dim < 0).
  bool inside_parallel(std::string_view level, int dim = -1) const;
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
