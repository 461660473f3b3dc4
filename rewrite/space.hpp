#pragma once
/// The variant space of a stencil program: every (lowered program, launch configuration) pair the
/// engine can derive for concrete input sizes and a device, produced lazily as a stream.
///
/// Three stages, after Lift's exploration (lift-notes §4.2-4.4):
///  1. high level: depth-limited enumeration of algorithmic rewrites (2D overlapped tiling, split-
///     join on an inner map, map-map interchange; each family at most once per program),
///     deduplicated modulo renaming;
///  2. lowering: each high-level program under each lowering strategy (global 2D in both orders,
///     global 1D, work-group 1D/2D with or without the local tile copy, sequential chunks), then
///     map -> mapSeq and reduce -> reduceSeq to a fixpoint; programs the code generator refuses
///     are dropped with a reason;
///  3. numbers: launch configurations per lowered program, for the tied kernel (the launch rule
///     of codegen, free local sizes enumerated) and for the free-thread kernel (powers of two),
///     filtered by the device limits.
/// Every rejection is counted under a named reason. Generation is deterministic.
#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"
#include "ir/expr.hpp"
#include "support/device_limits.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace liftx::rewrite {

using Sizes = std::map<std::string, int64_t, std::less<>>;

using Launch = codegen::Launch;

struct Variant {
  std::string strategy; ///< lowering strategy: "global2d_10", "workgroup2d_local", ...
  std::map<std::string, int64_t>
      parameters; ///< "tile_x", "tile_y", "split", "interchange", "chunk"
  ir::Program program{"", {}, ir::literal(0.0f), {}}; ///< the lowered program
  Launch launch;
  int64_t index = 0;         ///< position in the stream
  int64_t kernel_index = 0;  ///< distinct (lowered program, tied) pairs in stream order
  std::string kernel_source; ///< the generated OpenCL source
};

struct SpaceOptions {
  Sizes sizes;
  /// The launches a device takes: runtime::DeviceProfile::limits() of a probed device or of a
  /// named profile (runtime::named_profile).
  DeviceLimits device;
  int depth = 2; ///< high-level rewrite steps
  /// Tile steps and split factors: powers of two from 2 up to this (and dividing the length).
  int64_t max_tile = 32;
  int64_t max_chunk = 32;
  /// Free-thread launches: global sizes per dimension are the largest power of two not above the
  /// mapped length and up to this many halvings of it.
  int free_global_halvings = 2;
  bool free_threads = true;
};

/// Counters of the stream so far (all of them, after the stream is exhausted).
struct SpaceCounts {
  int64_t variants = 0;
  int64_t high_level_programs = 0; ///< distinct programs of stage 1 expanded so far
  int64_t lowered_programs = 0;    ///< distinct lowered programs generated so far
  int64_t kernels = 0;             ///< kernels generated (tied and free separately)
  int64_t distinct_sources = 0;
  std::map<std::string, int64_t> per_strategy; ///< variants per lowering strategy
  std::map<std::string, int64_t> rejections;   ///< reason -> count
};

/// The lazy stream of variants. `next` does only the work needed for one more variant: a
/// high-level program is expanded, lowered and generated only when the stream reaches it.
class VariantStream {
public:
  /// `program`: a high-level stencil (map/reduce, layout primitives, user functions).
  VariantStream(ir::Program program, SpaceOptions options);
  ~VariantStream();
  VariantStream(const VariantStream&) = delete;
  VariantStream& operator=(const VariantStream&) = delete;

  bool next(Variant& out);
  const SpaceCounts& counts() const;

private:
  struct State;
  std::unique_ptr<State> state_;
};

/// One lowering strategy: a name and the rule steps that lower a high-level program.
struct LoweringStrategy {
  std::string name;
  std::vector<std::string> steps; ///< for documentation: "map-to-mapGlb1", ...
};
std::vector<LoweringStrategy> lowering_strategies(const SpaceOptions& options);

/// Applies a named lowering strategy with its parameter (chunk size or 0) to a high-level
/// program: the lowered program or the reason it does not apply. Exposed for tests.
std::variant<ir::Program, std::string> lower(const ir::Program& program,
                                             const std::string& strategy, int64_t parameter,
                                             const Sizes& sizes);

/// A uniform fixed-seed sample of `n` variants of the whole stream (reservoir sampling: the stream
/// is consumed once, at most `n` variants are held), in stream order.
std::vector<Variant> sample(VariantStream& stream, int64_t n, uint64_t seed);

/// The JSON sidecar of a variant (sizes, launch, strategy, parameters), as text.
std::string sidecar_json(const Variant& v, const Sizes& sizes);

} // namespace liftx::rewrite
