#pragma once
/// A sample of a variant space spread over its kinds of kernel, for the measurements a cost model
/// learns from (explore::calibrate, `liftx collect --stratify`).
#include "space/space.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace liftx::space {

/// A fixed-seed sample of `n` variants spread evenly over the kinds of kernel in the stream (or
/// among those `keep` accepts), in stream order. A kind (stratum) is a strategy with its set of
/// parameter names and whether the launch is tied, e.g. "global2d_10 | tied" or "window split
/// tile_x tile_y vector | free". Each kind gets an equal share of `n`, uniform within the kind; a
/// kind with fewer variants than its share is taken whole and its unused share goes to the
/// others. Why: a uniform sample follows the space's sizes, and the large kinds (register
/// windows: hundreds of thousands of launches) crowd out the small ones (the one-point-per-work-
/// item kernel: 64 launches), which are the fastest on some devices; a model trained on a
/// uniform sample has never seen them. A sample smaller than the number of kinds takes one
/// variant each of `n` kinds drawn at random (by the seed). Holds at most `n` variants per kind.
std::vector<Variant> stratified_sample(VariantStream& stream, int64_t n, uint64_t seed,
                                       const std::function<bool(const Variant&)>& keep = {});

/// The kind of kernel stratified_sample() spreads over: "strategy name name... | tied|free".
std::string stratum_of(const Variant& v);

} // namespace liftx::space
