#pragma once
/// `liftx adapt --emit header`: an adaptive program as a standalone C++17 header, for
/// applications that embed the generated OpenCL kernels without linking liftx.
///
/// The header holds, per portfolio member, the kernel (one OpenCL C source for every shape: the
/// sizes are kernel arguments), its arguments, and a function that computes its launch at given
/// sizes with the checks liftx's own launch makes: the exact divisions of the launch rule and of
/// the buffer lengths, the alignment the kernel assumes, the work-group dividing the global size,
/// the device's work-group and local-memory limits, and barriers reached by every work-item of a
/// group. Its `choose` is AdaptiveArtifact::pick: the selector's order from the nearest training
/// shape, each member with its measured work-group or else one fitted to the shape, then the
/// fallback member. Not
/// re-checked: that the kernel's 32-bit index arithmetic fits (liftx refuses a launch whose
/// indices could pass 2^31 - 1; the header says so).
#include "adapt/adapt.hpp"

#include <string>

namespace liftx::adapt {

/// The header's text. The namespace is `liftx_adaptive::<program name>`. UserError if a member's
/// program no longer generates (an artifact written by another liftx version).
std::string adaptive_header(const AdaptiveArtifact& artifact);

} // namespace liftx::adapt
