// Each benchmark stencil of stencils/ evaluated by the interpreter must match a plain C++ loop
// written here independently from the .lift file, on random non-square inputs.
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>

using namespace liftx;

namespace {

/// A row-major float grid with clamped reads, as the stencils' pad2D(r, r, clamp).
struct Grid {
  int rows = 0;
  int cols = 0;
  std::vector<float> values;
  float clamped(int y, int x) const {
    y = std::clamp(y, 0, rows - 1);
    x = std::clamp(x, 0, cols - 1);
    return values[static_cast<size_t>(y) * cols + x];
  }
};

Grid random_grid(int rows, int cols, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Grid g{rows, cols, {}};
  for (int i = 0; i < rows * cols; ++i) {
    float v = 0;
    while (v == 0)
      v = dist(rng);
    g.values.push_back(v);
  }
  return g;
}

interp::HostArray to_host(const Grid& g) {
  interp::HostArray a;
  a.kind = ir::ScalarKind::Float;
  a.shape = {g.rows, g.cols};
  a.data.assign(g.values.begin(), g.values.end());
  return a;
}

using PointFn = std::function<float(const std::vector<Grid>&, int y, int x)>;

/// Evaluates `file` on `grids` (one per parameter) and compares every point with `expected`.
void check_stencil(const std::string& file, int rows, int cols, int grid_count, float lo, float hi,
                   const PointFn& expected) {
  CAPTURE(file);
  CAPTURE(rows);
  CAPTURE(cols);
  ir::Module module = parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/" + file);
  const ir::Program& program = module.main();
  REQUIRE(program.params.size() == static_cast<size_t>(grid_count));
  std::mt19937_64 rng(rows * 1000 + cols);
  std::vector<Grid> grids;
  std::vector<interp::HostArray> inputs;
  for (int i = 0; i < grid_count; ++i) {
    grids.push_back(random_grid(rows, cols, rng, lo, hi));
    inputs.push_back(to_host(grids.back()));
  }
  Sizes sizes{{"M", rows}, {"N", cols}};
  interp::HostArray result = interp::evaluate(program, inputs, sizes);
  REQUIRE(result.shape == std::vector<int64_t>{rows, cols});
  int mismatches = 0;
  for (int y = 0; y < rows; ++y) {
    for (int x = 0; x < cols; ++x) {
      float want = expected(grids, y, x);
      double got = result.data[static_cast<size_t>(y) * cols + x];
      double tolerance = 1e-5 * std::max(1.0, std::fabs(static_cast<double>(want)));
      if (!(std::fabs(got - want) <= tolerance) && mismatches++ < 5) {
        INFO("point (" << y << ", " << x << "): interpreter " << got << ", loop " << want);
        CHECK(false);
      }
    }
  }
  CHECK(mismatches == 0);
}

const std::vector<std::pair<int, int>> kShapes = {{13, 17}, {7, 29}, {24, 5}};

} // namespace

TEST_CASE("jacobi2d5pt matches its loop") {
  for (auto [rows, cols] : kShapes)
    check_stencil("jacobi2d5pt.lift", rows, cols, 1, -1, 1, [](const auto& g, int y, int x) {
      const Grid& a = g[0];
      return (5.0f * a.clamped(y - 1, x) + 12.0f * a.clamped(y, x - 1) + 15.0f * a.clamped(y, x) +
              5.0f * a.clamped(y + 1, x) + 12.0f * a.clamped(y, x + 1)) /
             118.0f;
    });
}

TEST_CASE("jacobi2d9pt matches its loop") {
  for (auto [rows, cols] : kShapes)
    check_stencil("jacobi2d9pt.lift", rows, cols, 1, -1, 1, [](const auto& g, int y, int x) {
      const Grid& a = g[0];
      const float w[3][3] = {{7, 5, 9}, {12, 15, 12}, {9, 5, 7}};
      float sum = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          sum += w[dy + 1][dx + 1] * a.clamped(y + dy, x + dx);
      return sum / 118.0f;
    });
}

TEST_CASE("gradient matches its loop") {
  for (auto [rows, cols] : kShapes)
    check_stencil("gradient.lift", rows, cols, 1, -1, 1, [](const auto& g, int y, int x) {
      const Grid& a = g[0];
      float c = a.clamped(y, x);
      float n = c - a.clamped(y - 1, x), s = c - a.clamped(y + 1, x);
      float e = c - a.clamped(y, x + 1), w = c - a.clamped(y, x - 1);
      return c + 1.0f / std::sqrt(0.0001f + n * n + s * s + e * e + w * w);
    });
}

TEST_CASE("gaussian matches its loop") {
  for (auto [rows, cols] : kShapes)
    check_stencil("gaussian.lift", rows, cols, 1, -1, 1, [](const auto& g, int y, int x) {
      const float w[5][5] = {
          {2, 4, 5, 4, 2}, {4, 9, 12, 9, 4}, {5, 12, 15, 12, 5}, {4, 9, 12, 9, 4}, {2, 4, 5, 4, 2}};
      float sum = 0;
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
          sum += w[dy + 2][dx + 2] * g[0].clamped(y + dy, x + dx);
      return sum / 159.0f;
    });
}

TEST_CASE("stencil2d (SHOC) matches its loop") {
  for (auto [rows, cols] : kShapes)
    check_stencil("stencil2d.lift", rows, cols, 1, -1, 1, [](const auto& g, int y, int x) {
      float sum = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          float weight = (dy == 0 && dx == 0) ? 0.25f : (dy == 0 || dx == 0) ? 0.15f : 0.05f;
          sum += weight * g[0].clamped(y + dy, x + dx);
        }
      return sum;
    });
}

TEST_CASE("hotspot2d matches its loop") {
  for (auto [rows, cols] : kShapes)
    check_stencil("hotspot2d.lift", rows, cols, 2, 0.5f, 1.5f, [](const auto& g, int y, int x) {
      const Grid& t = g[0];
      float c = t.clamped(y, x);
      float p = g[1].clamped(y, x);
      float n = t.clamped(y - 1, x), s = t.clamped(y + 1, x);
      float e = t.clamped(y, x + 1), w = t.clamped(y, x - 1);
      return c + 0.3413333f * (p + (s + n - 2.0f * c) * 0.1f + (e + w - 2.0f * c) * 0.1f +
                               (80.0f - c) * (1.0f / 5120.0f));
    });
}

TEST_CASE("srad1 matches its loop") {
  for (auto [rows, cols] : kShapes)
    check_stencil("srad1.lift", rows, cols, 1, 0.5f, 1.5f, [](const auto& g, int y, int x) {
      const Grid& j = g[0];
      float c = j.clamped(y, x);
      float dn = j.clamped(y - 1, x) - c, ds = j.clamped(y + 1, x) - c;
      float de = j.clamped(y, x + 1) - c, dw = j.clamped(y, x - 1) - c;
      float g2 = (dn * dn + ds * ds + de * de + dw * dw) / (c * c);
      float l = (dn + ds + de + dw) / c;
      float num = 0.5f * g2 - (l * l) / 16.0f;
      float den = 1.0f + 0.25f * l;
      float q = num / (den * den);
      const float q0 = 0.053787220269f;
      float coeff = 1.0f / (1.0f + (q - q0) / (q0 * (1.0f + q0)));
      return std::clamp(coeff, 0.0f, 1.0f);
    });
}

TEST_CASE("srad2 matches its loop") {
  for (auto [rows, cols] : kShapes)
    check_stencil("srad2.lift", rows, cols, 6, -1, 1, [](const auto& g, int y, int x) {
      const Grid& coeff = g[1];
      float cc = coeff.clamped(y, x), cs = coeff.clamped(y + 1, x), ce = coeff.clamped(y, x + 1);
      float dn = g[2].clamped(y, x), ds = g[3].clamped(y, x);
      float de = g[4].clamped(y, x), dw = g[5].clamped(y, x);
      return g[0].clamped(y, x) + 0.125f * (cc * dn + cs * ds + cc * dw + ce * de);
    });
}
