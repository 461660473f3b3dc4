// Regression tests of issue 20's reproducers: hostile input gets a clear user error (exit 2) or a
// correct result, never a crash, an internal error, a blow-up or a false verdict.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <fstream>
#include <string>

using namespace cli_test;

namespace {

std::string repeated(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i)
    out += text;
  return out;
}

/// Writes `text` as DIR/NAME and returns the path, quoted for the shell.
std::string source(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.path / name) << text;
  return "'" + dir / name + "'";
}

} // namespace

TEST_CASE("simplify: deep nesting, division by zero and inexact exact division are user errors") {
  const std::string deep = repeated("(", 20000) + "x" + repeated(")", 20000);
  check_user_error(liftx("simplify '" + deep + "'"), "too deeply nested");
  check_user_error(liftx("simplify '" + repeated("-", 20000) + "x'"), "too deeply nested");
  check_user_error(liftx("simplify '1/0'"), "<input>:1:2: error: division by zero");
  check_user_error(liftx("simplify '6 /^ 4'"), "exact division 6 /^ 4 is not exact");
  check_user_error(liftx("simplify '1 + 9223372036854775807'"),
                   "<input>:1:3: error: integer overflow");
  // An option before the expression takes one value only.
  RunResult r = liftx("simplify --range i=0:100 'i/2' --c");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "(i / 2)\n");
}

TEST_CASE("an unknown command is named") {
  RunResult r = liftx("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "unknown command 'frobnicate'"));
  CHECK(contains(r.err, "explore"));
}

TEST_CASE("check: nested remainders in a size are fast, huge products are refused") {
  TempDir dir("reliability-check");
  std::string size = "N";
  for (int level = 0; level < 22; ++level)
    size = "(" + size + " % M + 3)";
  RunResult r = liftx("check " + source(dir, "split.lift",
                                        "def f(x: [float]N, y: [float]M) = map(mapSeq(id), split(" +
                                            size + ", x))\n"));
  CAPTURE(r.err);
  CHECK(r.exit_code == 0); // 22 levels: the simplifier's memo keeps this instant (was 54 s)
  // N factors of 5 terms: 10 expand to 1001 terms (1000 and a constant), which is checked and
  // quoted in the error abbreviated; 11 expand to 1365, past the simplifier's budget of 1000.
  auto product_of = [&](int factors) {
    std::string product = "(N + M + K + L + 1)";
    for (int i = 1; i < factors; ++i)
      product += " * (N + M + K + L + 1)";
    return liftx("check " + source(dir, "product.lift",
                                   "def f(x: [float]N, y: [float]M, z: [float]K, w: [float]L) = "
                                   "map(mapSeq(id), split(" +
                                       product + ", x))\n"));
  };
  r = product_of(10);
  check_user_error(r, "characters left out");
  CHECK(r.err.size() < 2500); // a message never quotes a huge expression whole
  check_user_error(product_of(11), "expression too large");
  check_user_error(liftx("check /dev/zero"), "/dev/zero");
}

TEST_CASE("host memory: sizes beyond the budget are refused before allocating") {
  TempDir dir("reliability-memory");
  check_user_error(liftx("eval stencils/jacobi2d5pt.lift --size 100000"),
                   "needs about 298.0 GiB of host memory");
  check_user_error(liftx("eval stencils/jacobi2d5pt.lift --size 64 --max-memory 16K"),
                   "more than the 16.0 KiB allowed");
  check_user_error(liftx("eval stencils/jacobi2d5pt.lift --size 64 --max-memory lots"),
                   "--max-memory lots: expected a positive amount of memory");
  CHECK(liftx("eval stencils/jacobi2d5pt.lift --size 64 --max-memory 1G").exit_code == 0);
  // The worker child of `run` inherits the budget.
  check_user_error(liftx("run stencils/variants/jacobi2d5pt/global2d.lift --device cpu --size 64 "
                         "--max-memory 16K"),
                   "allowed (--max-memory");
  // Inputs are read only up to their expected size; a directory is named as one.
  check_user_error(liftx("eval stencils/jacobi2d5pt.lift --size 48 --input grid=/dev/zero"),
                   "/dev/zero has more than the 2304 floats");
  check_user_error(
      liftx("eval stencils/jacobi2d5pt.lift --size 48 --input 'grid=" + dir.path.string() + "'"),
      "is a directory");
  check_user_error(
      liftx("rank stencils/jacobi2d5pt.lift --size 64 --model '" + dir.path.string() + "'"),
      "is a directory");
}

TEST_CASE("run refuses a negative or NaN tolerance and a non-positive timeout") {
  const std::string run = "run stencils/variants/jacobi2d5pt/global2d.lift --device cpu --size 8 ";
  for (const char* bad : {"--tolerance -1", "--tolerance nan", "--tolerance inf", "--timeout-ms 0",
                          "--timeout-ms -5"}) {
    CAPTURE(bad);
    RunResult r = liftx(run + bad);
    CHECK(r.exit_code == 2);
  }
}

TEST_CASE("identical infinities in kernel and interpreter are a match") {
  TempDir dir("reliability-inf");
  // -inf for x > 0.5 (x * 0.0f is +0), +inf below -0.5 (-0), finite otherwise.
  const std::string file = source(dir, "inf.lift", R"(
userfun edge(x: float): float {
  if (x > 0.5f) { return -1.0f / (x * 0.0f); }
  if (x < -0.5f) { return 1.0f / (x * 0.0f); }
  return x;
}
def f(x: [float]N) = mapGlb0(edge, x)
)");
  RunResult r = liftx("run " + file + " --device cpu --size 64");
  CAPTURE(r.out);
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "check     passed: 64 of 64 elements match"));
}

TEST_CASE("a definition named after an OpenCL built-in runs; a user function so named is refused") {
  TempDir dir("reliability-names");
  for (const char* name : {"sin", "exp", "fabs", "clamp", "nan", "printf"}) {
    CAPTURE(name);
    const std::string file =
        source(dir, std::string(name) + ".lift",
               std::string("def ") + name + "(x: [float]N) = mapGlb0(id, x)\n");
    RunResult r = liftx("run " + file + " --device cpu --size 16");
    CAPTURE(r.out);
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "status    ok"));
    const std::string userfun = source(dir, std::string("u_") + name + ".lift",
                                       std::string("userfun ") + name +
                                           "(x: float): float { return x; }\ndef f(x: [float]N) = "
                                           "mapGlb0(" +
                                           name + ", x)\n");
    check_user_error(liftx("check " + userfun), "reserved");
  }
}

TEST_CASE("smaller refusals: negative lengths, malformed sizes, codegen at sizes that do not fit") {
  TempDir dir("reliability-small");
  check_user_error(
      liftx("check " + source(dir, "neg.lift", "def f(x: [float](-1)) = map(id, x)\n")),
      "error: array length -1 is negative");
  check_user_error(
      liftx("check " + source(dir, "neg2.lift", "def f(x: [float](N - N - 2)) = map(id, x)\n")),
      "is negative");
  check_user_error(liftx("features stencils/variants/jacobi2d5pt --size N=abc"), "'abc'");
  RunResult r = liftx("codegen stencils/variants/jacobi2d5pt/chunks4.lift --size M=8,N=17");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "inexact exact division"));
  CHECK(r.out.empty()); // no half-printed kernel before the error
}

TEST_CASE("kernels agree with the interpreter where C leaves int arithmetic undefined") {
  // Out-of-range float to int, INT_MIN / -1, x % -1 and wrapping: the interpreter defines them
  // (docs/language.md) and the kernel's helpers do the same, so the check passes.
  fs::path ub = write_file("ub.lift", "userfun edge(x: float): float {\n"
                                      "  int k = (int)(x * 1.0e12f);\n"
                                      "  int m = k / -1;\n"
                                      "  int w = m * 65537 + m;\n"
                                      "  return (float)(w % -1) + (float)m + (float)(w / 3);\n"
                                      "}\n"
                                      "def ub(x: [float]N) = mapGlb0(edge, x)\n");
  RunResult r = liftx("run '" + ub.string() + "' --device cpu --size 64 --global 64 --json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "\"status\": \"ok\""));
  CHECK(contains(r.out, "\"passed\": true"));
}

TEST_CASE("features checks a launch sidecar like every other launch, naming it") {
  TempDir dir("features_sidecar");
  const fs::path lift = dir.path / "v.lift";
  fs::copy_file(fs::path(LIFTX_SOURCE_DIR) / "stencils/variants/jacobi2d5pt/global2d.lift", lift);
  const fs::path sidecar = dir.path / "v.json";
  const std::pair<const char*, const char*> bad[] = {
      {"[1]", "expected {\"global\""},
      {"{\"global\": [0, 4]}", "must be 1 to 3 integers"},
      {"{\"global\": [1099511627776, 4]}", "must be 1 to 3 integers"},
      {"{\"global\": [16, 16], \"local\": [3]}", "2 global sizes and 1 local"},
  };
  for (const auto& c : bad) {
    // (named, not a structured binding: clang 14's doctest macros cannot capture a binding)
    const auto& text = c.first;
    const auto& message = c.second;
    CAPTURE(text);
    { std::ofstream(sidecar) << text; }
    RunResult r = liftx("features '" + lift.string() + "' --size 16");
    CAPTURE(r.err);
    check_user_error(r);
    CHECK(contains(r.err, sidecar.string() + ": "));
    CHECK(contains(r.err, message));
  }
  { std::ofstream(sidecar) << "{\"global\": [16, 16], \"local\": [4, 4]}"; }
  RunResult ok = liftx("features '" + lift.string() + "' --size 16");
  CAPTURE(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(contains(ok.out, "v.lift,16,16,1,4,4,1,"));
  // --local wins over the sidecar's; a mismatch then names both sources.
  RunResult relaunched = liftx("features '" + lift.string() + "' --size 16 --local 8,2");
  CAPTURE(relaunched.err);
  CHECK(relaunched.exit_code == 0);
  CHECK(contains(relaunched.out, "v.lift,16,16,1,8,2,1,"));
  RunResult mismatch = liftx("features '" + lift.string() + "' --size 16 --local 4");
  check_user_error(mismatch);
  CHECK(contains(mismatch.err, sidecar.string() + " with --global/--local: "));
  CHECK(contains(mismatch.err, "2 global sizes and 1 local"));
}

TEST_CASE("the issue's wrong-code and launch reproducers compute the right result") {
  // A loop bound (2 + N) /^ M once printed as (2 / M) + (N / M): one iteration instead of two.
  fs::path split = write_file("splitm2.lift",
                              "def splitm2(x: [float]N, y: [float]M) = mapGlb0(row => join(mapSeq("
                              "mapSeq(id), split(M, pad(1, 1, clamp, row)))), split(N, x))\n");
  RunResult r = liftx("codegen '" + split.string() + "' --size N=4,M=3");
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "i_2 < ((2 + N) / M)"));
  r = liftx("run '" + split.string() + "' --device cpu --size N=4,M=3 --json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "\"passed\": true"));
  // Local sizes that do not divide the tied lengths once wrote past the output buffer.
  for (const char* launch : {"--size 8 --local 3,3", "--size 100 --local 16,1"}) {
    CAPTURE(launch);
    r = liftx(std::string("run stencils/variants/jacobi2d5pt/global2d.lift --device cpu ") +
              launch + " --json");
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "\"status\": \"ok\""));
    CHECK(contains(r.out, "\"passed\": true"));
  }
}
