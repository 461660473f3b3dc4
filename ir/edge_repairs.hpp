#pragma once
/// The user functions the temporal rewrite generates to repair a fused tile at the grid's edges
/// (rewrite/rules/temporal.cpp), named here so that the code generator and the features can tell
/// them from the program's own functions. Names starting with `liftx` are the generator's.
///
/// Every one of them is neutral in a tile that touches no edge: liftxTileEdge answers 0 there,
/// the codes computed from its answer (liftxStreamEdge_*, liftxLaneEdge_*) are 0 when it is, and
/// a pick returns its first candidate for the code 0. The interior tiles' copy of a kernel
/// (codegen::Options::interior_tiles) relies on this.
#include "ir/userfun/userfun.hpp"

#include <string_view>

namespace liftx::ir {

/// liftxTileEdge(i, n): which edges of the grid tile i of n touches (0 for none).
inline constexpr std::string_view kTileEdgeName = "liftxTileEdge";

/// Whether `f` picks one of its candidates by an edge code: f(code, c0, c1, ...) is c<code>,
/// c0 for the code 0 (liftxPickOfK, liftxSelectOfK, liftxEdgePick).
bool picks_by_edge_code(const UserFunDef& f);

} // namespace liftx::ir
