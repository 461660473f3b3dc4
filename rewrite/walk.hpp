#pragma once
/// Sites and paths: where rules can apply in a program, and rebuilding a program with one
/// subexpression replaced. Children are numbered per node kind:
///   Expr call:        0 = the function, 1.. = the arguments
///   Fun lambda:       0 = the body
///   Fun primitive:    its children in ir::for_each_child order: 0 = the function (maps,
///                     toGlobal/toLocal/toPrivate, iterate, array, ...), 1 = reduce's initial value
/// A path is the list of child numbers from the program body to a node.
#include "rewrite/rule.hpp"

#include <optional>
#include <vector>

namespace liftx::rewrite {

using Path = std::vector<uint32_t>;

/// A place where a rule can apply, always seen by rules as a call `f(args)`:
/// - an expression site: a call expression of the program;
/// - a function site: a function that is not itself called directly but passed to a primitive
///   (the `g` of `map(g)`, the `f` of `reduce(f, init)`, ...). Rules see it applied to fresh
///   parameters of the argument types it receives; the result becomes the lambda
///   `params => result` (eta-reduced) in its place.
struct Site {
  Path path;
  ir::Expr expr; ///< the call the rule sees
  RuleContext context;
  bool is_function = false;
  std::vector<ir::Expr> params; ///< function sites: the fresh parameters of `expr`
};

/// Every site of the program body (inside lambda bodies and reduce initial values too), in
/// pre-order: a site before the sites inside it.
std::vector<Site> sites(const ir::Program& program);

/// The program with the node at `path` replaced (an expression of the same type, or a function
/// taking the same arguments); everything on the way up is rebuilt and re-typechecked.
ir::Program replace_at(const ir::Program& program, const Path& path,
                       const std::variant<ir::Expr, ir::Fun>& replacement);

/// Applies `rule` at `site` of `program`: the rewritten program, or the rule's refusal.
std::variant<ir::Program, NoMatch> apply_at(const ir::Program& program, const Rule& rule,
                                            const Site& site);

/// Every program obtained by applying `rule` at one site, in site order.
std::vector<ir::Program> apply_everywhere(const ir::Program& program, const Rule& rule);

/// Applies the first site where the rule applies, repeatedly, until it applies nowhere or
/// `max_steps` applications were made (then InternalError: a non-terminating rule set).
ir::Program apply_until_fixpoint(const ir::Program& program, const Rule& rule,
                                 int max_steps = 1000);

/// Rebuild helpers: the node with child `index` replaced.
ir::Expr with_child(const ir::Expr& e, uint32_t index,
                    const std::variant<ir::Expr, ir::Fun>& child);
ir::Fun with_child(const ir::Fun& f, uint32_t index, const std::variant<ir::Expr, ir::Fun>& child);

} // namespace liftx::rewrite
