// heat2d: a 2D heat-diffusion simulation whose stencil is written in the liftx DSL, tuned for
// the machine at its first run (the winner is reused by later runs), verified against a plain
// C++ loop, and timed.
//
//   heat2d [--size N | --rows M --cols N] [--steps S] [--alpha A] [--device D] [--budget B]
//          [--max-variants V] [--retune] [--untuned] [--db FILE] [--no-verify]
//
// --untuned compiles the stencil with liftx's default lowering instead of tuning it (to see what
// tuning gains).
//
// Exit status: 0 when the device's result matches the C++ loop, 1 on a mismatch, 2 on bad
// arguments or a liftx error.
#include <liftx/liftx.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  int64_t rows = 512;
  int64_t cols = 512;
  int steps = 1000;
  float alpha = 0.2f; // stable for alpha <= 0.25
  std::string device = "cpu";
  int budget = 5;
  int64_t max_variants = 0; // the whole space, as liftx::TuneOptions
  bool retune = false;
  bool untuned = false;
  std::string db;
  bool verify = true;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "heat2d: %s\nusage: heat2d [--size N | --rows M --cols N] [--steps S] [--alpha A] "
               "[--device D] [--budget B] [--max-variants V] [--retune] [--untuned] [--db FILE] "
               "[--no-verify]\n",
               problem.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(flag + " needs a value");
      return argv[++i];
    };
    auto number = [&](int64_t low) {
      const std::string text = value();
      char* end = nullptr;
      const long long v = std::strtoll(text.c_str(), &end, 10);
      if (end == text.c_str() || *end != '\0' || v < low)
        usage(flag + " needs an integer of at least " + std::to_string(low) + ", got '" + text +
              "'");
      return static_cast<int64_t>(v);
    };
    if (flag == "--size")
      o.rows = o.cols = number(3);
    else if (flag == "--rows")
      o.rows = number(3);
    else if (flag == "--cols")
      o.cols = number(3);
    else if (flag == "--steps")
      o.steps = static_cast<int>(number(1));
    else if (flag == "--alpha") {
      o.alpha = std::strtof(value().c_str(), nullptr);
      if (!(o.alpha > 0.0f && o.alpha <= 0.25f))
        usage("--alpha must be in (0, 0.25] for a stable simulation");
    } else if (flag == "--device")
      o.device = value();
    else if (flag == "--budget")
      o.budget = static_cast<int>(number(1));
    else if (flag == "--max-variants")
      o.max_variants = number(0);
    else if (flag == "--retune")
      o.retune = true;
    else if (flag == "--untuned")
      o.untuned = true;
    else if (flag == "--db")
      o.db = value();
    else if (flag == "--no-verify")
      o.verify = false;
    else
      usage("unknown argument '" + flag + "'");
  }
  return o;
}

/// One explicit time step of the heat equation on an M x N grid: each point moves towards the
/// mean of its four neighbours; outside the grid the temperature is 0 (cold walls).
liftx::Program heat_program(float alpha) {
  using namespace liftx::dsl;
  Fn update = userfun("heat_update",
                      {{"c", ScalarKind::Float},
                       {"n", ScalarKind::Float},
                       {"s", ScalarKind::Float},
                       {"e", ScalarKind::Float},
                       {"w", ScalarKind::Float}},
                      ScalarKind::Float,
                      "return c + " + std::to_string(alpha) + "f * (n + s + e + w - 4.0f * c);");
  return program("heat2d", {{"grid", array_of(Type::float_(), "N", "M")}}, [&](Expr grid) {
    return map2D(
        Fn({"nbh"},
           [&](Expr nbh) { return update(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]); }),
        slide2D(3, 1, pad2D(1, 1, constant(0.0f), grid)));
  });
}

/// The same step as a plain C++ loop (the verification's reference).
void heat_step(const std::vector<float>& in, std::vector<float>& out, int64_t m, int64_t n,
               float alpha) {
  auto at = [&](int64_t y, int64_t x) {
    return y < 0 || y >= m || x < 0 || x >= n ? 0.0f : in[size_t(y * n + x)];
  };
  for (int64_t y = 0; y < m; ++y)
    for (int64_t x = 0; x < n; ++x) {
      const float c = at(y, x);
      out[size_t(y * n + x)] =
          c + alpha * (at(y - 1, x) + at(y + 1, x) + at(y, x + 1) + at(y, x - 1) - 4.0f * c);
    }
}

/// A hot square in the middle of a lukewarm, slightly noisy plate.
std::vector<float> initial_plate(int64_t m, int64_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> noise(0.0f, 0.1f);
  std::vector<float> grid(size_t(m * n));
  for (int64_t y = 0; y < m; ++y)
    for (int64_t x = 0; x < n; ++x) {
      const bool hot = y >= m / 3 && y < 2 * m / 3 && x >= n / 3 && x < 2 * n / 3;
      grid[size_t(y * n + x)] = (hot ? 100.0f : 20.0f) + noise(rng);
    }
  return grid;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    liftx::ContextOptions context_options;
    context_options.tuning_db = o.db;
    liftx::Context ctx(o.device, context_options);
    const liftx::Program program = heat_program(o.alpha);
    const liftx::Sizes sizes = {{"M", o.rows}, {"N", o.cols}};
    const std::vector<float> plate = initial_plate(o.rows, o.cols);
    std::printf("heat2d    %lld x %lld grid, %d steps, alpha %g, device %s (%s)\n",
                static_cast<long long>(o.rows), static_cast<long long>(o.cols), o.steps,
                static_cast<double>(o.alpha), ctx.device().name.c_str(),
                ctx.device().platform.c_str());

    // First run on this machine: tune on the real initial plate; later runs reuse the winner.
    liftx::Kernel step;
    if (o.untuned) {
      step = ctx.compile(program, sizes);
    } else {
      liftx::TuneOptions tune_options;
      tune_options.budget = o.budget;
      tune_options.max_variants = o.max_variants;
      tune_options.retune = o.retune;
      const liftx::TuneResult tuned = liftx::tune(ctx, program, sizes, tune_options, {plate});
      std::printf("%s", tuned.report().c_str());
      step = tuned.kernel;
    }

    // The simulation: two device buffers, swapped after every step.
    liftx::Buffer current = ctx.upload(plate);
    liftx::Buffer next = ctx.buffer<float>(plate.size());
    double kernel_ms = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < o.steps; ++s) {
      kernel_ms += step.run({current}, next).kernel_ms;
      std::swap(current, next);
    }
    const double seconds = seconds_since(start);
    const std::vector<float> result = current.read<float>();
    const double cells = double(o.rows) * double(o.cols) * o.steps;
    std::printf("simulated %d steps in %.3f s: %.1f steps/s, %.1f Mcell/s (kernels %.1f ms)\n",
                o.steps, seconds, o.steps / seconds, cells / seconds / 1e6, kernel_ms);
    std::printf("variant   %s\n", step.variant().c_str());

    if (!o.verify)
      return 0;
    const auto host_start = std::chrono::steady_clock::now();
    std::vector<float> a = plate, b(plate.size());
    for (int s = 0; s < o.steps; ++s) {
      heat_step(a, b, o.rows, o.cols, o.alpha);
      std::swap(a, b);
    }
    const double host_seconds = seconds_since(host_start);
    double max_error = 0;
    size_t worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const double error =
          std::fabs(double(result[i]) - double(a[i])) / std::max(1.0, std::fabs(double(a[i])));
      if (!(error <= max_error)) { // also catches NaN
        max_error = std::isnan(error) ? INFINITY : error;
        worst = i;
      }
    }
    const double tolerance = 1e-4;
    std::printf("verified  against a plain C++ loop (%.1f steps/s): max relative error %.3g "
                "(tolerance %.0e)\n",
                o.steps / host_seconds, max_error, tolerance);
    if (max_error > tolerance) {
      std::fprintf(stderr, "heat2d: MISMATCH at cell %zu: device %.9g, C++ loop %.9g\n", worst,
                   double(result[worst]), double(a[worst]));
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heat2d: %s\n", e.what());
    return 2;
  }
}
