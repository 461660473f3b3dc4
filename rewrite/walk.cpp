#include "rewrite/walk.hpp"

#include "ir/fields.hpp"
#include "ir/primitives.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

namespace liftx::rewrite {

namespace {

using Node = std::variant<ir::Expr, ir::Fun>;

const ir::Type& element_of(const ir::Type& t) {
  const auto* a = t.as<ir::ArrayType>();
  LIFTX_INTERNAL_CHECK(a != nullptr, "expected an array, got {}", t.to_string());
  return a->element;
}

/// The function child of `f` (maps, reductions, iterate, mapSeqSlide, array, toGlobal/toLocal/
/// toPrivate) and the argument types it receives when `f` is applied to arguments of `types`;
/// nullopt for functions without one.
std::optional<std::pair<ir::Fun, std::vector<ir::Type>>>
function_child(const ir::Fun& f, const std::vector<ir::Type>& types) {
  auto first = [&]() -> const ir::Type& { return types.at(0); };
  const ir::Primitive* prim = ir::primitive_of(f);
  return std::visit(
      [&](const auto& n) -> std::optional<std::pair<ir::Fun, std::vector<ir::Type>>> {
        using N = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<N, ir::Reduce> || std::is_same_v<N, ir::ReduceSeq>) {
          return std::make_pair(n.f, std::vector<ir::Type>{n.init.type(), element_of(first())});
        } else if constexpr (std::is_same_v<N, ir::Generate>) {
          return std::make_pair(n.f, std::vector<ir::Type>{ir::Type::int_(), ir::Type::int_()});
        } else if constexpr (std::is_same_v<N, ir::MapSeqSlide>) {
          return std::make_pair(
              n.f, std::vector<ir::Type>{ir::Type::array(element_of(first()), n.size)});
        } else if constexpr (std::is_same_v<N, ir::Vectorize>) {
          return std::nullopt; // a user function applied per vector component: not a site
        } else if constexpr (requires { n.f; }) {
          if (prim->pattern == ir::Pattern::Map)
            return std::make_pair(n.f, std::vector<ir::Type>{element_of(first())});
          return std::make_pair(n.f, types); // iterate, toGlobal/toLocal/toPrivate
        } else {
          return std::nullopt;
        }
      },
      f.data().node);
}

class SiteCollector {
public:
  std::vector<Site> sites;

  void expr(const ir::Expr& e) {
    const auto* call = e.as<ir::Call>();
    if (!call)
      return;
    sites.push_back({path_, e, context_, false, {}});
    std::vector<ir::Type> types;
    for (const ir::Expr& a : call->args)
      types.push_back(a.type());
    path_.push_back(0);
    fun_inside(call->fun, types);
    path_.pop_back();
    for (size_t i = 0; i < call->args.size(); ++i) {
      path_.push_back(static_cast<uint32_t>(i + 1));
      expr(call->args[i]);
      path_.pop_back();
    }
  }

private:
  /// Walks the children of a function applied to arguments of `types` (the function itself is
  /// not a site: it is the head of a call, or was recorded as a function site by the caller).
  void fun_inside(const ir::Fun& f, const std::vector<ir::Type>& types) {
    if (const auto* l = f.as<ir::Lambda>()) {
      path_.push_back(0);
      expr(l->body);
      path_.pop_back();
      return;
    }
    if (const auto* r = f.as<ir::Reduce>())
      init(r->init);
    if (const auto* r = f.as<ir::ReduceSeq>())
      init(r->init);
    auto child = function_child(f, types);
    if (!child)
      return;
    const ir::Primitive* prim = ir::primitive_of(f);
    bool opened = prim && prim->loop();
    if (opened)
      context_.enclosing.push_back(ir::fun_name(f));
    path_.push_back(0);
    fun_site(child->first, child->second);
    path_.pop_back();
    if (opened)
      context_.enclosing.pop_back();
  }

  void init(const ir::Expr& e) {
    path_.push_back(1);
    expr(e);
    path_.pop_back();
  }

  /// A function passed to a primitive: a site (unless it is a lambda, whose body holds the
  /// sites), then its own children.
  void fun_site(const ir::Fun& f, const std::vector<ir::Type>& types) {
    if (!f.as<ir::Lambda>()) {
      std::vector<ir::Expr> params;
      for (const ir::Type& t : types)
        params.push_back(ir::param(t, "p"));
      try {
        ir::Expr applied = ir::call(f, params);
        sites.push_back({path_, applied, context_, true, params});
      } catch (const UserError&) {
        // A function that only types through tuple spreading in context; not a site.
      }
    }
    fun_inside(f, types);
  }

  Path path_;
  RuleContext context_;
};

/// The children of a function in path order (ir::for_each_child's, a lambda's parameters left
/// out: only its body is a child).
std::vector<Node> children_of(const ir::Fun& f) {
  if (const auto* l = f.as<ir::Lambda>())
    return {l->body};
  std::vector<Node> children;
  ir::for_each_child(
      f, [&](const ir::Fun& g) { children.emplace_back(g); },
      [&](const ir::Expr& e) { children.emplace_back(e); });
  return children;
}

Node child_of(const Node& node, uint32_t index) {
  if (const auto* e = std::get_if<ir::Expr>(&node)) {
    const auto* call = e->as<ir::Call>();
    LIFTX_INTERNAL_CHECK(call, "path descends into a non-call expression");
    if (index == 0)
      return call->fun;
    return call->args.at(index - 1);
  }
  std::vector<Node> children = children_of(std::get<ir::Fun>(node));
  LIFTX_INTERNAL_CHECK(index < children.size(), "path descends into child {} of {}", index,
                       ir::fun_name(std::get<ir::Fun>(node)));
  return children[index];
}

Node replace_in(const Node& node, const Path& path, size_t depth, const Node& replacement) {
  if (depth == path.size())
    return replacement;
  Node child = child_of(node, path[depth]);
  Node rebuilt = replace_in(child, path, depth + 1, replacement);
  if (const auto* e = std::get_if<ir::Expr>(&node))
    return with_child(*e, path[depth], rebuilt);
  return with_child(std::get<ir::Fun>(node), path[depth], rebuilt);
}

} // namespace

ir::Expr with_child(const ir::Expr& e, uint32_t index, const Node& child) {
  const auto* call = e.as<ir::Call>();
  LIFTX_INTERNAL_CHECK(call, "only calls have children");
  if (index == 0)
    return ir::call(std::get<ir::Fun>(child), call->args, call->loc);
  std::vector<ir::Expr> args = call->args;
  args.at(index - 1) = std::get<ir::Expr>(child);
  return ir::call(call->fun, std::move(args), call->loc);
}

ir::Fun with_child(const ir::Fun& f, uint32_t index, const Node& child) {
  LIFTX_INTERNAL_CHECK(index < children_of(f).size(), "function child index {} out of range",
                       index);
  if (const auto* l = f.as<ir::Lambda>())
    return ir::lambda(l->params, std::get<ir::Expr>(child));
  uint32_t i = 0;
  return ir::map_children(
      f, [&](const ir::Fun& g) { return i++ == index ? std::get<ir::Fun>(child) : g; },
      [&](const ir::Expr& e) { return i++ == index ? std::get<ir::Expr>(child) : e; });
}

std::vector<Site> sites(const ir::Program& program) {
  SiteCollector collector;
  collector.expr(program.body);
  return std::move(collector.sites);
}

ir::Program replace_at(const ir::Program& program, const Path& path, const Node& replacement) {
  Node body = replace_in(program.body, path, 0, replacement);
  ir::Program result = program;
  result.body = std::get<ir::Expr>(body);
  LIFTX_USER_CHECK(result.body.type() == program.body.type(),
                   "rewriting changed the program's type from {} to {}",
                   program.body.type().to_string(), result.body.type().to_string());
  return result;
}

std::variant<ir::Program, NoMatch> apply_at(const ir::Program& program, const Rule& rule,
                                            const Site& site) {
  RuleResult r = rule.apply(site.expr, site.context);
  if (!applied(r))
    return std::get<NoMatch>(r);
  try {
    if (site.is_function)
      return replace_at(program, site.path, ir::lambda(site.params, result_of(r)));
    return replace_at(program, site.path, result_of(r));
  } catch (const UserError& e) {
    // The rewrite is well-typed locally but not in its context (e.g. a length the context needs).
    return NoMatch{fmt::format("does not type-check in context: {}", e.message())};
  }
}

std::vector<ir::Program> apply_everywhere(const ir::Program& program, const Rule& rule) {
  std::vector<ir::Program> out;
  for (const Site& site : sites(program)) {
    auto r = apply_at(program, rule, site);
    if (auto* p = std::get_if<ir::Program>(&r))
      out.push_back(std::move(*p));
  }
  return out;
}

ir::Program apply_until_fixpoint(const ir::Program& program, const Rule& rule, int max_steps) {
  ir::Program current = program;
  for (int step = 0; step < max_steps; ++step) {
    bool changed = false;
    for (const Site& site : sites(current)) {
      auto r = apply_at(current, rule, site);
      if (auto* p = std::get_if<ir::Program>(&r)) {
        current = std::move(*p);
        changed = true;
        break;
      }
    }
    if (!changed)
      return current;
  }
  LIFTX_UNREACHABLE("rule {} did not reach a fixpoint in {} steps", rule.name, max_steps);
}

} // namespace liftx::rewrite
