#include "exec/report_text.hpp"

#include "ir/interp/interp.hpp"

#include <fmt/format.h>

namespace liftx::exec {

namespace {

/// "40.75 TFLOP/s" from 1000 GFLOP/s up, "12.30 GFLOP/s" below.
std::string flop_rate(double gflop_per_s, int decimals) {
  if (gflop_per_s >= 1000)
    return fmt::format("{:.{}f} TFLOP/s", gflop_per_s / 1000, decimals);
  return fmt::format("{:.{}f} GFLOP/s", gflop_per_s, decimals);
}

std::optional<double> arithmetic_intensity(const RunReport& report) {
  if (report.flops <= 0 || report.bytes_moved <= 0)
    return std::nullopt;
  return report.flops / report.bytes_moved;
}

/// ": 683 flops per byte moved, above the ridge point of 16.7: arithmetic bounds it".
std::string intensity_clause(const RunReport& report) {
  const std::optional<double> intensity = arithmetic_intensity(report);
  if (!intensity)
    return "";
  std::string clause = fmt::format(": {:.3g} flops per byte moved", *intensity);
  if (const std::optional<double> ridge = ridge_point(report))
    clause +=
        compute_bound(report)
            ? fmt::format(", above the ridge point of {:.3g}: arithmetic bounds it", *ridge)
            : fmt::format(", below the ridge point of {:.3g}: data movement bounds it", *ridge);
  return clause;
}

} // namespace

std::string bandwidth_line(const RunReport& report) {
  if (!report.gb_per_s)
    return "";
  std::string line = fmt::format("bandwidth {:.2f} GB/s", *report.gb_per_s);
  if (report.roofline_fraction && report.roofline_gb_per_s) {
    constexpr double kCacheResident = 1.05; // past the copy's own run-to-run spread
    if (*report.roofline_fraction > kCacheResident)
      line += fmt::format(", {:.1f}x the float4-copy roofline ({:.2f} GB/s, a copy larger than "
                          "the caches): its working set of {} is served from the cache, which "
                          "the roofline does not bound",
                          *report.roofline_fraction, *report.roofline_gb_per_s,
                          interp::format_bytes(static_cast<int64_t>(report.bytes_moved)));
    else
      line += fmt::format(" = {:.1f}% of the float4-copy roofline ({:.2f} GB/s)",
                          *report.roofline_fraction * 100, *report.roofline_gb_per_s);
  }
  return line + "\n";
}

std::optional<double> ridge_point(const RunReport& report) {
  if (!report.fp32_peak_gflop_per_s || !report.roofline_gb_per_s || *report.roofline_gb_per_s <= 0)
    return std::nullopt;
  return *report.fp32_peak_gflop_per_s / *report.roofline_gb_per_s;
}

bool compute_bound(const RunReport& report) {
  const std::optional<double> intensity = arithmetic_intensity(report);
  const std::optional<double> ridge = ridge_point(report);
  return intensity && ridge && *intensity > *ridge;
}

std::string arithmetic_line(const RunReport& report) {
  if (!report.gflop_per_s)
    return "";
  std::string line = "arithmetic " + flop_rate(*report.gflop_per_s, 2);
  if (report.fp32_peak_fraction && report.fp32_peak_gflop_per_s)
    line +=
        fmt::format(" = {:.1f}% of the fp32 peak ({}, estimated from compute units and clock)",
                    *report.fp32_peak_fraction * 100, flop_rate(*report.fp32_peak_gflop_per_s, 1));
  return line + intensity_clause(report) + "\n";
}

std::string rate_lines(const RunReport& report) {
  if (compute_bound(report))
    return arithmetic_line(report) + bandwidth_line(report);
  return bandwidth_line(report) + arithmetic_line(report);
}

} // namespace liftx::exec
