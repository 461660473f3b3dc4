// The order of the work-groups' tiles (codegen/tile_order.hpp): the helper, run on PoCL for every
// work-group of tile grids of one to three dimensions, maps the groups one to one onto the tiles,
// the edge tiles first and then the interior in its natural order.
#include "codegen/tile_order.hpp"
#include "pocl.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/launch.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <set>
#include <vector>

using namespace liftx;

namespace {

/// The tile each work-group takes, as the helper computes it on PoCL: a tile per linear id.
std::vector<std::vector<int>> tiles_in_order(const std::vector<int>& counts) {
  const int rank = static_cast<int>(counts.size());
  std::string params;
  std::string args;
  for (int j = 0; j < rank; ++j) {
    params += fmt::format(", int t{}", j);
    args += fmt::format(", t{}", j);
  }
  std::string writes;
  for (int j = 0; j < rank; ++j)
    writes += fmt::format("  out[{0} * l + {1}] = (float){2}(l{3}, {1});\n", rank, j,
                          codegen::edge_tiles_first_function(rank), args);
  const std::string source =
      codegen::edge_tiles_first_source(rank) +
      fmt::format("kernel void order(global float* out{}) {{\n  int l = get_global_id(0);\n{}}}\n",
                  params, writes);
  int64_t total = 1;
  for (int count : counts)
    total *= count;
  runtime::Device& device = test::pocl();
  cl::Program program = runtime::build(device, source);
  cl::Buffer out = runtime::allocate(device, static_cast<size_t>(total * rank) * sizeof(float));
  runtime::Kernel kernel(program, "order");
  kernel.arg(out);
  for (int count : counts)
    kernel.arg(static_cast<int32_t>(count));
  runtime::run_kernel(device, kernel, cl::NDRange(static_cast<size_t>(total)), cl::NullRange);
  const std::vector<float> flat = runtime::download(device, out, static_cast<size_t>(total * rank));
  std::vector<std::vector<int>> tiles;
  for (int64_t l = 0; l < total; ++l) {
    std::vector<int> tile;
    for (int j = 0; j < rank; ++j)
      tile.push_back(static_cast<int>(flat[static_cast<size_t>(l * rank + j)]));
    tiles.push_back(tile);
  }
  return tiles;
}

bool on_an_edge(const std::vector<int>& tile, const std::vector<int>& counts) {
  for (size_t j = 0; j < tile.size(); ++j)
    if (tile[j] == 0 || tile[j] == counts[j] - 1)
      return true;
  return false;
}

} // namespace

TEST_CASE("tile order: every work-group gets its own tile, the edge tiles first") {
  const std::vector<std::vector<int>> grids = {
      {1},    {2},    {3},       {7},       {3, 3},    {4, 3},    {3, 5},    {6, 9},    {2, 6},
      {6, 1}, {1, 1}, {3, 3, 3}, {4, 5, 6}, {6, 3, 4}, {2, 5, 5}, {5, 1, 4}, {5, 4, 2}, {8, 8, 8}};
  for (const std::vector<int>& counts : grids) {
    CAPTURE(fmt::format("{}", fmt::join(counts, "x")));
    const std::vector<std::vector<int>> tiles = tiles_in_order(counts);
    std::set<std::vector<int>> seen;
    for (const std::vector<int>& tile : tiles) {
      for (size_t j = 0; j < tile.size(); ++j) {
        CHECK(tile[j] >= 0);
        CHECK(tile[j] < counts[j]);
      }
      seen.insert(tile);
    }
    CHECK(seen.size() == tiles.size());
    bool small = false;
    for (int count : counts)
      small = small || count < 3;
    if (small) {
      // Every tile touches an edge: the natural order, the last dimension fastest.
      for (size_t l = 0; l < tiles.size(); ++l) {
        size_t rest = l;
        for (size_t j = counts.size(); j-- > 0;) {
          CHECK(tiles[l][j] == static_cast<int>(rest % static_cast<size_t>(counts[j])));
          rest /= static_cast<size_t>(counts[j]);
        }
      }
      continue;
    }
    // The edge tiles, then the interior ones in their natural order.
    size_t edges = 0;
    while (edges < tiles.size() && on_an_edge(tiles[edges], counts))
      ++edges;
    size_t interior = 1;
    for (int count : counts)
      interior *= static_cast<size_t>(count - 2);
    CHECK(edges == tiles.size() - interior);
    for (size_t l = edges; l + 1 < tiles.size(); ++l) {
      CHECK_FALSE(on_an_edge(tiles[l], counts));
      CHECK(tiles[l] < tiles[l + 1]);
    }
  }
}
