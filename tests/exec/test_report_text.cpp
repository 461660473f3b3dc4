// exec/report_text.hpp and the arithmetic figures of exec::RunReport: a compute-bound program is
// headed by its arithmetic rate against the device's fp32 peak, every other by its bandwidth,
// whose line is unchanged.
#include "exec/report_text.hpp"
#include "exec/run.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace liftx;

namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}
bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A report timed at `median_ms` that moved `bytes` and computed `flops`, against a copy roofline
/// of `roofline_gb_per_s` and an fp32 peak of `peak_gflop_per_s` (nullopt: unknown).
exec::RunReport timed_report(double median_ms, double bytes, double flops, double roofline_gb_per_s,
                             std::optional<double> peak_gflop_per_s) {
  exec::RunReport report;
  runtime::Timing timing;
  timing.median_ms = median_ms;
  report.timing = timing;
  report.bytes_moved = bytes;
  report.gb_per_s = bytes / (median_ms * 1e6);
  report.roofline_gb_per_s = roofline_gb_per_s;
  report.roofline_fraction = *report.gb_per_s / roofline_gb_per_s;
  exec::set_arithmetic_rate(report, flops, peak_gflop_per_s);
  return report;
}

/// mm at 4096³ on an H200: 2 n³ flops over 3 n² floats moved, at 60.9% of a 66.9 TFLOP/s peak.
exec::RunReport matrix_product_report() {
  const double n = 4096;
  return timed_report(2 * n * n * n / (0.609 * 66908 * 1e6), 3 * n * n * 4, 2 * n * n * n, 4000,
                      66908);
}

/// A 5-point Jacobi at 4096²: 10 flops per point, 8 bytes per point moved, at 93.1% of the copy.
exec::RunReport jacobi_report() {
  const double points = 4096.0 * 4096;
  return timed_report(8 * points / (0.931 * 64.5 * 1e6), 8 * points, 10 * points, 64.5, 66908);
}

} // namespace

TEST_CASE("the fp32 peak is 2 flops per lane and cycle, unknown without units or clock") {
  target::DeviceProfile h200;
  h200.type = target::DeviceType::gpu;
  h200.platform_name = "NVIDIA CUDA";
  h200.vendor = "NVIDIA Corporation";
  h200.warp_width = 32;
  h200.compute_units = 132;
  h200.max_clock_mhz = 1980;
  REQUIRE(exec::fp32_peak_gflop_per_s(h200));
  CHECK(*exec::fp32_peak_gflop_per_s(h200) == doctest::Approx(132 * 128 * 1.98 * 2));
  h200.max_clock_mhz = 0;
  CHECK_FALSE(exec::fp32_peak_gflop_per_s(h200));
  h200.max_clock_mhz = 1980;
  h200.compute_units = 0;
  CHECK_FALSE(exec::fp32_peak_gflop_per_s(h200));
}

TEST_CASE("a compute-bound program is headed by its arithmetic rate against the fp32 peak") {
  const exec::RunReport report = matrix_product_report();
  REQUIRE(report.gflop_per_s);
  CHECK(*report.fp32_peak_fraction == doctest::Approx(0.609));
  CHECK(exec::compute_bound(report));
  CHECK(*exec::ridge_point(report) == doctest::Approx(66908.0 / 4000));
  const std::string arithmetic = exec::arithmetic_line(report);
  CHECK(arithmetic == "arithmetic 40.75 TFLOP/s = 60.9% of the fp32 peak (66.9 TFLOP/s, estimated "
                      "from compute units and clock): 683 flops per byte moved, above the ridge "
                      "point of 16.7: arithmetic bounds it\n");
  const std::string lines = exec::rate_lines(report);
  CHECK(lines == arithmetic + exec::bandwidth_line(report));
  CHECK(starts_with(exec::bandwidth_line(report), "bandwidth "));
}

TEST_CASE("a memory-bound program keeps its bandwidth line first and unchanged") {
  const exec::RunReport report = jacobi_report();
  CHECK_FALSE(exec::compute_bound(report));
  const std::string bandwidth = exec::bandwidth_line(report);
  CHECK(bandwidth == "bandwidth 60.05 GB/s = 93.1% of the float4-copy roofline (64.50 GB/s)\n");
  const std::string lines = exec::rate_lines(report);
  CHECK(lines == bandwidth + exec::arithmetic_line(report));
  CHECK(contains(exec::arithmetic_line(report),
                 "1.25 flops per byte moved, below the ridge point of 1.04e+03: data "
                 "movement bounds it"));
}

TEST_CASE("without arithmetic, or without a peak, the report says only what it knows") {
  // A copy: no floating-point operations, no arithmetic line.
  const exec::RunReport copy = timed_report(1, 8e6, 0, 10, 1000);
  CHECK_FALSE(copy.gflop_per_s);
  CHECK(exec::arithmetic_line(copy).empty());
  CHECK(exec::rate_lines(copy) == exec::bandwidth_line(copy));
  // An unknown peak: the rate without a fraction, and no ridge point to call it compute bound.
  const exec::RunReport unknown = timed_report(2, 1e6, 3e9, 10, std::nullopt);
  CHECK_FALSE(unknown.fp32_peak_fraction);
  CHECK_FALSE(exec::compute_bound(unknown));
  CHECK(exec::arithmetic_line(unknown) == "arithmetic 1.50 TFLOP/s: 3e+03 flops per byte moved\n");
  CHECK(starts_with(exec::rate_lines(unknown), "bandwidth "));
  // Untimed: nothing to divide by.
  exec::RunReport untimed;
  exec::set_arithmetic_rate(untimed, 1e9, 1000);
  CHECK(untimed.flops == 1e9);
  CHECK_FALSE(untimed.gflop_per_s);
  CHECK(exec::rate_lines(untimed).empty());
}

TEST_CASE("the arithmetic figures travel through the report's JSON") {
  const exec::RunReport report = matrix_product_report();
  const nlohmann::json json = exec::to_json(report);
  CHECK(json.at("flops") == report.flops);
  CHECK(json.at("gflop_per_s") == *report.gflop_per_s);
  CHECK(json.at("fp32_peak_gflop_per_s") == 66908.0);
  CHECK(json.at("fp32_peak_fraction") == *report.fp32_peak_fraction);
  CHECK(json.contains("gb_per_s")); // the bandwidth fields stay
  const exec::RunReport back = exec::report_from_json(json);
  CHECK(back.flops == report.flops);
  CHECK(back.gflop_per_s == report.gflop_per_s);
  CHECK(back.fp32_peak_gflop_per_s == report.fp32_peak_gflop_per_s);
  CHECK(back.fp32_peak_fraction == report.fp32_peak_fraction);
  CHECK(exec::rate_lines(back) == exec::rate_lines(report));
  // Reports written before the figures existed read back without them.
  nlohmann::json old = json;
  for (const char* field : {"flops", "gflop_per_s", "fp32_peak_gflop_per_s", "fp32_peak_fraction"})
    old.erase(field);
  const exec::RunReport old_back = exec::report_from_json(old);
  CHECK(old_back.flops == 0);
  CHECK(exec::arithmetic_line(old_back).empty());
}
