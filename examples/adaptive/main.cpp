// adaptive: one Jacobi stencil run on grids of several shapes through liftx::AdaptiveProgram,
// which picks, per shape, the variant `liftx adapt` measured fastest at the nearest training
// shape. Each shape's result after a few steps is checked against a plain C++ loop.
//
//   adaptive --print-stencil > jacobi.lift          # the application's stencil, for liftx adapt
//   liftx adapt jacobi.lift --device cpu --shapes 64x64 256x64 64x256 -o adaptive.json
//   adaptive adaptive.json [--device D] [--shapes 64x64,128x512,...] [--steps S]
//
// A shape where no portfolio member applies (its tiles or work-group do not divide the grid) is
// run with liftx's default lowering instead, and says so.
//
// Exit status: 0 when every shape matches the C++ loop, 1 on a mismatch, 2 on bad arguments or a
// liftx error (an artifact of another stencil or another device included).
#include <liftx/liftx.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

struct Shape {
  int64_t rows = 0; ///< M
  int64_t cols = 0; ///< N
};

struct Options {
  bool print_stencil = false;
  std::string artifact;
  std::string device = "cpu";
  std::vector<Shape> shapes = {{32, 64}, {64, 32}, {128, 128}, {64, 256}, {40, 72}};
  int steps = 4;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "adaptive: %s\nusage: adaptive --print-stencil\n"
               "       adaptive ARTIFACT.json [--device D] [--shapes MxN,MxN,...] [--steps S]\n",
               problem.c_str());
  std::exit(2);
}

int64_t positive(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v < 3)
    usage(what + " needs an integer of at least 3, got '" + text + "'");
  return static_cast<int64_t>(v);
}

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string shape = text.substr(start, end - start);
    const size_t x = shape.find('x');
    if (x == std::string::npos)
      usage("--shapes takes MxN,MxN,... (rows x columns), got '" + shape + "'");
    shapes.push_back(
        {positive(shape.substr(0, x), "--shapes"), positive(shape.substr(x + 1), "--shapes")});
    start = end + 1;
  }
  return shapes;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--print-stencil")
      o.print_stencil = true;
    else if (arg == "--device")
      o.device = value();
    else if (arg == "--shapes")
      o.shapes = parse_shapes(value());
    else if (arg == "--steps")
      o.steps = static_cast<int>(positive(value(), "--steps"));
    else if (!arg.empty() && arg[0] != '-' && o.artifact.empty())
      o.artifact = arg;
    else
      usage("unknown argument '" + arg + "'");
  }
  if (!o.print_stencil && o.artifact.empty())
    usage("give the adaptive program written by `liftx adapt -o`");
  return o;
}

/// A 5-point Jacobi step: the mean of a point and its four neighbours, the grid clamped at its
/// borders (a point outside reads the nearest one inside).
liftx::Program jacobi_program() {
  using namespace liftx::dsl;
  const auto F = ScalarKind::Float;
  Fn mean = userfun("jacobi_mean", {{"c", F}, {"n", F}, {"s", F}, {"e", F}, {"w", F}}, F,
                    "return 0.2f * (c + n + s + e + w);");
  return program("jacobi", {{"grid", array_of(Type::float_(), "N", "M")}}, [&](Expr grid) {
    return map2D(
        Fn({"nbh"},
           [&](Expr nbh) { return mean(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]); }),
        slide2D(3, 1, pad2D(1, 1, clamp, grid)));
  });
}

/// The same step as a plain C++ loop (the check's reference).
void jacobi_step(const std::vector<float>& in, std::vector<float>& out, int64_t m, int64_t n) {
  auto at = [&](int64_t y, int64_t x) {
    return in[size_t(std::clamp<int64_t>(y, 0, m - 1) * n + std::clamp<int64_t>(x, 0, n - 1))];
  };
  for (int64_t y = 0; y < m; ++y)
    for (int64_t x = 0; x < n; ++x)
      out[size_t(y * n + x)] =
          0.2f * (at(y, x) + at(y - 1, x) + at(y + 1, x) + at(y, x + 1) + at(y, x - 1));
}

std::vector<float> random_grid(int64_t m, int64_t n) {
  std::mt19937 rng(static_cast<uint32_t>(m * 7919 + n));
  std::uniform_real_distribution<float> uniform(0.0f, 100.0f);
  std::vector<float> grid(size_t(m * n));
  for (float& v : grid)
    v = uniform(rng);
  return grid;
}

} // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    const liftx::Program program = jacobi_program();
    if (o.print_stencil) {
      std::printf("%s", liftx::print_program(program).c_str());
      return 0;
    }
    liftx::Context ctx(o.device);
    const liftx::AdaptiveProgram adaptive = liftx::AdaptiveProgram::load(ctx, o.artifact);
    // The artifact must be of this very stencil.
    if (!adaptive.is_for(program)) {
      std::fprintf(stderr,
                   "adaptive: %s was made for another stencil (%s); make it from `adaptive "
                   "--print-stencil`\n",
                   o.artifact.c_str(), adaptive.program_name().c_str());
      return 2;
    }
    std::printf("adaptive  %s on %s, trained on %s at %zu shapes, %zu members\n",
                adaptive.program_name().c_str(), ctx.device().name.c_str(),
                adaptive.trained_on().c_str(), adaptive.training_shapes().size(),
                adaptive.portfolio().size());
    for (const std::string& note : adaptive.notes())
      std::printf("note      %s\n", note.c_str());

    bool all_match = true;
    for (const Shape& shape : o.shapes) {
      const int64_t m = shape.rows, n = shape.cols;
      const liftx::Sizes sizes = {{"M", m}, {"N", n}};
      // A shape no member fits gets the default lowering: slower, never wrong.
      liftx::Kernel step;
      std::string how;
      if (adaptive.applies(sizes)) {
        const liftx::AdaptiveChoice choice = adaptive.choice(sizes);
        step = adaptive.kernel(sizes);
        how = "member #" + std::to_string(choice.member) + " " + choice.variant;
      } else {
        step = ctx.compile(program, sizes);
        how = "no member applies: default lowering " + step.variant();
      }
      // The steps on the device, two buffers swapped after each.
      const std::vector<float> grid = random_grid(m, n);
      liftx::Buffer current = ctx.upload(grid), next = ctx.buffer<float>(grid.size());
      double kernel_ms = 0;
      for (int s = 0; s < o.steps; ++s) {
        kernel_ms += step.run({current}, next).kernel_ms;
        std::swap(current, next);
      }
      const std::vector<float> result = current.read<float>();

      std::vector<float> a = grid, b(grid.size());
      for (int s = 0; s < o.steps; ++s) {
        jacobi_step(a, b, m, n);
        std::swap(a, b);
      }
      double max_error = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        const double error =
            std::fabs(double(result[i]) - double(a[i])) / std::max(1.0, std::fabs(double(a[i])));
        max_error = std::isnan(error) ? INFINITY : std::max(max_error, error);
      }
      const bool match = max_error <= 1e-4;
      all_match = all_match && match;
      std::printf("%-4s %5lld x %-5lld %8.4f ms/step  error %.2g  %s\n", match ? "ok" : "FAIL",
                  static_cast<long long>(m), static_cast<long long>(n), kernel_ms / o.steps,
                  max_error, how.c_str());
    }
    return all_match ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adaptive: %s\n", e.what());
    return 2;
  }
}
