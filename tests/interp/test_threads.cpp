// Multi-threaded evaluation (the outermost map split over threads) must equal the sequential one
// bit for bit, and memoised closed sub-expressions must not change results.
#include "../scoped_env.hpp"
#include "helpers.hpp"

#include "ir/parse/parser.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

using namespace liftx;
using namespace liftx::interp;
using namespace liftx::interp::test;

namespace {

std::vector<std::filesystem::path> stencil_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(LIFTX_SOURCE_DIR) + "/stencils"))
    if (entry.path().extension() == ".lift")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

using liftx_test::ScopedEnv;

bool bit_identical(const HostArray& a, const HostArray& b) {
  return a.kind == b.kind && a.shape == b.shape && a.data.size() == b.data.size() &&
         (a.data.empty() ||
          std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(double)) == 0);
}

} // namespace

TEST_CASE("every stencil: 1, 3, 4 and 7 threads give bit-identical results") {
  const auto files = stencil_files();
  REQUIRE(files.size() >= 8);
  for (const auto& file : files) {
    CAPTURE(file.string());
    const ir::Module module = parse::parse_file(file.string());
    const ir::Program& program = module.main();
    const Sizes sizes{{"M", 37}, {"N", 53}}; // non-square, not a multiple of any thread count
    std::mt19937_64 rng(2024);
    std::vector<HostArray> inputs;
    for (const ir::Expr& param : program.params)
      inputs.push_back(random_input(param.type(), sizes, rng));
    const HostArray sequential = evaluate(program, inputs, sizes, EvalOptions{1});
    // A tuple result (srad1full, shallow_water) has its components innermost.
    REQUIRE(sequential.shape.size() >= 2);
    REQUIRE(std::vector<int64_t>(sequential.shape.begin(), sequential.shape.begin() + 2) ==
            std::vector<int64_t>{37, 53});
    CHECK(
        sequential.shape.size() ==
        (program.result_type().as<ir::ArrayType>()->element.as<ir::ArrayType>()->element.is_tuple()
             ? 3u
             : 2u));
    bool any_nonzero = false;
    for (double x : sequential.data)
      any_nonzero = any_nonzero || x != 0.0;
    CHECK(any_nonzero);
    for (int threads : {3, 4, 7}) {
      CAPTURE(threads);
      CHECK(bit_identical(sequential, evaluate(program, inputs, sizes, EvalOptions{threads})));
    }
    // The environment variable chooses the default thread count.
    ScopedEnv env("LIFTX_THREADS", "4");
    CHECK(default_threads() == 4);
    CHECK(bit_identical(sequential, evaluate(program, inputs, sizes)));
  }
}

TEST_CASE("more threads than rows, and a single row") {
  ir::Expr g = ir::param(grid("M", "N"), "g");
  ir::Expr row = ir::param(vec("N"), "row");
  ir::Fun inc =
      userfun("inc", {{"v", ir::ScalarKind::Float}}, ir::ScalarKind::Float, "return v + 1.0f;");
  ir::Program p =
      program({g}, ir::call(ir::map(ir::lambda({row}, ir::call(ir::map(inc), {row}))), {g}));
  for (int64_t rows : {1, 2, 5}) {
    const Sizes sizes{{"M", rows}, {"N", 3}};
    const HostArray input = input_for(grid("M", "N"), sizes, 7);
    const HostArray sequential = evaluate(p, std::vector<HostArray>{input}, sizes, EvalOptions{1});
    const HostArray parallel = evaluate(p, std::vector<HostArray>{input}, sizes, EvalOptions{16});
    CHECK(bit_identical(sequential, parallel));
    for (int64_t k = 0; k < rows * 3; ++k)
      CHECK(parallel.data[static_cast<size_t>(k)] ==
            static_cast<double>(static_cast<float>(input.data[static_cast<size_t>(k)]) + 1.0f));
  }
}

TEST_CASE("a parallel map over 1D views; errors inside it are rethrown as in sequence") {
  const char* source = R"(
def f(grid: [[float]N]M) =
  map(row => row[0], slide(2, 1, pad(0, 1, clamp, grid)))
)";
  ir::Module m = parse::parse_module(source, "f.lift");
  const Sizes sizes{{"M", 4}, {"N", 3}};
  const HostArray input = input_for(grid("M", "N"), sizes, 3);
  const HostArray sequential =
      evaluate(m.main(), std::vector<HostArray>{input}, sizes, EvalOptions{1});
  CHECK(bit_identical(sequential,
                      evaluate(m.main(), std::vector<HostArray>{input}, sizes, EvalOptions{4})));

  const char* failing = R"(
def g(grid: [[float]N]M) =
  map(row => row[5], grid)
)";
  ir::Module bad = parse::parse_module(failing, "g.lift");
  std::string sequential_message;
  try {
    evaluate(bad.main(), std::vector<HostArray>{input}, sizes, EvalOptions{1});
  } catch (const UserError& e) {
    sequential_message = e.what();
  }
  CHECK(sequential_message.find("index 5") != std::string::npos);
  CHECK_THROWS_WITH_AS(evaluate(bad.main(), std::vector<HostArray>{input}, sizes, EvalOptions{4}),
                       sequential_message.c_str(), UserError);
}

TEST_CASE("closed sub-expressions are evaluated once and reused correctly") {
  // array(4, w) inside the per-point lambda is closed; its values must be used at every point.
  const char* source = R"(
userfun w(i: int, n: int): float { return 1.0f + i; }
def f(xs: [[float]4]M) =
  map(row => reduce(add, 0.0f, map(mult, zip(array(4, w), row)))[0], xs)
)";
  ir::Module m = parse::parse_module(source, "f.lift");
  const Sizes sizes{{"M", 9}};
  const HostArray input =
      input_for(array_of(vec("N"), arith::size_var("M")), {{"M", 9}, {"N", 4}}, 11);
  for (int threads : {1, 3}) {
    const HostArray got =
        evaluate(m.main(), std::vector<HostArray>{input}, sizes, EvalOptions{threads});
    REQUIRE(got.shape == std::vector<int64_t>{9});
    for (int64_t r = 0; r < 9; ++r) {
      float want = 0.0f;
      for (int64_t c = 0; c < 4; ++c)
        want = want + (1.0f + static_cast<float>(c)) * f2(input, r, c);
      CHECK(got.data[static_cast<size_t>(r)] == static_cast<double>(want));
    }
  }
}

TEST_CASE("bad LIFTX_THREADS is a user error") {
  ScopedEnv env("LIFTX_THREADS", "lots");
  CHECK_THROWS_AS(default_threads(), UserError);
}
