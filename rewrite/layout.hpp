#pragma once
/// Data layouts as rewrites of a whole program (after MATOG, seed 002): the input grids of one
/// type, which a stencil reads as separate arrays (struct of arrays, the layout of a zip), are
/// stored together as the fields of one record per element, array of structs (AoS) or blocks of
/// B elements per record field (AoSoA(B)). The program's meaning is unchanged (the interpreter
/// reads Program::storage nowhere); the code generator indexes the group's buffer
/// (ir/storage.hpp) and the host packs it. Because a layout changes only where each element is
/// read, it composes with every other rewrite and lowering of the variant space.
#include "ir/expr.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace liftx::rewrite {

/// "store-grids-aos", "store-grids-aosoa(32)": the rule's name.
std::string store_grids_name(const ir::StorageGroup& layout);

/// store-grids(L): the grids of the type that most of the program's ungrouped array parameters
/// share (the first such type on ties), in parameter order, become one group stored in L (only
/// `layout` and `block` of L are read). Refused (with the reason) when fewer than two grids share
/// a type, or for `keep_apart` (a host iteration's iterated input: its buffers are swapped
/// between launches, so it cannot share one with other grids).
std::variant<ir::Program, std::string>
store_grids_together(const ir::Program& program, const ir::StorageGroup& layout,
                     std::optional<size_t> keep_apart = std::nullopt);

/// The layouts the variant space tries beside the separate grids: AoS and AoSoA(32) (a warp's
/// worth of elements per field, so that a warp reading one field of consecutive elements reads
/// whole lines).
std::vector<ir::StorageGroup> explored_layouts();

} // namespace liftx::rewrite
