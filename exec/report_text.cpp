#include "exec/report_text.hpp"

#include "ir/interp/interp.hpp"

#include <fmt/format.h>

namespace liftx::exec {

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

} // namespace liftx::exec
