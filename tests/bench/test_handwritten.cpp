// The hand-written OpenCL kernels of bench/handwritten/ compute what their stencils compute: each
// runs on the CPU OpenCL device (PoCL) at small non-square sizes on random inputs and is checked
// element by element against the reference interpreter, through bench::run_handwritten, the same
// path stencil_roofline_bench verifies with.
#include "bench/handwritten.hpp"
#include "codegen/runtime/device.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
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

bench::HandwrittenOptions checking_only(std::vector<int64_t> local = {}) {
  bench::HandwrittenOptions options;
  options.time = false;
  options.local = std::move(local);
  return options;
}

void check_passes(const bench::HandwrittenKernel& kernel, const bench::StencilCase& c,
                  const bench::HandwrittenOptions& options) {
  bench::HandwrittenReport r = bench::run_handwritten(cpu_device(), kernel, c, options);
  INFO(kernel.label, " on ", c.stencil, " ", c.rows, "x", c.columns, ": ", r.message);
  CHECK(r.status == runtime::Status::ok);
  CHECK(r.verification.checked);
  CHECK(r.verification.passed);
  CHECK(r.verification.elements == c.rows * c.columns);
  CHECK(r.verification.unwritten == 0);
  double largest = 1;
  for (double v : c.reference.data)
    largest = std::max(largest, std::fabs(v));
  CHECK(r.verification.max_abs_error <= options.tolerance * largest);
  CHECK(r.build_ms >= 0);
  CHECK_FALSE(r.timing.has_value());
}

} // namespace

TEST_CASE("every hand-written kernel matches the interpreter on random non-square grids") {
  // 40 columns are a multiple of 4, 37 are not (the float4 kernel's partial last group); 23 rows
  // are not a multiple of 3 or 4 (its last window of rows is partial).
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{24, 40}, {23, 37}};
  for (const std::string& stencil : bench::handwritten_stencils()) {
    std::vector<bench::HandwrittenKernel> kernels =
        bench::handwritten_kernels(kSourceDir, stencil, {1, 3, 4});
    CHECK(kernels.size() == (stencil == "jacobi2d5pt" ? 4u : 1u));
    for (const auto& [rows, columns] : sizes) {
      bench::StencilCase c = stencil_case(stencil, rows, columns);
      REQUIRE(c.reference.data.size() == static_cast<size_t>(rows * columns));
      // Random, non-zero data in and a non-trivial result out.
      for (const interp::HostArray& input : c.inputs)
        CHECK(std::none_of(input.data.begin(), input.data.end(), [](double v) { return v == 0; }));
      CHECK(std::any_of(c.reference.data.begin(), c.reference.data.end(),
                        [](double v) { return v != 0; }));
      for (const bench::HandwrittenKernel& kernel : kernels) {
        check_passes(kernel, c, checking_only());
        check_passes(kernel, c, checking_only({8, 4})); // global rounded up past the grid
      }
    }
  }
}

TEST_CASE("bytes moved count every input once and the output once") {
  CHECK(stencil_case("jacobi2d5pt", 24, 40).bytes_moved() == 2.0 * 24 * 40 * 4);
  CHECK(stencil_case("hotspot2d", 24, 40).bytes_moved() == 3.0 * 24 * 40 * 4);
  CHECK(stencil_case("srad2", 24, 40).bytes_moved() == 7.0 * 24 * 40 * 4);
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
