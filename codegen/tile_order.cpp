// The order of the work-groups' tiles, edge tiles first (tile_order.hpp). GPUs start work-groups
// roughly in the order of their linear ids; a tile on the grid's edges runs the boundary repairs
// and takes several times as long as an interior one, so in the natural order the last rows'
// edge tiles would run after every other tile and the launch would wait for them.
#include "codegen/tile_order.hpp"

#include <fmt/format.h>

#include <functional>
#include <vector>

namespace liftx::codegen {

namespace {

/// One coordinate of a tile: `offset` + a value below `extent`.
struct Coordinate {
  int dim;
  std::string offset;
  std::string extent;
};
/// OpenCL statements (at `indent`) that split `number` into the coordinates `dims` (slowest first).
std::string split_into(const std::string& number, const std::vector<Coordinate>& dims,
                       const std::string& indent) {
  std::string code = fmt::format("{}int rest = {};\n", indent, number);
  for (size_t k = dims.size(); k-- > 0;) {
    const Coordinate& c = dims[k];
    code += fmt::format("{}c{} = {} + rest % ({});\n", indent, c.dim, c.offset, c.extent);
    if (k > 0)
      code += fmt::format("{}rest /= ({});\n", indent, c.extent);
  }
  return code;
}

} // namespace

std::string edge_tiles_first_function(int rank) {
  return fmt::format("liftxEdgeTilesFirst{}", rank);
}

std::string edge_tiles_first_source(int rank) {
  std::string params = "int l";
  std::string declare = "  int";
  std::string small;
  std::vector<Coordinate> natural;
  std::vector<Coordinate> interior;
  for (int j = 0; j < rank; ++j) {
    params += fmt::format(", int t{}", j);
    declare += fmt::format("{} c{} = 0", j == 0 ? "" : ",", j);
    small += fmt::format("{}t{} < 3", j == 0 ? "" : " || ", j);
    natural.push_back({j, "0", fmt::format("t{}", j)});
    interior.push_back({j, "1", fmt::format("t{} - 2", j)});
  }
  // The faces of dimension k and every later one, then the interior, at `indent`. On a face of
  // dimension k coordinate k is 0 or t_k - 1, the earlier dimensions' are inside (their faces
  // came before), the later ones' anything.
  std::function<std::string(int, const std::string&)> faces = [&](int k,
                                                                  const std::string& indent) {
    if (k == rank)
      return split_into("l", interior, indent);
    std::vector<Coordinate> others;
    std::string face;
    for (int j = 0; j < rank; ++j) {
      if (j == k)
        continue;
      others.push_back(j < k ? interior[j] : natural[j]);
      face += fmt::format("{}({})", face.empty() ? "" : " * ", others.back().extent);
    }
    if (face.empty())
      face = "1";
    const std::string inner = indent + "  ";
    return fmt::format("{0}if (l < 2 * {1}) {{\n{3}c{2} = l < {1} ? 0 : t{2} - 1;\n{4}{0}}} "
                       "else {{\n{3}l -= 2 * {1};\n{5}{0}}}\n",
                       indent, face, k, inner,
                       split_into(fmt::format("l % ({})", face), others, inner),
                       faces(k + 1, inner));
  };
  std::string code = fmt::format("int {}({}, int which) {{\n{};\n", edge_tiles_first_function(rank),
                                 params, declare);
  code += fmt::format("  if ({}) {{\n{}  }} else {{\n{}  }}\n  return ", small,
                      split_into("l", natural, "    "), faces(0, "    "));
  for (int j = 0; j + 1 < rank; ++j)
    code += fmt::format("which == {0} ? c{0} : ", j);
  code += fmt::format("c{};\n}}\n\n", rank - 1);
  return code;
}

} // namespace liftx::codegen
