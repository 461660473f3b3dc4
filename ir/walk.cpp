// Generic child iteration and free-parameter analysis.
#include "ir/expr.hpp"

#include "ir/fields.hpp"

#include <algorithm>
#include <unordered_set>

namespace liftx::ir {

void for_each_child(const Expr& e, const std::function<void(const Fun&)>& on_fun,
                    const std::function<void(const Expr&)>& on_expr) {
  if (const auto* c = e.as<Call>()) {
    on_fun(c->fun);
    for (const Expr& a : c->args)
      on_expr(a);
  }
}

void for_each_child(const Fun& f, const std::function<void(const Fun&)>& on_fun,
                    const std::function<void(const Expr&)>& on_expr) {
  auto visit_field = [&](const auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, Fun>)
      on_fun(field);
    else if constexpr (std::is_same_v<T, Expr>)
      on_expr(field);
    else if constexpr (std::is_same_v<T, std::vector<Expr>>) // a lambda's parameters
      for (const Expr& p : field)
        on_expr(p);
  };
  std::visit([&](const auto& n) { for_each_field(n, visit_field); }, f.data().node);
}

Fun map_children(const Fun& f, const std::function<Fun(const Fun&)>& on_fun,
                 const std::function<Expr(const Expr&)>& on_expr) {
  bool changed = false;
  auto note = [&changed](const auto& before, auto after) {
    changed = changed || !after.same_as(before);
    return after;
  };
  auto map_field = [&](const auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, Fun>) {
      return note(field, on_fun(field));
    } else if constexpr (std::is_same_v<T, Expr>) {
      return note(field, on_expr(field));
    } else if constexpr (std::is_same_v<T, std::vector<Expr>>) {
      std::vector<Expr> params;
      for (const Expr& p : field)
        params.push_back(note(p, on_expr(p)));
      return params;
    } else {
      return field; // sizes, ints, boundaries, user function definitions
    }
  };
  FunNode node =
      std::visit([&](const auto& n) { return FunNode(map_fields(n, map_field)); }, f.data().node);
  return changed ? make(std::move(node)) : f;
}

namespace {

/// Collects free parameters; `bound` holds the ids of enclosing binders.
class FreeParams {
public:
  std::vector<Expr> result;

  void expr(const Expr& e) {
    if (const auto* p = e.as<Param>()) {
      if (!bound_.count(p->id) && seen_.insert(p->id).second)
        result.push_back(e);
      return;
    }
    for_each_child(
        e, [this](const Fun& f) { fun(f); }, [this](const Expr& x) { expr(x); });
  }

  void fun(const Fun& f) {
    if (const auto* l = f.as<Lambda>()) {
      std::vector<uint64_t> newly_bound;
      for (const Expr& p : l->params) {
        uint64_t id = p.as<Param>()->id;
        if (bound_.insert(id).second)
          newly_bound.push_back(id);
      }
      expr(l->body);
      for (uint64_t id : newly_bound)
        bound_.erase(id);
      return;
    }
    for_each_child(
        f, [this](const Fun& g) { fun(g); }, [this](const Expr& x) { expr(x); });
  }

private:
  std::unordered_set<uint64_t> bound_;
  std::unordered_set<uint64_t> seen_;
};

} // namespace

std::vector<Expr> free_params(const Expr& e) {
  FreeParams walker;
  walker.expr(e);
  return std::move(walker.result);
}

std::vector<Expr> free_params(const Fun& f) {
  FreeParams walker;
  walker.fun(f);
  return std::move(walker.result);
}

namespace {

void collect_userfuns_of(const Fun& f, std::vector<UserFunPtr>& out) {
  if (const auto* u = f.as<UserFun>()) {
    UserFunPtr builtin = UserFunDef::builtin(u->def->name());
    const bool is_builtin = builtin && same_userfun(*builtin, *u->def);
    const bool known = std::any_of(out.begin(), out.end(), [&](const UserFunPtr& seen) {
      return same_userfun(*seen, *u->def);
    });
    if (!is_builtin && !known)
      out.push_back(u->def);
  }
  for_each_child(
      f, [&](const Fun& g) { collect_userfuns_of(g, out); },
      [&](const Expr& x) { collect_userfuns(x, out); });
}

} // namespace

void collect_userfuns(const Expr& e, std::vector<UserFunPtr>& out) {
  for_each_child(
      e, [&](const Fun& g) { collect_userfuns_of(g, out); },
      [&](const Expr& x) { collect_userfuns(x, out); });
}

} // namespace liftx::ir
