// Each 3D stencil of stencils/3d/ evaluated by the interpreter must match a plain C++ triple loop
// written here independently from the .lift file (its own boundary index functions, the
// neighbourhood written out point by point), on random non-zero inputs of non-cubic sizes.
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace liftx;

namespace {

/// How a read outside [0, n) is mapped back into the grid.
enum class Edge { Clamp, Wrap, Mirror };

int edge_index(Edge edge, int i, int n) {
  switch (edge) {
  case Edge::Clamp:
    return std::clamp(i, 0, n - 1);
  case Edge::Wrap:
    return ((i % n) + n) % n;
  case Edge::Mirror: {
    // numpy's `symmetric`: -1 reads 0, n reads n - 1, period 2n.
    int j = ((i % (2 * n)) + 2 * n) % (2 * n);
    return j < n ? j : 2 * n - 1 - j;
  }
  }
  return 0;
}

/// A float grid of depth × rows × cols, x fastest, read through one boundary mode.
struct Grid3 {
  int depth = 0;
  int rows = 0;
  int cols = 0;
  std::vector<float> values;
  float at(Edge edge, int z, int y, int x) const {
    z = edge_index(edge, z, depth);
    y = edge_index(edge, y, rows);
    x = edge_index(edge, x, cols);
    return values[(static_cast<size_t>(z) * rows + y) * cols + x];
  }
};

Grid3 random_grid(int depth, int rows, int cols, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Grid3 g{depth, rows, cols, {}};
  for (int i = 0; i < depth * rows * cols; ++i) {
    float v = 0;
    while (v == 0)
      v = dist(rng);
    g.values.push_back(v);
  }
  return g;
}

interp::HostArray to_host(const Grid3& g) {
  interp::HostArray a;
  a.kind = ir::ScalarKind::Float;
  a.shape = {g.depth, g.rows, g.cols};
  a.data.assign(g.values.begin(), g.values.end());
  return a;
}

using PointFn = std::function<float(const std::vector<Grid3>&, int z, int y, int x)>;

struct Shape {
  int m; // z, outermost
  int n; // y
  int o; // x, innermost
};

// Non-cubic; the last has a dimension of 2, narrower than j3d13pt's radius-2 reach.
const std::vector<Shape> kShapes = {{5, 7, 9}, {9, 4, 6}, {3, 2, 5}};

/// Evaluates stencils/3d/`file` on `grid_count` random grids and compares every point with
/// `expected`, for every shape of kShapes.
void check_stencil(const std::string& file, int grid_count, float lo, float hi,
                   const PointFn& expected) {
  CAPTURE(file);
  ir::Module module = parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/3d/" + file);
  const ir::Program& program = module.main();
  REQUIRE(program.params.size() == static_cast<size_t>(grid_count));
  for (Shape s : kShapes) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.o);
    std::mt19937_64 rng(s.m * 10000 + s.n * 100 + s.o);
    std::vector<Grid3> grids;
    std::vector<interp::HostArray> inputs;
    for (int i = 0; i < grid_count; ++i) {
      grids.push_back(random_grid(s.m, s.n, s.o, rng, lo, hi));
      inputs.push_back(to_host(grids.back()));
    }
    Sizes sizes{{"M", s.m}, {"N", s.n}, {"O", s.o}};
    interp::HostArray result = interp::evaluate(program, inputs, sizes);
    REQUIRE(result.shape == std::vector<int64_t>{s.m, s.n, s.o});
    int mismatches = 0;
    for (int z = 0; z < s.m; ++z)
      for (int y = 0; y < s.n; ++y)
        for (int x = 0; x < s.o; ++x) {
          float want = expected(grids, z, y, x);
          double got = result.data[(static_cast<size_t>(z) * s.n + y) * s.o + x];
          double tolerance = 1e-5 * std::max(1.0, std::fabs(static_cast<double>(want)));
          if (!(std::fabs(got - want) <= tolerance) && mismatches++ < 5) {
            INFO("point (" << z << ", " << y << ", " << x << "): interpreter " << got << ", loop "
                           << want);
            CHECK(false);
          }
        }
    CHECK(mismatches == 0);
  }
}

} // namespace

TEST_CASE("heat3d matches its loop (wrap)") {
  check_stencil("heat3d.lift", 1, -1, 1, [](const auto& g, int z, int y, int x) {
    auto a = [&](int dz, int dy, int dx) { return g[0].at(Edge::Wrap, z + dz, y + dy, x + dx); };
    float c = a(0, 0, 0);
    float laplacian =
        a(-1, 0, 0) + a(1, 0, 0) + a(0, -1, 0) + a(0, 1, 0) + a(0, 0, -1) + a(0, 0, 1) - 6.0f * c;
    return c + 0.125f * laplacian;
  });
}

TEST_CASE("j3d7pt matches its loop") {
  check_stencil("j3d7pt.lift", 1, -1, 1, [](const auto& g, int z, int y, int x) {
    auto a = [&](int dz, int dy, int dx) { return g[0].at(Edge::Clamp, z + dz, y + dy, x + dx); };
    return 0.161f * a(0, 0, 1) + 0.162f * a(0, 0, -1) + 0.163f * a(0, 1, 0) + 0.164f * a(0, -1, 0) +
           0.165f * a(1, 0, 0) + 0.166f * a(-1, 0, 0) - 1.67f * a(0, 0, 0);
  });
}

TEST_CASE("j3d13pt matches its loop (mirror, radius 2)") {
  check_stencil("j3d13pt.lift", 1, -1, 1, [](const auto& g, int z, int y, int x) {
    auto a = [&](int dz, int dy, int dx) { return g[0].at(Edge::Mirror, z + dz, y + dy, x + dx); };
    float arms = a(-2, 0, 0) + a(-1, 0, 0) + a(1, 0, 0) + a(2, 0, 0) + a(0, -2, 0) + a(0, -1, 0) +
                 a(0, 1, 0) + a(0, 2, 0) + a(0, 0, -2) + a(0, 0, -1) + a(0, 0, 1) + a(0, 0, 2);
    return 0.083f * arms - 0.996f * a(0, 0, 0);
  });
}

TEST_CASE("j3d27pt matches its loop") {
  check_stencil("j3d27pt.lift", 1, -1, 1, [](const auto& g, int z, int y, int x) {
    // [z][y][x] offsets + 1: plane z-1, z, z+1; rows y-1, y, y+1; columns x-1, x, x+1.
    const float w[3][3][3] = {
        {{0.5f, 0.7f, 0.9f}, {1.2f, 1.5f, 1.2f}, {0.9f, 0.7f, 0.5f}},
        {{0.51f, 0.71f, 0.91f}, {1.21f, 1.51f, 1.21f}, {0.91f, 0.71f, 0.51f}},
        {{0.52f, 0.72f, 0.92f}, {1.22f, 1.52f, 1.22f}, {0.92f, 0.72f, 0.52f}}};
    float sum = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          sum += w[dz + 1][dy + 1][dx + 1] * g[0].at(Edge::Clamp, z + dz, y + dy, x + dx);
    return sum / 159.0f;
  });
}

TEST_CASE("poisson3d matches its loop") {
  check_stencil("poisson3d.lift", 1, -1, 1, [](const auto& g, int z, int y, int x) {
    float faces = 0, edges = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int distance = std::abs(dz) + std::abs(dy) + std::abs(dx);
          float v = g[0].at(Edge::Clamp, z + dz, y + dy, x + dx);
          if (distance == 1)
            faces += v;
          else if (distance == 2)
            edges += v; // the 8 corners (distance 3) are not read
        }
    return 2.666f * g[0].at(Edge::Clamp, z, y, x) - 0.166f * faces - 0.0833f * edges;
  });
}

TEST_CASE("hotspot3d (Rodinia) matches its loop") {
  check_stencil("hotspot3d.lift", 2, 0.5f, 1.5f, [](const auto& g, int z, int y, int x) {
    // Rodinia hotspot3D's coefficients for its 512x512x8 chip (stencils/3d/hotspot3d.lift says
    // how they are derived), written here independently.
    const float step_div_cap = 0.3413333f;
    const float c_lateral = step_div_cap / 10.0f;   // Rx = Ry = 10
    const float c_vertical = step_div_cap / 640.0f; // Rz = 640
    const float c_centre = 1.0f - (4.0f * c_lateral + 3.0f * c_vertical);
    const Grid3& t = g[0];
    float c = t.values[(static_cast<size_t>(z) * t.rows + y) * t.cols + x];
    float p = g[1].values[(static_cast<size_t>(z) * t.rows + y) * t.cols + x];
    // computeTempCPU: a neighbour outside the grid is replaced by the point itself.
    float west = x == 0 ? c : t.at(Edge::Clamp, z, y, x - 1);
    float east = x == t.cols - 1 ? c : t.at(Edge::Clamp, z, y, x + 1);
    float north = y == 0 ? c : t.at(Edge::Clamp, z, y - 1, x);
    float south = y == t.rows - 1 ? c : t.at(Edge::Clamp, z, y + 1, x);
    float bottom = z == 0 ? c : t.at(Edge::Clamp, z - 1, y, x);
    float top = z == t.depth - 1 ? c : t.at(Edge::Clamp, z + 1, y, x);
    return c * c_centre + (north + south + east + west) * c_lateral + (top + bottom) * c_vertical +
           step_div_cap * p + c_vertical * 80.0f;
  });
}
