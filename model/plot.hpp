#pragma once
/// Small hand-written SVG charts for the evaluation (no plotting library).
#include <string>
#include <utility>
#include <vector>

namespace liftx::model {

struct Series {
  std::string label;
  std::vector<double> y; ///< at x = 1, 2, ...
  std::string colour;    ///< CSS colour
  bool dashed = false;
};

/// A line chart of series over runs 1..n; y axis from 0 to max(1, the largest value).
std::string line_chart_svg(const std::string& title, const std::string& x_label,
                           const std::string& y_label, const std::vector<Series>& series);

/// A horizontal bar chart, one bar per (label, value), values in [0, 1] (or scaled to the max).
std::string bar_chart_svg(const std::string& title, const std::string& value_label,
                          const std::vector<std::pair<std::string, double>>& bars);

/// Grouped bars: per category, one bar per series (e.g. runs to 90% for model and random).
std::string grouped_bar_chart_svg(const std::string& title, const std::string& value_label,
                                  const std::vector<std::string>& categories,
                                  const std::vector<Series>& series);

} // namespace liftx::model
