// End-to-end tests of the `liftx` executable: outputs, exit codes and error messages.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <filesystem>
#include <regex>
#include <string>

using namespace cli_test;

TEST_CASE("simplify prints the simplified expression") {
  RunResult r = liftx("simplify '(i*16+j)/16' --range i=0:100 --range j=0:16");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "i\n");
  r = liftx("simplify '(i*16+j)%16' --range i=0:100 --range j=0:16");
  CHECK(r.out == "j\n");
  // Without the range of j nothing can be proven.
  r = liftx("simplify '(i*16+j)/16' --range i=0:100");
  CHECK(r.exit_code == 0);
  CHECK(r.out != "i\n");
}

TEST_CASE("simplify reports bad input with exit code 2") {
  RunResult r = liftx("simplify '(i*16+' --range i=0:100");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "error:"));
  r = liftx("simplify 'i' --range i=5:5");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "empty"));
  r = liftx("simplify 'i' --range i=x:5");
  CHECK(r.exit_code == 2);
}

TEST_CASE("eval prints a summary of the result") {
  RunResult r = liftx("eval stencils/jacobi2d5pt.lift --size N=64,M=48 --seed 3");
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "program   jacobi2d5pt"));
  CHECK(contains(r.out, "result    [[float]N]M [48 x 64]"));
  CHECK(contains(r.out, "checksum"));
  // Same seed, same result; another seed, another result.
  RunResult again = liftx("eval stencils/jacobi2d5pt.lift --size M=48,N=64 --seed 3");
  RunResult other = liftx("eval stencils/jacobi2d5pt.lift --size 48 --size N=64 --seed 4");
  auto checksum = [](const std::string& out) {
    return out.substr(out.find("checksum"),
                      out.find('\n', out.find("checksum")) - out.find("checksum"));
  };
  CHECK(checksum(again.out) == checksum(r.out));
  REQUIRE(other.exit_code == 0);
  CHECK(checksum(other.out) != checksum(r.out));
}

TEST_CASE("eval writes and reads float32 files") {
  fs::path out = scratch_dir() / "result.bin";
  RunResult r =
      liftx("eval stencils/jacobi2d5pt.lift --size N=20,M=10 --output '" + out.string() + "'");
  REQUIRE(r.exit_code == 0);
  CHECK(fs::file_size(out) == 20 * 10 * 4);
  fs::path copy = write_file("copy.lift", "def copy(x: [[float]N]M) = map2D(id, x)\n");
  RunResult c =
      liftx("eval '" + copy.string() + "' --size N=20,M=10 --input x='" + out.string() + "'");
  REQUIRE(c.exit_code == 0);
  auto line = [](const std::string& text, const std::string& key) {
    size_t at = text.find(key);
    return text.substr(at, text.find('\n', at) - at);
  };
  CHECK(line(c.out, "checksum") == line(r.out, "checksum"));
}

TEST_CASE("eval reports bad input with a message and exit code 2") {
  struct Case {
    std::string args;
    std::string message;
  };
  fs::path malformed = write_file("malformed.lift", "def f(x: [float]N) =\n  map(id x)\n");
  fs::path unknown = write_file("unknown.lift", "def f(x: [float]N) = map(foo, x)\n");
  fs::path split =
      write_file("split.lift", "def f(x: [float]N) = join(map(mapSeq(id), split(4, x)))\n");
  fs::path short_input = write_file("short.bin", std::string(12, '\0'));
  const Case cases[] = {
      {"eval '" + malformed.string() + "' --size 8", malformed.string() + ":2:"},
      {"eval '" + unknown.string() + "' --size 8", unknown.string() + ":1:"},
      {"eval '" + unknown.string() + "' --size 8", "unknown identifier 'foo'"},
      {"eval '" + split.string() + "' --size N=66", "not a multiple of 4"},
      {"eval stencils/jacobi2d5pt.lift --size N=64", "missing --size for M"},
      {"eval stencils/jacobi2d5pt.lift --size N=64,M=4,K=3", "no size named K"},
      {"eval stencils/jacobi2d5pt.lift --size N=abc,M=4", "not an integer"},
      {"eval stencils/jacobi2d5pt.lift --size N=0,M=4", "out of range"},
      {"eval stencils/no_such_file.lift --size 4", "cannot read"},
      {"eval stencils/jacobi2d5pt.lift --size 4 --input grid='" + short_input.string() + "'",
       "needs 16"},
      {"eval stencils/jacobi2d5pt.lift --size 4 --input nope=x.bin", "no parameter named nope"},
      {"eval stencils/jacobi2d5pt.lift --size 4 --program nope", "no definition named 'nope'"},
      {"frobnicate", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    RunResult r = liftx(c.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, c.message));
    CHECK_FALSE(contains(r.err, "internal error"));
    CHECK_FALSE(contains(r.err, "terminate"));
  }
}

TEST_CASE("check lists definitions and prints canonical syntax") {
  RunResult r = liftx("check stencils/hotspot2d.lift");
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "def hotspot2d(temp: [[float]N]M, power: [[float]N]M) : [[float]N]M"));
  CHECK(contains(r.out, "userfun hotspot(c: float, n: float, s: float, e: float, w: float, "
                        "p: float) : float\n"));
  RunResult printed = liftx("check stencils/hotspot2d.lift --print");
  REQUIRE(printed.exit_code == 0);
  fs::path reprinted = write_file("reprinted.lift", printed.out);
  RunResult again = liftx("check '" + reprinted.string() + "' --print");
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == printed.out);
}

TEST_CASE("codegen prints the kernel and its launch rule") {
  RunResult r = liftx("codegen stencils/variants/jacobi2d5pt/tiled_local.lift --size M=40,N=112");
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "kernel void jacobi2d5pt_tiled_local("));
  CHECK(contains(r.out, "barrier(CLK_LOCAL_MEM_FENCE)"));
  CHECK(contains(r.out, "// launch: dims 2; global (126, 50); local (18, 10)"));
  CHECK(contains(r.out, "local memory per work-group: 720 bytes"));
  CHECK(contains(r.out, "private memory per work-item: 0 bytes (about 16 registers)"));
  // A register window: 22 floats of private memory, 16 more registers for indices, in units of 8.
  RunResult window = liftx("codegen stencils/variants/jacobi2d5pt/window.lift --size M=40,N=112");
  REQUIRE(window.exit_code == 0);
  CHECK(contains(window.out, "private memory per work-item: 88 bytes (about 40 registers)"));
  // Two iterations over the whole grid: the first kernel's launches, then the tail's.
  const fs::path two = write_file(
      "two_iterations.lift",
      "userfun twice(a: float): float { return 2.0f * a; }\n"
      "def t(xs: [float]N) = iterate(1, y => mapGlb0(twice, y), iterate(3, x => mapGlb0(w => "
      "w[1], slide(3, 1, pad(1, 1, clamp, x))), xs))\n");
  RunResult tail = liftx("codegen '" + two.string() + "'");
  REQUIRE(tail.exit_code == 0);
  CHECK(contains(tail.out, "// launched 3 times (iterate over the whole grid)"));
  CHECK(contains(tail.out, "// then the remainder: the kernel below, after the 3 launches above"));
  CHECK(contains(tail.out, "// launched once (iterate over the whole grid)"));
}

TEST_CASE("codegen --profile nvidia prints the warp stream that runs on NVIDIA's devices") {
  const fs::path out = scratch_dir() / "warp_stream";
  fs::remove_all(out);
  RunResult written = liftx("variants stencils/iterated/heat2d.lift --size M=1024,N=1024 "
                            "--profile nvidia --warp-streams --where warp=1 --sample 1 --out '" +
                            out.string() + "'");
  REQUIRE(written.exit_code == 0);
  fs::path lift;
  for (const fs::directory_entry& e : fs::directory_iterator(out))
    if (e.path().extension() == ".lift")
      lift = e.path();
  REQUIRE(!lift.empty());
  // On NVIDIA's devices its rows are in registers, exchanged by shuffles; elsewhere, and when no
  // profile is named, in local memory.
  RunResult nvidia = liftx("codegen '" + lift.string() + "' --profile nvidia");
  REQUIRE(nvidia.exit_code == 0);
  CHECK(contains(nvidia.out, "shfl.sync.idx.b32"));
  for (const char* elsewhere : {"", " --profile amd"}) {
    RunResult local = liftx("codegen '" + lift.string() + "'" + elsewhere);
    REQUIRE(local.exit_code == 0);
    CHECK(!contains(local.out, "shfl.sync"));
    CHECK(contains(local.out, "barrier(CLK_LOCAL_MEM_FENCE)"));
  }
}

TEST_CASE("run --one-copy runs and verifies the kernel with one copy of each tile's code") {
  setenv("LIFTX_CACHE_DIR", (scratch_dir() / "cache").c_str(), 1);
  RunResult r = liftx("run stencils/variants/jacobi2d5pt/window.lift --device cpu --size "
                      "M=40,N=112 --one-copy --repeat 1 --no-roofline");
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "status    ok"));
}

TEST_CASE("codegen and run --pad-local pad a local tile read down its columns") {
  setenv("LIFTX_CACHE_DIR", (scratch_dir() / "cache").c_str(), 1);
  const fs::path rows =
      write_file("rowsums.lift",
                 "def rowsums(x: [[float]32]N) = join(mapWrg0(t => mapLcl0(r => "
                 "reduceSeq(add, 0.0f, r), toLocal(mapLcl0(mapSeq(id)))(t)), split(32, x)))\n");
  RunResult r = liftx("codegen '" + rows.string() + "' --size N=64 --pad-local --profile nvidia");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(
      contains(r.out, "// bank padding for nvidia (model) (32 banks, warps of 32): 1 local array"));
  CHECK(
      contains(r.out, "//   toLocal #1: rows padded by 1; worst degree 32 -> 1, cost 1089 -> 66"));
  CHECK(contains(r.out, "lcl_2[(i_4 + (33 * lid0_3))] = "));
  CHECK(contains(r.out, "local memory per work-group: 4224 bytes")); // 32 rows of 33 floats
  // A CPU has no banks; sizes are required.
  RunResult cpu = liftx("codegen '" + rows.string() + "' --size N=64 --pad-local --profile cpu");
  REQUIRE(cpu.exit_code == 0);
  CHECK(contains(cpu.out, "a CPU has no banks: nothing padded"));
  CHECK(contains(cpu.out, "(32 * lid0_3)"));
  RunResult no_sizes = liftx("codegen '" + rows.string() + "' --pad-local");
  CHECK(no_sizes.exit_code == 2);
  CHECK(contains(no_sizes.err, "--pad-local needs --size"));
  // run --pad-local on PoCL: the CPU's program is unchanged, and verified.
  RunResult run = liftx("run '" + rows.string() +
                        "' --device cpu --size N=64 --pad-local --repeat 1 --no-roofline");
  CAPTURE(run.err);
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "status    ok"));
}

TEST_CASE("run verifies a kernel on PoCL and reports JSON") {
  setenv("LIFTX_CACHE_DIR", (scratch_dir() / "cache").c_str(), 1);
  RunResult r = liftx("run stencils/variants/jacobi2d5pt/global2d.lift --device cpu "
                      "--size M=24,N=40 --repeat 2 --no-roofline");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "check     passed: 960 of 960 elements"));
  CHECK(contains(r.out, "status    ok"));
  RunResult j =
      liftx("run stencils/variants/jacobi2d5pt/global2d.lift --device cpu "
            "--size M=24,N=40 --global 64,32 --local 8,4 --repeat 2 --no-roofline --json");
  REQUIRE(j.exit_code == 0);
  CHECK(contains(j.out, "\"status\": \"ok\""));
  CHECK(contains(j.out, "\"threads_tied\": false"));
  CHECK(contains(j.out, "\"passed\": true"));
}

TEST_CASE("run and eval write a tuple result as one float32 file per output") {
  const fs::path dir = scratch_dir();
  const fs::path lowered = write_file("pair.lift", R"(
userfun dx(l: float, r: float): float { return 0.5f * (r - l); }
userfun dy(u: float, d: float): float { return 0.5f * (d - u); }
def pair(g: [[float]N]M) =
  mapGlb1(mapGlb0(w => tuple(dx(w[1][0], w[1][2]), dy(w[0][1], w[2][1]))),
          slide2D(3, 1, pad2D(1, 1, clamp, g)))
)");
  RunResult run =
      liftx("run '" + lowered.string() + "' --device cpu --size M=6,N=10 --repeat 1 -o '" +
            (dir / "kernel.f32").string() + "'");
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("120 of 120 elements match") != std::string::npos);
  CHECK(run.out.find("kernel.0.f32") != std::string::npos);
  RunResult eval = liftx("eval '" + lowered.string() + "' --size M=6,N=10 -o '" +
                         (dir / "interp.f32").string() + "'");
  REQUIRE(eval.exit_code == 0);
  for (const char* k : {"0", "1"}) {
    const std::string kernel = read_text(dir / (std::string("kernel.") + k + ".f32"));
    CHECK(kernel.size() == 60 * 4);
    CHECK(kernel == read_text(dir / (std::string("interp.") + k + ".f32")));
  }
  CHECK(!fs::exists(dir / "kernel.f32"));
}

TEST_CASE("run refuses programs that are not lowerable, with the location and exit code 2") {
  fs::path plain = write_file("plain.lift", "userfun f(x: float): float { return x; }\n"
                                            "def p(x: [float]N) =\n  map(f, x)\n");
  RunResult r = liftx("run '" + plain.string() + "' --device cpu --size 8");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, plain.string() + ":3:3: error: map is not lowered"));
  fs::path lcl =
      write_file("lcl.lift", "def p(x: [float]N) =\n  join(mapGlb0(mapLcl0(id), split(4, x)))\n");
  r = liftx("run '" + lcl.string() + "' --device cpu --size 8");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "mapLcl0 outside mapWrg0"));
  r = liftx("run stencils/variants/jacobi2d5pt/global2d.lift --device no-such-device --size 8");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "no-such-device"));
  r = liftx("run stencils/variants/jacobi2d5pt/tiled_local.lift --device cpu --size M=40,N=112 "
            "--global 126,50 --local 5,10");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "does not divide"));
}

TEST_CASE("run --launch: a sidecar that is not a launch is a user error naming it") {
  // Issue 20: {"global":["a"]} was an internal error (exit 3).
  for (const char* text : {R"({"global":["a"]})", R"({"global":[0]})", R"({"local":[4]})",
                           R"({"global":[8,8],"local":[4]})", "[1, 2]", "{"}) {
    fs::path sidecar = write_file("bad-launch.json", text);
    RunResult r = liftx("run stencils/variants/jacobi2d5pt/global2d.lift --device cpu --size 8 "
                        "--launch '" +
                        sidecar.string() + "'");
    CHECK_MESSAGE(r.exit_code == 2, text);
    CHECK_MESSAGE(contains(r.err, sidecar.string() + ": "), text);
  }
}

TEST_CASE("run --launch at other sizes: a tied launch's global size follows its rule, a free "
          "one's stays") {
  // The sidecar of an 8 x 4 local launch made at 64 x 64, run at 16 x 32.
  auto launch_line = [](bool tied) {
    fs::path sidecar = write_file(
        "launch.json", std::string(R"({"sizes": {"M": 64, "N": 64}, "global": [64, 64], )") +
                           R"("local": [8, 4], "tied": )" + (tied ? "true" : "false") + "}");
    RunResult r = liftx("run stencils/variants/jacobi2d5pt/global2d.lift --device cpu "
                        "--size M=16,N=32 --repeat 1 --no-roofline --launch '" +
                        sidecar.string() + "'");
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    const size_t at = r.out.find("launch ");
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find('\n', at) - at);
  };
  const std::string tied = launch_line(true);
  CHECK(contains(tied, "global 32 x 16, local 8 x 4 (threads tied to the mapped lengths)"));
  const std::string free = launch_line(false);
  CHECK(contains(free, "global 64 x 64, local 8 x 4 (free threads)"));
}

TEST_CASE("run --reference verifies a variant against the high-level stencil") {
  setenv("LIFTX_CACHE_DIR", (scratch_dir() / "cache").c_str(), 1);
  RunResult ok =
      liftx("run stencils/variants/jacobi2d5pt/chunks4.lift --device cpu --size M=8,N=16 "
            "--reference stencils/jacobi2d5pt.lift --repeat 1 --no-roofline");
  CAPTURE(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(contains(ok.out, "check     passed"));
  // Against another stencil of the same type the check must fail, with status wrong_result.
  RunResult wrong = liftx("run stencils/variants/jacobi2d5pt/chunks4.lift --device cpu "
                          "--size M=8,N=16 --reference stencils/gradient.lift --no-roofline");
  CHECK(wrong.exit_code == 1);
  CHECK(contains(wrong.out, "status    wrong_result"));
  RunResult mismatch = liftx("run stencils/variants/jacobi2d5pt/chunks4.lift --device cpu "
                             "--size M=8,N=16 --reference stencils/hotspot2d.lift");
  CHECK(mismatch.exit_code == 2);
  CHECK(contains(mismatch.err, "does not have the parameter and result types"));
}

TEST_CASE("run and explore take iterated programs and --steps; a step that cannot iterate is "
          "refused") {
  // A hand-lowered step iterated with --steps: one launch per step, verified.
  RunResult r = liftx("run stencils/variants/jacobi2d5pt/global2d.lift --steps 3 --device cpu "
                      "--size M=16,N=24 --repeat 2 --warmup 1 --no-roofline");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "launches  3"));
  CHECK(contains(r.out, "check     passed"));
  CHECK(contains(r.out, "per step"));
  // The program written with iterate: explored, its winner printed as the whole iteration.
  fs::path db = scratch_dir() / "iterated.db";
  RunResult e = liftx("explore stencils/iterated/heat2d.lift --device cpu --size M=16,N=32 "
                      "--budget 2 --quiet --db '" +
                      db.string() + "'");
  INFO(e.out << e.err);
  REQUIRE(e.exit_code == 0);
  CHECK(contains(e.out, "per step"));
  // Six steps: six launches of one step, or fused launches of several (temporal2d) whose
  // launches times steps, plus a remainder launch's steps, make six (which one wins is timing).
  std::smatch split;
  const bool fused = std::regex_search(
      e.out, split,
      std::regex(R"(\((\d+) launch(?:es)? of (\d+) steps? each(?:, then one of (\d+))?,)"));
  INFO("launches " << (fused ? split.str(0) : "none"));
  CHECK((contains(e.out, "iterate(6, ") ||
         (fused && std::stoi(split.str(1)) * std::stoi(split.str(2)) +
                           (split[3].matched ? std::stoi(split.str(3)) : 0) ==
                       6)));
  // codegen prints the step's kernel and says how often it is launched.
  fs::path lowered = write_file(
      "iterated.lift", "def twice3(xs: [float]N) = iterate(3, x => mapGlb0(v => mult(v, 2.0f), x), "
                       "xs)\n");
  RunResult c = liftx("codegen '" + lowered.string() + "'");
  INFO(c.out << c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(contains(c.out, "launched 3 times"));
  // --steps on a program that already iterates, and on a step whose result is no parameter's type.
  RunResult twice = liftx("explore stencils/iterated/heat2d.lift --steps 2 --device cpu --size 16");
  CHECK(twice.exit_code == 2);
  CHECK(contains(twice.err, "already iterates"));
  fs::path reduce =
      write_file("rowsum.lift", "def rowsum(g: [[float]N]M) = map(reduce(add, 0.0f), g)\n");
  RunResult bad = liftx("variants '" + reduce.string() + "' --steps 2 --size 16 --count");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--steps needs a step function"));
}

// Under the sanitizers: tests/adapt/test_*.cpp (the portfolio, selector and header).
TEST_CASE("adapt measures a portfolio at training shapes, writes it and evaluates held-out "
          "shapes; bad shapes are refused" *
          doctest::skip(kPlainBuildOnly)) {
  fs::path dir = scratch_dir();
  fs::path out = dir / "jacobi.adaptive.json";
  fs::path db = dir / "adapt.db";
  RunResult r = liftx("adapt stencils/jacobi2d5pt.lift --device cpu --shapes 16x32 32x16 --top 2 "
                      "--portfolio 2 --repeat 2 --warmup 1 --evaluate 24x40 23x41 --evaluate-top 1 "
                      "--build-jobs 1 --confirm-repeat 3 --fixed-grids 0 --quiet --db '" +
                      db.string() + "' -o '" + out.string() + "' --plot '" +
                      (dir / "held-out.svg").string() + "'");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "measured  16x32"));
  CHECK_FALSE(contains(r.err, "adapt     ")); // --quiet: no progress lines
  const std::string svg = read_text(dir / "held-out.svg");
  CHECK(svg.starts_with("<svg"));
  CHECK(contains(svg, "24x40"));
  CHECK(contains(svg, "adaptive pick"));
  CHECK(contains(r.out, "portfolio"));
  CHECK(contains(r.out, "24x40"));
  CHECK(contains(r.out, "adaptive  mean"));
  // 23 and 41 are prime: no work-group but 1 divides them, so the pick keeps its work-group and
  // rounds the global size up (the free-thread kernel, verified like every run); without fixed
  // grids (--fixed-grids 0), which would run there as measured.
  CHECK(contains(r.out, "and 0 fixed free-thread grid(s) of each"));
  CHECK_FALSE(contains(r.out, ", global "));
  CHECK(contains(r.out, "23x41"));
  CHECK(contains(r.out, "global size rounded up"));
  // The fractions' second measurement.
  CHECK(contains(r.out, "measured again in 3 interleaved rounds of 1 run:"));
  // The variant tuned at a training shape, fitted where it does not apply as measured: where it
  // runs at the held-out shapes, its worst; or that it runs at none.
  CHECK(contains(r.out, "`*`: the pick, the single member or the typical variant fitted"));
  CHECK(contains(r.out, "\ntypical   "));
  CHECK((contains(r.out, "held-out shapes, fitted or not") ||
         contains(r.out, "where it runs, fitted where needed; it runs at ")));
  const std::string artifact = read_text(out);
  CHECK(contains(artifact, "\"format\": \"liftx-adaptive-1\""));
  CHECK(contains(artifact, "\"portfolio\""));
  // Shapes must give every size: M and N here.
  RunResult bad = liftx("adapt stencils/jacobi2d5pt.lift --device cpu --shapes 16");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "shape '16'"));
  // The same portfolio as a header: compiled by an application that does not link liftx.
  const fs::path header = dir / "jacobi_adaptive.hpp";
  RunResult h = liftx("adapt stencils/jacobi2d5pt.lift --device cpu --shapes 16x32 --top 1 "
                      "--portfolio 1 --repeat 1 --warmup 0 --db '" +
                      db.string() + "' --emit header -o '" + header.string() + "'");
  INFO(h.out << h.err);
  REQUIRE(h.exit_code == 0);
  // A fixed grid among the candidates by default.
  CHECK(contains(h.out, "and 1 fixed free-thread grid(s) of each"));
  // Without --quiet: a line on stderr as each shape is measured, stdout unchanged.
  CHECK(contains(h.err, "adapt     training shape 1 of 1: measuring "));
  CHECK_FALSE(contains(h.out, "adapt     training shape"));
  const std::string text = read_text(header);
  CHECK(contains(text, "namespace jacobi2d5pt"));
  CHECK(contains(text, "kernel void jacobi2d5pt("));
  CHECK(std::system(("c++ -std=c++17 -fsyntax-only -x c++ '" + header.string() + "'").c_str()) ==
        0);
  RunResult no_file = liftx("adapt stencils/jacobi2d5pt.lift --device cpu --shapes 16x32 --emit "
                            "header");
  CHECK(no_file.exit_code == 2);
  CHECK(contains(no_file.err, "--emit header writes the header to the file given with -o"));
  RunResult plot_alone =
      liftx("adapt stencils/jacobi2d5pt.lift --device cpu --shapes 16x32 --plot x.svg");
  CHECK(plot_alone.exit_code == 2);
  CHECK(contains(plot_alone.err, "--plot charts the held-out shapes"));
}
