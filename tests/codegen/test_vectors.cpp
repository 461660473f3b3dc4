// Vectors and register windows in generated code: each kernel verified on PoCL against the
// interpreter of the high-level stencil, and the generated text checked for what it must contain.
#include "codegen/kernel.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"

#include "pocl.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace liftx;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = fs::path(LIFTX_SOURCE_DIR);

/// Runs `program` on PoCL and checks every element against `reference` (or itself).
void check_runs(const ir::Program& program, const Sizes& sizes,
                const ir::Program* reference = nullptr) {
  exec::RunReport r = test::run_verified(program, sizes, reference);
  INFO(r.message);
  CHECK(r.status == runtime::Status::ok);
  CHECK(r.verification.passed);
  CHECK(r.verification.elements > 0);
}

ir::Module parse_text(const std::string& text) {
  return parse::parse_module(text, "<test>");
}

} // namespace

TEST_CASE("a register window with float4 loads and stores computes the Jacobi stencil") {
  ir::Module window =
      parse::parse_file((kSource / "tests/codegen/programs/window2d.lift").string());
  ir::Module stencil = parse::parse_file((kSource / "stencils/jacobi2d5pt.lift").string());
  codegen::Kernel k = codegen::generate(window.main());
  // N is a multiple of 4 (split by the tiles), so the centre loads and the stores are aligned.
  CHECK(k.source.find("(*(const global float4*)(grid + ") != std::string::npos);
  CHECK(k.source.find("*(global float4*)(out_0 + ") != std::string::npos);
  CHECK(k.source.find("#pragma unroll 1") != std::string::npos); // 4 steps, kept rolled
  CHECK(k.source.find("priv_") != std::string::npos);
  CHECK(k.source.find("[0]") == std::string::npos); // private arrays became scalars
  REQUIRE(k.size_divisors.size() == 2);
  CHECK(k.window_bytes == 3 * 6 * 4);
  CHECK(k.private_bytes == k.window_bytes + 4 * 4);
  for (Sizes sizes :
       {Sizes{{"M", 40}, {"N", 24}}, Sizes{{"M", 4}, {"N", 4}}, Sizes{{"M", 12}, {"N", 64}}}) {
    CAPTURE(sizes.at("M"));
    check_runs(window.main(), sizes, &stencil.main());
  }
  // A vector access is one record of width 4.
  int vector_loads = 0, vector_stores = 0;
  for (const codegen::MemoryAccess& a : k.accesses)
    if (a.width == 4)
      (a.is_store ? vector_stores : vector_loads)++;
  CHECK(vector_loads == 3); // two rows before the loop, one per step
  CHECK(vector_stores == 1);
  // Unrolled by the program (mapSeqSlide's unroll): the same stencil, the loop's pragma says so.
  std::string source = (std::stringstream()
                        << std::ifstream(kSource / "tests/codegen/programs/window2d.lift").rdbuf())
                           .str();
  const std::string rolled = "3, 1, tile))";
  REQUIRE(source.find(rolled) != std::string::npos);
  source.replace(source.find(rolled), rolled.size(), "3, 1, 3, tile))");
  ir::Module unrolled = parse_text(source);
  codegen::Kernel u = codegen::generate(unrolled.main());
  CHECK(u.source.find("#pragma unroll 3") != std::string::npos);
  CHECK(u.source.find("#pragma unroll 1") == std::string::npos);
  check_runs(unrolled.main(), {{"M", 40}, {"N", 24}}, &stencil.main());
  // Sizes the aligned accesses were not generated for are refused before launch.
  exec::RunOptions o;
  CHECK_THROWS_AS(codegen::prepare_launch(window.main(), {{"M", 8}, {"N", 6}}, o.request(),
                                          test::pocl().profile.limits()),
                  UserError);
}

TEST_CASE("vectors at offsets not provably aligned load with vloadN") {
  // Windows of 4 starting every 2 elements: not a multiple of 4, so vload4.
  ir::Module m =
      parse_text("def f(x: [float]N) = join(mapGlb0(w => asScalar(mapSeq(id, asVector(4, "
                 "w))), slide(4, 2, x)))");
  codegen::Kernel k = codegen::generate(m.main());
  CHECK(k.source.find("vload4(0, x + ") != std::string::npos);
  // The outputs of work-item i start at 4*i: aligned stores.
  CHECK(k.source.find("*(global float4*)(out_0 + ") != std::string::npos);
  check_runs(m.main(), {{"N", 18}});
  check_runs(m.main(), {{"N", 6}});
}

TEST_CASE("vectorised user functions compute per component") {
  ir::Module m =
      parse_text("userfun scale(a: float, b: float): float { return a * 0.5f - b; }\n"
                 "def f(a: [float]N, b: [float]N) = asScalar(mapGlb0(vectorize(4, scale), "
                 "zip(asVector(4, a), asVector(4, b))))");
  ir::Module plain =
      parse_text("userfun scale(a: float, b: float): float { return a * 0.5f - b; }\n"
                 "def f(a: [float]N, b: [float]N) = map(scale, zip(a, b))");
  codegen::Kernel k = codegen::generate(m.main());
  CHECK(k.source.find("float4") != std::string::npos);
  for (int64_t n : {4, 64, 1024})
    check_runs(m.main(), {{"N", n}}, &plain.main());
}

TEST_CASE("a 1D register window over a padded array") {
  ir::Module m = parse_text("def f(x: [float]N) = join(mapGlb0(t => mapSeqSlide(reduceSeq(add, "
                            "0.0f), 3, 1, t), slide(10, 8, pad(1, 1, clamp, x))))");
  ir::Module plain = parse_text("def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 1, pad(1, 1, "
                                "clamp, x)))");
  codegen::Kernel k = codegen::generate(m.main());
  CHECK(k.window_bytes == 3 * 4);
  CHECK(k.source.find("win_") != std::string::npos);
  check_runs(m.main(), {{"N", 16}}, &plain.main());
  check_runs(m.main(), {{"N", 64}}, &plain.main());
}

TEST_CASE("a register window over computed elements produces each one as it enters") {
  // map(sq) under mapSeqSlide is not materialised: each square is computed once, in the loop,
  // when it enters the window (the streamed form of fused 3D steps).
  const std::string sq = "userfun sq(v: float): float { return v * v + 0.5f; }\n";
  ir::Module m =
      parse_text(sq + "def f(x: [float]N) = join(mapGlb0(t => mapSeqSlide(reduceSeq(add, "
                      "0.0f), 3, 1, map(sq, t)), slide(10, 8, pad(1, 1, clamp, x))))");
  ir::Module plain = parse_text(sq + "def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 1, "
                                     "map(sq, pad(1, 1, clamp, x))))");
  codegen::Kernel k = codegen::generate(m.main());
  CHECK(k.window_bytes == 3 * 4);
  // Two calls before the loop (the window's first two elements), one inside it.
  size_t calls = 0;
  for (size_t at = k.source.find("sq("); at != std::string::npos; at = k.source.find("sq(", at + 1))
    ++calls;
  CHECK(calls == 1 + 3); // the definition, then the three call sites
  check_runs(m.main(), {{"N", 16}}, &plain.main());
  check_runs(m.main(), {{"N", 64}}, &plain.main());
  // A computed map anywhere else is still refused.
  CHECK_THROWS_AS(
      codegen::generate(parse_text(sq + "def f(x: [float]N) = mapGlb0(id, map(sq, x))").main()),
      UserError);
}

TEST_CASE("user functions of constants fold to literals once a reduction is unrolled") {
  ir::Module gaussian =
      parse::parse_file((kSource / "stencils/variants/gaussian/global2d.lift").string());
  codegen::Kernel k = codegen::generate(gaussian.main());
  CHECK(k.source.find("gaussWeight(") == std::string::npos);
  CHECK(k.source.find("mult(15.0f, ") != std::string::npos); // the centre weight
  check_runs(gaussian.main(), {{"M", 9}, {"N", 7}});
}

TEST_CASE("window errors are located user errors") {
  CHECK_THROWS_AS(
      codegen::generate(
          parse_text("def f(x: [float]N) = mapGlb0(t => mapSeqSlide(w => w[0], 3, 4, t), "
                     "slide(11, 8, x))")
              .main()),
      UserError);
}

TEST_CASE("a kernel named like one of its user functions or an OpenCL word is renamed") {
  // .lift files cannot reuse a name; programs built with the C++ DSL can.
  ir::Module m = parse_text("userfun heat(x: float): float { return x * 0.5f; }\n"
                            "def step(x: [float]N) = mapGlb0(heat, x)");
  ir::Program program = m.main();
  program.name = "heat";
  codegen::Kernel k = codegen::generate(program);
  CHECK(k.name == "heat_kernel");
  check_runs(program, {{"N", 16}});
  ir::Module half = parse_text("def half(x: [float]N) = mapGlb0(id, x)");
  CHECK(codegen::generate(half.main()).name == "half_kernel");
  check_runs(half.main(), {{"N", 16}});
}

TEST_CASE("a mapLcl nested in a mapLcl runs correctly with every local size it accepts") {
  ir::Module m = parse::parse_file(
      (kSource / "tests" / "codegen" / "programs" / "nested_lcl_reduce.lift").string());
  const Sizes sizes{{"M", 24}, {"N", 32}};
  // Free thread counts: the mapLcl1 over 4 points accepts 1, 2 or 4 work-items in dimension 1;
  // more work-items in dimension 0 than products leave some idle at the barrier.
  for (std::array<int64_t, 2> local : {std::array<int64_t, 2>{16, 4}, {4, 2}, {64, 1}}) {
    CAPTURE(local[0]);
    CAPTURE(local[1]);
    exec::RunOptions o;
    o.time = false;
    o.roofline = false;
    o.global = {local[0] * 4, 64};
    o.local = {local[0], local[1]};
    exec::RunReport r = exec::run_program(test::pocl(), m.main(), sizes, o);
    INFO(r.message);
    CHECK(r.status == runtime::Status::ok);
    CHECK(r.verification.passed);
  }
  exec::RunOptions uneven;
  uneven.time = false;
  uneven.roofline = false;
  uneven.global = {64, 64};
  uneven.local = {16, 8};
  CHECK_THROWS_WITH_AS(exec::run_program(test::pocl(), m.main(), sizes, uneven),
                       doctest::Contains("does not divide the 4 iterations of mapLcl1"), UserError);
}
