// A user's first hour: misspelt commands and flags get a suggestion, `liftx help COMMAND` works,
// sizes are accepted in every notation the help writes, and a winner written by explore runs
// again from its own files.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <string>

using namespace cli_test;

TEST_CASE("usability: a misspelt command or flag is named with the nearest one") {
  RunResult command = liftx("explor stencils/jacobi2d5pt.lift");
  CHECK(command.exit_code == 2);
  CHECK(contains(command.err, "unknown command 'explor' (did you mean 'explore'?)"));
  RunResult flag = liftx("explore stencils/jacobi2d5pt.lift --sise 64");
  CHECK(flag.exit_code == 2);
  CHECK(contains(flag.err, "unknown option '--sise' (did you mean '--size'?)"));
  CHECK(!contains(flag.err, "The following arguments were not expected"));
  RunResult far = liftx("run stencils/jacobi2d5pt.lift --frobnicate");
  CHECK(far.exit_code == 2);
  CHECK(contains(far.err, "unknown option '--frobnicate'; `liftx help run` lists its options"));
  // A value out of range or a missing option: CLI11's reason, named with the command.
  RunResult range = liftx("explore stencils/jacobi2d5pt.lift --budget 0");
  CHECK(range.exit_code == 2);
  CHECK(contains(range.err, "liftx explore: --budget: "));
  CHECK(contains(range.err, "Value 0 not in range 1 to 1000000"));
  CHECK(contains(range.err, "`liftx help explore` lists its options"));
  CHECK(!contains(range.err, "Run with --help"));
  RunResult missing = liftx("rank stencils/jacobi2d5pt.lift --profile cpu");
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "liftx rank: --size is required; `liftx help rank`"));
  // No command at all: what comes first, and the commands.
  RunResult nothing = liftx("");
  CHECK(nothing.exit_code == 2);
  CHECK(contains(nothing.err, "liftx: a command is required; the commands are: "));
  CHECK(contains(nothing.err, "explore"));
  RunResult bare_flag = liftx("--verison");
  CHECK(bare_flag.exit_code == 2);
  CHECK(contains(bare_flag.err, "unknown option '--verison' (did you mean '--version'?): options "
                                "follow a command"));
  CHECK(contains(bare_flag.err, "`liftx help COMMAND`"));
  CHECK(!contains(bare_flag.err, "Run with --help"));
}

TEST_CASE("usability: liftx help COMMAND prints the command's options") {
  RunResult help = liftx("help explore");
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "--budget"));
  CHECK(contains(help.out, "--print-kernel"));
  RunResult all = liftx("help");
  CHECK(all.exit_code == 0);
  CHECK(contains(all.out, "explore"));
  RunResult unknown = liftx("help exploer");
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.err, "did you mean 'explore'?"));
}

TEST_CASE("usability: sizes as 64, M=32,N=64 and 32x64 bind alike") {
  const std::string run = "run stencils/variants/jacobi2d5pt/global2d.lift --device cpu "
                          "--repeat 1 --no-roofline --size ";
  RunResult named = liftx(run + "M=32,N=64");
  RunResult ordered = liftx(run + "32x64");
  REQUIRE(named.exit_code == 0);
  REQUIRE(ordered.exit_code == 0);
  CHECK(contains(ordered.out, "sizes     M=32 N=64"));
  CHECK(contains(named.out, "sizes     M=32 N=64"));
  RunResult wrong = liftx(run + "32x64x2");
  CHECK(wrong.exit_code == 2);
  CHECK(contains(wrong.err, "has 2 sizes (M, N)"));
}

TEST_CASE("usability: explore ends on its summary, and its winner runs from --out's files "
          "without --size") {
  TempDir dir("usability-explore");
  RunResult r = liftx("explore stencils/jacobi2d5pt.lift --device cpu --size 16 --budget 1 "
                      "--sample 10 --repeat 2 --out '" +
                      dir / "best" + "' --db '" + dir / "e.db" + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(!contains(r.out, "--- kernel ---")); // listings only with --print-kernel
  const size_t last_line = r.out.rfind('\n', r.out.size() - 2);
  CHECK(contains(r.out.substr(last_line), "written   "));
  CHECK(r.out.find("\nbest      rank ") > r.out.find("\nrecorded  "));
  RunResult again = liftx("run '" + dir / "best/best.lift" + "' --launch '" +
                          dir / "best/best.json" + "' --device cpu --repeat 1 --no-roofline");
  CAPTURE(again.err);
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, "sizes     M=16 N=16"));
  CHECK(contains(again.out, "check     passed"));
  RunResult neither = liftx("run '" + dir / "best/best.lift" + "' --device cpu");
  CHECK(neither.exit_code == 2);
  CHECK(contains(neither.err, "--size is required"));
}

TEST_CASE("usability: explore says when no tile divides the sizes, for stencils only") {
  TempDir dir("usability-untiled");
  int explores = 0;
  auto explore = [&](const std::string& file, int64_t size) {
    return liftx("explore '" + file + "' --device cpu --size " + std::to_string(size) +
                 " --budget 1 --repeat 1 --warmup 0 --no-baseline --db '" +
                 dir / (std::to_string(++explores) + ".db") + "'");
  };
  RunResult odd = explore("stencils/jacobi2d5pt.lift", 17);
  CAPTURE(odd.err);
  REQUIRE(odd.exit_code == 0);
  CHECK(contains(odd.out, "note      no tile divides the output at M=17 N=17: the space holds only "
                          "untiled kernels"));
  RunResult even = explore("stencils/jacobi2d5pt.lift", 16);
  REQUIRE(even.exit_code == 0);
  CHECK(!contains(even.out + even.err, "no tile divides"));
  // A point-wise program has nothing to tile at any size.
  const fs::path scale =
      write_file("scale.lift", "userfun twice(x: float): float { return 2.0f * x; }\n"
                               "def scale(grid: [[float]N]M) = map2D(twice, grid)\n");
  RunResult pointwise = explore(scale.string(), 17);
  CAPTURE(pointwise.err);
  REQUIRE(pointwise.exit_code == 0);
  CHECK(!contains(pointwise.out + pointwise.err, "no tile divides"));
}
