#include "rewrite/rule.hpp"

#include <algorithm>

namespace liftx::rewrite {

bool RuleContext::inside(std::string_view head) const {
  return std::find(enclosing.begin(), enclosing.end(), head) != enclosing.end();
}

bool RuleContext::inside_parallel(std::string_view level, int dim) const {
  return std::any_of(enclosing.begin(), enclosing.end(), [&](const std::string& h) {
    if (h.rfind(level, 0) != 0 || h.size() != level.size() + 1)
      return false;
    return dim < 0 || h.back() == static_cast<char>('0' + dim);
  });
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
