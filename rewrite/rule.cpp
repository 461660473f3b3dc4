#include "rewrite/rule.hpp"

#include <algorithm>

namespace liftx::rewrite {

bool RuleContext::inside(std::string_view head) const {
  return std::find(enclosing.begin(), enclosing.end(), head) != enclosing.end();
}

bool RuleContext::inside(ir::ParallelLevel level, int dim) const {
  return std::any_of(enclosing.begin(), enclosing.end(), [&](const std::string& head) {
    const ir::Primitive* p = ir::find_primitive(head);
    return p && p->level == level && (dim < 0 || p->dim == dim);
  });
}

bool RuleContext::inside_parallel(std::string_view family, int dim) const {
  for (auto level :
       {ir::ParallelLevel::Global, ir::ParallelLevel::Workgroup, ir::ParallelLevel::Local})
    if (ir::map_family(level) == family)
      return inside(level, dim);
  return false;
}

const ir::Primitive* RuleContext::innermost() const {
  return enclosing.empty() ? nullptr : ir::find_primitive(enclosing.back());
}

bool applied(const RuleResult& r) {
  return std::holds_alternative<ir::Expr>(r);
}
const ir::Expr& result_of(const RuleResult& r) {
  return std::get<ir::Expr>(r);
}
const std::string& reason_of(const RuleResult& r) {
  return std::get<NoMatch>(r).why;
}

} // namespace liftx::rewrite
