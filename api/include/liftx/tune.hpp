#pragma once
/// In-application tuning: find the fastest OpenCL variant of a program for this device and
/// these sizes, remember it, and reuse it in later runs.
///
///   liftx::TuneResult t = liftx::tune(ctx, program, sizes, {.budget = 5}, {grid});
///   t.kernel.run({grid}, out);                           // the winner
///
/// tune() looks the winner up in the tuning database first, keyed by the program's identity
/// (program_identity), the sizes, the device key (vendor, name, driver version) and the liftx
/// version; a hit returns the stored winner without running anything. Otherwise it ranks the
/// variant space with the shipped cost model for the device kind (falling back to the CPU model,
/// and saying so in `notes`, when there is none for the kind), then builds, checks against the
/// reference interpreter (random inputs) and times the best-predicted variants, `budget` of
/// them, on the application's inputs when given, and stores the fastest. Every measurement is
/// recorded in the same database (a liftx performance database, `liftx db --db FILE` reads it).
///
/// Variants run in the application's process: a driver that crashes on a kernel takes the
/// application with it (`liftx explore` isolates each variant in a child process instead).
#include "liftx/runtime.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace liftx {

/// The measuring defaults, the command line's (`--warmup`, `--repeat`).
inline constexpr int kDefaultTuneWarmup = 3;
inline constexpr int kDefaultTuneRepeat = 10;

struct Trial;

/// Where tune() is, for an application's progress display.
struct TuneProgress {
  /// "ranking": the variant space goes through the cost model (`done` variants so far, `total`
  /// 0: not known in advance); "measuring": a variant was just checked and timed (`done` of at
  /// most `total` planned; more only while none has succeeded); "done".
  std::string phase;
  int64_t done = 0;
  int64_t total = 0;
  const Trial* trial = nullptr; ///< measuring: the variant just tried
  double seconds = 0;           ///< since tune() was called
};

struct TuneOptions {
  int budget = 5; ///< variants to check and time, best predicted first (>= 1)
  /// Variants of the space to rank (the stream's first ones: the program as written under every
  /// lowering strategy and launch, then its rewritten forms); 0 = the whole space (the default,
  /// as `liftx explore`: hundreds of thousands of variants, seconds to a minute, streamed);
  /// a bound trades the variants found late in the stream for a shorter ranking.
  int64_t max_variants = 0;
  /// Untimed runs per variant, for at least 20 ms when > 0 (as the command line's --warmup).
  int warmup = kDefaultTuneWarmup;
  int repeat = kDefaultTuneRepeat; ///< timed runs per variant, the median counts (as --repeat)
  /// A model file (`liftx train`); empty = the shipped model for the device kind.
  std::string model;
  /// Also check and time the default lowering (what Context::compile gives, with the work-group
  /// size left to the driver), so the winner is never slower than it as measured. It does not
  /// count against the budget.
  bool include_default = true;
  bool retune = false; ///< ignore (and replace) a stored winner
  /// Also try the program's grids of one type stored together (AoS and AoSoA(32), as `explore
  /// --layouts`); the winner's layout is then the kernel's business (Kernel::run packs it).
  bool layouts = false;
  uint64_t seed = 1; ///< random inputs of the checks
  double tolerance = 1e-4;
  /// Called on the calling thread as tuning goes (every few thousand variants while ranking,
  /// after each variant measured, and once at the end); not called when a stored winner is
  /// reused. Empty: silent. It runs while tune() holds the Context, so it must not use the
  /// Context itself (it is for a progress display).
  std::function<void(const TuneProgress&)> on_progress;
};

/// One variant tried.
struct Trial {
  int rank = 0;         ///< in the model's order, 1 = predicted best; 0 = the default lowering
  double predicted = 0; ///< predicted normalised throughput
  std::string variant;  ///< strategy, parameters and launch
  std::string status;   ///< "ok", "rejected" (does not fit the device), "build_error", ...
  std::optional<double> median_ms;
  std::string message; ///< why it failed
};

struct TuneResult {
  Kernel kernel;                  ///< the winner, compiled and ready to run
  bool reused = false;            ///< taken from the database: nothing was ranked or run
  std::string key;                ///< the database key
  std::string variant;            ///< the winner's strategy, parameters and launch
  double median_ms = 0;           ///< the winner's median time when it was tuned
  std::string timed_on;           ///< "application inputs" or "random inputs"
  std::string model;              ///< the model file used (empty when reused)
  int64_t ranked = 0;             ///< variants ranked
  std::vector<Trial> trials;      ///< in the order they ran (empty when reused)
  std::string database;           ///< the tuning database file
  double seconds = 0;             ///< wall time of this call
  std::vector<std::string> notes; ///< e.g. "no model for gpu devices: used the cpu model"
  /// A few lines for people: reused or tuned, the winner, its time, trials, notes.
  std::string report() const;
};

/// Tunes (or reuses the stored winner for) `program` at `sizes` on `context`'s device.
/// `inputs`: the application's data to time the variants on (one per parameter, as for
/// Kernel::run), or empty to time them on random data. UserError for bad sizes, inputs or
/// options, or when no model is found; KernelError when every variant tried fails.
TuneResult tune(Context& context, const Program& program, const Sizes& sizes,
                const TuneOptions& options = {}, const std::vector<Input>& inputs = {});

} // namespace liftx
