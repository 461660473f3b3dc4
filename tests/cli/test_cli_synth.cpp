// End-to-end tests of `liftx synth`: the files it writes, its listing, determinism, its errors,
// and a generated stencil through check, eval, variants and run on PoCL.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <string>

using namespace cli_test;

TEST_CASE("synth writes stencils that check and evaluate, one line per file") {
  TempDir dir("synth");
  RunResult r = liftx("synth --count 4 --seed 3 --out '" + dir / "a" +
                      "' --shapes star,box --max-radius 2 --max-grids 3");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  for (int i = 0; i < 4; ++i) {
    const std::string name = "synth_3_" + std::to_string(i);
    CAPTURE(name);
    CHECK(lines[static_cast<size_t>(i)].rfind(name + "  ", 0) == 0);
    CHECK((contains(lines[static_cast<size_t>(i)], "star r=") ||
           contains(lines[static_cast<size_t>(i)], "box r=")));
    CHECK_FALSE(contains(lines[static_cast<size_t>(i)], "r=3"));
    const std::string file = dir / ("a/" + name + ".lift");
    REQUIRE(fs::exists(file));
    const std::string text = read_text(file);
    CHECK(text.rfind("// " + name + ": a synthetic 2D stencil", 0) == 0);
    CHECK(contains(text, "// seed     3, stencil " + std::to_string(i) + "\n"));
    RunResult check = liftx("check '" + file + "'");
    CHECK(check.exit_code == 0);
    CHECK(contains(check.out, "def " + name + "(g0: [[float]N]M"));
    RunResult eval = liftx("eval '" + file + "' --size M=13,N=17");
    CHECK(eval.exit_code == 0);
    CHECK(contains(eval.out, "result    [[float]N]M [13 x 17]"));
  }
  CHECK(files_with_extension(dir.path / "a", ".lift") == 4);
  // The same seed writes the same files; a shorter run writes the same first stencils.
  RunResult again = liftx("synth --count 2 --seed 3 --out '" + dir / "b" +
                          "' --shapes star,box --max-radius 2 --max-grids 3");
  REQUIRE(again.exit_code == 0);
  CHECK(lines_of(again.out) == std::vector<std::string>(lines.begin(), lines.begin() + 2));
  for (const char* name : {"synth_3_0.lift", "synth_3_1.lift"})
    CHECK(read_text(dir.path / "a" / name) == read_text(dir.path / "b" / name));
}

TEST_CASE("synth reports bad options with a message and exit code 2") {
  TempDir dir("synth_errors");
  struct Case {
    std::string args;
    std::string message;
  };
  const std::string out = " --out '" + dir / "x" + "'";
  const Case cases[] = {
      {"synth --count 0" + out, "--count must be 1 to 1000000, got 0"},
      {"synth --count -3" + out, "--count must be 1 to 1000000, got -3"},
      {"synth --count 2 --shapes star,circle" + out, "unknown shape 'circle'"},
      {"synth --count 2 --shapes ," + out, "no shape given"},
      {"synth --count 2 --max-radius 4" + out, "--max-radius must be 1 to 3, got 4"},
      {"synth --count 2 --max-grids 0" + out, "--max-grids must be 1 to 6, got 0"},
      {"synth --count 2", "--out"},
      {"synth --count 2 --kind heat" + out, "--kind: unknown kind 'heat'"},
      {"synth --count 2 --kind product --shapes star" + out,
       "--shapes, --max-radius and --max-grids describe stencils, not the kind product"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    RunResult r = liftx(c.args);
    check_user_error(r);
    CHECK(contains(r.err, c.message));
  }
  CHECK_FALSE(fs::exists(dir.path / "x" / "synth_1_0.lift"));
}

TEST_CASE("a synthetic stencil's variant verifies on PoCL through the command line") {
  TempDir dir("synth_run");
  RunResult r = liftx("synth --count 1 --seed 5 --out '" + dir.path.string() + "'");
  REQUIRE(r.exit_code == 0);
  const std::string stencil = dir / "synth_5_0.lift";
  RunResult v = liftx("variants '" + stencil +
                      "' --size M=16,N=32 --profile cpu --where strategy=global2d_10 "
                      "--limit 1 --out '" +
                      dir / "variants" + "'");
  CAPTURE(v.err);
  REQUIRE(v.exit_code == 0);
  REQUIRE(files_with_extension(dir.path / "variants", ".lift") == 1);
  std::string variant;
  for (const auto& e : fs::directory_iterator(dir.path / "variants"))
    if (e.path().extension() == ".lift")
      variant = e.path().string();
  const std::string sidecar = variant.substr(0, variant.size() - 5) + ".json";
  RunResult run = liftx("run '" + variant + "' --device cpu --size M=16,N=32 --launch '" + sidecar +
                        "' --reference '" + stencil + "' --repeat 1 --no-roofline");
  CAPTURE(run.err);
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "check     passed: 512 of 512 elements"));
}

TEST_CASE("synthetic programs of every other kind lower to variants that verify on PoCL") {
  TempDir dir("synth_kinds");
  struct Case {
    std::string kind;
    std::string sizes;
    std::string strategy; ///< the kind's own lowering, where it has one
    std::string first_line;
  };
  const Case cases[] = {
      {"stencil3d", "M=8,N=12,O=16", "window3d", "a synthetic 3D stencil"},
      {"time_steps", "M=32,N=24", "temporal2d", "a synthetic 2D stencil"},
      {"multi_output", "M=16,N=32", "workgroup2d_local", "a synthetic 2D stencil"},
      {"layout", "M=16,N=32", "chunks", "a synthetic 2D stencil"},
      {"reduction", "M=32,N=512", "workgroup_reduce", "a synthetic reduction"},
      {"product", "M=8,N=16,K=32", "register_block", "a synthetic product"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.kind);
    const std::string folder = dir / c.kind;
    RunResult r = liftx("synth --count 2 --seed 4 --kind " + c.kind + " --out '" + folder + "'");
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const std::vector<std::string> lines = lines_of(r.out);
    REQUIRE(lines.size() == 2);
    const std::string name = "synth_" + c.kind + "_4_1";
    CHECK(lines[1].rfind(name + "  " + c.kind + ": ", 0) == 0);
    const std::string program = folder + "/" + name + ".lift";
    CHECK(read_text(program).rfind("// " + name + ": " + c.first_line, 0) == 0);
    RunResult v = liftx("variants '" + program + "' --size " + c.sizes +
                        " --profile cpu --where strategy=" + c.strategy +
                        " --sample 2 --seed 2 --quiet --out '" + folder + "/variants'");
    CAPTURE(v.err);
    REQUIRE(v.exit_code == 0);
    REQUIRE(files_with_extension(fs::path(folder) / "variants", ".lift") == 2);
    for (const auto& e : fs::directory_iterator(fs::path(folder) / "variants")) {
      if (e.path().extension() != ".lift")
        continue;
      const std::string variant = e.path().string();
      const std::string sidecar = variant.substr(0, variant.size() - 5) + ".json";
      RunResult run = liftx("run '" + variant + "' --device cpu --size " + c.sizes + " --launch '" +
                            sidecar + "' --reference '" + program + "' --repeat 1 --no-roofline");
      CAPTURE(variant);
      CAPTURE(run.err);
      CHECK(run.exit_code == 0);
      CHECK(contains(run.out, "check     passed"));
    }
  }
}
