// The hand-written OpenCL kernels of bench/handwritten/ compute what their stencils compute: each
// runs on the CPU OpenCL device (PoCL) at small non-square (2D) or non-cubic (3D) sizes on random
// inputs and is checked
// element by element against the reference interpreter, through bench::run_handwritten, the same
// path stencil_roofline_bench verifies with.
#include "bench/handwritten.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace liftx;
namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = LIFTX_SOURCE_DIR;

runtime::Device& cpu_device() {
  static runtime::Device device = runtime::select_device("cpu");
  return device;
}

bench::StencilCase stencil_case(const std::string& stencil, int64_t rows, int64_t columns) {
  return bench::load_stencil_case(kSourceDir / "stencils" / (stencil + ".lift"), rows, columns,
                                  2024);
}

bench::StencilCase stencil_case(const std::string& stencil, std::vector<int64_t> shape) {
  return bench::load_stencil_case(bench::stencil_file(kSourceDir, stencil), shape, 2024);
}

bench::HandwrittenOptions checking_only(std::vector<int64_t> local = {}) {
  bench::HandwrittenOptions options;
  options.time = false;
  options.local = std::move(local);
  return options;
}

void check_passes(const bench::HandwrittenKernel& kernel, const bench::StencilCase& c,
                  const bench::HandwrittenOptions& options) {
  bench::HandwrittenReport r = bench::run_handwritten(cpu_device(), kernel, c, options);
  INFO(kernel.label, " on ", c.stencil, " ", c.shape_text(), ": ", r.message);
  CHECK(r.status == runtime::Status::ok);
  CHECK(r.verification.checked);
  CHECK(r.verification.passed);
  CHECK(r.verification.elements == c.elements());
  CHECK(r.verification.unwritten == 0);
  double largest = 1;
  for (double v : c.reference.data)
    largest = std::max(largest, std::fabs(v));
  CHECK(r.verification.max_abs_error <= options.tolerance * largest);
  CHECK(r.build_ms >= 0);
  CHECK_FALSE(r.timing.has_value());
}

void check_random_case(const bench::StencilCase& c) {
  REQUIRE(c.reference.data.size() == static_cast<size_t>(c.elements()));
  // Random, non-zero data in and a non-trivial result out.
  for (const interp::HostArray& input : c.inputs)
    CHECK(std::none_of(input.data.begin(), input.data.end(), [](double v) { return v == 0; }));
  CHECK(std::any_of(c.reference.data.begin(), c.reference.data.end(),
                    [](double v) { return v != 0; }));
}

/// A copy of `kernel` whose source has each `from` replaced by its `to` (the first occurrence),
/// written to the temporary folder: a kernel broken on purpose, which verification must catch.
bench::HandwrittenKernel
broken_copy(const bench::HandwrittenKernel& kernel,
            const std::vector<std::pair<std::string, std::string>>& replacements) {
  std::ifstream in(kernel.file);
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& replacement : replacements) {
    // (named, not a structured binding: clang 14's doctest macros cannot capture a binding)
    const std::string& from = replacement.first;
    const std::string& to = replacement.second;
    const size_t at = source.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, kernel.file.string(), " no longer holds '", from, "'");
    source.replace(at, from.size(), to);
  }
  bench::HandwrittenKernel broken = kernel;
  // The process id in the name: test runs side by side (plain, sanitizers) do not share files.
  broken.file = fs::temp_directory_path() / ("liftx-broken-" + std::to_string(::getpid()) + "-" +
                                             kernel.file.filename().string());
  std::ofstream(broken.file) << source;
  return broken;
}

/// The points of an M x N x O grid within `radius` of a face: those whose padded neighbourhood
/// reaches past the grid.
int64_t shell_points(const std::vector<int64_t>& shape, int64_t radius) {
  int64_t all = 1, interior = 1;
  for (int64_t extent : shape) {
    all *= extent;
    interior *= std::max<int64_t>(extent - 2 * radius, 0);
  }
  return all - interior;
}

} // namespace

TEST_CASE("every hand-written kernel matches the interpreter on random non-square grids") {
  // 40 columns are a multiple of 4, 37 are not (the float4 kernel's partial last group); 23 rows
  // are not a multiple of 3 or 4 (its last window of rows is partial).
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{24, 40}, {23, 37}};
  for (const std::string& stencil : bench::handwritten_stencils(2)) {
    std::vector<bench::HandwrittenKernel> kernels =
        bench::handwritten_kernels(kSourceDir, stencil, {1, 3, 4});
    CHECK(kernels.size() == (stencil == "jacobi2d5pt" ? 4u : 1u));
    for (const auto& [rows, columns] : sizes) {
      bench::StencilCase c = stencil_case(stencil, rows, columns);
      check_random_case(c);
      for (const bench::HandwrittenKernel& kernel : kernels) {
        check_passes(kernel, c, checking_only());
        check_passes(kernel, c, checking_only({8, 4})); // global rounded up past the grid
      }
    }
  }
}

TEST_CASE("every 3D hand-written kernel matches the interpreter on random non-cubic grids") {
  // 12 planes (z) of 20 rows (y) of 28 columns (x); and 1, 2 and 3 points along z, y and x, where
  // the paddings (wrap by one, j3d13pt's mirror by two) reach past the opposite face.
  const std::vector<std::vector<int64_t>> shapes = {{12, 20, 28}, {1, 2, 3}};
  const std::vector<std::string> stencils = bench::handwritten_stencils(3);
  CHECK(stencils == std::vector<std::string>{"heat3d", "j3d7pt", "j3d13pt", "j3d27pt", "poisson3d",
                                             "hotspot3d"});
  for (const std::string& stencil : stencils) {
    CHECK(bench::stencil_rank(stencil) == 3);
    std::vector<bench::HandwrittenKernel> kernels = bench::handwritten_kernels(kSourceDir, stencil);
    REQUIRE(kernels.size() == 1u);
    for (const std::vector<int64_t>& shape : shapes) {
      bench::StencilCase c = stencil_case(stencil, shape);
      CHECK(c.rank() == 3);
      CHECK(c.sizes == Sizes{{"M", shape[0]}, {"N", shape[1]}, {"O", shape[2]}});
      check_random_case(c);
      check_passes(kernels[0], c, checking_only());
      // Global rounded up past the grid along every axis (28 -> 32, 20 -> 24, 12 -> 15).
      check_passes(kernels[0], c, checking_only({8, 8, 5}));
    }
  }
}

TEST_CASE("a 3D kernel with a wrong border fails verification on the border only") {
  const std::vector<int64_t> shape = {12, 20, 28};
  // heat3d's periodic border read as clamped: every point of the one-point shell reads another
  // neighbour (a few may still agree within the tolerance by chance).
  bench::HandwrittenKernel heat = bench::handwritten_kernels(kSourceDir, "heat3d").at(0);
  bench::HandwrittenKernel heat_clamped =
      broken_copy(heat, {{"i < 0 ? i + n : (i >= n ? i - n : i)", "clamp(i, 0, n - 1)"}});
  // j3d13pt's mirror as numpy's 'reflect' (-1 reads 1, not 0; n reads n - 2, not n - 1): the
  // two-point shell differs.
  bench::HandwrittenKernel j13 = bench::handwritten_kernels(kSourceDir, "j3d13pt").at(0);
  bench::HandwrittenKernel j13_reflect =
      broken_copy(j13, {{"-1 - i", "-i"}, {"2 * n - 1 - m", "2 * n - 2 - m"}});
  const std::vector<std::tuple<bench::HandwrittenKernel, std::string, int64_t>> broken = {
      {heat_clamped, "heat3d", 1}, {j13_reflect, "j3d13pt", 2}};
  for (const auto& entry : broken) {
    // (named, not a structured binding: clang 14's doctest macros cannot capture a binding)
    const auto& [kernel, stencil_binding, radius] = entry;
    const std::string& stencil = stencil_binding;
    bench::StencilCase c = stencil_case(stencil, shape);
    bench::HandwrittenReport r = bench::run_handwritten(cpu_device(), kernel, c, checking_only());
    INFO(stencil, ": ", r.message);
    CHECK(r.status == runtime::Status::wrong_result);
    CHECK_FALSE(r.verification.passed);
    CHECK(r.verification.unwritten == 0);
    const int64_t shell = shell_points(shape, radius);
    CHECK(r.verification.mismatches <= shell); // the interior is right
    CHECK(r.verification.mismatches >= shell * 9 / 10);
    fs::remove(kernel.file);
  }
}

TEST_CASE("a 3D kernel computing another stencil, or launched as 2D, is refused") {
  bench::StencilCase j27 = stencil_case("j3d27pt", {12, 20, 28});
  bench::HandwrittenKernel j7 = bench::handwritten_kernels(kSourceDir, "j3d7pt").at(0);
  bench::HandwrittenReport r = bench::run_handwritten(cpu_device(), j7, j27, checking_only());
  CHECK(r.status == runtime::Status::wrong_result);
  CHECK(r.verification.mismatches > j27.elements() / 2);
  CHECK_THROWS_AS(bench::run_handwritten(cpu_device(), j7, j27, checking_only({8, 8})), UserError);
  CHECK_THROWS_AS(stencil_case("j3d7pt", 12, 20), UserError);            // a 3D program in 2D
  CHECK_THROWS_AS(stencil_case("jacobi2d5pt", {12, 20, 28}), UserError); // and the other way
  CHECK_THROWS_AS(bench::stencil_rank("jacobi3d"), UserError);
  CHECK(bench::stencil_file(kSourceDir, "hotspot3d") ==
        kSourceDir / "stencils" / "3d" / "hotspot3d.lift");
  CHECK(bench::stencil_file(kSourceDir, "hotspot2d") == kSourceDir / "stencils" / "hotspot2d.lift");
}

TEST_CASE("bytes moved count every input once and the output once") {
  CHECK(stencil_case("jacobi2d5pt", 24, 40).bytes_moved() == 2.0 * 24 * 40 * 4);
  CHECK(stencil_case("hotspot2d", 24, 40).bytes_moved() == 3.0 * 24 * 40 * 4);
  CHECK(stencil_case("srad2", 24, 40).bytes_moved() == 7.0 * 24 * 40 * 4);
  CHECK(stencil_case("j3d7pt", {12, 20, 28}).bytes_moved() == 2.0 * 12 * 20 * 28 * 4);
  CHECK(stencil_case("hotspot3d", {12, 20, 28}).bytes_moved() == 3.0 * 12 * 20 * 28 * 4);
}

TEST_CASE("a kernel computing another stencil is reported as a wrong result") {
  bench::StencilCase jacobi = stencil_case("jacobi2d5pt", 24, 40);
  bench::HandwrittenKernel gradient = bench::handwritten_kernels(kSourceDir, "gradient").at(0);
  bench::HandwrittenReport r =
      bench::run_handwritten(cpu_device(), gradient, jacobi, bench::HandwrittenOptions{});
  CHECK(r.status == runtime::Status::wrong_result);
  CHECK_FALSE(r.verification.passed);
  CHECK(r.verification.mismatches > 0);
  CHECK(r.message.find("elements differ") != std::string::npos);
  CHECK_FALSE(r.timing.has_value()); // a wrong kernel is never timed
}

TEST_CASE("a kernel that does not build is a build_error, an unreadable file a UserError") {
  bench::StencilCase c = stencil_case("jacobi2d5pt", 8, 8);
  bench::HandwrittenKernel window = bench::handwritten_kernels(kSourceDir, "jacobi2d5pt").at(1);
  window.build_options = "-DROWS=(";
  bench::HandwrittenReport r = bench::run_handwritten(cpu_device(), window, c, checking_only());
  CHECK(r.status == runtime::Status::build_error);
  CHECK_FALSE(r.verification.checked);

  window.file = kSourceDir / "bench" / "handwritten" / "no_such_kernel.cl";
  CHECK_THROWS_AS(bench::run_handwritten(cpu_device(), window, c, checking_only()), UserError);
  CHECK_THROWS_AS(bench::handwritten_kernels(kSourceDir, "jacobi3d"), UserError);
  CHECK_THROWS_AS(bench::handwritten_kernels(kSourceDir, "jacobi2d5pt", {0}), UserError);
}

TEST_CASE("verify_output: tolerance, NaN and unwritten elements") {
  interp::HostArray want;
  want.shape = {4};
  want.data = {1.0, -2.0, 1000.0, std::numeric_limits<double>::quiet_NaN()};
  const float nan = std::numeric_limits<float>::quiet_NaN();

  exec::Verification ok = bench::verify_output({1.00001f, -2.0f, 1000.05f, nan}, want, 1e-4);
  CHECK(ok.passed);
  CHECK(ok.mismatches == 0);
  CHECK(ok.max_abs_error == doctest::Approx(0.05).epsilon(0.01));

  exec::Verification off = bench::verify_output({1.001f, -2.0f, 1000.0f, nan}, want, 1e-4);
  CHECK_FALSE(off.passed);
  CHECK(off.mismatches == 1);
  CHECK(off.first_mismatch.find("element 0") != std::string::npos);

  float poison;
  const uint32_t bits = runtime::kPoisonBits;
  std::memcpy(&poison, &bits, sizeof poison);
  exec::Verification unwritten = bench::verify_output({1.0f, -2.0f, 1000.0f, poison}, want, 1e-4);
  CHECK_FALSE(unwritten.passed); // a poisoned NaN never matches a NaN
  CHECK(unwritten.unwritten == 1);
  CHECK(unwritten.first_mismatch.find("never written") != std::string::npos);

  exec::Verification short_output = bench::verify_output({1.0f}, want, 1e-4);
  CHECK_FALSE(short_output.passed);
  CHECK(short_output.mismatches == 4);
}
