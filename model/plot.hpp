#pragma once
/// Small hand-written SVG charts for the evaluation (no plotting library).
///
/// Axes choose their scale from the data: a value axis whose positive values span more than 1.5
/// decades (largest / smallest > 10^1.5) is logarithmic, with labelled ticks at the powers of ten
/// and minor gridlines at 2..9 times them, and its label says "(log scale)". Text widths are
/// estimated from the character count (text_width) so that margins fit the longest label.
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

/// One axis of a chart: its range, scale and ticks.
struct Axis {
  double lo = 0;
  double hi = 1;
  bool log = false;
  std::vector<double> ticks; ///< labelled, with a gridline
  std::vector<double> minor; ///< gridline only
  /// Where `value` sits between lo (0) and hi (1); values outside are not clamped.
  double fraction(double value) const;
  /// `name`, with " (log scale)" appended for a log axis.
  std::string label(const std::string& name) const;
};

/// The decades over which a log axis is chosen.
inline constexpr double kLogDecades = 1.5;

/// Whether `values` call for a log axis: all of them positive (zeros and negatives make it
/// linear) and the largest more than 10^decades times the smallest.
bool spans_decades(const std::vector<double>& values, double decades = kLogDecades);

/// A linear axis over [lo, hi] with about five ticks at multiples of a step of 1, 2, 2.5 or 5 times
/// a power of ten; `round_out` widens the range to the ticks around it (otherwise lo and hi stay).
Axis linear_axis(double lo, double hi, bool round_out = true);
/// A log axis over [lo, hi] (both > 0) with ticks at the powers of ten and minor gridlines at 2..9
/// times them; `round_out` widens the range to the powers of ten around it.
Axis log_axis(double lo, double hi, bool round_out = true);

/// Estimated width in pixels of `text` in a sans-serif font of `font_size` pixels.
double text_width(const std::string& text, double font_size);

/// The tick label of `value` (e.g. 1000, 0.25, 1e-05).
std::string tick_label(double value);

/// A line chart of series over runs 1..n. The x axis is logarithmic for n > 50 (ticks 1, 10,
/// 100, ...), linear otherwise; the y axis is fitted to the plotted values (from a round value
/// at or below the smallest, to at least 1).
std::string line_chart_svg(const std::string& title, const std::string& x_label,
                           const std::string& y_label, const std::vector<Series>& series);

/// A horizontal bar chart, one bar per (label, value), on a linear axis from 0 to a round value at
/// or above the largest, with ticks under the bars.
std::string bar_chart_svg(const std::string& title, const std::string& value_label,
                          const std::vector<std::pair<std::string, double>>& bars);

/// Grouped bars: per category, one bar per series (e.g. runs to 90% for model and random). The
/// value axis is logarithmic when the values span more than 1.5 decades (spans_decades); category
/// labels are slanted and the margins fit the longest of them.
std::string grouped_bar_chart_svg(const std::string& title, const std::string& value_label,
                                  const std::vector<std::string>& categories,
                                  const std::vector<Series>& series);

/// Points of one colour in a scatter chart.
struct PointSeries {
  std::string label;
  std::string colour;                            ///< CSS colour
  std::vector<std::pair<double, double>> points; ///< (x, y)
};

/// A scatter chart: one <circle> per point, the diagonal y = x, the least-squares line (fitted on
/// the axes' scales), a legend, and Pearson's r and Spearman's rho over all points (with their
/// count) printed on the chart; `notes` are further lines printed under them. Both axes share one
/// range and scale (log when the positive values span more than 1.5 decades).
std::string scatter_chart_svg(const std::string& title, const std::string& x_label,
                              const std::string& y_label, const std::vector<PointSeries>& series,
                              const std::vector<std::string>& notes = {});

/// Distinct colours for series, cycling after ten.
const std::string& palette(size_t index);

} // namespace liftx::model
