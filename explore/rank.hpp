#pragma once
/// Ranking the variants of a program with a cost model, without running any: every variant of the
/// variant space (space::VariantStream) gets its static features (one features::KernelModel per
/// distinct kernel, so a launch costs one analysis) and a predicted normalised throughput. The
/// space streams through the features and the model in chunks, on every core, and only the best
/// predicted variants are kept: a GPU-sized space (10^6 variants) ranks in seconds.
#include "features/derived.hpp"
#include "features/features.hpp"
#include "model/model.hpp"
#include "space/space.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::explore {

struct RankedVariant {
  /// The variant without its program and kernel source (a whole space of them would not fit in
  /// memory): `program` holds the lowered program, shared by the variants of one kernel.
  space::Variant variant;
  std::shared_ptr<const ir::Program> program;
  double predicted = 0;                    ///< normalised throughput, higher is better
  std::vector<model::Explanation> reasons; ///< its most telling features (top rows only)
  int rank = 0;                            ///< 1 = predicted best
  /// The model's input row (its feature columns, in the model's order): what online adaptation
  /// compares variants by.
  std::vector<double> columns;
};

struct RankOptions {
  Sizes sizes;
  /// Device profile for the space's limits and the features; empty = the model's profile.
  std::string profile;
  /// A real device's profile (as `liftx collect` stores features for it): its limits and its
  /// features; nullopt = the named profile `profile`.
  std::optional<target::DeviceProfile> device;
  int64_t max_variants = 0; ///< stop the stream after this many (0 = the whole space)
  /// Rank a fixed-seed uniform sample of this many variants of the space instead of all of it
  /// (0 = all).
  int64_t sample = 0;
  uint64_t sample_seed = 1;
  size_t reasons = 3;
  /// Rows (best predicted first) that get their reasons: those a report shows (`rank --top`,
  /// explore's budget). A boosted model explains a row by TreeSHAP in about a millisecond.
  size_t explain_top = 20;
  /// The best-predicted variants returned (0 = every variant ranked). A whole space of
  /// RankedVariants with their feature rows takes about 1 kB each: keep only what is used.
  size_t keep = 2000;
  /// Threads computing features and predictions, the one walking the space among them (0 = one
  /// per core).
  unsigned threads = 0;
  /// Traffic pruning (seed 004): rank only the variants whose modelled global-memory traffic
  /// (features::modelled_traffic_per_byte) is at most this many times the least of the space or
  /// sample; 0 = rank every variant. A first walk of the space models each variant's traffic.
  double prune_traffic = 0;
  /// space::SpaceOptions::layouts: the grids of one type stored together, as a dimension more.
  bool layouts = false;
  /// space::SpaceOptions::warp_streams: iterated 2D stencils streamed by sub-groups too.
  bool warp_streams = false;
  /// Rank only the variants it accepts, by their lowering strategy, its parameters and their
  /// launch (before their features are computed); empty: every variant.
  std::function<bool(const std::string& strategy, const std::map<std::string, int64_t>& parameters,
                     const codegen::Launch& launch)>
      keep_if;
  /// Called on the calling thread every few thousand variants with the phase ("sampling": the
  /// space walked to draw the sample; "ranking") and the variants walked so far in it.
  std::function<void(std::string_view phase, int64_t variants)> on_progress;
};

struct RankResult {
  /// The `keep` best predicted, best first (ties in stream order: deterministic, whatever the
  /// number of threads).
  std::vector<RankedVariant> ranked;
  int64_t variants = 0; ///< variants walked: the space, the sample or max_variants
  /// With RankOptions::prune_traffic: the variants left out, the least modelled traffic and the
  /// bound (cache-line bytes per byte moved).
  int64_t pruned = 0;
  double least_traffic = 0;
  double traffic_bound = 0;
  /// space::SpaceCounts::no_tile_divides of the space walked: a stencil no tile divides.
  bool no_tile_divides = false;
};

/// Static features of a stream of variants, computed with one KernelModel per kernel.
class FeatureCache {
public:
  explicit FeatureCache(target::DeviceProfile profile);
  ~FeatureCache();
  /// `program`: the variant's lowered program (the variant may have been stripped of it).
  features::Features compute(const ir::Program& program, const space::Variant& variant,
                             const Sizes& sizes);
  const target::DeviceProfile& profile() const { return profile_; }
  size_t kernels() const { return generated_; } ///< kernel models built so far

private:
  target::DeviceProfile profile_;
  /// By Variant::kernel_index. The stream gives a kernel's launches together, so only the most
  /// recent kernels are kept (a space has thousands; each model holds compiled expressions).
  std::map<int64_t, std::unique_ptr<features::KernelModel>> models_;
  size_t generated_ = 0;
};

/// Ranks every variant of the space (or the sample) and returns the best predicted, by `model`'s
/// route for the program's kind (model_for).
RankResult rank(const ir::Program& program, const model::Model& model, const RankOptions& options);

/// The device numbers `model`'s derived feature columns take when it ranks on `device`: those of
/// the named profile the model was trained for, as perfdb::load_dataset derived its training rows
/// (ranking with the device's own numbers, e.g. a CPU's measured copy bandwidth of 46 GB/s
/// against the 15 GB/s the model learnt with, would feed it columns it never saw); the device's
/// own when the model's profile has no name.
target::DeviceProfile::Throughput training_throughput(const model::Model& model,
                                                      const target::DeviceProfile& device);

/// The kind of `program` as model routes name it (rewrite::kind_name of rewrite::program_kind).
std::string program_kind_name(const ir::Program& program);
/// The model that ranks `program`: `model`'s route for its kind (program_kind_name), or `model`
/// itself.
const model::Model& model_for(const model::Model& model, const ir::Program& program);
/// The kind whose route of `model` ranks `program`; empty when `model` itself does.
std::string route_of(const model::Model& model, const ir::Program& program);

/// The launch of a variant as the database and the reports write it; "local" is empty when the
/// runtime chooses the work-group.
nlohmann::json launch_json(const codegen::Launch& launch);
/// "global2d_10 tile_x=16 tile_y=8" (the launch: codegen::describe).
std::string describe_parameters(const space::Variant& v);

/// UserError when `program` (from `file`) is already lowered: one variant, with no space to rank,
/// explore or collect. `command` names the caller in the message.
void refuse_lowered(const ir::Program& program, const std::string& file,
                    const std::string& command);
/// "cache_lines_per_warp_access 1, local_loads_per_thread 0, ..." (raw values).
std::string describe_reasons(const std::vector<model::Explanation>& reasons);

} // namespace liftx::explore
