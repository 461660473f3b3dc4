#pragma once
/// `liftx adapt --plot`: the held-out shapes of an evaluation as an SVG chart (model/plot.hpp).
#include "adapt/session.hpp"

#include <string>

namespace liftx::adapt {

/// Writes the held-out shapes as an SVG chart of the pick, the single member and the variant
/// tuned at the typical shape (`typical`, as shape_text writes it) to `path`; UserError when it
/// cannot be written.
void write_held_out_plot(const std::string& path, const std::string& title,
                         const std::string& typical, const HeldOutSummary& summary);

} // namespace liftx::adapt
