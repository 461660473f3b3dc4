#pragma once
/// Input-adaptive variant selection (after G-ADAPT, seeds 000/001): one tuned program that picks
/// a variant per input shape. A handful of lowered variants (a portfolio) is measured on a
/// designed set of training shapes; a selector maps a new shape to the portfolio member measured
/// fastest at the nearest training shape (log2 of each size: a shape twice as wide is as far as
/// one twice as tall) among the members that apply at the new shape.
///
/// A portfolio member is a lowered program and a work-group, with the threads tied to the mapped
/// lengths: its global size follows the shape, so one member runs at every shape its tiles and
/// work-group divide. Or a free-thread member: a fixed grid of work-items whose loops stride
/// over the shape, which runs as measured at every shape its tiles divide (odd ones too).
#include "ir/expr.hpp"
#include "space/space.hpp"
#include "support/device_limits.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace liftx::adapt {

struct AdaptiveCandidate {
  std::string printed; ///< the lowered program as a .lift module (its main definition)
  std::string strategy;
  std::map<std::string, int64_t> parameters;
  std::vector<int64_t> local; ///< the work-group, one size per launch dimension
  /// Empty: the threads are tied to the mapped lengths (the global size follows the shape).
  /// Else the fixed grid of a free-thread launch, one size per launch dimension.
  std::vector<int64_t> global;
  bool fixed_grid() const { return !global.empty(); }
  /// "window tile_x=16 tile_y=4 vector=4, local 4x8" (", global 1024x512" for a fixed grid)
  std::string describe() const;
  bool operator==(const AdaptiveCandidate&) const = default;
};

/// A variant as a candidate (its lowered program printed with `module`'s user functions): a tied
/// launch's work-group, or a free-thread launch's grid and work-group.
AdaptiveCandidate candidate_of(const space::Variant& variant, const ir::Module& module);

/// Whether a variant's lowering has no parameter that must divide the sizes (tile, split,
/// chunk, vector width): with its work-group fitted, it runs at any shape.
bool is_shape_free(const std::map<std::string, int64_t>& parameters);

/// The candidate as a variant at `sizes` (the program parsed from `printed`, the launch for these
/// sizes with the candidate's work-group, or its fixed grid), or nullopt when it does not apply
/// there: a tile or split that does not divide a size, a work-group that does not divide the
/// global size or does not fit the device.
std::optional<space::Variant> candidate_at(const AdaptiveCandidate& candidate, const Sizes& sizes,
                                           const DeviceLimits& device);

/// How candidate_at_fitted launches a candidate at a shape.
enum class Fit {
  as_measured, ///< its work-group divides the global size: the launch that was measured
  shrunk,      ///< each dimension of the work-group shrunk to a divisor of the global size
  rounded,     ///< its work-group kept, the global size rounded up to a multiple of it: the
               ///< free-thread kernel, whose loops leave the extra work-items idle
};

/// candidate_at, and where the candidate's work-group does not divide the global size at `sizes`
/// (or is too large there), a launch nobody measured, for shapes where no member applies as
/// measured: the same kernel with each dimension of the work-group shrunk to the largest divisor
/// of the global size within it while that keeps at least half of its work-items, else the
/// work-group kept and the global size rounded up (at 2047x2049 the divisors are 3x23: a
/// work-group that small starves a GPU). `fit` says which. A fixed grid is never fitted: it runs
/// as measured or not at all.
std::optional<space::Variant> candidate_at_fitted(const AdaptiveCandidate& candidate,
                                                  const Sizes& sizes, const DeviceLimits& device,
                                                  Fit* fit);

/// Measured times of candidates at shapes: ms[s][c], nullopt where the candidate does not apply
/// or its run failed.
struct AdaptiveTable {
  std::vector<Sizes> shapes;
  std::vector<AdaptiveCandidate> candidates;
  std::vector<std::vector<std::optional<double>>> ms;

  /// The fastest time at shape s over the candidates (nullopt when none ran).
  std::optional<double> best_ms(size_t s) const;
  /// best_ms(s) / ms[s][c]: 1 for the fastest, 0 where c does not run.
  double fraction(size_t s, size_t c) const;
};

/// A portfolio of at most `k` candidates: the subset whose worst shape reaches the highest
/// fraction of the per-shape best (a shape's fraction is its best member's), then the highest
/// mean, then the fewest members. Every subset is tried when there are at most 200,000 of them
/// (24 candidates, k = 4: 12,950); beyond, a greedy search adds the member that raises the worst
/// (then the mean) most. Members that are nowhere the portfolio's best are dropped. Positions in
/// the table, the member with the highest mean fraction first.
std::vector<size_t> choose_portfolio(const AdaptiveTable& table, size_t k);

/// Shapes near `shape` whose sizes are divisible by k but not by 2k, for k = 2, 4, 8, 16 (each
/// size raised to the next such value: 64 -> 66, 68, 72, 80): what a held-out shape that is no
/// power of two looks like to a member's tiles and vectors. The portfolio is chosen to cover
/// them too, so that a shape such as 200x40 (8 x 25 by 8 x 5) finds a fast member that divides
/// it instead of the shape-free fallback.
std::vector<Sizes> coverage_probes(const Sizes& shape);

/// `table` with one more row per coverage probe of each training shape: the training shape's
/// times of the candidates that apply at the probe (candidate_at_fitted with `device`: as
/// AdaptiveArtifact::pick runs them), none for the others; probes where none applies are left
/// out. The estimate is that a member runs a nearby shape about as fast, relative to the
/// others, as the training shape it was measured at; choose_portfolio on it weighs covering
/// the probes like the training shapes.
AdaptiveTable with_coverage_probes(const AdaptiveTable& table, const DeviceLimits& device);

struct AdaptiveSelector {
  std::vector<std::string> size_names; ///< the program's size variables, sorted
  std::vector<Sizes> shapes;           ///< the training shapes
  /// Per training shape, the portfolio positions that ran there, fastest first.
  std::vector<std::vector<size_t>> order;

  /// The portfolio position for `sizes`: the fastest member at the nearest training shape that
  /// `applies` at `sizes`, else the next nearest shape's; nullopt when no member applies.
  std::optional<size_t> choose(const Sizes& sizes,
                               const std::function<bool(size_t)>& applies) const;
};

/// The selector of a portfolio (positions into table.candidates) from its measurements.
AdaptiveSelector fit_selector(const AdaptiveTable& table, const std::vector<size_t>& portfolio);

/// What `liftx adapt` stores (a JSON file) and liftx::AdaptiveProgram reads: the program, the
/// device it was measured on, the portfolio, its selector and the training measurements.
struct AdaptiveArtifact {
  std::string program_name;
  std::string program_source; ///< the high-level program as a .lift module
  std::string device;         ///< device name
  std::string profile;        ///< device profile key
  std::vector<AdaptiveCandidate> portfolio;
  AdaptiveSelector selector;
  AdaptiveTable training; ///< every candidate measured, not only the portfolio
  /// A member with no tile, split, chunk or vector (it applies at any shape: its work-group
  /// fitted, or its fixed grid as measured): the last resort where no other member applies. Its
  /// position in the portfolio (it may also be an ordinary member); nullopt when the space had
  /// none.
  std::optional<size_t> fallback;

  struct Pick {
    size_t member = 0;
    std::vector<int64_t> local;  ///< the work-group to run it with
    std::vector<int64_t> global; ///< a fixed grid to run it with; empty: the launch rule's
    bool as_measured = true;     ///< false: fitted to the shape (a launch nobody measured)
    bool rounded = false;        ///< the global size rounded up to the work-group (Fit::rounded)
  };
  /// The member for `sizes` on a device with `limits`: in the selector's order, the first
  /// member that runs there, with its measured work-group where that divides the global size
  /// and fits the device, else with it fitted (candidate_at_fitted); then the fallback member
  /// likewise. nullopt: none runs.
  std::optional<Pick> pick(const Sizes& sizes, const DeviceLimits& limits) const;
};

nlohmann::json to_json(const AdaptiveArtifact& artifact);
/// UserError naming `origin` when the JSON is not an adaptive artifact.
AdaptiveArtifact adaptive_artifact_from(const nlohmann::json& json, const std::string& origin);

/// How close a variant comes to the best, from measurements taken in rounds (each round measures
/// every variant compared once, one after another; nullopt where a run failed): the median over
/// the rounds in which both ran of best / variant, at most 1. A slow spell of the device that
/// lasts a round slows both alike and cancels, where a ratio of each one's own median would keep
/// it. nullopt when no round has both.
std::optional<double> paired_fraction(const std::vector<std::optional<double>>& best_ms,
                                      const std::vector<std::optional<double>>& variant_ms);

/// "512x1024" (sizes in the order of their names) and its inverse for `names`: "512x1024" or
/// "M=512,N=1024"; UserError naming `text` otherwise.
std::string shape_text(const Sizes& sizes);
Sizes parse_shape(const std::string& text, const std::vector<std::string>& names);

} // namespace liftx::adapt
