#include "ir/edge_repairs.hpp"

namespace liftx::ir {

bool picks_by_edge_code(const UserFunDef& f) {
  const std::string& name = f.name();
  return name.starts_with("liftxPickOf") || name.starts_with("liftxSelectOf") ||
         name.starts_with("liftxEdgePick");
}

} // namespace liftx::ir
