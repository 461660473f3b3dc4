#pragma once
/// Model-guided exploration: rank the variants, then measure them in an order chosen by a
/// strategy until a budget of runs, and report the best. Measuring is a callback, so that the
/// command line can run each variant isolated in a worker child (and tests can fake it).
#include "exec/run.hpp"
#include "explore/rank.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace liftx::explore {

enum class Strategy { model, random, hillclimb, exhaustive };
/// "model", "random", "hillclimb", "exhaustive"; UserError otherwise.
Strategy parse_strategy(const std::string& text);
std::string to_string(Strategy strategy);

struct ExploreOptions {
  Strategy strategy = Strategy::model;
  int64_t budget = 10; ///< runs; exhaustive ignores it (every variant, stream order)
  uint64_t seed = 1;   ///< of the random order
};

struct Attempt {
  size_t ranked_index = 0; ///< into the ranked list
  exec::RunReport report;
};

struct ExploreResult {
  std::vector<Attempt> attempts; ///< in the order they ran
  std::optional<size_t> best;    ///< index into attempts of the fastest correct one
  /// Spearman of predicted vs measured throughput over the successful attempts (nullopt with
  /// fewer than 2, or when their predictions are all equal).
  std::optional<double> model_spearman;
};

/// Variants that share `ranked[i]`'s strategy and differ from it in exactly one parameter, one
/// launch dimension (global or local) or the tied flag.
std::vector<size_t> neighbours(const std::vector<RankedVariant>& ranked, size_t i);

/// Measures one variant: build, run, verify, time.
using Measure = std::function<exec::RunReport(const RankedVariant&)>;
/// Called after each attempt (progress output).
using OnAttempt = std::function<void(const Attempt&, int64_t done, int64_t planned)>;

ExploreResult explore(const std::vector<RankedVariant>& ranked, const ExploreOptions& options,
                      const Measure& measure, const OnAttempt& on_attempt = {});

/// The shipped model for a device kind ("cpu" -> cpu-model.json): `explicit_path` if given, else
/// $LIFTX_MODEL_DIR, <source tree>/model/data, then ../share/liftx/model next to the executable.
/// UserError listing the places looked at when none has it.
std::filesystem::path find_model(const std::string& explicit_path, const std::string& device_kind);

} // namespace liftx::explore
