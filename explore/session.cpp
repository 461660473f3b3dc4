#include "explore/session.hpp"

#include "codegen/launch.hpp"
#include "exec/program_binding.hpp"
#include "explore/collect.hpp"
#include "space/default_lowering.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <utility>

namespace liftx::explore {

Session::Session(const ir::Program& program, const target::DeviceProfile& device,
                 SessionOptions options)
    : program_(program), device_(device), options_(std::move(options)),
      profile_name_(profile_name_for(device)) {
  prepare_default();
  if (as_written()) {
    notes_.push_back("the program is already lowered: measured as written");
  } else {
    found_ = find_model(options_.model, device_, options_.model_folders);
    notes_.insert(notes_.end(), found_.notes.begin(), found_.notes.end());
    model_ = model::Model::load(found_.path);
  }
  const int64_t budget = options_.explore.budget;
  rank_options_.sizes = options_.sizes;
  rank_options_.profile = profile_name_;
  rank_options_.device = device_;
  rank_options_.max_variants = options_.max_variants;
  rank_options_.sample = options_.sample >= 0 ? options_.sample : defaults_for(device_).sample;
  rank_options_.sample_seed = options_.sample_seed;
  rank_options_.layouts = options_.layouts;
  rank_options_.warp_streams = options_.warp_streams;
  // The exhaustive strategy runs every variant ranked; the others at most a few budgets' worth.
  rank_options_.keep = options_.explore.strategy == Strategy::exhaustive
                           ? 0
                           : std::max(rank_options_.keep, size_t(budget) * 4);
  rank_options_.explain_top = options_.explain_top;
  rank_options_.on_progress = options_.on_rank_progress;
}

void Session::prepare_default() {
  try {
    auto [lowered, strategy] = space::default_lowering(program_, options_.sizes);
    default_.strategy = strategy;
    try {
      const codegen::PreparedLaunch prepared =
          codegen::prepare_launch(lowered, options_.sizes, {}, device_.limits());
      RankedVariant c; // rank 0: not ranked
      c.variant.strategy = strategy;
      c.variant.launch = prepared.launch;
      c.program = std::make_shared<const ir::Program>(std::move(lowered));
      default_.candidate = std::move(c);
    } catch (const UserError& e) {
      default_.why_not = e.message();
      default_error_ = std::current_exception();
    }
  } catch (const UserError& e) {
    default_.why_not = e.message();
    if (options_.default_first)
      notes_.push_back(
          fmt::format("the default lowering does not apply ({}): only ranked variants were tried",
                      e.message()));
  }
}

void Session::rank() {
  const bool default_first = options_.default_first || as_written();
  candidates_.clear();
  if (model_) {
    try {
      ranking_ = explore::rank(program_, *model_, rank_options_);
      if (ranking_.no_tile_divides)
        notes_.push_back(fmt::format(
            "no tile divides the output at {}: the space holds only untiled kernels (no "
            "windows, work-group tiles or fused steps), since liftx neither shifts nor guards a "
            "partial last tile yet; lengths with a factor 2^k admit tiles of up to 2^k, so a grid "
            "padded to a multiple of 32 gets every tile shape",
            exec::format_sizes(options_.sizes)));
    } catch (const UserError& e) {
      // An application still gets the untuned kernel when the space has nothing to rank.
      if (!default_first || default_.strategy.empty())
        throw;
      notes_.push_back(
          fmt::format("no variant ranked ({}): the default lowering only", e.message()));
    }
  }
  if (default_first && !default_.strategy.empty()) {
    if (default_.candidate)
      candidates_.push_back(*default_.candidate);
    else if (ranking_.ranked.empty())
      std::rethrow_exception(default_error_);
    else
      notes_.push_back(
          fmt::format("the default lowering does not fit the device ({})", default_.why_not));
  }
  first_ranked_ = candidates_.size();
  candidates_.insert(candidates_.end(), ranking_.ranked.begin(), ranking_.ranked.end());
}

ExploreResult Session::measure(const MeasureBatch& measure, const OnAttempt& on_attempt) const {
  ExploreOptions options = options_.explore;
  // The default lowering does not count against the budget.
  options.budget = static_cast<int64_t>(first_ranked_) + options_.explore.budget;
  if (options_.until_success)
    options.until_success_limit = static_cast<int64_t>(
        first_ranked_ +
        std::min(ranking_.ranked.size(), static_cast<size_t>(options_.explore.budget) * 4));
  return explore_batches(candidates_, options, measure, on_attempt);
}

} // namespace liftx::explore
