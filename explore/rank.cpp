#include "explore/rank.hpp"

#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"
#include "rewrite/program_kind.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

namespace liftx::explore {

FeatureCache::FeatureCache(target::DeviceProfile profile) : profile_(std::move(profile)) {}
FeatureCache::~FeatureCache() = default;

features::Features FeatureCache::compute(const ir::Program& program, const space::Variant& variant,
                                         const Sizes& sizes) {
  auto it = models_.find(variant.kernel_index);
  if (it == models_.end()) {
    // The kernel as it runs on the profile's device (its warp streams' rows where it keeps them).
    codegen::Options options{variant.launch.tied};
    options.subgroup_rows = codegen::subgroup_rows_for(profile_.limits());
    it = models_
             .emplace(variant.kernel_index,
                      std::make_unique<features::KernelModel>(codegen::generate(program, options)))
             .first;
    ++generated_;
    if (models_.size() > 64) { // drop the oldest kernel (not the one just made)
      auto oldest = models_.begin();
      if (oldest == it)
        ++oldest;
      models_.erase(oldest);
    }
  }
  return it->second->compute(variant.launch, sizes, profile_);
}

namespace {

/// Variants handed to a thread at a time: enough to amortise one model prediction call, few
/// enough that the chunks in flight stay small next to the space.
constexpr size_t kChunkRows = 4096;
/// Kernels a chunk may hold: each holds its lowered program and, once a row needs it, its feature
/// model (megabytes for a matrix product's unrolled blocks), for as long as the chunk lives. A
/// space of few launches per kernel (mm: 6 or 7) would otherwise hold hundreds per chunk, and the
/// chunks in flight gigabytes.
constexpr size_t kChunkKernels = 64;

/// The kernel of a run of variants: its lowered program (shared with the ranked variants) and its
/// feature model, built once by whichever thread needs it first (from the kernel the stream
/// generated, when it hands one over, else generated with `options`).
class StreamKernel {
public:
  StreamKernel(std::shared_ptr<const ir::Program> program, codegen::Options options,
               std::shared_ptr<const codegen::Kernel> kernel)
      : program_(std::move(program)), options_(options), kernel_(std::move(kernel)) {}
  const std::shared_ptr<const ir::Program>& program() const { return program_; }
  const features::KernelModel& model() {
    std::call_once(built_, [&] {
      model_ = std::make_unique<const features::KernelModel>(
          kernel_ ? *kernel_ : codegen::generate(*program_, options_));
      kernel_.reset(); // the model holds its own copy
    });
    return *model_;
  }

private:
  std::shared_ptr<const ir::Program> program_;
  codegen::Options options_;
  std::shared_ptr<const codegen::Kernel> kernel_;
  std::once_flag built_;
  std::unique_ptr<const features::KernelModel> model_;
};

/// Consecutive variants of the stream that differ only in their launch (and index): one lowering
/// strategy with its parameters, one kernel. Held once, not per variant.
struct VariantRun {
  std::string strategy;
  std::map<std::string, int64_t> parameters;
  int64_t kernel_index = 0;
  std::shared_ptr<StreamKernel> kernel;
  /// Steps of an iterated program one launch computes (a fused launch, temporal blocking: its
  /// parameter "steps_per_launch"; 1 otherwise).
  int64_t steps_per_launch = 1;
};

/// What a variant adds to its run.
struct StreamedVariant {
  codegen::Launch launch;
  int64_t index = 0;
  const VariantRun* run = nullptr; ///< kept alive by Chunk::runs
};

/// The variant of the stream again, without its program and kernel source (as ranked rows keep
/// it).
space::Variant variant_of(const StreamedVariant& v) {
  space::Variant out;
  out.strategy = v.run->strategy;
  out.parameters = v.run->parameters;
  out.launch = v.launch;
  out.index = v.index;
  out.kernel_index = v.run->kernel_index;
  return out;
}

/// Consecutive variants of the stream, stripped of their program and source.
struct Chunk {
  int64_t first = 0; ///< position in the ranking of the first variant
  std::vector<StreamedVariant> variants;
  std::vector<std::shared_ptr<const VariantRun>> runs; ///< the runs of `variants`
  size_t kernels = 0; ///< kernels entered so far: the chunk is handed over at kChunkKernels
};

/// A ranked row and its position in the ranking order (stream or sample order).
struct Candidate {
  int64_t position = 0;
  RankedVariant row;
};

/// Best first: higher prediction, then earlier in the stream. A total order, so that the rows
/// kept do not depend on which thread saw them first.
bool better(const Candidate& a, const Candidate& b) {
  if (a.row.predicted != b.row.predicted)
    return a.row.predicted > b.row.predicted;
  return a.position < b.position;
}

/// The `keep` best candidates seen (every one when `keep` is 0), as a heap with the worst on top.
class TopK {
public:
  explicit TopK(size_t keep) : keep_(keep) {}
  /// Would a row with this prediction and position be kept?
  bool wants(double predicted, int64_t position) const {
    if (keep_ == 0 || heap_.size() < keep_)
      return true;
    const Candidate& worst = heap_.front();
    return predicted > worst.row.predicted ||
           (predicted == worst.row.predicted && position < worst.position);
  }
  /// The prediction below which no row is kept (strictly below: a tie may still be kept by its
  /// position); -infinity while there is room.
  double floor() const {
    if (keep_ == 0 || heap_.size() < keep_)
      return -std::numeric_limits<double>::infinity();
    return heap_.front().row.predicted;
  }
  void add(Candidate c) {
    heap_.push_back(std::move(c));
    if (keep_ == 0)
      return;
    std::push_heap(heap_.begin(), heap_.end(), better);
    if (heap_.size() > keep_) {
      std::pop_heap(heap_.begin(), heap_.end(), better);
      heap_.pop_back();
    }
  }
  void merge(TopK&& other) {
    for (Candidate& c : other.heap_)
      if (wants(c.row.predicted, c.position))
        add(std::move(c));
  }
  std::vector<Candidate> sorted() && {
    std::sort(heap_.begin(), heap_.end(), better);
    return std::move(heap_);
  }

private:
  size_t keep_;
  std::vector<Candidate> heap_;
};

/// Chunks from the thread that walks the stream to the threads that rank them; bounded, so that
/// the stream runs at most a few chunks ahead (the walking thread ranks a chunk itself when it
/// is full).
class ChunkQueue {
public:
  explicit ChunkQueue(size_t capacity) : capacity_(capacity) {}
  enum class Offer { taken, full, failed };
  /// Takes `chunk` (moved from) when there is room; never waits. `failed` once the ranking has
  /// failed (no use walking the stream further).
  Offer offer(Chunk& chunk) {
    std::lock_guard lock(mutex_);
    if (failed_)
      return Offer::failed;
    if (chunks_.size() >= capacity_)
      return Offer::full;
    chunks_.push_back(std::move(chunk));
    ready_.notify_one();
    return Offer::taken;
  }
  /// The next chunk; nullopt once the stream is done and every chunk taken, or on failure.
  std::optional<Chunk> pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !chunks_.empty() || done_ || failed_; });
    if (failed_ || chunks_.empty())
      return std::nullopt;
    Chunk chunk = std::move(chunks_.front());
    chunks_.pop_front();
    return chunk;
  }
  void finish() {
    std::lock_guard lock(mutex_);
    done_ = true;
    ready_.notify_all();
  }
  /// Records the failure of the chunk starting at `position`; the earliest one is rethrown, as a
  /// single thread walking the stream would have met it first.
  void fail(int64_t position, std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (!error_ || position < error_position_) {
      error_ = std::move(error);
      error_position_ = position;
    }
    failed_ = true;
    ready_.notify_all();
  }
  void rethrow_failure() const {
    if (error_)
      std::rethrow_exception(error_);
  }

private:
  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Chunk> chunks_;
  bool done_ = false, failed_ = false;
  std::exception_ptr error_;
  int64_t error_position_ = 0;
};

/// What every ranking thread shares (read only).
struct RankContext {
  const model::Model& model;
  std::vector<int> columns; ///< model column -> features::all_values() index
  target::DeviceProfile profile;
  target::DeviceProfile::Throughput throughput;
  Sizes sizes;
};

/// A ranking thread's buffers, reused from chunk to chunk.
struct RankScratch {
  explicit RankScratch(const target::DeviceProfile& profile) : analysis(profile) {}
  features::AnalysisScratch analysis;
  std::vector<double> values, rows, floors;
};

/// The modelled global-memory traffic of every variant of a chunk
/// (features::modelled_traffic_per_byte), by position in the chunk.
std::vector<float> chunk_traffic(const RankContext& ctx, const Chunk& chunk, RankScratch& scratch) {
  std::vector<float> traffic(chunk.variants.size());
  for (size_t r = 0; r < chunk.variants.size(); ++r) {
    const StreamedVariant& v = chunk.variants[r];
    const features::Features f =
        v.run->kernel->model().compute(v.launch, ctx.sizes, scratch.analysis);
    traffic[r] = static_cast<float>(features::modelled_traffic_per_byte(f, ctx.throughput));
  }
  return traffic;
}

/// Features, model row and prediction of every variant of `chunk` (with `traffic`, the chunk's
/// modelled traffic, only of those at most `traffic_bound`); the rows `top` wants join it.
void rank_chunk(const RankContext& ctx, const Chunk& chunk, TopK& top, RankScratch& scratch,
                const std::vector<float>* traffic = nullptr, double traffic_bound = 0) {
  const size_t width = ctx.columns.size();
  std::vector<size_t> kept;
  kept.reserve(chunk.variants.size());
  for (size_t r = 0; r < chunk.variants.size(); ++r)
    if (!traffic || (*traffic)[r] <= traffic_bound)
      kept.push_back(r);
  const size_t n = kept.size();
  if (n == 0)
    return;
  std::vector<double>& rows = scratch.rows;
  rows.resize(n * width);
  for (size_t k = 0; k < n; ++k) {
    const StreamedVariant& v = chunk.variants[kept[k]];
    const features::Features f =
        v.run->kernel->model().compute(v.launch, ctx.sizes, scratch.analysis);
    features::all_values_into(f, ctx.throughput, scratch.values);
    for (size_t c = 0; c < width; ++c)
      rows[k * width + c] = scratch.values[size_t(ctx.columns[c])];
  }
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> x(
      rows.data(), static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(width));
  // Rows that cannot join `top` need not be finished: a launch computing several steps is worth
  // that many launches of one, so its floor is lower by as much.
  std::vector<double>& floors = scratch.floors;
  floors.resize(n);
  const double floor = top.floor();
  for (size_t k = 0; k < n; ++k)
    floors[k] = floor / static_cast<double>(chunk.variants[kept[k]].run->steps_per_launch);
  const model::Vector predicted = ctx.model.predict_reaching(x, floors);
  for (size_t k = 0; k < n; ++k) {
    // The model predicts a launch's relative throughput (the inverse of its time): a launch
    // that computes several steps is worth that many launches of one.
    const StreamedVariant& v = chunk.variants[kept[k]];
    const double p =
        predicted[static_cast<Eigen::Index>(k)] * static_cast<double>(v.run->steps_per_launch);
    const int64_t position = chunk.first + static_cast<int64_t>(kept[k]);
    if (!top.wants(p, position))
      continue;
    RankedVariant row{variant_of(v), v.run->kernel->program(), p, {}, 0, {}};
    row.columns.assign(rows.begin() + ptrdiff_t(k * width),
                       rows.begin() + ptrdiff_t((k + 1) * width));
    top.add({position, std::move(row)});
  }
}

/// What a walk does with each chunk, on worker thread `thread` (0, 1, ...) with its scratch.
using ChunkWork = std::function<void(const Chunk&, RankScratch&, unsigned thread)>;

/// Runs `work` on every chunk from `queue` until it is empty or failed, with this thread's
/// scratch buffers.
void chunk_worker(const RankContext& ctx, ChunkQueue& queue, const ChunkWork& work,
                  unsigned thread) {
  RankScratch scratch(ctx.profile);
  while (std::optional<Chunk> chunk = queue.pop()) {
    try {
      work(*chunk, scratch, thread);
    } catch (...) {
      queue.fail(chunk->first, std::current_exception());
    }
  }
}

unsigned thread_count(unsigned asked) {
  return asked > 0 ? asked : std::max(1u, std::thread::hardware_concurrency());
}

/// The reasons of the best `options.explain_top` rows, on every thread: a boosted model's
/// explanation (TreeSHAP) takes about a millisecond a row.
void explain_best(std::vector<RankedVariant>& ranked, const model::Model& model,
                  const RankOptions& options, unsigned threads) {
  const size_t rows = std::min(ranked.size(), options.explain_top);
  std::vector<std::exception_ptr> errors(threads);
  {
    std::vector<std::jthread> workers;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        try {
          for (size_t r = t; r < rows; r += threads) {
            const std::vector<double>& x = ranked[r].columns;
            ranked[r].reasons = model.explain(
                Eigen::Map<const Eigen::RowVectorXd>(x.data(), Eigen::Index(x.size())),
                options.reasons);
          }
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
  }
  for (const std::exception_ptr& e : errors)
    if (e)
      std::rethrow_exception(e);
}

} // namespace

namespace {

/// Walks the space (or the sample) of `options` once, in chunks handed to `threads` threads that
/// run `work` on each; returns the variants walked. The order of the stream, and so every
/// chunk's first position, is the same on every walk. The walking thread is one of the
/// `threads` (number threads - 1): while the others have chunks enough waiting, it runs `work`
/// on its next chunk itself rather than wait, so that `threads` threads keep as many cores busy.
int64_t walk_chunks(const ir::Program& program, const RankOptions& options, const RankContext& ctx,
                    unsigned threads, std::string_view phase, const ChunkWork& work,
                    bool* no_tile_divides = nullptr) {
  space::SpaceOptions space_options;
  space_options.sizes = options.sizes;
  space_options.device = ctx.profile.limits();
  space_options.layouts = options.layouts;
  space_options.warp_streams = options.warp_streams;
  space_options.kernel_source =
      false; // features only: the text is generated again for what is built
  space_options.max_threads = threads; // the ranking's threads generate kernels too, not more
  space::VariantStream stream(program, space_options);
  if (no_tile_divides)
    *no_tile_divides = stream.counts().no_tile_divides;

  // The sample, when one is asked for, is drawn first; the loop then walks it like the stream.
  constexpr int64_t kProgressEvery = 4096;
  std::vector<space::Variant> sampled;
  if (options.sample > 0) {
    int64_t walked = 0;
    std::function<bool(const space::Variant&)> count_walked;
    if (options.on_progress)
      count_walked = [&](const space::Variant&) {
        if (++walked % kProgressEvery == 0)
          options.on_progress("sampling", walked);
        return true;
      };
    sampled = space::sample(stream, options.sample, options.sample_seed, count_walked);
  }

  // `threads` in all: threads - 1 that only rank (numbers 0 to threads - 2), and this one
  // (number threads - 1), which walks the stream and ranks when the others have enough waiting.
  const unsigned walker = threads - 1;  // this thread's number: as many others rank
  ChunkQueue queue(2 * size_t(walker)); // none with no other thread: this one ranks them all
  std::vector<std::jthread> workers;
  for (unsigned t = 0; t < walker; ++t)
    workers.emplace_back([&, t] { chunk_worker(ctx, queue, work, t); });

  // This thread walks the stream and hands the chunks out. A chunk holds only what differs
  // between variants (launch, index); what a run of them shares (strategy, parameters, kernel
  // with its program) is held once, and the stream hands a kernel's launches over at once.
  int64_t total = 0;
  std::optional<RankScratch> own_scratch; // for the chunks this thread ranks itself
  try {
    Chunk chunk;
    std::shared_ptr<StreamKernel> kernel;
    std::shared_ptr<const VariantRun> run;
    int64_t kernel_index = -1;
    auto more = [&] { return options.max_variants == 0 || total < options.max_variants; };
    // Starts a run (and a kernel, when it changes) for variants with these shared parts.
    auto enter_run = [&](const std::string& strategy,
                         const std::map<std::string, int64_t>& parameters,
                         const ir::Program& lowered, int64_t index_of_kernel, bool tied,
                         const std::shared_ptr<const codegen::Kernel>& generated) {
      if (index_of_kernel != kernel_index || !kernel) {
        // As the stream generates its kernels: the rows of warp streams where the device keeps
        // them.
        codegen::Options options{tied};
        options.subgroup_rows = codegen::subgroup_rows_for(space_options.device);
        kernel = std::make_shared<StreamKernel>(std::make_shared<const ir::Program>(lowered),
                                                options, generated);
        kernel_index = index_of_kernel;
        run.reset();
        ++chunk.kernels;
      }
      if (!run || run->strategy != strategy || run->parameters != parameters) {
        run = std::make_shared<const VariantRun>(VariantRun{
            strategy, parameters, index_of_kernel, kernel, space::steps_per_launch(parameters)});
        chunk.runs.push_back(run);
      }
    };
    // To a waiting thread, or ranked here when they have enough; false once the ranking failed.
    auto hand_over = [&](Chunk& full_chunk) {
      switch (queue.offer(full_chunk)) {
      case ChunkQueue::Offer::taken:
        return true;
      case ChunkQueue::Offer::failed:
        return false;
      case ChunkQueue::Offer::full:
        break;
      }
      if (!own_scratch)
        own_scratch.emplace(ctx.profile);
      try {
        work(full_chunk, *own_scratch, walker);
      } catch (...) {
        queue.fail(full_chunk.first, std::current_exception());
        return false;
      }
      return true;
    };
    // Adds a variant of the current run; false once the ranking has failed.
    auto add = [&](const codegen::Launch& launch, int64_t index) {
      if (options.keep_if && !options.keep_if(run->strategy, run->parameters, launch))
        return true;
      chunk.variants.push_back({launch, index, run.get()});
      ++total;
      if (options.on_progress && total % kProgressEvery == 0)
        options.on_progress(phase, total);
      if (chunk.variants.size() < kChunkRows && chunk.kernels < kChunkKernels)
        return true;
      if (!hand_over(chunk))
        return false;
      chunk = Chunk{total};
      chunk.variants.reserve(kChunkRows);
      // The run goes on in the next chunk: it holds the run and its kernel too.
      chunk.runs.push_back(run);
      chunk.kernels = 1;
      return true;
    };
    bool pushing = true;
    if (options.sample > 0) {
      for (const space::Variant& v : sampled) {
        if (!more() || !pushing)
          break;
        enter_run(v.strategy, v.parameters, v.program, v.kernel_index, v.launch.tied, v.kernel);
        pushing = add(v.launch, v.index);
      }
    } else {
      space::KernelVariants group;
      while (pushing && more() && stream.next_kernel(group)) {
        if (group.launches.empty())
          continue;
        enter_run(group.strategy, group.parameters, group.program, group.kernel_index,
                  group.launches.front().tied, group.kernel);
        for (size_t i = 0; i < group.launches.size() && pushing && more(); ++i)
          pushing = add(group.launches[i], group.first_index + int64_t(i));
      }
    }
    if (pushing && !chunk.variants.empty())
      hand_over(chunk);
  } catch (...) {
    queue.fail(total, std::current_exception());
  }
  queue.finish();
  workers.clear(); // joins
  queue.rethrow_failure();
  return total;
}

} // namespace

target::DeviceProfile::Throughput training_throughput(const model::Model& model,
                                                      const target::DeviceProfile& device) {
  if (std::optional<target::DeviceProfile> named = target::model_profile(model.profile))
    return named->throughput();
  return device.throughput();
}

RankResult rank(const ir::Program& program, const model::Model& routed,
                const RankOptions& options) {
  const model::Model& model = model_for(routed, program);
  const std::string profile_name = options.profile.empty() ? model.profile : options.profile;
  LIFTX_USER_CHECK(!profile_name.empty(), "no device profile: the model names none");
  LIFTX_USER_CHECK(options.prune_traffic == 0 || options.prune_traffic >= 1,
                   "the traffic bound must be at least 1 (times the least modelled traffic), got "
                   "{}",
                   options.prune_traffic);
  const target::DeviceProfile profile =
      options.device ? *options.device : runtime::named_profile(profile_name);
  const RankContext ctx{model, model.feature_indices(features::all_names()), profile,
                        training_throughput(model, profile), options.sizes};
  const unsigned threads = thread_count(options.threads);
  RankResult result;

  // Traffic pruning: a first walk models every variant's traffic, by the chunk's first position
  // (the stream, and so every chunk, is the same on both walks); the second ranks those within
  // the bound.
  std::map<int64_t, std::vector<float>> traffic;
  if (options.prune_traffic > 0) {
    std::mutex mutex;
    const int64_t walked = walk_chunks(program, options, ctx, threads, "modelling traffic",
                                       [&](const Chunk& chunk, RankScratch& scratch, unsigned) {
                                         std::vector<float> values =
                                             chunk_traffic(ctx, chunk, scratch);
                                         std::lock_guard lock(mutex);
                                         traffic[chunk.first] = std::move(values);
                                       });
    LIFTX_USER_CHECK(walked > 0, "program {} has no variant for these sizes and profile {}",
                     program.name, profile_name);
    float least = std::numeric_limits<float>::infinity();
    for (const auto& [first, chunk] : traffic)
      for (float t : chunk)
        least = std::min(least, t);
    result.least_traffic = least;
    result.traffic_bound = options.prune_traffic * least;
    for (const auto& [first, chunk] : traffic)
      result.pruned += std::count_if(chunk.begin(), chunk.end(),
                                     [&](float t) { return t > result.traffic_bound; });
  }

  std::vector<TopK> tops(threads, TopK(options.keep)); // one per thread
  const int64_t total = walk_chunks(
      program, options, ctx, threads, "ranking",
      [&](const Chunk& chunk, RankScratch& scratch, unsigned thread) {
        const std::vector<float>* modelled = traffic.empty() ? nullptr : &traffic.at(chunk.first);
        rank_chunk(ctx, chunk, tops[thread], scratch, modelled, result.traffic_bound);
      },
      &result.no_tile_divides);
  LIFTX_USER_CHECK(total > 0, "program {} has no variant for these sizes and profile {}",
                   program.name, profile_name);

  TopK all(options.keep);
  for (TopK& top : tops)
    all.merge(std::move(top));
  result.variants = total;
  for (Candidate& c : std::move(all).sorted())
    result.ranked.push_back(std::move(c.row));
  for (size_t r = 0; r < result.ranked.size(); ++r)
    result.ranked[r].rank = static_cast<int>(r + 1);
  explain_best(result.ranked, model, options, threads);
  return result;
}

std::string program_kind_name(const ir::Program& program) {
  return std::string(rewrite::kind_name(rewrite::program_kind(program)));
}

const model::Model& model_for(const model::Model& model, const ir::Program& program) {
  return model.for_kind(program_kind_name(program));
}

std::string route_of(const model::Model& model, const ir::Program& program) {
  std::string kind = program_kind_name(program);
  return model.routes().count(kind) ? kind : std::string();
}

nlohmann::json launch_json(const codegen::Launch& launch) {
  std::vector<int64_t> global, local;
  for (int d = 0; d < launch.dims; ++d) {
    global.push_back(launch.global[size_t(d)]);
    if (launch.local_given())
      local.push_back(launch.local[size_t(d)]);
  }
  return {{"dims", launch.dims}, {"global", global}, {"local", local}, {"tied", launch.tied}};
}

void refuse_lowered(const ir::Program& program, const std::string& file,
                    const std::string& command) {
  try {
    codegen::generate(program);
  } catch (const std::exception&) {
    return; // high-level primitives: the generator needs them lowered first
  }
  throw UserError(fmt::format("{}: '{}' is already lowered (a variant, not a high-level stencil): "
                              "{} works on the variants of high-level stencils; measure this one "
                              "with `liftx run {}`",
                              file, program.name, command, file));
}

std::string describe_parameters(const space::Variant& v) {
  std::string out = v.strategy;
  for (const auto& [name, value] : v.parameters)
    out += fmt::format(" {}={}", name, value);
  return out;
}

std::string describe_reasons(const std::vector<model::Explanation>& reasons) {
  std::string out;
  for (const model::Explanation& e : reasons)
    out += fmt::format("{}{} {:.3g}", out.empty() ? "" : ", ", e.feature, e.value);
  return out;
}

} // namespace liftx::explore
