#include "synth/synth.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace liftx::synth {

namespace {

// ---- draws: only the raw output of mt19937_64, so every platform draws the same -----------------

class Draw {
public:
  explicit Draw(std::mt19937_64& rng) : rng_(rng) {}

  /// Uniform in [0, n), n >= 1 (rejection sampling: no modulo bias).
  uint64_t below(uint64_t n) {
    const uint64_t limit = (0 - n) % n; // 2^64 mod n: values below it would be over-represented
    while (true) {
      const uint64_t r = rng_();
      if (r >= limit)
        return r % n;
    }
  }
  /// Uniform integer in [lo, hi].
  int between(int lo, int hi) {
    return lo + static_cast<int>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  /// Uniform in [0, 1), 53 bits.
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi). The product and the sum are separate statements so that no compiler
  /// contracts them into a fused multiply-add (which rounds differently).
  double uniform(double lo, double hi) {
    const double offset = (hi - lo) * unit();
    return lo + offset;
  }
  bool chance(double p) { return unit() < p; }
  double sign() { return chance(0.5) ? -1.0 : 1.0; }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

private:
  std::mt19937_64& rng_;
};

/// base^u for u in [0, 1) from 24 bits of u, with square roots and products only (both correctly
/// rounded in IEEE arithmetic, unlike pow and exp): the same on every platform.
double power_fraction(double base, double u) {
  double result = 1.0;
  double root = base;
  for (int bit = 0; bit < 24; ++bit) {
    root = std::sqrt(root);
    u *= 2;
    if (u >= 1) {
      result *= root;
      u -= 1;
    }
  }
  return result;
}

/// A coefficient as printed: truncated towards zero to a multiple of 1e-4 (bounds drawn below
/// stay bounds), never zero.
double quantise(double x) {
  double k = std::trunc(x * 1e4);
  if (k == 0)
    k = x < 0 ? -1 : 1;
  return k / 1e4;
}

// ---- shapes -------------------------------------------------------------------------------------

bool in_shape(Shape shape, int r, int dy, int dx) {
  const int ay = std::abs(dy), ax = std::abs(dx);
  if (std::max(ay, ax) > r)
    return false;
  switch (shape) {
  case Shape::star:
    return dy == 0 || dx == 0;
  case Shape::box:
    return true;
  case Shape::cross:
    return dy == 0 || dx == 0 || ay == ax;
  case Shape::diamond:
    return ay + ax <= r;
  case Shape::asymmetric:
    break;
  }
  LIFTX_UNREACHABLE("in_shape: asymmetric shapes are drawn, not enumerated");
}

void sort_row_major(std::vector<Offset>& points) {
  std::sort(points.begin(), points.end(), [](const Offset& a, const Offset& b) {
    return a.dy != b.dy ? a.dy < b.dy : a.dx < b.dx;
  });
}

std::vector<Offset> symmetric_points(Shape shape, int r) {
  std::vector<Offset> points;
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx)
      if (in_shape(shape, r, dy, dx))
        points.push_back({dy, dx});
  return points;
}

/// The one-sided star: the centre and r points along one direction of each axis.
std::vector<Offset> upwind_points(Draw& draw, int r) {
  const int sy = draw.chance(0.5) ? 1 : -1;
  const int sx = draw.chance(0.5) ? 1 : -1;
  std::vector<Offset> points{{0, 0}};
  for (int k = 1; k <= r; ++k) {
    points.push_back({k * sy, 0});
    points.push_back({0, k * sx});
  }
  sort_row_major(points);
  return points;
}

/// The centre, one point of the outermost ring (so that the radius is r) and a few more of the
/// window: 2 to 10 points in all.
std::vector<Offset> subset_points(Draw& draw, int r) {
  std::vector<Offset> ring, rest;
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx) {
      if (dy == 0 && dx == 0)
        continue;
      (std::max(std::abs(dy), std::abs(dx)) == r ? ring : rest).push_back({dy, dx});
    }
  std::vector<Offset> points{{0, 0}};
  const size_t on_ring = draw.below(ring.size());
  points.push_back(ring[on_ring]);
  ring.erase(ring.begin() + static_cast<std::ptrdiff_t>(on_ring));
  rest.insert(rest.end(), ring.begin(), ring.end());
  const int window = (2 * r + 1) * (2 * r + 1);
  const int total = draw.between(2, std::min(window, 10));
  // A partial Fisher-Yates shuffle picks total - 2 distinct further points.
  for (int i = 0; i < total - 2; ++i) {
    const size_t j = i + draw.below(rest.size() - i);
    std::swap(rest[i], rest[j]);
    points.push_back(rest[i]);
  }
  sort_row_major(points);
  return points;
}

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

int ring_size(int d) {
  return d == 0 ? 1 : 8 * d;
}

// ---- coefficients and steps ---------------------------------------------------------------------

/// n coefficients of random signs with sum |c| <= 1 (each at least 1/(9n) before truncation).
std::vector<double> normalised_coefficients(Draw& draw, int n) {
  std::vector<int> k(static_cast<size_t>(n));
  for (int& v : k)
    v = draw.between(1, 9);
  const double total = std::accumulate(k.begin(), k.end(), 0);
  std::vector<double> c;
  for (int v : k)
    c.push_back(quantise(draw.sign() * v / total));
  return c;
}

int step_ops(const Step& s) {
  switch (s.kind) {
  case StepKind::poly:
    return 2 * (static_cast<int>(s.c.size()) - 1); // one multiply and one add per degree
  case StepKind::rational:
    return 6; // c0*v, +c1, v*v, c2*(..), 1+.., /
  case StepKind::root:
    return 6; // c0*v, v*v, +c1, sqrt, /, +c2
  case StepKind::minmax:
    return 4; // c0*v, +c1, fmax, fmin
  }
  LIFTX_UNREACHABLE("unknown step kind");
}

/// A step that maps [-1, 1] into [-1, 1] with a Lipschitz constant at most 1 (rounding errors do
/// not grow along the chain) and a slope near v = 0 of 0.6 to 1 in magnitude (the output keeps
/// the variation of the input: a chain of steps does not converge to a constant).
Step draw_step(Draw& draw, StepKind kind, int degree) {
  Step s{kind, {}};
  switch (kind) {
  case StepKind::poly: {
    // |c0| <= 0.05, |c1| in [0.6, 0.9], sum_{k>=2} k |ck| <= 1 - |c1|: |p'| <= 1 and
    // |p| <= |c0| + sum |ck| <= 1 on [-1, 1].
    const double c1 = draw.uniform(0.6, 0.9);
    std::vector<double> raw;
    double weight = 0;
    for (int k = 2; k <= degree; ++k) {
      raw.push_back(draw.sign() * draw.uniform(0.1, 1.0));
      const double term = k * std::abs(raw.back()); // not fused with the sum (see uniform)
      weight += term;
    }
    s.c.push_back(quantise(draw.sign() * draw.uniform(0.0, 0.05)));
    s.c.push_back(quantise(draw.sign() * c1));
    for (double a : raw)
      s.c.push_back(quantise(a * (1 - c1) / weight));
    break;
  }
  case StepKind::rational: {
    // (c0 v + c1) / (1 + c2 v^2): |f| <= |c0| + |c1| <= 0.9 and
    // |f'| <= |c0| + 2 c2 (|c0| + |c1|) <= 1.
    const double a = draw.uniform(0.6, 0.85);
    const double b = draw.uniform(0.0, 0.05);
    const double c_max = (1 - a) / (2 * (a + b));
    s.c = {quantise(draw.sign() * a), quantise(draw.sign() * b),
           quantise(draw.uniform(0.02, c_max))};
    break;
  }
  case StepKind::root: {
    // c0 v / sqrt(v^2 + c1) + c2 with c1 in [1, 2] (the root's argument is at least 1) and
    // c0 = g sqrt(c1): slope g at 0, |f'| <= g, |f| <= g sqrt(c1 / (1 + c1)) + |c2| < 1.
    const double g = draw.uniform(0.6, 0.95);
    const double e = quantise(draw.uniform(1.0, 2.0));
    s.c = {quantise(draw.sign() * g * std::sqrt(e)), e,
           quantise(draw.sign() * draw.uniform(0.0, 0.05))};
    break;
  }
  case StepKind::minmax:
    // fmin(fmax(c0 v + c1, c2), c3): |c0| in [0.6, 1], the clamp wide: [c2, c3] within [-1, 1].
    s.c = {quantise(draw.sign() * draw.uniform(0.6, 1.0)),
           quantise(draw.sign() * draw.uniform(0.0, 0.05)), quantise(-draw.uniform(0.5, 1.0)),
           quantise(draw.uniform(0.5, 1.0))};
    break;
  }
  return s;
}

int base_ops(const StencilSpec& spec) {
  const int values = combined_values(spec);
  int ops = 0;
  if (spec.combine == Combine::weights_array) {
    const int window = (2 * spec.radius + 1) * (2 * spec.radius + 1);
    for (const Grid& g : spec.grids)
      if (g.use == Use::neighbourhood)
        ops += 2 * window;
  }
  if (spec.combine == Combine::sum)
    ops += values - 1 + (spec.steps.empty() ? 0 : 1);
  else if (values > 1)
    ops += 2 * values - 1;
  return ops;
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

std::string_view to_string(Shape shape) {
  switch (shape) {
  case Shape::star:
    return "star";
  case Shape::box:
    return "box";
  case Shape::cross:
    return "cross";
  case Shape::diamond:
    return "diamond";
  case Shape::asymmetric:
    return "asymmetric";
  }
  LIFTX_UNREACHABLE("unknown shape");
}

std::string_view to_string(Boundary boundary) {
  switch (boundary) {
  case Boundary::clamp:
    return "clamp";
  case Boundary::mirror:
    return "mirror";
  case Boundary::wrap:
    return "wrap";
  case Boundary::zero:
    return "constant(0.0f)";
  }
  LIFTX_UNREACHABLE("unknown boundary");
}

std::string_view to_string(Combine combine) {
  switch (combine) {
  case Combine::sum:
    return "sum";
  case Combine::weighted:
    return "weighted";
  case Combine::weights_array:
    return "weights-array";
  }
  LIFTX_UNREACHABLE("unknown combination");
}

std::string_view to_string(StepKind kind) {
  switch (kind) {
  case StepKind::poly:
    return "poly";
  case StepKind::rational:
    return "rational";
  case StepKind::root:
    return "root";
  case StepKind::minmax:
    return "minmax";
  }
  LIFTX_UNREACHABLE("unknown step kind");
}

std::optional<Shape> parse_shape(std::string_view text) {
  for (Shape s : kAllShapes)
    if (text == to_string(s))
      return s;
  return std::nullopt;
}

int combined_values(const StencilSpec& spec) {
  int values = 0;
  for (const Grid& g : spec.grids)
    values += g.use == Use::pointwise || spec.combine == Combine::weights_array
                  ? 1
                  : static_cast<int>(spec.points.size());
  return values;
}

int ops_per_point(const StencilSpec& spec) {
  int ops = base_ops(spec);
  for (const Step& s : spec.steps)
    ops += step_ops(s);
  return ops;
}

double output_bound(const StencilSpec& spec) {
  return spec.combine == Combine::sum && spec.steps.empty() ? combined_values(spec) : 1.0;
}

StencilSpec random_spec(std::mt19937_64& rng, const SynthOptions& options) {
  LIFTX_USER_CHECK(options.max_radius >= 1 && options.max_radius <= 3,
                   "the maximum radius must be 1, 2 or 3, got {}", options.max_radius);
  LIFTX_USER_CHECK(options.max_grids >= 1 && options.max_grids <= 6,
                   "the maximum number of grids must be 1 to 6, got {}", options.max_grids);
  LIFTX_USER_CHECK(options.max_ops >= 1, "the operation budget must be at least 1, got {}",
                   options.max_ops);
  Draw draw(rng);
  StencilSpec spec;
  std::vector<Shape> shapes = options.shapes;
  if (shapes.empty())
    shapes.assign(std::begin(kAllShapes), std::end(kAllShapes));
  spec.shape = draw.pick(shapes);
  spec.radius = draw.between(1, options.max_radius);
  if (spec.shape == Shape::asymmetric) {
    spec.upwind = draw.chance(0.5);
    spec.points = spec.upwind ? upwind_points(draw, spec.radius) : subset_points(draw, spec.radius);
  } else {
    spec.points = symmetric_points(spec.shape, spec.radius);
  }
  const int npoints = static_cast<int>(spec.points.size());

  const std::vector<Boundary> boundaries(std::begin(kAllBoundaries), std::end(kAllBoundaries));
  const int ngrids = draw.between(1, options.max_grids);
  int read = npoints;
  spec.grids.push_back({Use::neighbourhood, draw.pick(boundaries), {}});
  for (int i = 1; i < ngrids; ++i) {
    // Draw both either way, so that the rest of the stencil does not depend on max_points.
    const bool neighbourhood = draw.chance(0.4);
    const Boundary boundary = draw.pick(boundaries);
    if (neighbourhood && read + npoints <= options.max_points) {
      spec.grids.push_back({Use::neighbourhood, boundary, {}});
      read += npoints;
    } else {
      spec.grids.push_back({Use::pointwise, Boundary::clamp, {}});
    }
  }

  // The operation count aimed at, log-uniform in [1, max_ops). A plain sum (values - 1
  // operations) is likelier when a weighted one (2 values - 1) would pass it; the steps fill what
  // combining the values leaves.
  const double target = power_fraction(options.max_ops, draw.unit());
  if (spec.shape == Shape::box && draw.chance(0.5)) {
    spec.combine = Combine::weights_array;
  } else {
    spec.combine = Combine::weighted;
    const bool over = 2 * combined_values(spec) - 1 > target;
    spec.combine = draw.chance(over ? 0.5 : 0.15) ? Combine::sum : Combine::weighted;
  }

  const int values = combined_values(spec);
  std::vector<double> c = spec.combine == Combine::sum || values == 1
                              ? std::vector<double>(static_cast<size_t>(values), 1.0)
                              : normalised_coefficients(draw, values);
  size_t next = 0;
  for (Grid& g : spec.grids) {
    const size_t n = g.use == Use::pointwise || spec.combine == Combine::weights_array
                         ? 1
                         : static_cast<size_t>(npoints);
    g.coefficients.assign(c.begin() + static_cast<std::ptrdiff_t>(next),
                          c.begin() + static_cast<std::ptrdiff_t>(next + n));
    next += n;
  }
  if (spec.combine == Combine::weights_array) {
    // Per ring d (8d points, the centre 1) a positive weight; sum over the window <= 1.
    std::vector<int> k;
    int total = 0;
    for (int d = 0; d <= spec.radius; ++d) {
      k.push_back(draw.between(1, 9));
      total += ring_size(d) * k.back();
    }
    for (int v : k)
      spec.ring_weights.push_back(quantise(static_cast<double>(v) / total));
  }
  if (spec.combine == Combine::sum)
    spec.sum_scale = std::max(1e-4, std::trunc(1e4 / values) / 1e4);

  // The steps; the cheapest (minmax) costs 4 operations.
  const std::vector<StepKind> kinds{StepKind::poly, StepKind::rational, StepKind::root,
                                    StepKind::minmax};
  while (spec.steps.size() < 32) {
    const int scale_op = spec.combine == Combine::sum && spec.steps.empty() ? 1 : 0;
    const double room = target - ops_per_point(spec) - scale_op;
    if (room < 4)
      break;
    std::vector<std::pair<StepKind, int>> fitting; // (kind, poly degree)
    for (StepKind kind : kinds) {
      if (kind == StepKind::poly) {
        for (int degree = 2; degree <= 4; ++degree)
          if (2 * degree <= room)
            fitting.push_back({kind, degree});
      } else if (step_ops(Step{kind, {0, 0, 0, 0}}) <= room) {
        fitting.push_back({kind, 0});
      }
    }
    const auto [kind, degree] = draw.pick(fitting);
    spec.steps.push_back(draw_step(draw, kind, degree));
  }
  return spec;
}

uint64_t stencil_seed(uint64_t seed, int index) {
  // SplitMix64 (Steele et al.) of the seed advanced by index + 1 golden-ratio increments.
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(index) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

StencilSpec generate(uint64_t seed, int index, const SynthOptions& options) {
  std::mt19937_64 rng(stencil_seed(seed, index));
  StencilSpec spec = random_spec(rng, options);
  spec.seed = seed;
  spec.index = index;
  return spec;
}

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
