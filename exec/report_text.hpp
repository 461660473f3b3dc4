#pragma once
/// What a run report says in words, the same in `liftx run` and `liftx explore`.
#include "exec/run.hpp"

#include <string>

namespace liftx::exec {

/// "bandwidth 60.08 GB/s = 93.1% of the float4-copy roofline (64.50 GB/s)" (with the newline); past
/// 105% of the roofline, a DRAM copy's, the fraction is explained instead of printed as if it
/// were one: the kernel's working set is served from the cache. "" without a bandwidth.
std::string bandwidth_line(const RunReport& report);

} // namespace liftx::exec
