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

/// The padding of each side, left (top, front) and right (bottom, back), that the points need;
/// pad2D and pad3D pad every dimension alike.
std::pair<int, int> padding(const std::vector<Offset>& points) {
  int left = 0, right = 0;
  for (const Offset& p : points) {
    left = std::max({left, -p.dz, -p.dy, -p.dx});
    right = std::max({right, p.dz, p.dy, p.dx});
  }
  return {left, right};
}

/// "2D" or "3D": the suffix of map2D, slide2D, pad2D and zip2D.
std::string dims(const StencilSpec& spec) {
  return fmt::format("{}D", spec.rank);
}

/// A grid's type: [[float]N]M, or [[[float]O]N]M.
std::string grid_type(const StencilSpec& spec) {
  return spec.rank == 3 ? "[[[float]O]N]M" : "[[float]N]M";
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

std::string point_name(size_t grid, const Offset& p, int rank) {
  if (rank == 3)
    return fmt::format("g{}_{}_{}_{}", grid, coordinate('z', p.dz), coordinate('y', p.dy),
                       coordinate('x', p.dx));
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

/// "poly3 root": the steps' labels, separated by blanks.
std::string step_labels(const std::vector<Step>& steps) {
  std::vector<std::string> labels;
  for (const Step& s : steps)
    labels.push_back(step_label(s));
  return fmt::format("{}", fmt::join(labels, " "));
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

/// The window as a picture: `x` the centre, `o` a point read, `.` a point not read; a 3D window
/// plane by plane, each headed `z=dz:`.
std::vector<std::string> picture(const StencilSpec& spec) {
  const auto [left, right] = padding(spec.points);
  std::vector<std::string> rows;
  const int z_left = spec.rank == 3 ? left : 0, z_right = spec.rank == 3 ? right : 0;
  for (int dz = -z_left; dz <= z_right; ++dz) {
    if (spec.rank == 3)
      rows.push_back(fmt::format("z={}:", dz));
    for (int dy = -left; dy <= right; ++dy) {
      std::string row;
      for (int dx = -left; dx <= right; ++dx) {
        const bool read = std::find(spec.points.begin(), spec.points.end(), Offset{dy, dx, dz}) !=
                          spec.points.end();
        row += (dx > -left ? " " : "");
        row += dy == 0 && dx == 0 && dz == 0 ? (read ? 'x' : '+') : (read ? 'o' : '.');
      }
      rows.push_back(row);
    }
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
  const std::string steps = step_labels(spec.steps);
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

/// `aos(g0, g1)` or `aosoa(B, g0, g1)`: the group of every grid.
std::string layout_clause(const StencilSpec& spec) {
  std::vector<std::string> names;
  if (spec.layout == Layout::aosoa)
    names.push_back(std::to_string(spec.aosoa_block));
  for (size_t i = 0; i < spec.grids.size(); ++i)
    names.push_back(fmt::format("g{}", i));
  return fmt::format("{}({})", spec.layout == Layout::aos ? "aos" : "aosoa",
                     fmt::join(names, ", "));
}

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
  out += fmt::format("// {}: a synthetic {} stencil drawn by `liftx synth` (docs/synth.md).\n",
                     name, dims(spec));
  out += fmt::format("// seed     {}, stencil {}\n", spec.seed, spec.index);
  out += fmt::format("// shape    {}, radius {}: {} points of a {}{}x{} window (x: the output "
                     "point)\n",
                     shape_label(spec), spec.radius, spec.points.size(),
                     spec.rank == 3 ? fmt::format("{}x", size) : "", size, size);
  for (const std::string& row : picture(spec))
    out += "//            " + row + "\n";
  const std::string grids_head =
      fmt::format("// grids    {} of {}: ", spec.grids.size(), grid_type(spec));
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
  if (!spec.more_outputs.empty())
    out += fmt::format("// outputs  {}: the value above, then {} more weighted sum{} of the same "
                       "values\n",
                       spec.more_outputs.size() + 1, spec.more_outputs.size(),
                       spec.more_outputs.size() == 1 ? "" : "s");
  if (spec.layout != Layout::separate)
    out += fmt::format("// layout   the grids stored together: {}\n", layout_clause(spec));
  out += fmt::format("// ops      ~{} floating-point operations per output point\n",
                     ops_per_point(spec));
  if (spec.time_steps > 0)
    out += fmt::format("// iterate  {} steps of the stencil (a weighted average: its values "
                       "stay within [-1, 1])\n",
                       spec.time_steps);
  const std::string output =
      spec.more_outputs.empty()
          ? grid_type(spec)
          : fmt::format("a tuple of {} floats per point", spec.more_outputs.size() + 1);
  out += fmt::format("// Output {0}; inputs in [-1, 1] give outputs in [-{1}, {1}].\n", output,
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

/// `first_grid`: what the definition calls grid 0 (`x`, the step's parameter, under iterate).
UserFunInputs user_fun_inputs(const StencilSpec& spec, std::string_view name, int left, int right,
                              int size, int window, const std::string& first_grid) {
  const bool weights_array = spec.combine == Combine::weights_array;
  UserFunInputs in;
  for (size_t i = 0; i < spec.grids.size(); ++i) {
    const Grid& g = spec.grids[i];
    const std::string grid = i == 0 ? first_grid : fmt::format("g{}", i);
    in.coefficients.insert(in.coefficients.end(), g.coefficients.begin(), g.coefficients.end());
    if (g.use == Use::pointwise) {
      in.values_read.push_back(fmt::format("g{}", i));
      in.args.push_back(fmt::format("p{}", i));
      in.lambda_params.push_back(fmt::format("p{}", i));
      in.zipped.push_back(grid);
      continue;
    }
    const std::string nbh = fmt::format("n{}", i);
    in.lambda_params.push_back(nbh);
    in.zipped.push_back(fmt::format("slide{0}({1}, 1, pad{0}({2}, {3}, {4}, {5}))", dims(spec),
                                    size, left, right, to_string(g.boundary), grid));
    if (weights_array) {
      in.values_read.push_back(fmt::format("s{}", i));
      in.args.push_back(fmt::format(
          "reduce(add, 0.0f, map(mult, zip(array({}, {}_w), join({}))))[0]", window, name, nbh));
      continue;
    }
    for (const Offset& p : spec.points) {
      in.values_read.push_back(point_name(i, p, spec.rank));
      in.args.push_back(
          spec.rank == 3 ? fmt::format("{}[{}][{}][{}]", nbh, p.dz + left, p.dy + left, p.dx + left)
                         : fmt::format("{}[{}][{}]", nbh, p.dy + left, p.dx + left));
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
  if (!spec.more_outputs.empty()) {
    std::vector<std::string> results(spec.more_outputs.size() + 1, "float");
    const std::string result = fmt::format("({})", fmt::join(results, ", "));
    out +=
        head + wrap(params, ", ", head.size(), "    ", 3 + result.size()) + "): " + result + " {\n";
    // The first output as a stencil's one, then each further output's weighted sum.
    out +=
        "  float s = " + weighted_sum(in.values_read, in.coefficients, 12, std::string(12, ' ')) +
        ";\n";
    out += spec.combine == Combine::sum && !spec.steps.empty()
               ? fmt::format("  float v = s * {};\n", literal(spec.sum_scale))
               : "  float v = s;\n";
    for (const Step& s : spec.steps)
      out += "  v = " + step_text(s) + ";\n";
    std::vector<std::string> returned{"v"};
    for (size_t k = 0; k < spec.more_outputs.size(); ++k) {
      const std::string head_k = fmt::format("  float o{} = ", k + 1);
      out += head_k +
             weighted_sum(in.values_read, spec.more_outputs[k], head_k.size(),
                          std::string(head_k.size(), ' ')) +
             ";\n";
      returned.push_back(fmt::format("o{}", k + 1));
    }
    out += fmt::format("  return {{{}}};\n}}\n", fmt::join(returned, ", "));
    return out;
  }
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

/// def <name>: map2D (map3D) of the user function over the grids; under iterate, over the step's
/// parameter `x`.
std::string lift_definition(const StencilSpec& spec, std::string_view name,
                            const UserFunInputs& in) {
  std::string out;
  std::vector<std::string> grid_params;
  for (size_t i = 0; i < spec.grids.size(); ++i)
    grid_params.push_back(fmt::format("g{}: {}", i, grid_type(spec)));
  const std::string def_head = fmt::format("def {}(", name);
  const std::string layout =
      spec.layout == Layout::separate ? "" : " layout " + layout_clause(spec);
  out += def_head + wrap(grid_params, ", ", def_head.size(), "    ", 3 + layout.size()) + ")" +
         layout + " =\n";
  // Under iterate the map is indented by two more columns and closes the step's lambda.
  const std::string indent = spec.time_steps > 0 ? "    " : "  ";
  const std::string tail = spec.time_steps > 0 ? ")," : ")";
  if (spec.time_steps > 0)
    out += fmt::format("  iterate({}, x =>\n", spec.time_steps);
  const std::string lambda = in.lambda_params.size() == 1
                                 ? in.lambda_params[0]
                                 : fmt::format("({})", fmt::join(in.lambda_params, ", "));
  const std::string call_head =
      fmt::format("{}map{}({} => {}_f(", indent, dims(spec), lambda, name);
  const std::string column = indent + std::string(6, ' ');
  out += call_head + wrap(in.args, ", ", call_head.size(), column + "  ", 2) + "),\n";
  if (in.zipped.size() == 1)
    out += column + in.zipped[0] + tail + "\n";
  else
    out += column + "zip" + dims(spec) + "(" +
           wrap(in.zipped, ", ", column.size() + 6, column + std::string(6, ' '), 1 + tail.size()) +
           ")" + tail + "\n";
  if (spec.time_steps > 0)
    out += "    g0)\n";
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
  LIFTX_USER_CHECK(spec.time_steps == 0 || spec.grids.size() == 1,
                   "an iterated synthetic stencil reads one grid");
  const UserFunInputs inputs =
      user_fun_inputs(spec, name, left, right, size, window, spec.time_steps > 0 ? "x" : "g0");
  out += user_function(spec, name, inputs);
  out += lift_definition(spec, name, inputs);
  return out;
}

namespace {

/// The element function's values: a, or a and b.
std::vector<std::string> element_values(const ContractionSpec& c) {
  if (c.coefficients.size() == 2)
    return {"a", "a * a"};
  return {"a", "b", "a * b"};
}

/// userfun <name>_f: the element function (none for `mult`).
std::string element_function(const ContractionSpec& c, std::string_view name) {
  const bool two = c.coefficients.size() == 3;
  std::string out =
      fmt::format("userfun {}_f(a: float{}): float {{\n", name, two ? ", b: float" : "");
  out +=
      "  float v = " + weighted_sum(element_values(c), c.coefficients, 12, std::string(12, ' ')) +
      ";\n";
  for (const Step& s : c.steps)
    out += "  v = " + step_text(s) + ";\n";
  return out + "  return v;\n}\n";
}

std::string contraction_definition(const ContractionSpec& c, std::string_view name) {
  using Form = ContractionSpec::Form;
  const std::string f = c.builtin_mult ? "mult" : fmt::format("{}_f", name);
  // reduce(add, 0.0f, map(f, zip(u, v)))[0]: one output.
  auto reduced = [&](const std::string& over) {
    return fmt::format("reduce(add, 0.0f, map({}, {}))[0]", f, over);
  };
  switch (c.form) {
  case Form::rows:
  case Form::columns: {
    const bool rows = c.form == Form::rows;
    const std::string line = rows ? "row" : "column";
    std::string params = "A: [[float]N]M";
    if (c.with_vector)
      params += rows ? ", x: [float]N" : ", x: [float]M";
    const std::string over = c.with_vector ? fmt::format("zip({}, x)", line) : line;
    return fmt::format("def {}({}) =\n  map({} => {}, {})\n", name, params, line, reduced(over),
                       rows ? "A" : "transpose(A)");
  }
  case Form::product:
    return fmt::format("def {}(A: [[float]K]M, B: [[float]N]K) =\n  map(row => map(column => "
                       "{},\n                 transpose(B)), A)\n",
                       name, reduced("zip(row, column)"));
  case Form::product_bt:
    return fmt::format("def {}(A: [[float]K]M, B: [[float]K]N) =\n  map(row => map(other => {}, "
                       "B),\n      A)\n",
                       name, reduced("zip(row, other)"));
  case Form::product_at:
    return fmt::format("def {}(A: [[float]M]K, B: [[float]N]K) =\n  map(column => map(other => "
                       "{},\n                    transpose(B)),\n      transpose(A))\n",
                       name, reduced("zip(column, other)"));
  }
  LIFTX_UNREACHABLE("unknown contraction form");
}

std::string contraction_header(const ContractionSpec& c, std::string_view name) {
  using Form = ContractionSpec::Form;
  const bool reduction = c.form == Form::rows || c.form == Form::columns;
  std::string out =
      fmt::format("// {}: a synthetic {} drawn by `liftx synth --kind {}` "
                  "(docs/synth.md).\n",
                  name, reduction ? "reduction" : "product", reduction ? "reduction" : "product");
  out += fmt::format("// seed     {}, program {}\n", c.seed, c.index);
  if (reduction)
    out += fmt::format("// form     the sum along each {} of A{}\n",
                       c.form == Form::rows ? "row" : "column",
                       c.with_vector ? ", element by element with x" : "");
  else
    out += fmt::format("// form     {}: each output the sum over k of f(a_k, b_k)\n",
                       to_string(c.form));
  if (c.builtin_mult) {
    out += "// element  mult(a, b)\n";
  } else {
    std::vector<std::string> labels;
    for (const Step& s : c.steps)
      labels.push_back(step_label(s));
    out += fmt::format("// element  a weighted sum of {} (sum of |c| <= 1), then {} step{}{}{}\n",
                       fmt::join(element_values(c), ", "), c.steps.size(),
                       c.steps.size() == 1 ? "" : "s", labels.empty() ? "" : ": ",
                       fmt::join(labels, ", "));
  }
  out += fmt::format("// ops      ~{} floating-point operations per element reduced\n",
                     ops_per_element(c));
  return out;
}

} // namespace

std::string describe(const ProgramSpec& program) {
  if (const auto* c = std::get_if<ContractionSpec>(&program.spec)) {
    std::string form(to_string(c->form));
    if (c->with_vector)
      form += " with x";
    const std::string steps = step_labels(c->steps);
    return fmt::format("{}: {}, {}, ~{} ops per element", to_string(program.kind), form,
                       c->builtin_mult ? std::string("mult")
                                       : fmt::format("{} step{}{}", c->steps.size(),
                                                     c->steps.size() == 1 ? "" : "s",
                                                     steps.empty() ? "" : " (" + steps + ")"),
                       ops_per_element(*c));
  }
  const StencilSpec& spec = std::get<StencilSpec>(program.spec);
  if (program.kind == Kind::stencil2d)
    return describe(spec);
  std::string extra;
  if (spec.time_steps > 0)
    extra = fmt::format(", iterated {} times", spec.time_steps);
  if (!spec.more_outputs.empty())
    extra = fmt::format(", {} outputs", spec.more_outputs.size() + 1);
  if (spec.layout != Layout::separate)
    extra = ", stored " + layout_clause(spec);
  return fmt::format("{}: {}{}", to_string(program.kind), describe(spec), extra);
}

std::string to_lift(const ProgramSpec& program, std::string_view name) {
  if (const auto* c = std::get_if<ContractionSpec>(&program.spec)) {
    LIFTX_USER_CHECK(is_identifier(name), "'{}' is not a valid .lift identifier", name);
    std::string out = contraction_header(*c, name);
    if (!c->builtin_mult)
      out += element_function(*c, name);
    return out + "\n" + contraction_definition(*c, name);
  }
  return to_lift(std::get<StencilSpec>(program.spec), name);
}

std::string program_name(Kind kind, uint64_t seed, int index) {
  if (kind == Kind::stencil2d)
    return fmt::format("synth_{}_{}", seed, index);
  return fmt::format("synth_{}_{}_{}", to_string(kind), seed, index);
}

} // namespace liftx::synth
