// Hostile input, each case a reproducer that once gave a false pass, a hang, a crash, an orphaned
// worker or a destroyed input: now a clear user error (exit 2) or a correct result.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <csignal>
#include <fstream>
#include <string>

using namespace cli_test;

namespace {

std::string quoted(const fs::path& path) {
  return "'" + path.string() + "'";
}

fs::path write_in(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.path / name) << text;
  return dir.path / name;
}

/// A user function scaling by `factor`, the stencil mapping it, and a lowered variant of it.
std::string scale_stencil(const std::string& factor, const std::string& def) {
  return "userfun scale(a: float): float {\n  return a * " + factor + ";\n}\n\ndef " + def +
         "(x: [float]N) = " + (def == "scaled" ? "map(scale, x)" : "mapGlb0(scale, x)") + "\n";
}

} // namespace

TEST_CASE("hostile: two references differing only inside a user function never share a cached "
          "result") {
  TempDir dir("hostile-reference-cache");
  const fs::path variant = write_in(dir, "variant.lift", scale_stencil("2.0f", "scaled_glb"));
  const fs::path twice = write_in(dir, "twice.lift", scale_stencil("2.0f", "scaled"));
  const std::string run = "run " + quoted(variant) + " --device cpu --size N=64 --repeat 1 " +
                          "--no-roofline --reference ";
  RunResult first = liftx(run + quoted(twice));
  CAPTURE(first.err);
  CHECK(first.exit_code == 0);
  CHECK(contains(first.out, "check     passed"));
  // The same reference with the body edited: the old result must not be taken from the cache.
  write_in(dir, "twice.lift", scale_stencil("3.0f", "scaled"));
  RunResult edited = liftx(run + quoted(twice));
  CAPTURE(edited.out);
  CHECK(edited.exit_code == 1);
  CHECK(contains(edited.out, "check     FAILED"));
}

TEST_CASE("hostile: a definition named with a reserved prefix is renamed, not looped on") {
  TempDir dir("hostile-reserved-prefix");
  for (const std::string name : {"liftx_x", "liftx_kernel", "native_sqrt", "__x", "main"}) {
    CAPTURE(name);
    const fs::path file =
        write_in(dir, "p.lift", "def " + name + "(x: [float]N) = mapGlb0(id, x)\n");
    RunResult r =
        liftx("run " + quoted(file) + " --device cpu --size N=32 --repeat 1 --no-roofline");
    CAPTURE(r.err);
    // The kernel is renamed (a prefix where a suffix cannot free the name), built and verified.
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "check     passed"));
  }
}

TEST_CASE("hostile: names OpenCL C reserves or defines as macros are refused where they are "
          "written, or renamed, and what passes builds") {
  TempDir dir("hostile-names");
  // One or two of each kind: keywords and qualifiers, types, macros, reserved prefixes,
  // built-in functions, the generated code's own names, and a plain name. Each run builds on
  // PoCL; the sanitizer build runs a few of them.
  std::vector<std::string> names = {
      "global", "long",        "float4", "M_PI",    "FLT_MAX",      "__x",      "_Bool",
      "main",   "cl_khr_fp64", "select", "barrier", "liftx_counts", "restrict", "x"};
  if (kPlainBuildOnly)
    names = {"global", "M_PI", "liftx_counts", "x"};
  auto builds_or_is_refused = [&](const std::string& where, const std::string& source) {
    const fs::path file = write_in(dir, "n.lift", source);
    RunResult r = liftx("run " + quoted(file) + " --device cpu --size 16 --repeat 1 --no-roofline");
    CAPTURE(where);
    CAPTURE(source);
    CAPTURE(r.out);
    CAPTURE(r.err);
    CHECK(!contains(r.err, "internal error"));
    CHECK(!contains(r.err, "does not build"));
    if (r.exit_code == 2)
      CHECK(contains(r.err, "n.lift:")); // refused where it is written
    else
      CHECK(contains(r.out, "check     passed"));
  };
  for (const std::string& name : names) {
    builds_or_is_refused("definition", "def " + name + "(x: [float]N) = mapGlb0(id, x)\n");
    builds_or_is_refused("parameter",
                         "def f(" + name + ": [float]N) = mapGlb0(id, " + name + ")\n");
    builds_or_is_refused("size", "def f(x: [float]" + name + ") = mapGlb0(id, x)\n");
    builds_or_is_refused("lambda",
                         "def f(x: [float]N) = mapGlb0(" + name + " => " + name + ", x)\n");
    builds_or_is_refused("user function", "userfun " + name +
                                              "(a: float): float {\n return a;\n}\n"
                                              "def f(x: [float]N) = mapGlb0(" +
                                              name + ", x)\n");
    builds_or_is_refused("user-function variable",
                         "userfun g(a: float): float {\n float " + name + " = a;\n return " + name +
                             ";\n}\ndef f(x: [float]N) = mapGlb0(g, x)\n");
  }
}

TEST_CASE("hostile: a global size past the kernel's int index is refused, not a wild write") {
  RunResult r = liftx("run stencils/variants/jacobi2d5pt/global2d.lift --device cpu "
                      "--size M=16,N=16 --global 2147483647,1");
  check_user_error(r, "2^31 - 1");
  // The largest global size that fits still runs and verifies.
  RunResult fits = liftx("run stencils/variants/jacobi2d5pt/global2d.lift --device cpu "
                         "--size M=8,N=8 --global 16,8 --repeat 1 --no-roofline");
  CAPTURE(fits.err);
  CHECK(fits.exit_code == 0);
}

TEST_CASE("hostile: long operator chains in a user function are a located error, not a stack "
          "overflow") {
  TempDir dir("hostile-chains");
  for (const std::string op : {" + ", " * ", " - ", " && ", " < "}) {
    std::string chain = "a";
    for (int i = 0; i < 23000; ++i)
      chain += op + "a";
    const std::string type = op == " && " || op == " < " ? "bool" : "float";
    const fs::path file = write_in(dir, "chain.lift",
                                   "userfun g(a: float): float {\n  " + type + " v = " + chain +
                                       ";\n  return " + (type == "bool" ? "v ? 1.0f : 0.0f" : "v") +
                                       ";\n}\ndef f(x: [float]N) = map(g, x)\n");
    CAPTURE(op);
    check_user_error(liftx("check " + quoted(file)), "chain.lift:2:");
  }
  std::string conditional = "a";
  for (int i = 0; i < 23000; ++i)
    conditional = "a < 0.0f ? a : " + conditional;
  const fs::path file = write_in(dir, "conditional.lift",
                                 "userfun g(a: float): float {\n  return " + conditional +
                                     ";\n}\ndef f(x: [float]N) = map(g, x)\n");
  check_user_error(liftx("check " + quoted(file)), "nesting deeper than");
  // A chain within the limit is still a program.
  std::string sum = "a";
  for (int i = 0; i < 100; ++i)
    sum += " + a";
  const fs::path ok = write_in(dir, "sum.lift",
                               "userfun g(a: float): float {\n  return " + sum +
                                   ";\n}\ndef f(x: [float]N) = map(g, x)\n");
  CHECK(liftx("check " + quoted(ok)).exit_code == 0);
}

TEST_CASE("hostile: many declarations in a user function are checked in near-linear time") {
  TempDir dir("hostile-declarations");
  std::string body;
  for (int i = 0; i < 200000; ++i)
    body += "  float v" + std::to_string(i) + " = a;\n";
  const fs::path file = write_in(dir, "many.lift",
                                 "userfun g(a: float): float {\n" + body +
                                     "  return v199999;\n}\n"
                                     "def f(x: [float]N) = map(g, x)\n");
  const auto start = std::chrono::steady_clock::now();
  RunResult r = liftx("check " + quoted(file));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(seconds < 20); // was 81.6 s: a scan of every scope per declaration
}

TEST_CASE("hostile: no command writes over its own input, and a failed write is an error") {
  TempDir dir("hostile-outputs");
  const std::string db = copy_of_pocl_db(dir);
  const std::string before = read_text(db);
  // The database as its own export, directly, through a symlink and through a hard link.
  fs::create_symlink(db, dir.path / "link.db");
  fs::create_hard_link(db, dir.path / "hard.db");
  for (const std::string& target : std::vector<std::string>{db, dir / "link.db", dir / "hard.db"}) {
    CAPTURE(target);
    check_user_error(liftx("db --db '" + db + "' --csv '" + target + "'"),
                     "an input of this command");
    check_user_error(liftx("db --db '" + db + "' --t4 '" + target + "'"),
                     "an input of this command");
    check_user_error(liftx("train --db '" + db + "' -o '" + target + "'"),
                     "an input of this command");
  }
  CHECK(read_text(db) == before);
  // eval --output onto its own source, or onto an input file.
  const fs::path source = write_in(dir, "e.lift", "def f(x: [float]N) = map(id, x)\n");
  const std::string source_text = read_text(source);
  check_user_error(liftx("eval " + quoted(source) + " --size 8 --output " + quoted(source)),
                   "an input of this command");
  CHECK(read_text(source) == source_text);
  // explore --out onto the folder its input is the winner of (a second explore of best.lift).
  fs::create_directories(dir.path / "again");
  fs::copy_file(fs::path(LIFTX_SOURCE_DIR) / "stencils/jacobi2d5pt.lift",
                dir.path / "again/best.lift");
  const std::string best_text = read_text(dir.path / "again/best.lift");
  check_user_error(liftx("explore '" + dir / "again/best.lift" +
                         "' --device cpu --size 16 --out '" + dir / "again" + "'"),
                   "an input of this command");
  CHECK(read_text(dir.path / "again/best.lift") == best_text);
  // A full device: the export fails with the reason, not a cut-off file and exit 0.
  if (fs::exists("/dev/full")) {
    check_user_error(liftx("db --db '" + db + "' --csv /dev/full"), "No space left on device");
    const std::string err = dir / "stdout-full.err";
    const int status = std::system(("'" + std::string(LIFTX_BINARY) + "' db --db '" + db +
                                    "' --csv - >/dev/full 2>'" + err + "'")
                                       .c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(contains(read_text(err), "cannot write to the standard output"));
  }
  // A failed write leaves an earlier output whole: nothing is written in place.
  const std::string csv = dir / "out.csv";
  REQUIRE(liftx("db --db '" + db + "' --csv '" + csv + "'").exit_code == 0);
  CHECK(contains(read_text(csv), "measurement_id,program"));
  for (const fs::directory_entry& entry : fs::directory_iterator(dir.path)) // no temporary left
    CHECK(entry.path().filename().string().find(".liftx-tmp-") == std::string::npos);
}

TEST_CASE("hostile: a stored device profile with an impossible field is refused, naming it") {
  TempDir dir("hostile-profile");
  RunResult devices = liftx("devices --json");
  REQUIRE(devices.exit_code == 0);
  nlohmann::json stored = nlohmann::json::parse(devices.out);
  if (stored.is_array())
    stored = stored.at(0);
  if (stored.contains("profile"))
    stored = stored.at("profile");
  for (const auto& change :
       std::vector<std::pair<std::string, nlohmann::json>>{{"compute_units", 0},
                                                           {"warp_width", -32},
                                                           {"max_work_group_size", 0},
                                                           {"local_mem_bytes", -1},
                                                           {"max_work_item_sizes", {64, 0, 1}},
                                                           {"compute_units", 2.5}}) {
    const std::string& field = change.first; // a copy of the name: CAPTURE takes no binding
    nlohmann::json profile = stored;
    profile[field] = change.second;
    const fs::path file = write_in(dir, "profile.json", profile.dump());
    CAPTURE(field);
    check_user_error(liftx("rank stencils/jacobi2d5pt.lift --model model/data/cpu-model.json "
                           "--size 64 --top 1 --profile " +
                           quoted(file)),
                     field);
  }
}

TEST_CASE("hostile: a damaged cell of a database is named by db --csv, not an internal error") {
  TempDir dir("hostile-damaged-cell");
  const std::string db = copy_of_pocl_db(dir);
  execute_sql(db, "UPDATE configurations SET global_json = '[\"x\"]' WHERE id = "
                  "(SELECT MIN(id) FROM configurations)");
  check_user_error(liftx("db --db '" + db + "' --csv -"), "launch sizes");
}

TEST_CASE("hostile: a run at sizes whose intermediates would not fit is refused before "
          "allocating") {
  TempDir dir("hostile-memory");
  // The input and result are small, the intermediate (every row against every column) is not.
  const fs::path file = write_in(
      dir, "outer.lift",
      "def outer(x: [float]N) = map(s => reduce(add, 0.0f, s), map(a => map(b => mult(a, b), x), "
      "x))\n");
  RunResult r = liftx("eval " + quoted(file) + " --size 65536 --max-memory 1G");
  check_user_error(r, "intermediate arrays");
}
