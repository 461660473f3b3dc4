// Synthetic stencil generation: the seeded draws of a stencil's shape, grids, coefficients and
// steps, and the public names and measures of a StencilSpec. Its text forms (describe, to_lift)
// are in lift_text.cpp.
#include "synth/synth.hpp"

#include "support/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <numeric>
#include <tuple>

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

/// Whether a point is in a symmetric shape of radius r; in 3D the star keeps the axes, the cross
/// adds the diagonals of the axis planes (19 points at r = 1), the diamond is |dz|+|dy|+|dx| <= r.
bool in_shape(Shape shape, int r, const Offset& p) {
  const int az = std::abs(p.dz), ay = std::abs(p.dy), ax = std::abs(p.dx);
  if (std::max({az, ay, ax}) > r)
    return false;
  const int nonzero = (az > 0) + (ay > 0) + (ax > 0);
  switch (shape) {
  case Shape::star:
    return nonzero <= 1;
  case Shape::box:
    return true;
  case Shape::cross:
    // At most two coordinates move, by the same distance.
    return nonzero <= 1 || (nonzero == 2 && std::max({az, ay, ax}) * 2 == az + ay + ax);
  case Shape::diamond:
    return az + ay + ax <= r;
  case Shape::asymmetric:
    break;
  }
  LIFTX_UNREACHABLE("in_shape: asymmetric shapes are drawn, not enumerated");
}

void sort_row_major(std::vector<Offset>& points) {
  std::sort(points.begin(), points.end(), [](const Offset& a, const Offset& b) {
    return std::tie(a.dz, a.dy, a.dx) < std::tie(b.dz, b.dy, b.dx);
  });
}

/// Every point of the (2r+1)^rank window, plane by plane, row-major.
std::vector<Offset> window_points(int rank, int r) {
  std::vector<Offset> points;
  const int z_reach = rank == 3 ? r : 0;
  for (int dz = -z_reach; dz <= z_reach; ++dz)
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx)
        points.push_back({dy, dx, dz});
  return points;
}

std::vector<Offset> symmetric_points(Shape shape, int rank, int r) {
  std::vector<Offset> points;
  for (const Offset& p : window_points(rank, r))
    if (in_shape(shape, r, p))
      points.push_back(p);
  return points;
}

/// The one-sided star: the centre and r points along one direction of each axis.
std::vector<Offset> upwind_points(Draw& draw, int rank, int r) {
  const int sy = draw.chance(0.5) ? 1 : -1;
  const int sx = draw.chance(0.5) ? 1 : -1;
  const int sz = rank == 3 && draw.chance(0.5) ? 1 : -1;
  std::vector<Offset> points{{0, 0}};
  for (int k = 1; k <= r; ++k) {
    points.push_back({k * sy, 0});
    points.push_back({0, k * sx});
    if (rank == 3)
      points.push_back({0, 0, k * sz});
  }
  sort_row_major(points);
  return points;
}

/// The centre, one point of the outermost ring (so that the radius is r) and a few more of the
/// window: 2 to 10 points in all.
std::vector<Offset> subset_points(Draw& draw, int rank, int r) {
  std::vector<Offset> ring, rest;
  for (const Offset& p : window_points(rank, r)) {
    if (p == Offset{})
      continue;
    (std::max({std::abs(p.dz), std::abs(p.dy), std::abs(p.dx)}) == r ? ring : rest).push_back(p);
  }
  std::vector<Offset> points{{0, 0}};
  const size_t on_ring = draw.below(ring.size());
  points.push_back(ring[on_ring]);
  ring.erase(ring.begin() + static_cast<std::ptrdiff_t>(on_ring));
  rest.insert(rest.end(), ring.begin(), ring.end());
  const int window = static_cast<int>(window_points(rank, r).size());
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

/// Appends steps while the operation count aimed at leaves room for one (the cheapest, minmax,
/// costs 4): `fixed_ops` is what the function costs besides its steps once it has one.
void add_steps(Draw& draw, double target, int fixed_ops, std::vector<Step>& steps) {
  const std::vector<StepKind> kinds{StepKind::poly, StepKind::rational, StepKind::root,
                                    StepKind::minmax};
  int step_total = 0;
  for (const Step& s : steps)
    step_total += step_ops(s);
  while (steps.size() < 32) {
    const double room = target - fixed_ops - step_total;
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
    steps.push_back(draw_step(draw, kind, degree));
    step_total += step_ops(steps.back());
  }
}

/// A reduction (or, with `product`, a contraction of two matrices) and its element function.
ContractionSpec random_contraction(Draw& draw, bool product, const SynthOptions& options) {
  using Form = ContractionSpec::Form;
  ContractionSpec c;
  if (product) {
    const std::vector<Form> forms{Form::product, Form::product_bt, Form::product_at};
    c.form = draw.pick(forms);
    c.builtin_mult = draw.chance(0.5);
  } else {
    c.form = draw.chance(0.5) ? Form::rows : Form::columns;
    c.with_vector = draw.chance(0.6);
    c.builtin_mult = c.with_vector && draw.chance(0.3);
  }
  if (c.builtin_mult)
    return c;
  const bool two_values = product || c.with_vector;
  c.coefficients = normalised_coefficients(draw, two_values ? 3 : 2);
  // An element function is reached once per pair of values: a smaller budget than a stencil's.
  const double target = power_fraction(std::min(options.max_ops, 40), draw.unit());
  add_steps(draw, target, two_values ? 6 : 4, c.steps);
  return c;
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

std::string_view to_string(Kind kind) {
  switch (kind) {
  case Kind::stencil2d:
    return "stencil2d";
  case Kind::stencil3d:
    return "stencil3d";
  case Kind::time_steps:
    return "time_steps";
  case Kind::multi_output:
    return "multi_output";
  case Kind::layout:
    return "layout";
  case Kind::reduction:
    return "reduction";
  case Kind::product:
    return "product";
  }
  LIFTX_UNREACHABLE("unknown kind");
}

std::string_view to_string(ContractionSpec::Form form) {
  switch (form) {
  case ContractionSpec::Form::rows:
    return "rows";
  case ContractionSpec::Form::columns:
    return "columns";
  case ContractionSpec::Form::product:
    return "A B";
  case ContractionSpec::Form::product_bt:
    return "A B^T";
  case ContractionSpec::Form::product_at:
    return "A^T B";
  }
  LIFTX_UNREACHABLE("unknown contraction form");
}

std::optional<Shape> parse_shape(std::string_view text) {
  for (Shape s : kAllShapes)
    if (text == to_string(s))
      return s;
  return std::nullopt;
}

std::optional<Kind> parse_kind(std::string_view text) {
  for (Kind k : kAllKinds)
    if (text == to_string(k))
      return k;
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
  // Each further output: a weighted sum of the same values.
  ops += static_cast<int>(spec.more_outputs.size()) * (2 * combined_values(spec) - 1);
  return ops;
}

int ops_per_element(const ContractionSpec& spec) {
  if (spec.builtin_mult)
    return 2;
  // c0 a + c1 a a: 4; c0 a + c1 b + c2 a b: 6.
  int ops = spec.coefficients.size() == 3 ? 6 : 4;
  for (const Step& s : spec.steps)
    ops += step_ops(s);
  return ops + 1;
}

double output_bound(const StencilSpec& spec) {
  return spec.combine == Combine::sum && spec.steps.empty() ? combined_values(spec) : 1.0;
}

StencilSpec random_spec(std::mt19937_64& rng, const SynthOptions& options) {
  LIFTX_USER_CHECK(options.max_radius >= 1 && options.max_radius <= 3,
                   "the maximum radius must be 1, 2 or 3, got {}", options.max_radius);
  LIFTX_USER_CHECK(options.max_grids >= 1 && options.max_grids <= 6,
                   "the maximum number of grids must be 1 to 6, got {}", options.max_grids);
  LIFTX_USER_CHECK(options.min_grids >= 1 && options.min_grids <= options.max_grids,
                   "the minimum number of grids must be 1 to {}, got {}", options.max_grids,
                   options.min_grids);
  LIFTX_USER_CHECK(options.rank == 2 || options.rank == 3, "the rank must be 2 or 3, got {}",
                   options.rank);
  LIFTX_USER_CHECK(options.max_ops >= 1, "the operation budget must be at least 1, got {}",
                   options.max_ops);
  Draw draw(rng);
  StencilSpec spec;
  std::vector<Shape> shapes = options.shapes;
  if (shapes.empty())
    shapes.assign(std::begin(kAllShapes), std::end(kAllShapes));
  spec.rank = options.rank;
  spec.shape = draw.pick(shapes);
  // A 3D box of radius 2 reads 125 points: 3D windows stay within radius 2, a box within 1.
  const int max_radius = spec.rank == 2             ? options.max_radius
                         : spec.shape == Shape::box ? 1
                                                    : std::min(options.max_radius, 2);
  spec.radius = draw.between(1, max_radius);
  if (spec.shape == Shape::asymmetric) {
    spec.upwind = draw.chance(0.5);
    spec.points = spec.upwind ? upwind_points(draw, spec.rank, spec.radius)
                              : subset_points(draw, spec.rank, spec.radius);
  } else {
    spec.points = symmetric_points(spec.shape, spec.rank, spec.radius);
  }
  const int npoints = static_cast<int>(spec.points.size());

  const std::vector<Boundary> boundaries(std::begin(kAllBoundaries), std::end(kAllBoundaries));
  const int ngrids = draw.between(options.min_grids, options.max_grids);
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
  // (The weights array's user function indexes a 2D window.)
  if (spec.shape == Shape::box && draw.chance(0.5) && spec.rank == 2) {
    spec.combine = Combine::weights_array;
  } else {
    spec.combine = Combine::weighted;
    const bool over = 2 * combined_values(spec) - 1 > target;
    spec.combine = draw.chance(over ? 0.5 : 0.15) ? Combine::sum : Combine::weighted;
    // A plain sum of several values is scaled only before steps.
    if (options.averaging && spec.combine == Combine::sum && combined_values(spec) > 1)
      spec.combine = Combine::weighted;
  }

  const int values = combined_values(spec);
  std::vector<double> c = spec.combine == Combine::sum || values == 1
                              ? std::vector<double>(static_cast<size_t>(values), 1.0)
                              : normalised_coefficients(draw, values);
  if (options.averaging)
    for (double& coefficient : c)
      coefficient = std::abs(coefficient);
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

  // The steps; with them a plain sum costs its scale too.
  if (!options.averaging)
    add_steps(draw, target, base_ops(spec) + (spec.combine == Combine::sum ? 1 : 0), spec.steps);
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

ProgramSpec generate_program(Kind kind, uint64_t seed, int index, const SynthOptions& options) {
  if (kind == Kind::reduction || kind == Kind::product) {
    std::mt19937_64 rng(stencil_seed(seed, index));
    Draw draw(rng);
    ContractionSpec c = random_contraction(draw, kind == Kind::product, options);
    c.seed = seed;
    c.index = index;
    return {kind, c};
  }
  SynthOptions o = options;
  switch (kind) {
  case Kind::stencil3d:
    o.rank = 3;
    o.max_grids = std::min(o.max_grids, 3);
    o.min_grids = std::min(o.min_grids, o.max_grids);
    break;
  case Kind::time_steps: // iterate's step reads one grid and averages it
    o.min_grids = o.max_grids = 1;
    o.averaging = true;
    break;
  case Kind::layout: // a group holds two grids or more
    o.max_grids = std::max(o.max_grids, 2);
    o.min_grids = std::max(o.min_grids, 2);
    break;
  default:
    break;
  }
  std::mt19937_64 rng(stencil_seed(seed, index));
  StencilSpec spec = random_spec(rng, o);
  spec.seed = seed;
  spec.index = index;
  Draw draw(rng);
  if (kind == Kind::time_steps) {
    const int steps[] = {4, 8, 16, 32, 64};
    spec.time_steps = steps[draw.below(std::size(steps))];
  } else if (kind == Kind::multi_output) {
    const int outputs = draw.between(2, 3);
    for (int k = 1; k < outputs; ++k)
      spec.more_outputs.push_back(normalised_coefficients(draw, combined_values(spec)));
  } else if (kind == Kind::layout) {
    const int blocks[] = {4, 8, 16, 32};
    spec.layout = draw.chance(0.5) ? Layout::aos : Layout::aosoa;
    if (spec.layout == Layout::aosoa)
      spec.aosoa_block = blocks[draw.below(std::size(blocks))];
  }
  return {kind, spec};
}

} // namespace liftx::synth
