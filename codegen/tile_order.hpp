#pragma once
/// The order in which work-groups take their tiles (codegen::Options::edge_tiles_first): an OpenCL
/// helper that maps a work-group's linear id to the tile it computes, the tiles on the grid's
/// edges first.
#include <string>

namespace liftx::codegen {

/// `liftxEdgeTilesFirst<rank>`, the helper's name.
std::string edge_tiles_first_function(int rank);

/// The helper's OpenCL source, `int liftxEdgeTilesFirst<rank>(int l, int t0, ..., int which)`:
/// work-group `l` of a grid of t0 x t1 x ... tiles (the slowest-varying dimension first, as the
/// linear id counts them) computes the tile whose coordinate `which` it returns. The tiles with
/// a coordinate 0 or t - 1 come first, face after face (dimension k's two faces less the tiles
/// of earlier faces), then the interior in its natural order. With fewer than three tiles along
/// a dimension every tile touches an edge: the natural order.
std::string edge_tiles_first_source(int rank);

} // namespace liftx::codegen
