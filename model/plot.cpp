#include "model/plot.hpp"

#include "model/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace liftx::model {

namespace {

constexpr double kEps = 1e-9;

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

constexpr int kTitleSize = 14;
constexpr int kFontSize = 12;

std::string header(int width, int height, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\" font-size=\"{4}\">\n<rect width=\"{0}\" height=\"{1}\" "
      "fill=\"white\"/>\n<text x=\"{2}\" y=\"20\" text-anchor=\"middle\" font-size=\"{5}\">{3}"
      "</text>\n",
      width, height, width / 2, escape(title), kFontSize, kTitleSize);
}

/// The width a chart needs for its title.
int title_width(const std::string& title) {
  return static_cast<int>(std::ceil(text_width(title, kTitleSize))) + 20;
}

/// A round step of about `raw`: 1, 2, 2.5 or 5 times a power of ten.
double nice_step(double raw) {
  if (!(raw > 0) || !std::isfinite(raw))
    return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= raw * (1 - kEps))
      return m * p;
  return 10 * p;
}

double widest(const std::vector<std::string>& texts, double font_size) {
  double w = 0;
  for (const std::string& t : texts)
    w = std::max(w, text_width(t, font_size));
  return w;
}

/// Horizontal gridlines and tick labels of a y axis over the plot area.
std::string y_grid(const Axis& axis, double left, double top, double pw, double ph) {
  std::string svg;
  auto py = [&](double v) { return top + ph - axis.fraction(v) * ph; };
  for (double v : axis.minor)
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"#f0f0f0\"/>\n",
                       left, left + pw, py(v));
  for (double v : axis.ticks)
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"#d0d0d0\"/><text x=\"{3:.1f}\" y=\"{4:.1f}\" "
                       "text-anchor=\"end\">{5}</text>\n",
                       left, left + pw, py(v), left - 5, py(v) + 4, tick_label(v));
  return svg;
}

/// Vertical gridlines and tick labels of an x axis under the plot area.
std::string x_grid(const Axis& axis, double left, double top, double pw, double ph) {
  std::string svg;
  auto px = [&](double v) { return left + axis.fraction(v) * pw; };
  for (double v : axis.minor)
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"#f0f0f0\"/>\n",
                       px(v), top, top + ph);
  for (double v : axis.ticks)
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"#d0d0d0\"/><text x=\"{0:.1f}\" y=\"{3:.1f}\" "
                       "text-anchor=\"middle\">{4}</text>\n",
                       px(v), top, top + ph, top + ph + 15, tick_label(v));
  return svg;
}

/// The plot area of a two-axis chart: both axes' gridlines and tick labels, and its border.
std::string plot_area(const Axis& x_axis, const Axis& y_axis, double left, double top, double pw,
                      double ph) {
  return x_grid(x_axis, left, top, pw, ph) + y_grid(y_axis, left, top, pw, ph) +
         fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                     "fill=\"none\" stroke=\"#444\"/>\n",
                     left, top, pw, ph);
}

std::string widest_tick(const Axis& axis) {
  std::string out;
  for (double v : axis.ticks)
    if (text_width(tick_label(v), kFontSize) > text_width(out, kFontSize))
      out = tick_label(v);
  return out;
}

/// The y axis's title, rotated, centred on the plot's height, just left of the tick labels.
std::string y_title(const std::string& text, const Axis& axis, double left, double top, double ph) {
  const double x = std::max(15.0, left - text_width(widest_tick(axis), kFontSize) - 15);
  return fmt::format("<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 {0:.1f} {1:.1f})\">{2}</text>\n",
                     x, top + ph / 2, escape(text));
}

/// The left margin for a y axis: its rotated title, then its tick labels.
double y_margin(const Axis& axis) {
  return std::ceil(std::max(35.0, 30 + text_width(widest_tick(axis), kFontSize)));
}

std::vector<double> finite(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (std::isfinite(v))
      out.push_back(v);
  return out;
}

} // namespace

double Axis::fraction(double value) const {
  if (log) {
    const double a = std::log10(lo), b = std::log10(hi);
    return b > a ? (std::log10(value) - a) / (b - a) : 0.5;
  }
  return hi > lo ? (value - lo) / (hi - lo) : 0.5;
}

std::string Axis::label(const std::string& name) const {
  return log ? name + " (log scale)" : name;
}

bool spans_decades(const std::vector<double>& values, double decades) {
  if (values.empty())
    return false;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v))
      return false;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return hi / lo > std::pow(10.0, decades);
}

Axis linear_axis(double lo, double hi, bool round_out) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    lo = 0;
    hi = 1;
  }
  if (hi < lo)
    std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= round_out ? pad : 0;
    hi += pad;
  }
  const double step = nice_step((hi - lo) / 5);
  Axis axis;
  axis.lo = round_out ? std::floor(lo / step + kEps) * step : lo;
  axis.hi = round_out ? std::ceil(hi / step - kEps) * step : hi;
  const auto k0 = static_cast<long long>(std::ceil(axis.lo / step - kEps));
  const auto k1 = static_cast<long long>(std::floor(axis.hi / step + kEps));
  for (long long k = k0; k <= k1; ++k) {
    const double v = double(k) * step;
    axis.ticks.push_back(std::abs(v) < step * kEps ? 0.0 : v);
  }
  return axis;
}

Axis log_axis(double lo, double hi, bool round_out) {
  if (!(lo > 0) || !std::isfinite(lo))
    lo = 1;
  if (!(hi > lo) || !std::isfinite(hi))
    hi = lo * 10;
  const int d0 = static_cast<int>(std::floor(std::log10(lo) + kEps));
  int d1 = static_cast<int>(std::ceil(std::log10(hi) - kEps));
  if (d1 <= d0)
    d1 = d0 + 1;
  Axis axis;
  axis.log = true;
  axis.lo = round_out ? std::pow(10.0, d0) : lo;
  axis.hi = round_out ? std::pow(10.0, d1) : hi;
  auto inside = [&](double v) { return v >= axis.lo * (1 - kEps) && v <= axis.hi * (1 + kEps); };
  for (int d = d0 - 1; d <= d1; ++d) {
    const double p = std::pow(10.0, d);
    if (inside(p))
      axis.ticks.push_back(p);
    for (int m = 2; m <= 9; ++m)
      if (inside(m * p))
        axis.minor.push_back(m * p);
  }
  return axis;
}

double text_width(const std::string& text, double font_size) {
  double em = 0;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) == 0x80) // a UTF-8 continuation byte: counted with its first byte
      continue;
    if (c < 0x80 && std::strchr("iljftrI.,:;|!'() ", c) != nullptr)
      em += 0.4;
    else if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%' || c == '@')
      em += 0.95;
    else if (c >= 'A' && c <= 'Z')
      em += 0.75;
    else
      em += 0.64;
  }
  return em * font_size;
}

std::string tick_label(double value) {
  if (std::abs(value) >= 1 && std::abs(value) < 1e6 && value == std::round(value))
    return fmt::format("{:.0f}", value);
  return fmt::format("{:g}", value);
}

const std::string& palette(size_t index) {
  static const std::vector<std::string> colours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                   "#9467bd", "#8c564b", "#e377c2", "#1a1a6e",
                                                   "#bcbd22", "#17becf"};
  return colours[index % colours.size()];
}

std::string line_chart_svg(const std::string& title, const std::string& x_label,
                           const std::string& y_label, const std::vector<Series>& series) {
  size_t n = 1;
  std::vector<double> ys;
  std::vector<std::string> legend;
  for (const Series& s : series) {
    n = std::max(n, s.y.size());
    for (double v : finite(s.y))
      ys.push_back(v);
    legend.push_back(s.label);
  }
  // x: runs 1..n, log when there are many runs (the interesting part is the first few).
  Axis x_axis;
  if (n > 50) {
    x_axis = log_axis(1, double(n), false);
    if (double(n) / x_axis.ticks.back() >= 2)
      x_axis.ticks.push_back(double(n));
  } else {
    x_axis = linear_axis(1, double(std::max<size_t>(n, 2)), false);
    if (x_axis.ticks.empty() || x_axis.ticks.front() > 1)
      x_axis.ticks.insert(x_axis.ticks.begin(), 1);
    // The rounded ticks may sit too close to 1 (e.g. 1 and 2 on a 1..40 axis).
    if (x_axis.ticks.size() > 2 && x_axis.ticks[1] - 1 < (x_axis.hi - x_axis.lo) / 20)
      x_axis.ticks.erase(x_axis.ticks.begin() + 1);
  }
  // y: fitted to the values, up to at least 1 (the best).
  double y_lo = 0, y_hi = 1;
  if (!ys.empty()) {
    y_lo = *std::min_element(ys.begin(), ys.end());
    y_hi = std::max(1.0, *std::max_element(ys.begin(), ys.end()));
  }
  const Axis y_axis = linear_axis(std::min(y_lo, y_hi), y_hi, true);

  const int top = 35, bottom = 50;
  const double pw = 400;
  const double left = y_margin(y_axis);
  const double legend_w = 45 + widest(legend, kFontSize);
  const int legend_h = 15 + 18 * static_cast<int>(series.size());
  const int height = std::max(360, top + legend_h + 10);
  const double ph = height - top - bottom;
  const int width =
      std::max(static_cast<int>(std::ceil(left + pw + legend_w + 10)), title_width(title));
  auto px = [&](double x) { return left + x_axis.fraction(x) * pw; };
  auto py = [&](double y) { return top + ph - y_axis.fraction(y) * ph; };

  std::string svg = header(width, height, title);
  svg += plot_area(x_axis, y_axis, left, top, pw, ph);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     left + pw / 2, height - 12, escape(x_axis.label(x_label)));
  svg += y_title(y_label, y_axis, left, top, ph);
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const std::string dash = s.dashed ? " stroke-dasharray=\"6 4\"" : "";
    std::string points;
    for (size_t k = 0; k < s.y.size(); ++k)
      if (std::isfinite(s.y[k]))
        points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px(double(k + 1)),
                              py(s.y[k]));
    svg +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                    escape(s.colour), dash, points);
    const double lx = left + pw + 10, ly = top + 15 + 18 * double(i);
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"{3}\" stroke-width=\"2\"{4}/><text x=\"{5:.1f}\" y=\"{6:.1f}\">"
                       "{7}</text>\n",
                       lx, lx + 20, ly, escape(s.colour), dash, lx + 25, ly + 4, escape(s.label));
  }
  return svg + "</svg>\n";
}

std::string bar_chart_svg(const std::string& title, const std::string& value_label,
                          const std::vector<std::pair<std::string, double>>& bars) {
  std::vector<std::string> labels;
  double v_max = 0;
  for (const auto& b : bars) {
    labels.push_back(b.first);
    if (std::isfinite(b.second))
      v_max = std::max(v_max, b.second);
  }
  const Axis axis = linear_axis(0, v_max > 0 ? v_max : 1, true);
  const int row_h = 18, top = 35, plot_w = 300;
  const double label_w = std::ceil(15 + widest(labels, kFontSize));
  const int width = std::max(static_cast<int>(label_w) + plot_w + 50, title_width(title));
  const double ph = row_h * double(bars.size()) + 4;
  const int height = static_cast<int>(top + ph) + 50;
  std::string svg = header(width, height, title);
  svg += x_grid(axis, label_w, top, plot_w, ph);
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = top + row_h * double(i);
    const double v = std::isfinite(bars[i].second) ? std::max(0.0, bars[i].second) : 0;
    const double w = axis.fraction(v) * plot_w;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>"
                       "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" "
                       "fill=\"#4a78b0\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{:.2f}</text>\n",
                       label_w - 5, y + 13, escape(bars[i].first), label_w, y + 2, w, row_h - 4,
                       label_w + w + 4, y + 13, bars[i].second);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     label_w + plot_w / 2.0, height - 12, escape(value_label));
  return svg + "</svg>\n";
}

std::string grouped_bar_chart_svg(const std::string& title, const std::string& value_label,
                                  const std::vector<std::string>& categories,
                                  const std::vector<Series>& series) {
  // The value axis: log when the (positive) values span decades; a log axis starts below the
  // smallest value's power of ten when that value is close to it, so that its bar shows.
  std::vector<double> positive;
  for (const Series& s : series)
    for (double v : s.y)
      if (v > 0 && std::isfinite(v))
        positive.push_back(v);
  Axis axis;
  if (spans_decades(positive)) {
    const double v_min = *std::min_element(positive.begin(), positive.end());
    const double v_max = *std::max_element(positive.begin(), positive.end());
    double lo = std::pow(10.0, std::floor(std::log10(v_min) + kEps));
    if (v_min / lo < 1.5)
      lo /= 2;
    axis = log_axis(lo, std::pow(10.0, std::ceil(std::log10(v_max) - kEps)), false);
  } else {
    const double v_max = positive.empty() ? 1 : *std::max_element(positive.begin(), positive.end());
    axis = linear_axis(0, v_max, true);
  }

  const int label_size = 10, top = 35, bar_w = 16, bar_step = 18;
  const double angle = 40 * 3.14159265358979323846 / 180;
  const int n_series = static_cast<int>(series.size());
  const int group_w = std::max(40, bar_step * n_series + 14);
  const double first_centre = 7 + bar_step / 2.0 * n_series; // from the plot's left edge
  const double label_w = widest(categories, label_size);
  // Slanted labels end at their category: they reach left by cos and down by sin of the angle.
  const double left =
      std::ceil(std::max(y_margin(axis), label_w * std::cos(angle) - first_centre + 10));
  const int bottom = static_cast<int>(std::ceil(12 + label_w * std::sin(angle) + 15));
  std::vector<std::string> legend;
  for (const Series& s : series)
    legend.push_back(s.label);
  const double legend_w = 36 + widest(legend, kFontSize);
  const double pw = double(group_w) * double(categories.size());
  const int width =
      std::max(static_cast<int>(std::ceil(left + pw + legend_w + 10)), title_width(title));
  const double ph = 255;
  const int height = static_cast<int>(top + ph) + bottom;

  std::string svg = header(width, height, title);
  svg += y_grid(axis, left, top, pw, ph);
  const double base = axis.log ? axis.lo : 0;
  for (size_t c = 0; c < categories.size(); ++c) {
    const double x0 = left + group_w * double(c) + 7;
    for (size_t s = 0; s < series.size(); ++s) {
      const double v = c < series[s].y.size() ? series[s].y[c] : 0;
      const double shown = std::isfinite(v) ? std::max(v, base) : base;
      const double h = std::clamp(axis.fraction(shown), 0.0, 1.0) * ph;
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" "
                         "fill=\"{}\"><title>{}: {:.2f}</title></rect>\n",
                         x0 + bar_step * double(s), top + ph - h, bar_w, h,
                         escape(series[s].colour), escape(series[s].label), v);
    }
    const double cx = x0 + bar_step / 2.0 * n_series;
    svg += fmt::format("<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"end\" "
                       "transform=\"rotate(-40 {0:.1f} {1:.1f})\" font-size=\"{2}\">{3}</text>\n",
                       cx, top + ph + 12, label_size, escape(categories[c]));
  }
  svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
                     "stroke=\"#444\"/>\n",
                     left, left + pw, top + ph);
  for (size_t s = 0; s < series.size(); ++s) {
    const double lx = left + pw + 10, ly = top + 18 * double(s);
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                       lx, ly, escape(series[s].colour), lx + 16, ly + 10, escape(series[s].label));
  }
  svg += y_title(axis.label(value_label), axis, left, top, ph);
  return svg + "</svg>\n";
}

std::string scatter_chart_svg(const std::string& title, const std::string& x_label,
                              const std::string& y_label, const std::vector<PointSeries>& series,
                              const std::vector<std::string>& notes) {
  std::vector<double> xs, ys, values;
  for (const PointSeries& s : series)
    for (const auto& [x, y] : s.points)
      if (std::isfinite(x) && std::isfinite(y)) {
        xs.push_back(x);
        ys.push_back(y);
        values.push_back(x);
        values.push_back(y);
      }
  // One range and scale for both axes, so that the diagonal is y = x.
  Axis axis;
  if (spans_decades(values)) {
    // From 1, 2 or 5 times a power of ten at or below the smallest value to one at or above the
    // largest: whole decades would leave much of the square empty.
    const double v_min = *std::min_element(values.begin(), values.end());
    const double v_max = *std::max_element(values.begin(), values.end());
    const double p_lo = std::pow(10.0, std::floor(std::log10(v_min) + kEps));
    const double p_hi = std::pow(10.0, std::floor(std::log10(v_max) + kEps));
    double lo = p_lo, hi = 10 * p_hi;
    for (double m : {5.0, 2.0, 1.0})
      if (m * p_lo <= v_min * (1 + kEps)) {
        lo = m * p_lo;
        break;
      }
    for (double m : {1.0, 2.0, 5.0, 10.0})
      if (m * p_hi >= v_max * (1 - kEps)) {
        hi = m * p_hi;
        break;
      }
    axis = log_axis(lo, hi, false);
  } else {
    double lo = 0, hi = 1;
    if (!values.empty()) {
      lo = std::min(0.0, *std::min_element(values.begin(), values.end()));
      hi = std::max(lo, *std::max_element(values.begin(), values.end()));
    }
    axis = linear_axis(lo, hi, true);
  }
  std::vector<std::string> lines = {
      fmt::format("Pearson r = {:.3f}, Spearman \u03c1 = {:.3f} over all {} points",
                  pearson(xs, ys), spearman(xs, ys), xs.size())};
  lines.insert(lines.end(), notes.begin(), notes.end());

  std::vector<std::string> legend = {"y = x", "least-squares fit"};
  for (const PointSeries& s : series)
    legend.push_back(s.label);
  const double ps = 400;
  const double left = y_margin(axis);
  const int top = 30 + 16 * static_cast<int>(lines.size()) + 8, bottom = 50;
  const double legend_w = 40 + widest(legend, kFontSize);
  const double text_w = widest(lines, kFontSize);
  const int width = std::max({static_cast<int>(std::ceil(left + ps + legend_w + 10)),
                              static_cast<int>(std::ceil(left + text_w + 10)), title_width(title)});
  const int height = std::max(static_cast<int>(top + ps) + bottom,
                              top + 18 * static_cast<int>(legend.size()) + 10);
  auto px = [&](double x) { return left + axis.fraction(x) * ps; };
  auto py = [&](double y) { return top + ps - axis.fraction(y) * ps; };

  std::string svg = header(width, height, title);
  for (size_t i = 0; i < lines.size(); ++i)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>\n", left, 40 + 16 * int(i),
                       escape(lines[i]));
  svg += plot_area(axis, axis, left, top, ps, ps);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     left + ps / 2, top + ps + 38, escape(axis.label(x_label)));
  svg += y_title(axis.label(y_label), axis, left, top, ps);
  for (const PointSeries& s : series) {
    svg += fmt::format("<g fill=\"{}\" fill-opacity=\"0.55\">\n", escape(s.colour));
    for (const auto& [x, y] : s.points)
      if (std::isfinite(x) && std::isfinite(y))
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\"/>\n", px(x), py(y));
    svg += "</g>\n";
  }
  // The diagonal, then the least-squares line v = a + b u in the plot's unit square, clipped.
  svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                     "stroke=\"#555\" stroke-dasharray=\"5 4\"/>\n",
                     left, top + ps, left + ps, double(top));
  bool fitted = false;
  if (xs.size() >= 2) {
    double su = 0, sv = 0, suu = 0, suv = 0;
    const auto n = double(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double u = axis.fraction(xs[i]), v = axis.fraction(ys[i]);
      su += u;
      sv += v;
      suu += u * u;
      suv += u * v;
    }
    const double var = suu - su * su / n;
    if (var > 1e-12) {
      const double b = (suv - su * sv / n) / var, a = (sv - b * su) / n;
      double u0 = 0, u1 = 1;
      // Clip to 0 <= a + b u <= 1.
      if (std::abs(b) > 1e-12) {
        const double ua = (0 - a) / b, ub = (1 - a) / b;
        u0 = std::max(u0, std::min(ua, ub));
        u1 = std::min(u1, std::max(ua, ub));
      } else if (a < 0 || a > 1) {
        u1 = u0 - 1;
      }
      if (u1 > u0) {
        fitted = true;
        svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                           "stroke=\"#000\" stroke-width=\"1.5\"/>\n",
                           left + u0 * ps, top + ps - (a + b * u0) * ps, left + u1 * ps,
                           top + ps - (a + b * u1) * ps);
      }
    }
  }
  const double lx = left + ps + 12;
  double ly = top + 10;
  svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
                     "stroke=\"#555\" stroke-dasharray=\"5 4\"/><text x=\"{3:.1f}\" "
                     "y=\"{4:.1f}\">y = x</text>\n",
                     lx, lx + 20, ly, lx + 26, ly + 4);
  ly += 18;
  if (fitted) {
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"#000\" stroke-width=\"1.5\"/><text x=\"{3:.1f}\" "
                       "y=\"{4:.1f}\">least-squares fit</text>\n",
                       lx, lx + 20, ly, lx + 26, ly + 4);
    ly += 18;
  }
  for (const PointSeries& s : series) {
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                       lx + 5, ly - 5, escape(s.colour), lx + 26, ly + 4, escape(s.label));
    ly += 18;
  }
  return svg + "</svg>\n";
}

} // namespace liftx::model
