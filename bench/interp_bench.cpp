// Times the reference interpreter on every stencil of stencils/*.lift: one thread, then all
// threads (default_threads(): LIFTX_THREADS or the hardware concurrency), on random inputs.
//
//   interp_bench [--size MxN[xO]] [--stencils DIR] [--repeat K]
//
// Sizes by name: M the first, N the second, O the third (3D stencils; default N). Prints a
// Markdown table: stencil, points, seconds with 1 thread, seconds with N threads, Mpoints/s
// with N threads; and checks that both runs agree bit for bit.
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace liftx;

namespace {

struct Options {
  int64_t rows = 1024;
  int64_t cols = 1024;
  int64_t planes = 1024; ///< O, for 3D stencils
  std::string dir = "stencils";
  int repeat = 1;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "interp_bench: %s\nusage: interp_bench [--size MxN] [--stencils DIR] "
               "[--repeat K]\n",
               problem.c_str());
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (k + 1 >= argc)
      usage("missing value after " + arg);
    const std::string value = argv[++k];
    if (arg == "--size") {
      const auto x = value.find('x');
      const auto y = x == std::string::npos ? x : value.find('x', x + 1);
      try {
        o.rows = std::stoll(value.substr(0, x));
        o.cols = x == std::string::npos ? o.rows : std::stoll(value.substr(x + 1, y - x - 1));
        o.planes = y == std::string::npos ? o.cols : std::stoll(value.substr(y + 1));
      } catch (const std::exception&) {
        usage("bad size " + value);
      }
      if (o.rows < 1 || o.cols < 1 || o.planes < 1)
        usage("bad size " + value);
    } else if (arg == "--stencils") {
      o.dir = value;
    } else if (arg == "--repeat") {
      o.repeat = std::max(1, std::atoi(value.c_str()));
    } else {
      usage("unknown option " + arg);
    }
  }
  return o;
}

/// Best of `repeat` runs, in seconds, and the last result.
double time_run(const ir::Program& p, const std::vector<interp::HostArray>& inputs,
                const Sizes& sizes, int threads, int repeat, interp::HostArray& result) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    result = interp::evaluate(p, inputs, sizes, interp::EvalOptions{threads});
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(o.dir))
    if (entry.path().extension() == ".lift")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty())
    usage("no .lift files in " + o.dir);
  const int threads = interp::default_threads();
  fmt::print("size M={}, N={}, O={} (3D stencils only), {} threads, best of {}\n\n", o.rows, o.cols,
             o.planes, threads, o.repeat);
  fmt::print("| stencil | points | s (1 thread) | s ({} threads) | Mpoints/s ({} threads) |\n",
             threads, threads);
  fmt::print("|---|---:|---:|---:|---:|\n");
  // All one-thread runs come first: once a process has started a thread, shared_ptr reference
  // counts stay atomic, which would slow the later one-thread runs down.
  struct Case {
    std::string name;
    ir::Module module;
    Sizes sizes;
    std::vector<interp::HostArray> inputs;
    interp::HostArray sequential;
    double seconds_sequential = 0;
    std::string error;
  };
  std::vector<Case> cases;
  for (const auto& file : files) {
    Case c;
    c.name = file.stem().string();
    try {
      c.module = parse::parse_file(file.string());
      const ir::Program& program = c.module.main();
      for (const arith::Expr& v : program.size_vars())
        c.sizes[v.node().name] = v.node().name == "M"   ? o.rows
                                 : v.node().name == "O" ? o.planes
                                                        : o.cols;
      std::mt19937_64 rng(42);
      for (const ir::Expr& param : program.params)
        c.inputs.push_back(interp::random_input(param.type(), c.sizes, rng));
      c.seconds_sequential = time_run(program, c.inputs, c.sizes, 1, o.repeat, c.sequential);
    } catch (const std::exception& e) {
      c.error = e.what();
    }
    cases.push_back(std::move(c));
  }
  int failures = 0;
  for (Case& c : cases) {
    try {
      if (!c.error.empty())
        throw std::runtime_error(c.error);
      interp::HostArray parallel;
      const double tn = time_run(c.module.main(), c.inputs, c.sizes, threads, o.repeat, parallel);
      const int64_t points = c.sequential.size();
      const bool same = c.sequential.shape == parallel.shape && c.sequential.data == parallel.data;
      if (!same)
        ++failures;
      fmt::print("| {} | {} | {:.3f} | {:.3f} | {:.2f} |{}\n", c.name, points, c.seconds_sequential,
                 tn, static_cast<double>(points) / tn / 1e6,
                 same ? "" : " MISMATCH between 1 and N threads");
    } catch (const std::exception& e) {
      ++failures;
      fmt::print("| {} | error: {} | | | |\n", c.name, e.what());
    }
  }
  return failures == 0 ? 0 : 1;
}
