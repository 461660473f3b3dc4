#pragma once
/// The variant space of a stencil program: every (lowered program, launch configuration) pair the
/// engine can derive for concrete input sizes and a device, produced lazily as a stream.
///
/// Three stages, after Lift's exploration (lift-notes §4.2-4.4):
///  1. high level: depth-limited enumeration of algorithmic rewrites (2D overlapped tiling, split-
///     join on an inner map, map-map interchange; each family at most once per program),
///     deduplicated modulo renaming;
///  2. lowering: each high-level program under each lowering strategy of rewrite/lowering.hpp
///     (global 2D in both orders, global 1D, work-group 1D/2D with or without the local tile copy,
///     sequential chunks, register windows); programs the code generator refuses are dropped with
///     a reason;
///  3. numbers: launch configurations per lowered program, for the tied kernel (the launch rule
///     of codegen, free local sizes enumerated) and for the free-thread kernel (powers of two),
///     filtered by the device limits.
/// An iterated 2D stencil also gets fused launches, several steps each (temporal blocking,
/// rewrite/temporal.hpp), after the step's own variants.
/// Every rejection is counted under a named reason. Generation is deterministic.
///
/// The stream's code: stream.cpp (stages 1 and 2, the order of the stream), launches.cpp (stage 3),
/// plans.cpp (the kinds' own plans: reductions, products, fused time steps), sample.cpp.
#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"
#include "ir/expr.hpp"
#include "rewrite/lowering.hpp"
#include "support/device_limits.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace liftx::space {

using Launch = codegen::Launch;

struct Variant {
  std::string strategy; ///< lowering strategy: "global2d_10", "workgroup2d_local", ...
  /// "tile_x", "tile_y", "split", "interchange", "chunk", ...; fused launches (temporal2d):
  /// "steps_per_launch", "stage" (input tile copied first), "registers" (a work-item's tile),
  /// "remainder_steps" (T mod steps_per_launch > 0: one more launch computes them); temporal3d
  /// also "tile_z" and "stream" (a work-item's column streamed along z).
  std::map<std::string, int64_t> parameters;
  ir::Program program{"", {}, ir::literal(0.0f), {}}; ///< the lowered program
  Launch launch;
  int64_t index = 0;        ///< position in the stream
  int64_t kernel_index = 0; ///< distinct (lowered program, tied) pairs in stream order
  /// The generated kernel, shared by the variants of one kernel (so that ranking does not
  /// generate it again, and a variant does not copy its source); null for a variant made
  /// elsewhere.
  std::shared_ptr<const codegen::Kernel> kernel;
  /// The generated OpenCL source ("" without a kernel).
  const std::string& kernel_source() const;
};

/// Steps of an iterated program one launch of the variant computes: its "steps_per_launch"
/// (a fused launch, temporal blocking), else 1.
int64_t steps_per_launch(const Variant& variant);
int64_t steps_per_launch(const std::map<std::string, int64_t>& parameters);

/// Steps the remainder launch of a fused variant computes (its "remainder_steps"), else 0.
int64_t remainder_steps(const Variant& variant);

struct SpaceOptions {
  Sizes sizes;
  /// The launches a device takes: target::DeviceProfile::limits() of a probed device or of a
  /// named profile (target::model_profile).
  DeviceLimits device;
  int depth = 2; ///< high-level rewrite steps
  /// Tile steps and split factors: powers of two from 2 up to this (and dividing the length).
  int64_t max_tile = 32;
  int64_t max_chunk = 32;
  /// Free-thread launches: global sizes per dimension are the largest power of two not above the
  /// mapped length and up to this many halvings of it.
  int free_global_halvings = 2;
  bool free_threads = true;
  /// Also store the grids of one type together (rewrite/layout.hpp: AoS and AoSoA(32)), each
  /// layout a high-level program of its own with every rewrite and lowering of the separate
  /// grids; its variants carry the parameter "aos" (1) or "aosoa" (the block).
  bool layouts = false;
  /// Also stream iterated stencils by work-groups sharing each step's rows in local memory
  /// (rewrite::TemporalTiling::Memory::shared_stream; their variants carry "shared": 1). Off by
  /// default: as generated they are 3-8x slower than the register pipelines on an H200
  /// (docs/results.md, "Fused time steps"), and a ranking that has never measured them would
  /// spend an exploration's runs on them.
  bool shared_streams = false;
  /// Also stream iterated 2D stencils by sub-groups (rewrite::TemporalTiling::Memory::
  /// warp_stream; their variants carry "warp": 1 with "lanes" and "columns"): a work-group of at
  /// most 32 work-items per column, each owning adjacent columns of every row. Always planned
  /// where `device` shuffles (DeviceLimits::subgroup_shuffle: its rows stay in registers): there
  /// the best are the fastest fused variants measured (bench/RESULTS.md, "Lane picks as
  /// selects") and the shipped NVIDIA model, trained on them, ranks them (docs/results.md).
  /// Elsewhere only when set: their rows go to local memory, and no model has measured that.
  /// Their kernels keep the rows where the device does (codegen::subgroup_rows_for;
  /// docs/codegen.md, "Warp streams").
  bool warp_streams = false;
  /// Also plan full-warp streams whose columns' last strip is shifted up to the grid's last row
  /// (rewrite::TemporalTiling::shifted_rows; their variants carry "shifted_rows": 1), at strip
  /// heights that need not divide the grid's: a launch's waves then depend on the height alone.
  /// Off by default: not yet measured on a GPU (docs/results.md, "The last wave").
  bool shifted_strips = false;
  /// Generate each kernel's OpenCL C text (codegen::Options::source). Without it the variants'
  /// kernels have no source (a ranking that builds nothing needs none) and `distinct_sources`
  /// stays 0.
  bool kernel_source = true;
  /// Threads that generate kernels: lowering runs a batch of programs ahead of code generation
  /// and the batch's kernels are generated at once. 0: one per core where the kernels generated
  /// so far took 2 ms or more each (a product's), else one. The stream, its counts read between
  /// variants included, is the same on any number of threads.
  unsigned threads = 0;
  /// With `threads` 0: at most this many where kernels take long (0: one per core). A consumer
  /// that was asked for fewer threads than the machine has (`rank --threads`) sets it.
  unsigned max_threads = 0;
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
  /// The program is a stencil (it slides windows) and no tile shape divides its output's lengths
  /// at these sizes (each was rejected, "tile does not divide"): it then has no windows,
  /// work-group tiles or fused steps, since a partial last tile is neither shifted nor guarded.
  /// Known from the start.
  bool no_tile_divides = false;
};

/// The lazy stream of variants. `next` does little more than the work needed for one more
/// variant: a high-level program is expanded and lowered only when the stream reaches it, and
/// kernels are generated a batch of lowered programs ahead (SpaceOptions::threads).
/// The variants of one kernel in stream order: what they share, held once, and their launches.
/// Variant `first_index + i` is this kernel with `launches[i]`.
struct KernelVariants {
  std::string strategy;
  std::map<std::string, int64_t> parameters;
  ir::Program program{"", {}, ir::literal(0.0f), {}};
  int64_t kernel_index = 0;
  std::shared_ptr<const codegen::Kernel> kernel;
  std::vector<Launch> launches;
  int64_t first_index = 0;
};

class VariantStream {
public:
  /// `program`: a high-level stencil (map/reduce, layout primitives, user functions).
  VariantStream(ir::Program program, SpaceOptions options);
  ~VariantStream();
  VariantStream(const VariantStream&) = delete;
  VariantStream& operator=(const VariantStream&) = delete;

  bool next(Variant& out);
  /// The stream's remaining variants of its current kernel (or of the next one) at once: the
  /// same variants, in the same order and with the same indices, as calls to next() would give,
  /// without copying what they share for every launch. May follow calls to next().
  bool next_kernel(KernelVariants& out);
  const SpaceCounts& counts() const;

private:
  struct State;
  std::unique_ptr<State> state_;
};

/// A uniform fixed-seed sample of `n` variants of the whole stream, or of those `keep` accepts
/// (reservoir sampling: the stream is consumed once, at most `n` variants are held), in stream
/// order.
std::vector<Variant> sample(VariantStream& stream, int64_t n, uint64_t seed,
                            const std::function<bool(const Variant&)>& keep = {});

/// The JSON sidecar of a variant (sizes, launch, strategy, parameters), as text.
std::string sidecar_json(const Variant& v, const Sizes& sizes);

} // namespace liftx::space
