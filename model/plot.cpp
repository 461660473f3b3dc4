#include "model/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace liftx::model {

namespace {

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

std::string header(int width, int height, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" "
      "fill=\"white\"/>\n<text x=\"{2}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{3}"
      "</text>\n",
      width, height, width / 2, escape(title));
}

/// A "nice" upper bound for an axis.
double nice_max(double value) {
  if (!(value > 0))
    return 1;
  const double p = std::pow(10.0, std::floor(std::log10(value)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= value)
      return m * p;
  return 10 * p;
}

} // namespace

std::string line_chart_svg(const std::string& title, const std::string& x_label,
                           const std::string& y_label, const std::vector<Series>& series) {
  const int width = 640, height = 360, left = 60, right = 210, top = 35, bottom = 50;
  const double pw = width - left - right, ph = height - top - bottom;
  size_t n = 1;
  double y_max = 1;
  for (const Series& s : series) {
    n = std::max(n, s.y.size());
    for (double v : s.y)
      y_max = std::max(y_max, v);
  }
  y_max = nice_max(y_max);
  auto px = [&](double x) { return left + (n > 1 ? (x - 1) / double(n - 1) : 0.5) * pw; };
  auto py = [&](double y) { return top + ph - y / y_max * ph; };
  std::string svg = header(width, height, title);
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#444\"/>\n",
                     left, top, pw, ph);
  for (int t = 0; t <= 4; ++t) {
    const double v = y_max * t / 4;
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
                       left, left + pw, py(v), left - 5, py(v) + 4, v);
  }
  for (int t = 0; t <= 4; ++t) {
    const double x = 1 + double(n - 1) * t / 4;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.0f}</text>\n", px(x),
                       top + ph + 15, x);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     left + pw / 2, height - 12, escape(x_label));
  svg += fmt::format("<text x=\"15\" y=\"{:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 15 "
                     "{:.1f})\">{}</text>\n",
                     top + ph / 2, top + ph / 2, escape(y_label));
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    std::string points;
    for (size_t k = 0; k < s.y.size(); ++k)
      points += fmt::format("{:.1f},{:.1f} ", px(double(k + 1)), py(s.y[k]));
    svg +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                    s.colour, s.dashed ? " stroke-dasharray=\"6 4\"" : "", points);
    const double ly = top + 15 + 18 * double(i);
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
                       "stroke-width=\"2\"{4}/><text x=\"{5}\" y=\"{6:.1f}\">{7}</text>\n",
                       left + pw + 10, left + pw + 30, ly, s.colour,
                       s.dashed ? " stroke-dasharray=\"6 4\"" : "", left + pw + 35, ly + 4,
                       escape(s.label));
  }
  return svg + "</svg>\n";
}

std::string bar_chart_svg(const std::string& title, const std::string& value_label,
                          const std::vector<std::pair<std::string, double>>& bars) {
  const int label_w = 230, plot_w = 300, row_h = 18, top = 35;
  const int width = label_w + plot_w + 70;
  const int height = top + row_h * static_cast<int>(bars.size()) + 45;
  double v_max = 0;
  for (const auto& b : bars)
    v_max = std::max(v_max, b.second);
  v_max = v_max <= 1 ? 1 : nice_max(v_max);
  std::string svg = header(width, height, title);
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = top + row_h * double(i);
    const double w = std::max(0.0, bars[i].second) / v_max * plot_w;
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>"
                       "<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" "
                       "fill=\"#4a78b0\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{:.2f}</text>\n",
                       label_w - 5, y + 13, escape(bars[i].first), label_w, y + 2, w, row_h - 4,
                       label_w + w + 4, y + 13, bars[i].second);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     label_w + plot_w / 2, height - 12, escape(value_label));
  return svg + "</svg>\n";
}

std::string grouped_bar_chart_svg(const std::string& title, const std::string& value_label,
                                  const std::vector<std::string>& categories,
                                  const std::vector<Series>& series) {
  const int left = 60, top = 35, bottom = 90, right = 130;
  const int group_w = std::max(40, 18 * static_cast<int>(series.size()) + 14);
  const int width = left + group_w * static_cast<int>(categories.size()) + right;
  const int height = 380;
  const double ph = height - top - bottom;
  double v_max = 0;
  for (const Series& s : series)
    for (double v : s.y)
      v_max = std::max(v_max, v);
  v_max = nice_max(v_max);
  std::string svg = header(width, height, title);
  for (int t = 0; t <= 4; ++t) {
    const double v = v_max * t / 4, y = top + ph - v / v_max * ph;
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
                       left, width - right, y, left - 5, y + 4, v);
  }
  for (size_t c = 0; c < categories.size(); ++c) {
    const double x0 = left + group_w * double(c) + 7;
    for (size_t s = 0; s < series.size(); ++s) {
      const double v = c < series[s].y.size() ? series[s].y[c] : 0;
      const double h = std::max(0.0, v) / v_max * ph;
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"16\" height=\"{:.1f}\" "
                         "fill=\"{}\"><title>{:.2f}</title></rect>\n",
                         x0 + 18 * double(s), top + ph - h, h, series[s].colour, v);
    }
    const double cx = x0 + 9 * double(series.size());
    svg +=
        fmt::format("<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"end\" transform=\"rotate(-40 "
                    "{0:.1f} {1:.1f})\" font-size=\"10\">{2}</text>\n",
                    cx, top + ph + 12, escape(categories[c]));
  }
  for (size_t s = 0; s < series.size(); ++s)
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{}\">{}</text>\n",
                       width - right + 10, top + 18 * int(s), series[s].colour, width - right + 26,
                       top + 18 * int(s) + 10, escape(series[s].label));
  svg +=
      fmt::format("<text x=\"15\" y=\"{0:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 15 "
                  "{0:.1f})\">{1}</text>\n",
                  top + ph / 2, escape(value_label));
  return svg + "</svg>\n";
}

} // namespace liftx::model
