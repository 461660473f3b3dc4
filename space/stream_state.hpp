#pragma once
/// The variant stream's state, shared by the files that implement it (stream.cpp, launches.cpp,
/// plans.cpp). Internal to space/: nothing outside the folder includes it.
#include "space/space.hpp"

#include "ir/host_iteration.hpp"
#include "rewrite/product.hpp"
#include "rewrite/reduction.hpp"
#include "rewrite/temporal.hpp"
#include "rewrite/walk.hpp"

#include <deque>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace liftx::space {

struct ProgramHash {
  size_t operator()(const ir::Program& p) const { return p.body.hash(); }
};
struct ProgramEqual {
  bool operator()(const ir::Program& a, const ir::Program& b) const {
    return ir::alpha_equal(a, b);
  }
};
using ProgramSet = std::unordered_set<ir::Program, ProgramHash, ProgramEqual>;

/// The rewrite families of the high-level stage: each is applied at most once per program.
enum Family : unsigned { kTile = 1, kSplit = 2, kInterchange = 4 };

struct HighLevel {
  ir::Program program;
  int depth = 0;
  unsigned used = 0;
  std::map<std::string, int64_t> parameters;
};

struct RuleInstance {
  Family family;
  rewrite::Rule rule;
  std::map<std::string, int64_t> parameters;
  int64_t split = 0; ///< split-join factor (checked against the site's length)
};

/// Adds `more`'s counters to `into`'s.
inline void add_counts(SpaceCounts& into, const SpaceCounts& more) {
  into.variants += more.variants;
  into.high_level_programs += more.high_level_programs;
  into.lowered_programs += more.lowered_programs;
  into.kernels += more.kernels;
  into.distinct_sources += more.distinct_sources;
  for (const auto& [strategy, n] : more.per_strategy)
    into.per_strategy[strategy] += n;
  for (const auto& [reason, n] : more.rejections)
    into.rejections[reason] += n;
  into.no_tile_divides = into.no_tile_divides || more.no_tile_divides;
}

/// First words of a message, as a rejection reason.
std::string first_words(std::string text, int words);

struct VariantStream::State {
  // An iterated program (iterate(T, f, p) over a parameter) explores its step f: each lowered
  // step is wrapped back into the iteration, which runs as T launches of its kernel.
  std::optional<ir::HostIteration> iteration;
  ir::Program root;
  SpaceOptions options;
  SpaceCounts counts;
  std::vector<RuleInstance> rules;
  std::deque<HighLevel> queue;
  ProgramSet seen_high_level;
  ProgramSet seen_lowered;
  std::unordered_set<std::string> sources;

  /// Fused launches of an iterated 2D stencil step (temporal blocking), lowered after the
  /// step's own variants: (degree, tile) choices not tried yet.
  std::deque<rewrite::TemporalTiling> temporal;
  /// The iterated step as plan_temporal recognised it (set when `temporal` is planned).
  std::optional<rewrite::StencilStep> stencil_step;
  /// Work-group reductions of a matrix's rows or columns (rewrite/reduction.hpp), lowered after
  /// the other strategies' variants: tilings not tried yet.
  std::deque<rewrite::ReductionTiling> reductions;
  /// Register-blocked product grids (rewrite/product.hpp), lowered last: blockings not tried yet.
  std::deque<rewrite::RegisterBlocking> products;
  /// Product grids in local-memory tiles, lowered after the register blocks: tilings not tried.
  std::deque<rewrite::LocalTiling> local_tilings;
  /// Register blocks with vector reads, lowered after the local tilings (so that the indices of
  /// the variants before them stay as they were).
  std::deque<rewrite::RegisterBlocking> vector_products;

  std::optional<HighLevel> current;
  std::vector<std::pair<const rewrite::LoweringStrategy*, int64_t>>
      strategies; // (strategy, parameter)
  size_t strategy_pos = 0;

  struct Pending {
    ir::Program program;
    std::string strategy;
    std::map<std::string, int64_t> parameters;
    std::shared_ptr<const codegen::Kernel> kernel;
    std::vector<Launch> launches;
    size_t pos = 0;
    int64_t kernel_index = 0;
  };
  std::deque<Pending> pending;

  /// A kernel generated (on whichever thread generate_batch gave it): the kernel, or why code
  /// generation refused it.
  struct Generated {
    std::optional<codegen::Kernel> kernel;
    std::string rejection;
    std::exception_ptr error; ///< anything else it threw, rethrown when the program is processed
  };
  /// A lowered program waiting for its kernels.
  struct Lowered {
    ir::Program program;
    std::string strategy;
    std::map<std::string, int64_t> parameters;
    bool free_threads = false;
    /// What lowering counted since the program before it: merged into `counts` when this one is
    /// processed, as the stream without lookahead would have counted it by then.
    SpaceCounts lowering_counts;
    bool generated = false;
    double generate_seconds = 0; ///< the time its kernels took to generate
    Generated tied, free;        ///< free: generated only where the tied kernel is kept
  };
  std::deque<Lowered> lowered;
  /// What lowering has counted since it last queued a program (see Lowered::lowering_counts).
  SpaceCounts lowering_counts;
  /// Seconds code generation took for the programs processed so far: kernels are generated on
  /// several threads only where they take long (generate_batch).
  double generating_seconds = 0;
  int64_t generated_programs = 0;
  /// An error lowering ahead met, thrown once the programs lowered before it are processed.
  std::exception_ptr lowering_error;
  /// Where reject() counts: lowering_counts while lowering, else counts.
  SpaceCounts* tally = &counts;

  void reject(const std::string& reason, int64_t n = 1) { tally->rejections[reason] += n; }

  /// A lowered step wrapped back into the program's iteration (T launches of its kernel).
  ir::Program iterated(const ir::Program& step) const {
    return iteration ? ir::iterate_step(step, iteration->count, iteration->input) : step;
  }

  // The stream (stream.cpp).
  State(ir::Program p, SpaceOptions o);
  /// Children of a high-level program: one more rewrite of a family not used yet.
  void expand(const HighLevel& h);
  /// Lowers the current high-level program with the next strategy; queues its kernels.
  void lower_next();
  bool next(Variant& out);
  bool next_kernel(KernelVariants& out);
  /// Lowers and generates until a kernel with launches not yet handed out is at the front of
  /// `pending`; false at the end of the stream.
  bool fill_pending();
  /// One step of lowering (a high-level program expanded, or lowered by one strategy or plan,
  /// queueing what it lowers in `lowered`); false when nothing is left to lower.
  bool lower_more();
  /// Lowers until a batch of programs waits, then generates the kernels of those not generated
  /// yet, on several threads.
  void generate_batch();
  /// Counts a lowered program and queues its kernels' launches in `pending`.
  void process_lowered(Lowered& item);

  // Stage 3: kernels and their launches (launches.cpp).
  /// A kernel of `p` (tied or free-thread; with its OpenCL C text when `source`; warp streams'
  /// rows where `device` keeps them), or why code generation refused it.
  static Generated generate_kernel(const ir::Program& p, bool tied, bool source,
                                   const DeviceLimits& device);
  /// A lowered program's kernels: the tied one, then the free-thread one where `free_threads`
  /// and the tied one is kept. Reads only `options`: safe on any thread.
  void generate(Lowered& item) const;
  /// Launch configurations of one kernel. `lengths`: the tied global sizes (mapped lengths);
  /// `tied_locals`: for a free-thread kernel of the tied kernel's dimensions, the tied kernel's
  /// local sizes where its launch rule gives them (0 where not).
  std::vector<Launch> launches(const codegen::Kernel& k, bool tied,
                               const std::array<int64_t, 3>& lengths,
                               const std::optional<std::array<int64_t, 3>>& tied_locals);
  /// Whether a free-thread launch asks for exactly the tied kernel's threads: codegen's
  /// prepare_launch then runs the tied kernel (explore, collect, `run --launch` and the
  /// features a database is refreshed with all see that kernel), so the launch is the tied
  /// variant's twin, and ranking it by the free-thread kernel's features would rank a kernel that
  /// never runs.
  static bool runs_as_tied_twin(const Launch& l, const std::array<int64_t, 3>& lengths,
                                const std::array<int64_t, 3>& tied_locals);
  /// Queues a lowered program for code generation (its kernels: tied, and free-thread ones when
  /// `free_threads`), unless it is a duplicate.
  void queue_lowered(const ir::Program& p, const std::string& strategy,
                     std::map<std::string, int64_t> params, bool free_threads);

  // The kinds' own plans, lowered after the strategies' variants (plans.cpp).
  /// Work-groups of 32 to 1024 work-items (powers of two within the device's limit). Rows: one
  /// part per work-item, the parts dividing the row. Columns: 1 to 32 parts per column, blocks
  /// of at least 8 columns, both dividing their lengths.
  void plan_reductions();
  /// Queues a program a strategy's builder lowered from the root, or rejects it with why not
  /// (`label: ...`) or `indivisible` when its lengths do not divide at these sizes.
  void queue_built(const std::variant<ir::Program, std::string>& lowered, const std::string& label,
                   const std::string& indivisible, const std::string& strategy,
                   std::map<std::string, int64_t> params);
  void lower_next_reduction();
  /// Blocks of 2 to 16 rows by 2 to 8 columns (8 to 128 outputs per work-item); the loop over
  /// the reduction run one step at a time or in unrolled chunks of 4 or 8 steps; each step's
  /// values copied to private memory (the form of the fastest block measured on an H200, 16x8 in
  /// chunks of 4; bench/RESULTS.md). Blocks that do not divide the grid are left out when
  /// lowered. Then local-memory tiles: work-groups of 8 or 16 by 8 or 16 work-items, blocks of
  /// 2 to 8 by 2 to 8 outputs, chunks of 4, 8 or 16 steps, each operand's chunk copied along the
  /// steps or across them (whichever reads neighbouring addresses depends on its layout), the
  /// tiles' rows in local memory padded by one element or not. After those, the same with float4
  /// reads of the blocks (where one is consecutive), A's tile by a transposing copy (its outputs
  /// contiguous, then interleaved by float4s), and last the register blocks of 4 or 8 columns
  /// with float4 reads of B (docs/codegen.md).
  void plan_products();
  void lower_next_product();
  void lower_next_vector_product();
  void lower_product(const rewrite::RegisterBlocking& blocking);
  void lower_next_local_tiling();
  /// Temporal degrees t up to the step count (T / t launches of t steps, then one launch of the
  /// T mod t steps left, tiled the same way), both forms of a tile dividing the grid (work-group
  /// tiles of powers of two in local memory; work-item tiles of up to 64 outputs, 8 wide, in
  /// registers; 3D: the same with up to 8 outputs along z, and columns of up to 64 streamed along
  /// z), the input tile staged or not where the boundary allows; tiles recomputing too much
  /// (kMaxRedundant*) are left out.
  void plan_temporal();
  /// The pipelined streams of plan_temporal's step `s` over outputs of lengths `out`.
  void plan_streams(const rewrite::StencilStep& s, const std::vector<int64_t>& out);
  void plan_shared_streams(const rewrite::StencilStep& s, const std::vector<int64_t>& out);
  void plan_warp_streams(const rewrite::StencilStep& s, const std::vector<int64_t>& out);
  /// A shared or warp stream's `tiling`, its loop along the stream rolled and unrolled by
  /// `copies`.
  void plan_rolled_and_unrolled(rewrite::TemporalTiling tiling, int64_t copies);
  /// A warp stream's loop along the stream, rolled or unrolled as the device wants it.
  void plan_warp_stream_loops(const rewrite::StencilStep& s, rewrite::TemporalTiling tiling);
  void lower_next_temporal();

  /// What the variants of a kernel share, into a Variant or a KernelVariants.
  template <class Shared>
  static void copy_shared(const Pending& from, Shared& out) {
    out.strategy = from.strategy;
    out.parameters = from.parameters;
    out.program = from.program;
    out.kernel_index = from.kernel_index;
    out.kernel = from.kernel;
  }
};

} // namespace liftx::space
