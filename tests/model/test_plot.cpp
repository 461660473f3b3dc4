// The SVG charts of `liftx evaluate --out`: axis scales and ticks, labels inside the picture,
// well-formed XML, the predicted-vs-measured scatter; the numeric order of inputs.
#include "model/evaluate.hpp"
#include "model/metrics.hpp"
#include "model/plot.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace liftx::model;

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
         c == '.';
}

/// Whether `text` at `i` (an '&') starts an entity.
bool entity_at(const std::string& text, size_t i) {
  for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
    if (text.compare(i, std::strlen(e), e) == 0)
      return true;
  return false;
}

/// "" when `svg` is well-formed XML of one <svg> root (every element closed, in order; attributes
/// quoted; no raw '<' or stray '&' in text or attribute values), else what is wrong.
std::string xml_error(const std::string& svg) {
  std::vector<std::string> open;
  int roots = 0;
  size_t i = 0;
  while (i < svg.size()) {
    if (svg[i] == '&') {
      if (!entity_at(svg, i))
        return fmt::format("stray & at {}", i);
      ++i;
      continue;
    }
    if (svg[i] == '>')
      return fmt::format("stray > at {}", i);
    if (svg[i] != '<') {
      ++i;
      continue;
    }
    if (svg.compare(i, 2, "</") == 0) {
      size_t j = i + 2;
      while (j < svg.size() && is_name_char(svg[j]))
        ++j;
      const std::string name = svg.substr(i + 2, j - i - 2);
      if (j >= svg.size() || svg[j] != '>')
        return fmt::format("bad closing tag at {}", i);
      if (open.empty() || open.back() != name)
        return fmt::format("</{}> at {} closes {}", name, i,
                           open.empty() ? "nothing" : open.back());
      open.pop_back();
      i = j + 1;
      continue;
    }
    size_t j = i + 1;
    while (j < svg.size() && is_name_char(svg[j]))
      ++j;
    const std::string name = svg.substr(i + 1, j - i - 1);
    if (name.empty())
      return fmt::format("raw < at {}", i);
    if (open.empty() && ++roots > 1)
      return "more than one root element";
    if (open.empty() && name != "svg")
      return "the root is <" + name + ">";
    // Attributes: name="value".
    while (true) {
      while (j < svg.size() && std::isspace(static_cast<unsigned char>(svg[j])))
        ++j;
      if (j >= svg.size())
        return "unterminated tag <" + name + ">";
      if (svg[j] == '>') {
        open.push_back(name);
        ++j;
        break;
      }
      if (svg.compare(j, 2, "/>") == 0) {
        j += 2;
        break;
      }
      const size_t a = j;
      while (j < svg.size() && is_name_char(svg[j]))
        ++j;
      if (j == a || j + 1 >= svg.size() || svg[j] != '=' || svg[j + 1] != '"')
        return fmt::format("bad attribute in <{}> at {}", name, j);
      const size_t end = svg.find('"', j + 2);
      if (end == std::string::npos)
        return "unterminated attribute value";
      const std::string value = svg.substr(j + 2, end - j - 2);
      if (value.find('<') != std::string::npos)
        return "< in an attribute value";
      for (size_t k = value.find('&'); k != std::string::npos; k = value.find('&', k + 1))
        if (!entity_at(value, k))
          return "stray & in an attribute value";
      j = end + 1;
    }
    i = j;
  }
  if (!open.empty())
    return "<" + open.back() + "> is never closed";
  if (roots != 1)
    return "no root element";
  return "";
}

std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t at = tag.find(key);
  if (at == std::string::npos)
    return "";
  const size_t from = at + key.size();
  return tag.substr(from, tag.find('"', from) - from);
}

std::string unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '&') {
      const size_t end = text.find(';', i);
      const std::string e = text.substr(i, end - i + 1);
      out += e == "&amp;" ? "&" : e == "&lt;" ? "<" : e == "&gt;" ? ">" : "\"";
      i = end;
    } else {
      out += text[i];
    }
  }
  return out;
}

struct Bounds {
  double width = 0, height = 0;
};

Bounds svg_size(const std::string& svg) {
  const std::string root = svg.substr(0, svg.find('>'));
  return {std::stod(attribute(root, "width")), std::stod(attribute(root, "height"))};
}

/// Each <text> whose estimated extent (text_width, its anchor, its rotation) leaves the picture,
/// with where it goes.
std::vector<std::string> texts_outside(const std::string& svg) {
  const Bounds b = svg_size(svg);
  std::vector<std::string> out;
  for (size_t at = svg.find("<text "); at != std::string::npos; at = svg.find("<text ", at + 1)) {
    const size_t close = svg.find('>', at);
    const std::string tag = svg.substr(at, close - at);
    const std::string content =
        unescape(svg.substr(close + 1, svg.find("</text>", close) - close - 1));
    const double x = std::stod(attribute(tag, "x")), y = std::stod(attribute(tag, "y"));
    const std::string size = attribute(tag, "font-size");
    const double font = size.empty() ? 12 : std::stod(size);
    const double w = text_width(content, font);
    const std::string anchor = attribute(tag, "text-anchor");
    const double x0 = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
    double angle = 0, cx = 0, cy = 0;
    const std::string transform = attribute(tag, "transform");
    if (!transform.empty())
      REQUIRE(std::sscanf(transform.c_str(), "rotate(%lf %lf %lf)", &angle, &cx, &cy) == 3);
    const double r = angle * 3.14159265358979323846 / 180;
    // The baseline's ends and the glyphs' tops, rotated about (cx, cy).
    for (double px : {x0, x0 + w})
      for (double py : {y + 2, y - 0.8 * font}) {
        const double dx = px - cx, dy = py - cy;
        const double rx = cx + dx * std::cos(r) - dy * std::sin(r);
        const double ry = cy + dx * std::sin(r) + dy * std::cos(r);
        if (rx < 0 || rx > b.width || ry < 0 || ry > b.height)
          out.push_back(fmt::format("'{}' reaches ({:.0f}, {:.0f}) in {}x{}", content, rx, ry,
                                    b.width, b.height));
      }
  }
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// The contents of the <text> elements.
std::vector<std::string> texts(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<text "); at != std::string::npos; at = svg.find("<text ", at + 1)) {
    const size_t close = svg.find('>', at);
    out.push_back(unescape(svg.substr(close + 1, svg.find("</text>", close) - close - 1)));
  }
  return out;
}

bool has_text(const std::string& svg, const std::string& content) {
  for (const std::string& t : texts(svg))
    if (t == content)
      return true;
  return false;
}

/// Checks what every chart must be: well-formed, every text inside the picture.
void check_chart(const std::string& svg) {
  CHECK(xml_error(svg) == "");
  for (const std::string& outside : texts_outside(svg))
    FAIL_CHECK(outside);
}

} // namespace

TEST_CASE("the test's XML and bounds checks catch what they look for") {
  CHECK(xml_error("<svg><g></g><rect x=\"1\"/></svg>") == "");
  CHECK(xml_error("<svg><g></svg>") != "");
  CHECK(xml_error("<svg><g>") != "");
  CHECK(xml_error("<svg>a & b</svg>") != "");
  CHECK(xml_error("<svg>a < b</svg>") != "");
  CHECK(xml_error("<svg><text x=\"a<b\">t</text></svg>") != "");
  CHECK(xml_error("<svg/><svg/>") != "");
  const std::string clipped = "<svg width=\"100\" height=\"50\"><text x=\"5\" y=\"20\" "
                              "text-anchor=\"end\">gaussian</text></svg>";
  CHECK(texts_outside(clipped).size() == 2); // its left end, bottom and top
  const std::string slanted = "<svg width=\"100\" height=\"50\"><text x=\"50\" y=\"20\" "
                              "transform=\"rotate(-90 50 20)\">gaussian M=128</text></svg>";
  CHECK_FALSE(texts_outside(slanted).empty()); // vertical, it runs off the top
}

TEST_CASE("a log axis is chosen when the values span more than 1.5 decades") {
  CHECK(spans_decades({1, 1000}));
  CHECK(spans_decades({1, 32}));
  CHECK_FALSE(spans_decades({1, 31}));    // 10^1.5 = 31.6
  CHECK_FALSE(spans_decades({1, 2, 8}));  // model runs alone
  CHECK_FALSE(spans_decades({0, 1000}));  // a zero cannot sit on a log axis
  CHECK_FALSE(spans_decades({-1, 1000})); // nor a negative value
  CHECK_FALSE(spans_decades({}));
  CHECK(spans_decades({0.001, 0.5}));
  CHECK(spans_decades({2, 9}, 0.5));
}

TEST_CASE("ticks: powers of ten on log axes, round steps on linear ones") {
  const Axis log = log_axis(1, 1000);
  CHECK(log.log);
  CHECK(log.lo == doctest::Approx(1));
  CHECK(log.hi == doctest::Approx(1000));
  REQUIRE(log.ticks.size() == 4);
  for (size_t i = 0; i < 4; ++i)
    CHECK(log.ticks[i] == doctest::Approx(std::pow(10.0, double(i))));
  CHECK(log.minor.size() == 24); // 2..9 in each of three decades
  CHECK(log.minor.front() == doctest::Approx(2));
  CHECK(log.minor.back() == doctest::Approx(900));
  CHECK(log.fraction(10) == doctest::Approx(1.0 / 3));
  CHECK(log.fraction(1000) == doctest::Approx(1));
  CHECK(log.label("runs") == "runs (log scale)");

  const Axis rounded = log_axis(3, 700); // widened to the powers of ten around it
  CHECK(rounded.lo == doctest::Approx(1));
  CHECK(rounded.hi == doctest::Approx(1000));
  const Axis exact = log_axis(1, 700, false);
  CHECK(exact.hi == doctest::Approx(700));
  CHECK(exact.ticks.size() == 3); // 1, 10, 100
  CHECK(exact.minor.back() == doctest::Approx(700));

  const Axis unit = linear_axis(0, 0.95);
  CHECK_FALSE(unit.log);
  CHECK(unit.lo == doctest::Approx(0));
  CHECK(unit.hi == doctest::Approx(1));
  REQUIRE(unit.ticks.size() == 6);
  CHECK(unit.ticks[3] == doctest::Approx(0.6));
  CHECK(unit.label("runs") == "runs");
  const Axis fitted = linear_axis(0.62, 1); // starts at a round value below the smallest
  CHECK(fitted.lo == doctest::Approx(0.6));
  CHECK(fitted.hi == doctest::Approx(1));
  CHECK(fitted.ticks.size() == 5);
  const Axis runs = linear_axis(0, 730);
  CHECK(runs.hi == doctest::Approx(800));
  CHECK(runs.ticks[1] == doctest::Approx(200));

  CHECK(tick_label(1000) == "1000");
  CHECK(tick_label(0.25) == "0.25");
  CHECK(tick_label(0.1 + 0.2) == "0.3");
  CHECK(tick_label(0) == "0");
}

TEST_CASE("runs-to-90% bars: a log axis when model and random runs span decades") {
  const std::vector<std::string> categories = {"gaussian M=64,N=128", "gaussian M=128,N=128",
                                               "stencil2d M=8192,N=8192"};
  const Series model{"model order", {1, 2, 8}, "#c0392b", false};
  const Series random{"random (mean)", {120, 480, 950}, "#7f8c8d", false};
  const std::string log = grouped_bar_chart_svg("Runs to 90%", "runs", categories, {model, random});
  check_chart(log);
  CHECK(has_text(log, "runs (log scale)"));
  for (const char* tick : {"1", "10", "100", "1000"})
    CHECK(has_text(log, tick));
  // Every bar shows, the model's single run included.
  CHECK(count(log, "<rect x=") == 6 + 2); // bars + legend swatches
  CHECK(log.find("height=\"0.0\"") == std::string::npos);
  for (const std::string& c : categories)
    CHECK(has_text(log, c));

  const Series near{"random (mean)", {3, 5, 9}, "#7f8c8d", false};
  const std::string linear =
      grouped_bar_chart_svg("Runs to 90%", "runs", categories, {model, near});
  check_chart(linear);
  CHECK(has_text(linear, "runs"));
  CHECK_FALSE(has_text(linear, "runs (log scale)"));
  CHECK(has_text(linear, "0"));
}

TEST_CASE("best-so-far curves: log runs axis when long, y fitted to the values") {
  std::vector<double> model_curve(1000, 1.0), random_curve(1000);
  for (size_t i = 0; i < random_curve.size(); ++i)
    random_curve[i] = 1 - 0.35 / double(i + 1);
  model_curve[0] = 0.9;
  const std::string long_runs =
      line_chart_svg("gaussian: best so far", "runs", "best so far / best",
                     {{"model M=128,N=128", model_curve, "#c0392b", false},
                      {"random M=128,N=128 with a much longer legend label than usual",
                       random_curve, "#c0392b", true}});
  check_chart(long_runs);
  CHECK(has_text(long_runs, "runs (log scale)"));
  for (const char* tick : {"1", "10", "100", "1000"})
    CHECK(has_text(long_runs, tick));
  CHECK(has_text(long_runs, "0.6")); // the smallest value is 0.65
  CHECK_FALSE(has_text(long_runs, "0"));

  const std::string short_runs =
      line_chart_svg("t <1> & more", "runs", "y", {{"a", {0.1, 0.5, 1}, "red", false}});
  check_chart(short_runs);
  CHECK(short_runs.find("t &lt;1&gt; &amp; more") != std::string::npos);
  CHECK(has_text(short_runs, "runs"));
  CHECK(has_text(short_runs, "0"));
}

TEST_CASE("every chart's labels fit in the picture, long ones included") {
  const std::string long_name = "a_rather_long_feature_name_with_many_characters";
  check_chart(bar_chart_svg("Normalised mutual information of each feature with performance", "NMI",
                            {{long_name, 0.5}, {"x & y", 0.25}, {"MMMMMMMMMMMM", 1}}));
  std::vector<std::string> categories;
  std::vector<double> values;
  for (int i = 0; i < 12; ++i) {
    categories.push_back(fmt::format("hotspot2d M={},N={}", 64 << i, 8192));
    values.push_back(i + 1);
  }
  check_chart(grouped_bar_chart_svg(
      "Runs to reach 90% of the best (knn model, leave one benchmark out)", "runs", categories,
      {{"model order", values, "red", false},
       {"a legend label long enough to need its own margin", values, "grey", false}}));
  // A single short category under a long title.
  check_chart(grouped_bar_chart_svg("A title much wider than one category of bars can be", "runs",
                                    {"gaussian M=128,N=128"}, {{"m", {3}, "red", false}}));
  std::vector<Series> many;
  for (int i = 0; i < 30; ++i)
    many.push_back({fmt::format("random M={},N={}", 1 << i, 1 << i), {0.5, 0.8, 1}, "red", true});
  const std::string legend = line_chart_svg("many series", "runs", "best", many);
  check_chart(legend);
}

TEST_CASE("the scatter: one circle per pair, diagonal, fit line and the correlations") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.05, 1);
  std::vector<PointSeries> series;
  std::vector<double> xs, ys;
  const std::vector<std::pair<std::string, int>> programs = {
      {"gaussian", 10}, {"jacobi & <friends>", 20}, {"srad2", 7}};
  for (const auto& [name, n] : programs) {
    PointSeries s{name, palette(series.size()), {}};
    for (int i = 0; i < n; ++i) {
      const double measured = u(rng), predicted = 0.5 * measured + 0.3 * u(rng);
      s.points.emplace_back(measured, predicted);
      xs.push_back(measured);
      ys.push_back(predicted);
    }
    series.push_back(s);
  }
  const std::string svg = scatter_chart_svg("Predicted vs measured", "measured", "predicted",
                                            series, {"mean per input: Pearson 0.5"});
  check_chart(svg);
  CHECK(count(svg, "<circle") == 37);
  CHECK(has_text(svg, fmt::format("Pearson r = {:.3f}, Spearman \u03c1 = {:.3f} over all 37 "
                                  "points",
                                  pearson(xs, ys), spearman(xs, ys))));
  CHECK(has_text(svg, "mean per input: Pearson 0.5"));
  CHECK(has_text(svg, "y = x"));
  CHECK(has_text(svg, "least-squares fit"));
  CHECK(has_text(svg, "jacobi & <friends>"));
  CHECK(svg.find("jacobi &amp; &lt;friends&gt;") != std::string::npos);
  CHECK_FALSE(has_text(svg, "measured (log scale)")); // 0.025..1 spans 1.6 decades at most
  // Values over decades: log axes, still one circle per pair.
  const std::string wide = scatter_chart_svg(
      "wide", "measured", "predicted", {{"p", "red", {{0.001, 0.002}, {0.5, 0.4}, {1, 0.9}}}});
  check_chart(wide);
  CHECK(count(wide, "<circle") == 3);
  CHECK(has_text(wide, "measured (log scale)"));
  CHECK(has_text(wide, "0.001"));
  // No points: still a well-formed chart.
  const std::string empty = scatter_chart_svg("none", "measured", "predicted", {});
  check_chart(empty);
  CHECK(count(empty, "<circle") == 0);
  CHECK(has_text(empty, "Pearson r = 0.000, Spearman \u03c1 = 0.000 over all 0 points"));
}

TEST_CASE("inputs order by their sizes as numbers, groups by program then input") {
  CHECK(input_less(R"({"M":64,"N":128})", R"({"M":128,"N":128})"));
  CHECK_FALSE(input_less(R"({"M":128,"N":128})", R"({"M":64,"N":128})"));
  CHECK(input_less(R"({"M":128,"N":64})", R"({"M":128,"N":128})"));
  CHECK(input_less(R"({"M":2048,"N":8192})", R"({"M":8192,"N":2048})"));
  CHECK_FALSE(input_less(R"({"M":8192,"N":2048})", R"({"M":2048,"N":8192})"));
  CHECK_FALSE(input_less(R"({"M":64})", R"({"M":64})"));
  CHECK(input_less(R"({"M":1e3})", R"({"M":1024})"));
  CHECK(input_less(R"({"M":64})", "not json")); // numbers before text
  CHECK_FALSE(input_less("not json", R"({"M":64})"));
  CHECK(input_less("a", "b"));

  std::vector<GroupResult> groups;
  for (const auto& [program, input] :
       std::vector<std::pair<std::string, std::string>>{{"srad2", R"({"M":64,"N":128})"},
                                                        {"synth_101_10", R"({"M":64})"},
                                                        {"synth_101_2", R"({"M":64})"},
                                                        {"gaussian", R"({"M":8192,"N":2048})"},
                                                        {"gaussian", R"({"M":128,"N":128})"},
                                                        {"gaussian", R"({"M":2048,"N":8192})"},
                                                        {"gaussian", R"({"M":64,"N":128})"},
                                                        {"gaussian", R"({"M":128,"N":64})"}}) {
    GroupResult g;
    g.program = program;
    g.input = input;
    groups.push_back(g);
  }
  sort_groups(groups);
  std::vector<std::string> order;
  for (const GroupResult& g : groups)
    order.push_back(g.program + " " + g.input);
  CHECK(order ==
        std::vector<std::string>{R"(gaussian {"M":64,"N":128})", R"(gaussian {"M":128,"N":64})",
                                 R"(gaussian {"M":128,"N":128})", R"(gaussian {"M":2048,"N":8192})",
                                 R"(gaussian {"M":8192,"N":2048})", R"(srad2 {"M":64,"N":128})",
                                 R"(synth_101_2 {"M":64})", R"(synth_101_10 {"M":64})"});
}

TEST_CASE("evaluation keeps each group's predicted and measured pairs, groups in size order") {
  Dataset d;
  d.feature_names = {"a", "b"};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (const char* p : {"p2", "p1", "p3"})
    for (const char* input : {R"({"N":128})", R"({"N":64})"})
      for (int i = 0; i < 20; ++i) {
        Sample s;
        s.program = p;
        s.input = input;
        s.features = {double(i), u(rng)};
        if (i % 7 == 2)
          s.time_ms = std::nullopt;
        else
          s.time_ms = 1.0 + 0.1 * i;
        d.samples.push_back(s);
      }
  const Evaluation ev = evaluate(d);
  REQUIRE(ev.groups.size() == 6);
  for (size_t i = 0; i < ev.groups.size(); ++i) {
    const GroupResult& g = ev.groups[i];
    CAPTURE(g.program);
    CAPTURE(g.input);
    CHECK(g.program == std::string("p") + char('1' + i / 2));
    CHECK(g.input == (i % 2 == 0 ? R"({"N":64})" : R"({"N":128})"));
    REQUIRE(g.predicted.size() == size_t(g.configurations - g.failed));
    REQUIRE(g.measured.size() == g.predicted.size());
    CHECK(g.pearson == doctest::Approx(pearson(g.predicted, g.measured)));
    CHECK(g.spearman == doctest::Approx(spearman(g.predicted, g.measured)));
    for (double m : g.measured) {
      CHECK(m > 0);
      CHECK(m <= 1);
    }
  }
}
