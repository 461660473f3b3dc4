#pragma once
/// Synthetic programs for training the cost model beyond the eight benchmarks: a seeded random
/// description (StencilSpec, ContractionSpec) and its `.lift` source text (docs/synth.md). Every
/// kind of program the variant space makes is drawn (Kind): 2D and 3D stencils, iterated steps,
/// multi-output steps, grids stored together, row and column reductions, products.
///
/// A stencil reads 1..6 input grids [[float]N]M and writes one [[float]N]M. The first grid is
/// always read as a neighbourhood (slide2D of a pad2D), every further grid either point-wise (its
/// centre value, zipped in with zip2D) or as a neighbourhood of its own. All neighbourhoods share
/// one point set (shape and radius); each has its own boundary. One user function combines the
/// values read into one weighted sum (literal coefficients, or a plain sum, or per neighbourhood a
/// reduce over a weights array generated from the window index), then applies a chain of bounded
/// steps (polynomial, rational, sqrt, fmin/fmax) that raise the operation count. Weights and
/// steps are chosen so that inputs in [-1, 1] give outputs in [-1, 1] through Lipschitz-1 steps:
/// results are finite and rounding errors do not grow along the chain.
///
/// Generation is deterministic for a seed on every platform: the draws use only the raw output
/// of std::mt19937_64 (standardised), never the standard library's distributions.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace liftx::synth {

/// What a synthetic program is, named as the cost model's regression suite names its kinds
/// (rewrite::ProgramKind, `liftx evaluate --model`): the programs drawn are of that kind.
enum class Kind {
  stencil2d,    ///< the stencils below (StencilSpec)
  stencil3d,    ///< the same over [[[float]O]N]M: map3D of slide3D windows
  time_steps,   ///< one grid's 2D stencil, a weighted average, as the step of iterate(T, ...)
  multi_output, ///< a 2D stencil whose user function returns 2 or 3 weighted sums
  layout,       ///< a 2D stencil of 2 or more grids stored together (`layout aos|aosoa`)
  reduction,    ///< a row or column reduction of a matrix, alone or zipped with a vector
  product,      ///< a contraction of two matrices: A B, A B^T or A^T B (ContractionSpec)
};
inline constexpr Kind kAllKinds[] = {Kind::stencil2d,    Kind::stencil3d, Kind::time_steps,
                                     Kind::multi_output, Kind::layout,    Kind::reduction,
                                     Kind::product};

enum class Shape {
  star,      ///< von Neumann: the points on the two axes, |d| <= r
  box,       ///< the whole (2r+1)^2 window
  cross,     ///< star plus the diagonals |dy| == |dx|
  diamond,   ///< |dy| + |dx| <= r
  asymmetric ///< one-sided (upwind star) or a random subset of the window with the centre
};
inline constexpr Shape kAllShapes[] = {Shape::star, Shape::box, Shape::cross, Shape::diamond,
                                       Shape::asymmetric};

enum class Boundary { clamp, mirror, wrap, zero }; ///< zero: pad with constant(0.0f)
inline constexpr Boundary kAllBoundaries[] = {Boundary::clamp, Boundary::mirror, Boundary::wrap,
                                              Boundary::zero};

enum class Use { neighbourhood, pointwise };

/// How the user function combines the values it reads.
enum class Combine {
  sum,          ///< a plain sum (every coefficient 1)
  weighted,     ///< literal coefficients in the user function
  weights_array ///< box only: per neighbourhood reduce(add, 0.0f, map(mult, zip(array(S*S, w),
                ///< join(nbh))))[0], then literal coefficients over those sums and the points
};

/// One step of the extra arithmetic on the running value v (|v| <= 1 before and after).
enum class StepKind {
  poly,     ///< v = c0 + v * (c1 + v * (... + v * cd)), degree d = coefficients - 1
  rational, ///< v = (c0 * v + c1) / (1.0f + c2 * v * v)
  root,     ///< v = c0 * v / sqrt(v * v + c1) + c2, c1 >= 1
  minmax    ///< v = fmin(fmax(c0 * v + c1, c2), c3)
};

struct Step {
  StepKind kind = StepKind::poly;
  std::vector<double> c; ///< coefficients, each a multiple of 1e-4 (printed exactly)
};

/// A point of the neighbourhood relative to the output point: row offset dy, column offset dx,
/// plane offset dz (3D stencils only).
struct Offset {
  int dy = 0;
  int dx = 0;
  int dz = 0;
  friend bool operator==(const Offset&, const Offset&) = default;
};

struct Grid {
  Use use = Use::neighbourhood;
  Boundary boundary = Boundary::clamp; ///< neighbourhoods only
  /// The coefficient of each value this grid contributes to the user function's sum: one per
  /// point for a neighbourhood (one for its weights-array sum under Combine::weights_array), one
  /// for a point-wise grid. All 1 under Combine::sum.
  std::vector<double> coefficients;
};

/// How the grids of a stencil are stored (Kind::layout).
enum class Layout {
  separate, ///< a buffer per grid
  aos,      ///< `layout aos(g0, g1, ...)`: each point's values side by side
  aosoa     ///< `layout aosoa(B, g0, g1, ...)`: blocks of B values of a row per grid
};

struct StencilSpec {
  int rank = 2; ///< 2, or 3 (Kind::stencil3d: points with dz, grids [[[float]O]N]M)
  Shape shape = Shape::star;
  int radius = 1;             ///< the largest |dy| or |dx| of a point, 1..3
  bool upwind = false;        ///< asymmetric: the one-sided star (else a random subset)
  std::vector<Offset> points; ///< the neighbourhood's points, row-major, centre included
  std::vector<Grid> grids;    ///< 1..6; grids[0] is a neighbourhood
  Combine combine = Combine::weighted;
  /// Combine::weights_array: the weight of each ring max(|dy|, |dx|) = 0..radius of the window.
  std::vector<double> ring_weights;
  /// Combine::sum with steps: the sum is scaled by this (<= 1 / values) before the first step.
  double sum_scale = 1.0;
  std::vector<Step> steps;
  /// Kind::time_steps: the stencil (of one grid) is the step of iterate(time_steps, ...).
  int time_steps = 0;
  /// Kind::multi_output: per further output, the coefficients of its weighted sum of the values
  /// (sum |c| <= 1, no steps); the user function returns a tuple.
  std::vector<std::vector<double>> more_outputs;
  Layout layout = Layout::separate;
  int aosoa_block = 0; ///< Layout::aosoa: B
  uint64_t seed = 0;   ///< documentation only: where the spec was drawn (see generate)
  int index = 0;
};

/// A reduction or a product (Kind::reduction, Kind::product): every output reduces, with add, an
/// element function of one or two values along a row or column.
struct ContractionSpec {
  enum class Form {
    rows,       ///< map(row => reduce(add, 0.0f, map(f, row or zip(row, x)))[0], A), x: [float]N
    columns,    ///< the same over transpose(A), x: [float]M
    product,    ///< A B: A [[float]K]M, B [[float]N]K (mm)
    product_bt, ///< A B^T: B [[float]K]N
    product_at  ///< A^T B: A [[float]M]K, B [[float]N]K
  };
  Form form = Form::rows;
  bool with_vector = false;  ///< rows, columns: the element function also reads a vector
  bool builtin_mult = false; ///< two values and `mult` (mv, mm), no user function
  /// The element function's sum before the steps: c0 a + c1 a a of one value, c0 a + c1 b +
  /// c2 a b of two; sum |c| <= 1, so |value| <= 1 for inputs in [-1, 1].
  std::vector<double> coefficients;
  std::vector<Step> steps;
  uint64_t seed = 0;
  int index = 0;
};

/// A drawn program of any kind.
struct ProgramSpec {
  Kind kind = Kind::stencil2d;
  std::variant<StencilSpec, ContractionSpec> spec;
};

struct SynthOptions {
  std::vector<Shape> shapes; ///< the shapes to draw from; empty: all
  int max_radius = 3;        ///< 1..3
  int max_grids = 6;         ///< 1..6
  /// Further grids are neighbourhoods only while all neighbourhoods together read at most this
  /// many points (a box of radius 3 reads 49): keeps user functions and kernels moderate.
  int max_points = 64;
  /// The operation count aimed at is drawn log-uniformly in [1, max_ops]; the chain of steps
  /// fills the gap above what combining the values costs.
  int max_ops = 100;
  int rank = 2;      ///< 2, or 3: points with dz (radius at most 2, a box's at most 1)
  int min_grids = 1; ///< at least this many grids (<= max_grids)
  /// Every output a weighted average of the values read: positive coefficients summing to 1 less
  /// their rounding to 1e-4, no plain sum, no steps. Iterating such a stencil neither grows its
  /// values nor their rounding errors, nor drives them to zero (which would make checks blind),
  /// as a step that shrinks towards 0 would.
  bool averaging = false;
};

/// Draws a description. UserError if the options are out of range.
StencilSpec random_spec(std::mt19937_64& rng, const SynthOptions& options);

/// The generator seed of stencil `index` of a run with `seed` (a SplitMix64 mix of both), so that
/// stencil i of `--count 5` and of `--count 50` are the same.
uint64_t stencil_seed(uint64_t seed, int index);

/// random_spec with the generator seeded by stencil_seed(seed, index); records seed and index.
StencilSpec generate(uint64_t seed, int index, const SynthOptions& options);

/// Program `index` of a run with `seed` of the given kind, drawn from its own generator
/// (stencil_seed). Kind::stencil2d draws exactly generate(seed, index, options); the other kinds
/// restrict or extend `options` as their programs need (one grid for time steps, two or more
/// for a layout, rank 3).
ProgramSpec generate_program(Kind kind, uint64_t seed, int index, const SynthOptions& options);

/// Approximate floating-point operations per output point: + - * / sqrt fmin fmax each count 1;
/// the weights array's reduce costs one multiply and one add per window point (its weights are
/// integer arithmetic and literals); index arithmetic does not count.
int ops_per_point(const StencilSpec& spec);

/// Floating-point operations per element a contraction reduces: its element function (1 for
/// `mult`) and the add.
int ops_per_element(const ContractionSpec& spec);

/// The number of values the user function combines (points of every neighbourhood, or one sum
/// per neighbourhood under Combine::weights_array, plus one per point-wise grid).
int combined_values(const StencilSpec& spec);

/// A bound on |output| for inputs in [-1, 1]: 1, or the number of values for a plain sum without
/// steps.
double output_bound(const StencilSpec& spec);

/// One line: "cross r=2 (9 points), 3 grids [g0 nbh mirror, g1 point, g2 nbh wrap], weighted, 2
/// steps (poly3 root), ~40 ops".
std::string describe(const StencilSpec& spec);

/// The `.lift` source: a comment header describing the stencil, then its user functions
/// (`NAME_f`, and `NAME_w` for a weights array) and `def NAME(g0: [[float]N]M, ...)`. `name` must
/// be an identifier (UserError otherwise).
std::string to_lift(const StencilSpec& spec, std::string_view name);

/// describe and to_lift of a program of any kind.
std::string describe(const ProgramSpec& program);
std::string to_lift(const ProgramSpec& program, std::string_view name);
/// The file name stem of program `index` of a run with `seed`: synth_<seed>_<index> for 2D
/// stencils (as before kinds), synth_<kind>_<seed>_<index> otherwise.
std::string program_name(Kind kind, uint64_t seed, int index);

std::string_view to_string(Shape shape);
std::string_view to_string(Boundary boundary);
std::string_view to_string(Combine combine);
std::string_view to_string(StepKind kind);
std::string_view to_string(Kind kind);
std::string_view to_string(ContractionSpec::Form form);
std::optional<Shape> parse_shape(std::string_view text);
std::optional<Kind> parse_kind(std::string_view text);

} // namespace liftx::synth
