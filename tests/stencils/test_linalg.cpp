// The linear-algebra programs of stencils/linalg/ (mv, tmv, mm, conv2d) evaluated by the
// interpreter must match plain C++ loops written here independently from the .lift files, on random
// non-square inputs (sums in double here, so the comparison allows float rounding).
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace liftx;

namespace {

interp::HostArray random_array(std::vector<int64_t> shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  interp::HostArray a;
  a.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : a.shape)
    n *= d;
  for (int64_t i = 0; i < n; ++i) {
    float v = 0;
    while (v == 0)
      v = dist(rng);
    a.data.push_back(v);
  }
  return a;
}

/// The interpreter's result of stencils/linalg/`file` on `inputs` at `sizes` against `expected(i)`
/// for every element i of the (flattened) result.
void check_linalg(const std::string& file, const std::vector<interp::HostArray>& inputs,
                  const Sizes& sizes, size_t elements,
                  const std::function<double(size_t)>& expected) {
  CAPTURE(file);
  ir::Module module = parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/" + file);
  interp::HostArray got = interp::evaluate(module.main(), inputs, sizes);
  REQUIRE(got.data.size() == elements);
  size_t wrong = 0;
  for (size_t i = 0; i < elements; ++i) {
    const double want = expected(i);
    if (std::fabs(got.data[i] - want) > 1e-4 * std::max(1.0, std::fabs(want)))
      ++wrong;
  }
  CHECK(wrong == 0);
}

} // namespace

TEST_CASE("mv, tmv and mm match plain loops on non-square matrices") {
  const int64_t m = 13, n = 21, k = 17;
  const interp::HostArray a = random_array({m, n}, 1);
  const interp::HostArray x = random_array({n}, 2), xm = random_array({m}, 3);
  auto at = [](const interp::HostArray& h, int64_t cols, int64_t i, int64_t j) {
    return static_cast<double>(h.data[static_cast<size_t>(i * cols + j)]);
  };
  check_linalg("mv.lift", {a, x}, {{"M", m}, {"N", n}}, m, [&](size_t i) {
    double s = 0;
    for (int64_t j = 0; j < n; ++j)
      s += at(a, n, static_cast<int64_t>(i), j) * x.data[static_cast<size_t>(j)];
    return s;
  });
  check_linalg("tmv.lift", {a, xm}, {{"M", m}, {"N", n}}, n, [&](size_t j) {
    double s = 0;
    for (int64_t i = 0; i < m; ++i)
      s += at(a, n, i, static_cast<int64_t>(j)) * xm.data[static_cast<size_t>(i)];
    return s;
  });
  const interp::HostArray ak = random_array({m, k}, 4), b = random_array({k, n}, 5);
  check_linalg("mm.lift", {ak, b}, {{"K", k}, {"M", m}, {"N", n}}, m * n, [&](size_t e) {
    const int64_t i = static_cast<int64_t>(e) / n, j = static_cast<int64_t>(e) % n;
    double s = 0;
    for (int64_t l = 0; l < k; ++l)
      s += at(ak, k, i, l) * at(b, n, l, j);
    return s;
  });
}

TEST_CASE("conv2d with a run-time mask matches a clamped loop") {
  const int64_t m = 11, n = 19;
  const interp::HostArray image = random_array({m, n}, 6), mask = random_array({3, 3}, 7);
  check_linalg("conv2d.lift", {image, mask}, {{"M", m}, {"N", n}}, m * n, [&](size_t e) {
    const int64_t i = static_cast<int64_t>(e) / n, j = static_cast<int64_t>(e) % n;
    double s = 0;
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t y = std::clamp<int64_t>(i + a - 1, 0, m - 1);
        const int64_t x = std::clamp<int64_t>(j + c - 1, 0, n - 1);
        s += static_cast<double>(mask.data[static_cast<size_t>(a * 3 + c)]) *
             image.data[static_cast<size_t>(y * n + x)];
      }
    return s;
  });
}
