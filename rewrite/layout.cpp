#include "rewrite/layout.hpp"

#include "ir/storage.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace liftx::rewrite {

std::string store_grids_name(const ir::StorageGroup& layout) {
  return "store-grids-" + ir::layout_text(layout);
}

std::variant<ir::Program, std::string> store_grids_together(const ir::Program& program,
                                                            const ir::StorageGroup& layout,
                                                            std::optional<size_t> keep_apart) {
  // Ungrouped grids by type, in parameter order; the type with the most grids wins.
  std::vector<std::pair<ir::Type, std::vector<size_t>>> by_type;
  for (size_t i = 0; i < program.params.size(); ++i) {
    const ir::Type& t = program.params[i].type();
    if (!ir::is_scalar_grid(t) || i == keep_apart || ir::stored_field(program, i))
      continue;
    auto it = std::find_if(by_type.begin(), by_type.end(),
                           [&](const auto& entry) { return entry.first == t; });
    if (it == by_type.end())
      by_type.push_back({t, {i}});
    else
      it->second.push_back(i);
  }
  const std::vector<size_t>* chosen = nullptr;
  for (const auto& [type, grids] : by_type)
    if (!chosen || grids.size() > chosen->size())
      chosen = &grids;
  if (!chosen || chosen->size() < 2)
    return fmt::format("{} has no two ungrouped grids of one type{}", program.name,
                       keep_apart ? " besides its iterated input" : "");
  ir::Program stored = program;
  ir::StorageGroup group{layout.layout, layout.block, *chosen};
  stored.storage.push_back(std::move(group));
  ir::check_storage(stored, program.loc);
  return stored;
}

std::vector<ir::StorageGroup> explored_layouts() {
  return {ir::StorageGroup{ir::StorageGroup::Layout::AoS, 1, {}},
          ir::StorageGroup{ir::StorageGroup::Layout::AoSoA, 32, {}}};
}

} // namespace liftx::rewrite
