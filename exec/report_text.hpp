#pragma once
/// What a run report says in words, the same in `liftx run` and `liftx explore`.
#include "exec/run.hpp"

#include <optional>
#include <string>

namespace liftx::exec {

/// "bandwidth 60.08 GB/s = 93.1% of the float4-copy roofline (64.50 GB/s)" (with the newline); past
/// 105% of the roofline, a DRAM copy's, the fraction is explained instead of printed as if it
/// were one: the kernel's working set is served from the cache. "" without a bandwidth.
std::string bandwidth_line(const RunReport& report);

/// The device's ridge point in flops per byte: its estimated fp32 peak over its copy roofline,
/// the arithmetic intensity above which arithmetic, not memory, bounds a program. nullopt when
/// either is unknown.
std::optional<double> ridge_point(const RunReport& report);

/// Whether the program's arithmetic intensity (its flops per byte moved) is above the ridge
/// point; false when either is unknown.
bool compute_bound(const RunReport& report);

/// "arithmetic 40.75 TFLOP/s = 60.9% of the fp32 peak (66.9 TFLOP/s, estimated from compute
/// units and clock): 683 flops per byte moved, above the ridge point of 16.7: arithmetic bounds
/// it" (with the newline; "below ...: data movement bounds it" under the ridge); the rate alone
/// when the peak is unknown. "" without a rate: no floating-point arithmetic, or no time.
std::string arithmetic_line(const RunReport& report);

/// The bandwidth and arithmetic lines, the one of what bounds the program first: the arithmetic
/// line heads a compute-bound program's report (its fraction of the copy roofline says little),
/// the bandwidth line every other's.
std::string rate_lines(const RunReport& report);

} // namespace liftx::exec
