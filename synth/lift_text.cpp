// A synthetic stencil's text forms: describe's one-line summary and to_lift's .lift file (its
// header comment with the window's picture, the user function, the definition).
#include "synth/synth.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace liftx::synth {

namespace {

/// The padding of each side, left (top) and right (bottom), that the points need; pad2D pads both
/// dimensions alike.
std::pair<int, int> padding(const std::vector<Offset>& points) {
  int left = 0, right = 0;
  for (const Offset& p : points) {
    left = std::max({left, -p.dy, -p.dx});
    right = std::max({right, p.dy, p.dx});
  }
  return {left, right};
}
// ---- text ---------------------------------------------------------------------------------------

/// A float literal: the coefficient's decimal digits (at most 4 after the point) and `f`.
std::string literal(double x) {
  std::string s = fmt::format("{:.4f}", x);
  while (s.back() == '0' && s[s.size() - 2] != '.')
    s.pop_back();
  return s + "f";
}

/// `literal` in parentheses when negative (a factor after `*`).
std::string factor(double x) {
  return x < 0 ? "(" + literal(x) + ")" : literal(x);
}

/// `+ x` or `- |x|`: adding a literal.
std::string plus(double x) {
  return (x < 0 ? "- " : "+ ") + literal(std::abs(x));
}

std::string coordinate(char axis, int d) {
  if (d == 0)
    return fmt::format("{}0", axis);
  return fmt::format("{}{}{}", axis, d < 0 ? 'm' : 'p', std::abs(d));
}

std::string point_name(size_t grid, const Offset& p) {
  return fmt::format("g{}_{}_{}", grid, coordinate('y', p.dy), coordinate('x', p.dx));
}

/// Joins items with `separator`, breaking lines (before the separator's trailing blanks) so that
/// no line passes column 100 where it can be helped; later lines start with `continuation`.
/// `column`: where the first item starts; `tail`: the width of what follows the last item.
std::string wrap(const std::vector<std::string>& items, std::string_view separator, size_t column,
                 const std::string& continuation, size_t tail = 0) {
  const std::string_view sep_text = separator.substr(0, separator.find_last_not_of(' ') + 1);
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    const size_t need = item.size() + (i + 1 == items.size() ? tail : sep_text.size());
    const size_t gap = i == 0 ? 0 : separator.size();
    if (column + gap + need > 100 && (i > 0 || column > continuation.size())) {
      out += std::string(i == 0 ? "" : sep_text) + "\n" + continuation;
      column = continuation.size();
    } else if (i > 0) {
      out += separator;
      column += separator.size();
    }
    out += item;
    column += item.size();
  }
  return out;
}

/// `c0 * a + c1 * b - ...` (coefficient 1: the value alone), wrapped.
std::string weighted_sum(const std::vector<std::string>& values, const std::vector<double>& c,
                         size_t column, const std::string& continuation) {
  std::vector<std::string> terms;
  for (size_t i = 0; i < values.size(); ++i) {
    const double w = c[i];
    const double magnitude = i == 0 ? w : std::abs(w);
    std::string term = magnitude == 1.0 ? values[i] : literal(magnitude) + " * " + values[i];
    if (i > 0)
      term = (w < 0 ? "- " : "+ ") + term;
    terms.push_back(term);
  }
  return wrap(terms, " ", column, continuation, 1);
}

std::string step_text(const Step& s) {
  const auto& c = s.c;
  switch (s.kind) {
  case StepKind::poly: {
    std::string inner = factor(c.back());
    for (size_t k = c.size() - 1; k-- > 0;)
      inner =
          fmt::format("{} + v * {}", literal(c[k]), k + 2 == c.size() ? inner : "(" + inner + ")");
    return inner;
  }
  case StepKind::rational:
    return fmt::format("({} * v {}) / (1.0f + {} * v * v)", literal(c[0]), plus(c[1]),
                       literal(c[2]));
  case StepKind::root:
    return fmt::format("{} * v / sqrt(v * v + {}) {}", literal(c[0]), literal(c[1]), plus(c[2]));
  case StepKind::minmax:
    return fmt::format("fmin(fmax({} * v {}, {}), {})", literal(c[0]), plus(c[1]), literal(c[2]),
                       literal(c[3]));
  }
  LIFTX_UNREACHABLE("unknown step kind");
}

std::string step_label(const Step& s) {
  if (s.kind == StepKind::poly)
    return fmt::format("poly{}", s.c.size() - 1);
  return std::string(to_string(s.kind));
}

bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (char ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
      return false;
  for (std::string_view keyword :
       {"def", "userfun", "true", "false", "bool", "int", "float", "double"})
    if (name == keyword)
      return false;
  return true;
}

/// The window as a picture: `x` the centre, `o` a point read, `.` a point not read.
std::vector<std::string> picture(const StencilSpec& spec) {
  const auto [left, right] = padding(spec.points);
  std::vector<std::string> rows;
  for (int dy = -left; dy <= right; ++dy) {
    std::string row;
    for (int dx = -left; dx <= right; ++dx) {
      const bool read =
          std::find(spec.points.begin(), spec.points.end(), Offset{dy, dx}) != spec.points.end();
      row += (dx > -left ? " " : "");
      row += dy == 0 && dx == 0 ? (read ? 'x' : '+') : (read ? 'o' : '.');
    }
    rows.push_back(row);
  }
  return rows;
}

std::string shape_label(const StencilSpec& spec) {
  if (spec.shape != Shape::asymmetric)
    return std::string(to_string(spec.shape));
  return spec.upwind ? "asymmetric (upwind)" : "asymmetric (subset)";
}

} // namespace

// ---- public -------------------------------------------------------------------------------------

std::string describe(const StencilSpec& spec) {
  std::vector<std::string> grids;
  for (size_t i = 0; i < spec.grids.size(); ++i) {
    const Grid& g = spec.grids[i];
    grids.push_back(
        g.use == Use::pointwise
            ? fmt::format("g{} point", i)
            : fmt::format("g{} nbh {}", i,
                          g.boundary == Boundary::zero ? "zero" : to_string(g.boundary)));
  }
  std::string steps;
  for (const Step& s : spec.steps)
    steps += (steps.empty() ? "" : " ") + step_label(s);
  return fmt::format("{} r={} ({} points), {} grid{} [{}], {}, {} step{}{}, ~{} ops",
                     spec.shape == Shape::asymmetric
                         ? (spec.upwind ? "asymmetric-upwind" : "asymmetric-subset")
                         : to_string(spec.shape),
                     spec.radius, spec.points.size(), spec.grids.size(),
                     spec.grids.size() == 1 ? "" : "s", fmt::join(grids, ", "),
                     to_string(spec.combine), spec.steps.size(), spec.steps.size() == 1 ? "" : "s",
                     steps.empty() ? "" : " (" + steps + ")", ops_per_point(spec));
}

namespace {

/// The .lift file's opening comment: what was drawn, its picture, grids, combination and steps.
std::string lift_header_comment(const StencilSpec& spec, std::string_view name, int size,
                                int window) {
  std::string out;
  std::vector<std::string> grid_lines;
  for (size_t i = 0; i < spec.grids.size(); ++i) {
    const Grid& g = spec.grids[i];
    grid_lines.push_back(g.use == Use::pointwise
                             ? fmt::format("g{} point-wise", i)
                             : fmt::format("g{} neighbourhood ({})", i, to_string(g.boundary)));
  }
  out +=
      fmt::format("// {}: a synthetic 2D stencil drawn by `liftx synth` (docs/synth.md).\n", name);
  out += fmt::format("// seed     {}, stencil {}\n", spec.seed, spec.index);
  out += fmt::format("// shape    {}, radius {}: {} points of a {}x{} window (x: the output "
                     "point)\n",
                     shape_label(spec), spec.radius, spec.points.size(), size, size);
  for (const std::string& row : picture(spec))
    out += "//            " + row + "\n";
  const std::string grids_head = fmt::format("// grids    {} of [[float]N]M: ", spec.grids.size());
  out += grids_head + wrap(grid_lines, ", ", grids_head.size(), "//          ") + "\n";
  const int values = combined_values(spec);
  switch (spec.combine) {
  case Combine::sum:
    out += fmt::format("// combine  the plain sum of {} values{}\n", values,
                       spec.steps.empty() ? ""
                                          : fmt::format(", scaled by {}", literal(spec.sum_scale)));
    break;
  case Combine::weighted:
    out += fmt::format("// combine  a weighted sum of {} values, literal coefficients (sum of "
                       "|c| <= 1)\n",
                       values);
    break;
  case Combine::weights_array:
    out += fmt::format("// combine  per neighbourhood the weights array: reduce(add) of map(mult) "
                       "over\n//          zip(array({}, {}_w), join(window)), a weight per ring "
                       "max(|dy|, |dx|);\n//          then a weighted sum of {} value{}\n",
                       window, name, values, values == 1 ? "" : "s");
    break;
  }
  std::vector<std::string> labels;
  for (const Step& s : spec.steps)
    labels.push_back(step_label(s));
  const std::string extra_head =
      fmt::format("// extra    {} step{}{}", spec.steps.size(), spec.steps.size() == 1 ? "" : "s",
                  labels.empty() ? "" : ": ");
  out += extra_head + wrap(labels, ", ", extra_head.size(), "//          ") + "\n";
  out += fmt::format("// ops      ~{} floating-point operations per output point\n",
                     ops_per_point(spec));
  out += fmt::format("// Output [[float]N]M; inputs in [-1, 1] give outputs in [-{0}, {0}].\n",
                     output_bound(spec));
  return out;
}

/// userfun <name>_w: the weights of the weights array, by ring.
std::string ring_weights_userfun(const StencilSpec& spec, std::string_view name, int size) {
  std::string out;
  out += fmt::format("userfun {}_w(i: int, n: int): float {{\n", name);
  out += fmt::format("  int dy = abs(i / {} - {});\n", size, spec.radius);
  out += fmt::format("  int dx = abs(i % {} - {});\n", size, spec.radius);
  out += "  int d = max(dx, dy);\n";
  for (int d = 0; d < spec.radius; ++d)
    out += fmt::format("  if (d == {}) return {};\n", d,
                       literal(spec.ring_weights[static_cast<size_t>(d)]));
  out += fmt::format("  return {};\n}}\n", literal(spec.ring_weights.back()));
  return out;
}

/// What the user function reads and how the definition feeds it, per grid.
struct UserFunInputs {
  std::vector<std::string> values_read;   ///< the user function's parameters
  std::vector<std::string> args;          ///< the arguments the definition passes them
  std::vector<std::string> lambda_params; ///< per grid, the map2D lambda's parameter
  std::vector<std::string> zipped;        ///< per grid, what map2D maps over
  std::vector<double> coefficients;       ///< per value read
};

UserFunInputs user_fun_inputs(const StencilSpec& spec, std::string_view name, int left, int right,
                              int size, int window) {
  const bool weights_array = spec.combine == Combine::weights_array;
  UserFunInputs in;
  for (size_t i = 0; i < spec.grids.size(); ++i) {
    const Grid& g = spec.grids[i];
    in.coefficients.insert(in.coefficients.end(), g.coefficients.begin(), g.coefficients.end());
    if (g.use == Use::pointwise) {
      in.values_read.push_back(fmt::format("g{}", i));
      in.args.push_back(fmt::format("p{}", i));
      in.lambda_params.push_back(fmt::format("p{}", i));
      in.zipped.push_back(fmt::format("g{}", i));
      continue;
    }
    const std::string nbh = fmt::format("n{}", i);
    in.lambda_params.push_back(nbh);
    in.zipped.push_back(fmt::format("slide2D({}, 1, pad2D({}, {}, {}, g{}))", size, left, right,
                                    to_string(g.boundary), i));
    if (weights_array) {
      in.values_read.push_back(fmt::format("s{}", i));
      in.args.push_back(fmt::format(
          "reduce(add, 0.0f, map(mult, zip(array({}, {}_w), join({}))))[0]", window, name, nbh));
      continue;
    }
    for (const Offset& p : spec.points) {
      in.values_read.push_back(point_name(i, p));
      in.args.push_back(fmt::format("{}[{}][{}]", nbh, p.dy + left, p.dx + left));
    }
  }
  return in;
}

/// userfun <name>_f: the parameters, the sum, the steps.
std::string user_function(const StencilSpec& spec, std::string_view name, const UserFunInputs& in) {
  std::string out;
  std::vector<std::string> params;
  for (const std::string& v : in.values_read)
    params.push_back(v + ": float");
  const std::string head = fmt::format("userfun {}_f(", name);
  out += head + wrap(params, ", ", head.size(), "    ", 10) + "): float {\n";
  const std::string sum = weighted_sum(in.values_read, in.coefficients, 12, std::string(12, ' '));
  if (spec.steps.empty()) {
    out += "  return " + weighted_sum(in.values_read, in.coefficients, 9, std::string(9, ' ')) +
           ";\n}\n";
  } else {
    out += "  float s = " + sum + ";\n";
    out += spec.combine == Combine::sum
               ? fmt::format("  float v = s * {};\n", literal(spec.sum_scale))
               : "  float v = s;\n";
    for (const Step& s : spec.steps)
      out += "  v = " + step_text(s) + ";\n";
    out += "  return v;\n}\n";
  }
  return out;
}

/// def <name>: map2D of the user function over the grids.
std::string lift_definition(const StencilSpec& spec, std::string_view name,
                            const UserFunInputs& in) {
  std::string out;
  std::vector<std::string> grid_params;
  for (size_t i = 0; i < spec.grids.size(); ++i)
    grid_params.push_back(fmt::format("g{}: [[float]N]M", i));
  const std::string def_head = fmt::format("def {}(", name);
  out += def_head + wrap(grid_params, ", ", def_head.size(), "    ", 3) + ") =\n";
  const std::string lambda = in.lambda_params.size() == 1
                                 ? in.lambda_params[0]
                                 : fmt::format("({})", fmt::join(in.lambda_params, ", "));
  const std::string call_head = fmt::format("  map2D({} => {}_f(", lambda, name);
  out += call_head + wrap(in.args, ", ", call_head.size(), std::string(10, ' '), 2) + "),\n";
  if (in.zipped.size() == 1)
    out += "        " + in.zipped[0] + ")\n";
  else
    out += "        zip2D(" + wrap(in.zipped, ", ", 14, std::string(14, ' '), 2) + "))\n";
  return out;
}

} // namespace

std::string to_lift(const StencilSpec& spec, std::string_view name) {
  LIFTX_USER_CHECK(is_identifier(name), "'{}' is not a valid .lift identifier", name);
  LIFTX_USER_CHECK(!spec.points.empty() && !spec.grids.empty() &&
                       spec.grids[0].use == Use::neighbourhood,
                   "a synthetic stencil reads its first grid as a neighbourhood");
  const auto [left, right] = padding(spec.points);
  const int size = left + right + 1;
  const int window = (2 * spec.radius + 1) * (2 * spec.radius + 1);
  const bool weights_array = spec.combine == Combine::weights_array;
  LIFTX_USER_CHECK(!weights_array ||
                       (spec.shape == Shape::box && left == spec.radius && right == spec.radius),
                   "a weights array needs the box shape");
  std::string out = lift_header_comment(spec, name, size, window);
  if (weights_array)
    out += ring_weights_userfun(spec, name, size);
  const UserFunInputs inputs = user_fun_inputs(spec, name, left, right, size, window);
  out += user_function(spec, name, inputs);
  out += lift_definition(spec, name, inputs);
  return out;
}

} // namespace liftx::synth
