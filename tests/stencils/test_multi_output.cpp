// The multi-output stencils of stencils/ (a tuple of values per point) evaluated by the
// interpreter must match plain C++ loops written here independently from the .lift files, every
// component of every point, on random non-square inputs.
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

struct Field {
  int rows = 0;
  int cols = 0;
  std::vector<float> values;
  float at(int y, int x) const { // clamped, as pad2D(1, 1, clamp)
    y = std::clamp(y, 0, rows - 1);
    x = std::clamp(x, 0, cols - 1);
    return values[static_cast<size_t>(y) * cols + x];
  }
  float wrapped(int y, int x) const { // periodic, as pad2D(1, 1, wrap)
    y = (y % rows + rows) % rows;
    x = (x % cols + cols) % cols;
    return values[static_cast<size_t>(y) * cols + x];
  }
};

/// The interpreter's result for `file` on `fields` (one per parameter, drawn in [lo, hi)), with
/// `components` values per point, compared with `expected(y, x)`.
template <size_t K>
void check_multi(
    const std::string& file, int rows, int cols, int field_count, float lo, float hi,
    const std::function<std::array<float, K>(const std::vector<Field>&, int, int)>& expected) {
  CAPTURE(file);
  CAPTURE(rows);
  CAPTURE(cols);
  ir::Module module = parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/" + file);
  const ir::Program& program = module.main();
  REQUIRE(program.params.size() == static_cast<size_t>(field_count));
  std::mt19937_64 rng(static_cast<uint64_t>(rows) * 977 + static_cast<uint64_t>(cols));
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<Field> fields;
  std::vector<interp::HostArray> inputs;
  for (int f = 0; f < field_count; ++f) {
    Field field{rows, cols, {}};
    interp::HostArray host;
    host.shape = {rows, cols};
    for (int i = 0; i < rows * cols; ++i) {
      float v = 0;
      while (v == 0)
        v = dist(rng);
      field.values.push_back(v);
      host.data.push_back(v);
    }
    fields.push_back(std::move(field));
    inputs.push_back(std::move(host));
  }
  interp::HostArray result = interp::evaluate(program, inputs, Sizes{{"M", rows}, {"N", cols}});
  REQUIRE(result.shape == std::vector<int64_t>{rows, cols, static_cast<int64_t>(K)});
  int mismatches = 0;
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      std::array<float, K> want = expected(fields, y, x);
      for (size_t k = 0; k < K; ++k) {
        double got = result.data[(static_cast<size_t>(y) * cols + x) * K + k];
        double tolerance = 1e-5 * std::max(1.0, std::fabs(static_cast<double>(want[k])));
        if (!(std::fabs(got - want[k]) <= tolerance) && mismatches++ < 5) {
          INFO("point (" << y << ", " << x << ") component " << k << ": interpreter " << got
                         << ", loop " << want[k]);
          CHECK(false);
        }
      }
    }
  CHECK(mismatches == 0);
}

const std::vector<std::pair<int, int>> kShapes = {{13, 17}, {7, 29}, {24, 5}};

} // namespace

TEST_CASE("srad1full matches its loop: coefficient and four derivatives") {
  for (auto [rows, cols] : kShapes)
    check_multi<5>("srad1full.lift", rows, cols, 1, 0.5f, 1.5f,
                   [](const std::vector<Field>& g, int y, int x) {
                     const Field& j = g[0];
                     float c = j.at(y, x);
                     float dn = j.at(y - 1, x) - c, ds = j.at(y + 1, x) - c;
                     float dw = j.at(y, x - 1) - c, de = j.at(y, x + 1) - c;
                     float g2 = (dn * dn + ds * ds + de * de + dw * dw) / (c * c);
                     float l = (dn + ds + de + dw) / c;
                     float num = 0.5f * g2 - (l * l) / 16.0f;
                     float den = 1.0f + 0.25f * l;
                     float q = num / (den * den);
                     const float q0 = 0.053787220269f;
                     float coeff = 1.0f / (1.0f + (q - q0) / (q0 * (1.0f + q0)));
                     return std::array<float, 5>{std::clamp(coeff, 0.0f, 1.0f), dn, ds, dw, de};
                   });
}

TEST_CASE("shallow_water matches its loop: one Lax-Friedrichs step of h, hu, hv") {
  for (auto [rows, cols] : kShapes)
    check_multi<3>("shallow_water.lift", rows, cols, 3, 0.5f, 1.5f,
                   [](const std::vector<Field>& u, int y, int x) {
                     const float g = 9.81f, cx = 0.01f, cy = 0.01f;
                     // Fluxes F (along x) and G (along y) of field k at a point.
                     auto flux_x = [&](int k, int yy, int xx) {
                       float h = u[0].at(yy, xx), hu = u[1].at(yy, xx), hv = u[2].at(yy, xx);
                       return k == 0 ? hu : k == 1 ? hu * hu / h + 0.5f * g * h * h : hu * hv / h;
                     };
                     auto flux_y = [&](int k, int yy, int xx) {
                       float h = u[0].at(yy, xx), hu = u[1].at(yy, xx), hv = u[2].at(yy, xx);
                       return k == 0 ? hv : k == 1 ? hu * hv / h : hv * hv / h + 0.5f * g * h * h;
                     };
                     std::array<float, 3> next{};
                     for (int k = 0; k < 3; ++k) {
                       float mean = 0.25f * (u[k].at(y - 1, x) + u[k].at(y + 1, x) +
                                             u[k].at(y, x - 1) + u[k].at(y, x + 1));
                       next[static_cast<size_t>(k)] =
                           mean - cx * (flux_x(k, y, x + 1) - flux_x(k, y, x - 1)) -
                           cy * (flux_y(k, y + 1, x) - flux_y(k, y - 1, x));
                     }
                     return next;
                   });
}

TEST_CASE("d2q9 matches its loop: pull streaming and BGK collision of nine distributions") {
  // Velocities (cx along a row, cy across rows) and weights of D2Q9, written out independently.
  const int cx[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
  const int cy[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
  const float w[9] = {4.0f / 9,  1.0f / 9,  1.0f / 9,  1.0f / 9, 1.0f / 9,
                      1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36};
  for (auto [rows, cols] : kShapes)
    check_multi<9>(
        "d2q9.lift", rows, cols, 9, -0.9f, 0.9f, [&](const std::vector<Field>& d, int y, int x) {
          // The grids hold d_i = f_i / w_i - 1; f_i streams in from x - c_i.
          std::array<float, 9> f{};
          for (size_t i = 0; i < 9; ++i)
            f[i] = w[i] * (1 + d[i].wrapped(y - cy[i], x - cx[i]));
          float rho = 0, ux = 0, uy = 0;
          for (size_t i = 0; i < 9; ++i) {
            rho += f[i];
            ux += static_cast<float>(cx[i]) * f[i];
            uy += static_cast<float>(cy[i]) * f[i];
          }
          ux /= rho;
          uy /= rho;
          std::array<float, 9> out{};
          for (size_t i = 0; i < 9; ++i) {
            const float cu = static_cast<float>(cx[i]) * ux + static_cast<float>(cy[i]) * uy;
            const float feq =
                w[i] * rho * (1 + 3 * cu + 4.5f * cu * cu - 1.5f * (ux * ux + uy * uy));
            out[i] = (f[i] - 1.6f * (f[i] - feq)) / w[i] - 1; // back to d_i
          }
          return out;
        });
}
