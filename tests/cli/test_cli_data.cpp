// End-to-end tests of the `liftx` commands around the variant space and the performance
// database: variants, features, db, and bad input to the model and database commands, on PoCL at
// small sizes. Each test checks what the command prints or writes, not only its exit code.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace cli_test;
TEST_CASE("variants --count counts the variants that variants --out writes") {
  TempDir dir("variants");
  const std::string base = "variants stencils/jacobi2d5pt.lift --size M=16,N=16 --profile cpu";
  const std::string where = " --where strategy=global2d_01 --where split=8 --where 'interchange=1' "
                            "--where 'local=4x2|8x1'";
  RunResult count = liftx(base + where + " --count --out '" + dir / "unused" + "'");
  CAPTURE(count.err);
  REQUIRE(count.exit_code == 0);
  const std::string matching = field(count.out, "matching  ");
  REQUIRE(ends_with(matching, " variants (--where)"));
  const int n = std::stoi(matching);
  CHECK(n > 0);
  CHECK(n < 100);
  CHECK_FALSE(fs::exists(dir.path / "unused")); // --count writes nothing
  CHECK(lines_starting(count.out, "written").empty());

  RunResult written = liftx(base + where + " --out '" + dir / "v" + "'");
  REQUIRE(written.exit_code == 0);
  CHECK(field(written.out, "matching  ") == matching);
  CHECK(field(written.out, "written   ") == std::to_string(n) + " variants to " + dir / "v");
  CHECK(files_with_extension(dir.path / "v", ".lift") == size_t(n));
  CHECK(files_with_extension(dir.path / "v", ".json") == size_t(n));
  for (const auto& e : fs::directory_iterator(dir.path / "v")) {
    if (e.path().extension() != ".json")
      continue;
    CAPTURE(e.path());
    CHECK(ends_with(e.path().stem().string(), "-global2d_01"));
    CHECK(fs::is_regular_file(fs::path(e.path()).replace_extension(".lift")));
    const nlohmann::json sidecar = nlohmann::json::parse(read_text(e.path()));
    CHECK(sidecar.at("strategy") == "global2d_01");
    CHECK(sidecar.at("parameters").at("split") == 8);
    CHECK(sidecar.at("parameters").at("interchange") == 1);
    CHECK(sidecar.at("sizes") == nlohmann::json({{"M", 16}, {"N", 16}}));
    const nlohmann::json local = sidecar.at("local");
    CHECK((local == nlohmann::json({4, 2}) || local == nlohmann::json({8, 1})));
  }

  // --sample draws from the matching variants only, and the older --device-profile still works.
  const std::string old_spelling =
      "variants stencils/jacobi2d5pt.lift --size M=16,N=16 --device-profile cpu";
  RunResult sampled = liftx(old_spelling + where + " --sample 3 --out '" + dir / "s" + "'");
  REQUIRE(sampled.exit_code == 0);
  CHECK(field(sampled.out, "matching  ") == fmt::format("{} variants (--where), 3 sampled", n));
  CHECK(files_with_extension(dir.path / "s", ".lift") == 3);
  for (const auto& e : fs::directory_iterator(dir.path / "s"))
    CHECK(ends_with(e.path().stem().string(), "-global2d_01"));

  // --limit stops after that many variants, and writes them.
  RunResult limited = liftx(base + " --limit 7 --out '" + dir / "first7" + "'");
  REQUIRE(limited.exit_code == 0);
  CHECK(field(limited.out, "variants  ").rfind("7  (", 0) == 0);
  CHECK(field(limited.out, "written   ") == "7 variants to " + dir / "first7");
  CHECK(files_with_extension(dir.path / "first7", ".lift") == 7);

  // The whole space: the counts per lowering strategy add up to the total.
  RunResult whole = liftx(base + " --count");
  REQUIRE(whole.exit_code == 0);
  CHECK(field(whole.out, "program   ") ==
        "jacobi2d5pt (stencils/jacobi2d5pt.lift), sizes M=16 N=16, device profile cpu");
  const long total = std::stol(field(whole.out, "variants  "));
  long sum = 0;
  bool in_strategies = false;
  std::set<std::string> strategies;
  for (const std::string& line : lines_of(whole.out)) {
    if (line == "rejections:")
      break;
    if (in_strategies) {
      std::istringstream in(line);
      std::string name;
      long k = 0;
      in >> name >> k;
      strategies.insert(name);
      sum += k;
    }
    in_strategies |= line == "per lowering strategy:";
  }
  CHECK(total > n);
  CHECK(sum == total);
  CHECK(strategies.contains("global2d_01"));
  CHECK(strategies.contains("window"));
  CHECK(contains(whole.out, "\nrejections:\n"));

  // As data: the listed variants on stdout (the report on stderr), the same as --out writes.
  RunResult csv = liftx(base + where + " --format csv --quiet");
  REQUIRE(csv.exit_code == 0);
  const std::vector<std::string> rows = lines_of(csv.out);
  REQUIRE(rows.size() == size_t(n) + 1);
  CHECK(rows[0] == "index,strategy,parameters,dims,global,local,tied");
  std::set<std::string> written_indices, listed_indices;
  for (const auto& e : fs::directory_iterator(dir.path / "v"))
    if (e.path().extension() == ".json")
      written_indices.insert(
          e.path().stem().string().substr(0, e.path().stem().string().find('-')));
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> f = csv_fields(rows[i]);
    REQUIRE(f.size() == 7);
    CHECK(f[1] == "global2d_01");
    CHECK(nlohmann::json::parse(f[2]).at("split") == 8);
    CHECK((f[5] == "4x2" || f[5] == "8x1"));
    listed_indices.insert(f[0]);
    // The same launch as the sidecar --out wrote for this variant.
    const fs::path sidecar = dir.path / "v" / (f[0] + "-global2d_01.json");
    REQUIRE(fs::exists(sidecar));
    const nlohmann::json launch = nlohmann::json::parse(read_text(sidecar));
    CHECK(nlohmann::json::parse(f[2]) == launch.at("parameters"));
    CHECK(f[4] == fmt::format("{}", fmt::join(launch.at("global").get<std::vector<int>>(), "x")));
    CHECK(f[5] == fmt::format("{}", fmt::join(launch.at("local").get<std::vector<int>>(), "x")));
    CHECK(f[6] == (launch.at("tied").get<bool>() ? "true" : "false"));
  }
  CHECK(listed_indices == written_indices);
  CHECK(field(csv.err, "matching  ") == matching);
  CHECK(contains(csv.err, "\nper lowering strategy:\n"));
  CHECK_FALSE(contains(csv.err, "enumerating")); // --quiet

  RunResult json = liftx(old_spelling + where + " --sample 3 --format json --quiet");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  REQUIRE(doc.at("variants").size() == 3);
  CHECK(doc.at("space").at("variants") == total);
  CHECK(doc.at("space").at("per_strategy").at("global2d_01").get<long>() > n);
  CHECK(doc.at("sizes") == nlohmann::json({{"M", 16}, {"N", 16}}));
  for (const nlohmann::json& v : doc.at("variants")) {
    CHECK(v.at("strategy") == "global2d_01");
    CHECK(v.at("parameters").at("split") == 8);
    CHECK(written_indices.contains(std::to_string(v.at("index").get<long>())));
  }
}

TEST_CASE("variants --shared-streams adds an iterated stencil's shared streams, runnable") {
  TempDir dir("shared-streams");
  const std::string base = "variants stencils/iterated/heat2d.lift --size M=128,N=256 --profile "
                           "nvidia --where shared=1 --where tied=true --quiet";
  RunResult without = liftx(base + " --count");
  REQUIRE(without.exit_code == 0);
  CHECK(field(without.out, "matching  ") == "0 variants (--where)");
  RunResult with = liftx(base + " --shared-streams --sample 1 --out '" + dir / "v" + "'");
  CAPTURE(with.err);
  REQUIRE(with.exit_code == 0);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir.path / "v"))
    if (entry.path().extension() == ".lift")
      files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  fs::path launch = files[0];
  launch.replace_extension(".json");
  RunResult run =
      liftx("run '" + files[0].string() + "' --launch '" + launch.string() +
            "' --device cpu --size M=128,N=256 --reference stencils/iterated/heat2d.lift "
            "--repeat 1 --format json");
  CAPTURE(run.err);
  REQUIRE(run.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(run.out);
  CHECK(report.at("verification").at("passed") == true);
  CHECK(report.at("verification").at("elements") == 128 * 256);
  CHECK(report.at("launches").get<int>() >= 1);
}

TEST_CASE("every command spells and describes its shared options the same way") {
  const std::string db_default =
      "(default: $LIFTX_DB, else $XDG_DATA_HOME/liftx/perf.db, else ~/.local/share/liftx/perf.db)";
  // CLI11 wraps long help lines; compare with the whitespace collapsed.
  auto help = [](const std::string& command) {
    RunResult r = liftx(command + " --help");
    CAPTURE(command);
    CHECK(r.exit_code == 0);
    std::string flat;
    for (char c : r.out)
      if (!std::isspace(static_cast<unsigned char>(c)) || (!flat.empty() && flat.back() != ' '))
        flat += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
    return flat;
  };
  for (const char* command :
       {"collect", "calibrate", "db", "explore", "train", "evaluate", "adapt"}) {
    CAPTURE(command);
    CHECK(contains(help(command), db_default));
  }
  for (const char* command : {"variants", "features", "collect", "rank"}) {
    CAPTURE(command);
    const std::string text = help(command);
    CHECK(contains(text, "--profile,--device-profile"));
    CHECK(contains(text, "device profile of the variant space and the features"));
  }
  for (const char* command : {"run", "collect", "calibrate", "explore", "launch", "adapt"}) {
    CAPTURE(command);
    const std::string text = help(command);
    CHECK(contains(text, "--warmup INT:INT in [0 - 1000] untimed runs first, for at least 20 ms "
                         "when > 0 (default 3)"));
    CHECK(contains(text, "timed runs; the median counts (default 10)"));
  }
  for (const char* command :
       {"run", "collect", "calibrate", "explore", "launch", "roofline", "adapt"}) {
    CAPTURE(command);
    const std::string text = help(command); // launch and roofline print "TEXT REQUIRED"
    CHECK(contains(text, "--device TEXT "));
    CHECK(contains(text,
                   " OpenCL device: cpu, gpu, pocl, nvidia, amd, intel, P:D (platform:device, "
                   "as `liftx devices` lists them) or part of a device name"));
  }
  for (const char* command : {"train", "evaluate", "replay"}) {
    CAPTURE(command);
    const std::string text = help(command);
    CHECK(contains(text, "--kind TEXT model kind"));
    // A model file, as elsewhere: evaluate judges model files, replay takes one as its prior;
    // train's old spelling is hidden.
    CHECK(contains(text, "--model") == (std::string(command) != "train"));
  }
  CHECK(contains(help("evaluate"), "--model TEXT ... judge these trained model files"));
  CHECK(contains(help("replay"), "--model TEXT ... a trained model file as every program's prior"));
  // One word per idea; an older spelling still parses but is not shown.
  for (const char* command : {"run", "devices", "roofline", "launch"}) {
    CAPTURE(command);
    const std::string text = help(command);
    CHECK(contains(text, "--format TEXT:{table,json} table (default) or json"));
    CHECK_FALSE(contains(text, "--json"));
  }
  for (const char* command : {"explore", "roofline"}) {
    CAPTURE(command);
    CHECK(contains(help(command), "--remeasure "));
    CHECK_FALSE(contains(help(command), "--refresh "));
  }
  for (const char* command : {"explore", "run"}) {
    CAPTURE(command);
    CHECK(contains(help(command), "--print-kernel "));
    CHECK_FALSE(contains(help(command), "--show-kernel"));
  }
  for (const char* command : {"train", "evaluate", "replay", "route", "db"}) {
    CAPTURE(command);
    const std::string text = help(command);
    CHECK(contains(text, "--device-key TEXT "));
    CHECK_FALSE(contains(text, "--device TEXT")); // --device names an OpenCL device only
  }
}

TEST_CASE("an older spelling gives what the one in --help gives") {
  const std::string run = "run stencils/variants/jacobi2d5pt/global2d.lift --device cpu "
                          "--size M=24,N=40 --repeat 1 --no-roofline ";
  RunResult format = liftx(run + "--format json");
  RunResult older = liftx(run + "--json");
  CAPTURE(format.err);
  CAPTURE(older.err);
  REQUIRE(format.exit_code == 0);
  REQUIRE(older.exit_code == 0);
  const nlohmann::json a = nlohmann::json::parse(format.out);
  const nlohmann::json b = nlohmann::json::parse(older.out);
  for (const nlohmann::json* j : {&a, &b}) {
    CHECK(j->at("status") == "ok");
    CHECK(j->at("verification").at("passed") == true);
  }
  std::set<std::string> keys_a, keys_b;
  for (const auto& [key, value] : a.items())
    keys_a.insert(key);
  for (const auto& [key, value] : b.items())
    keys_b.insert(key);
  CHECK(keys_a == keys_b);
  CHECK_FALSE(a.contains("kernel_source")); // only with --print-kernel

  // The kernel comes back from the worker child and is printed, under either spelling.
  RunResult print = liftx(run + "--print-kernel");
  RunResult show = liftx(run + "--show-kernel");
  REQUIRE(print.exit_code == 0);
  REQUIRE(show.exit_code == 0);
  CHECK(contains(print.out, "kernel void "));
  const std::string kernel = print.out.substr(0, print.out.find("program   "));
  CHECK(kernel.size() > 100);
  CHECK(contains(show.out, kernel));
  RunResult json_kernel = liftx(run + "--format json --print-kernel");
  REQUIRE(json_kernel.exit_code == 0);
  CHECK(contains(nlohmann::json::parse(json_kernel.out).at("kernel_source").get<std::string>(),
                 "kernel void "));

  CHECK(liftx(run + "--format yaml").exit_code != 0);
  CHECK(liftx("train --db nowhere.db --device-key a --device b").exit_code != 0);
}

TEST_CASE("features prints the documented columns in CSV and in JSON") {
  const std::set<std::string> documented = documented_feature_columns();
  REQUIRE(documented.size() == 31); // program + 30 features
  RunResult csv =
      liftx("features stencils/variants/jacobi2d5pt --profile nvidia --size M=40,N=112");
  CAPTURE(csv.err);
  REQUIRE(csv.exit_code == 0);
  const std::vector<std::string> lines = lines_of(csv.out);
  REQUIRE(lines.size() == 6); // the header and one row per .lift file, sorted
  const std::vector<std::string> header = csv_fields(lines[0]);
  CHECK(header[0] == "program");
  CHECK(std::set<std::string>(header.begin(), header.end()) == documented);
  CHECK(header.size() == documented.size());
  const std::vector<std::string> files = {"chunks4", "global1d_rows", "global2d", "tiled_local",
                                          "window"};
  std::map<std::string, std::string> tiled;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::vector<std::string> f = csv_fields(lines[i + 1]);
    REQUIRE(f.size() == header.size());
    CHECK(f[0] == "stencils/variants/jacobi2d5pt/" + files[i] + ".lift");
    for (size_t c = 0; c < f.size(); ++c)
      if (files[i] == "tiled_local")
        tiled[header[c]] = f[c];
  }
  // tiled_local's launch and local memory (as `liftx codegen` reports them) and its traffic.
  CHECK(tiled["global_size_0"] == "126");
  CHECK(tiled["global_size_1"] == "50");
  CHECK(tiled["global_size_2"] == "1");
  CHECK(tiled["local_size_0"] == "18");
  CHECK(tiled["local_size_1"] == "10");
  CHECK(tiled["local_size_assumed"] == "0");
  CHECK(tiled["work_items"] == "6300");
  CHECK(tiled["work_groups"] == "35");
  CHECK(tiled["local_memory_bytes"] == "720");
  CHECK(tiled["barriers_per_thread"] == "1");
  CHECK(tiled["bytes_moved"] == std::to_string(2 * 40 * 112 * 4));

  RunResult json = liftx("features stencils/variants/jacobi2d5pt/tiled_local.lift "
                         "--profile nvidia --size M=40,N=112 --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json rows = nlohmann::json::parse(json.out);
  REQUIRE(rows.is_array());
  REQUIRE(rows.size() == 1);
  std::set<std::string> keys;
  for (const auto& [key, value] : rows[0].items())
    keys.insert(key);
  std::set<std::string> expected = documented;
  expected.insert("file");
  CHECK(keys == expected);
  CHECK(rows[0].at("program") == "jacobi2d5pt_tiled_local");
  CHECK(rows[0].at("file") == "stencils/variants/jacobi2d5pt/tiled_local.lift");
  // The same values as the CSV row (which prints 6 significant digits).
  for (const std::string& name : documented) {
    if (name == "program")
      continue;
    CAPTURE(name);
    CHECK(rows[0].at(name).get<double>() == doctest::Approx(std::stod(tiled[name])).epsilon(1e-5));
  }

  // A sidecar beside the file sets its launch; without one, --global/--local do.
  TempDir dir("features");
  fs::copy_file(fs::path(LIFTX_SOURCE_DIR) / "stencils/variants/jacobi2d5pt/global2d.lift",
                dir.path / "global2d.lift");
  RunResult free_launch = liftx("features '" + dir / "global2d.lift" +
                                "' --profile amd --size M=40,N=112 --global 64,32 "
                                "--local 16,4 --format json");
  REQUIRE(free_launch.exit_code == 0);
  const nlohmann::json given = nlohmann::json::parse(free_launch.out).at(0);
  std::ofstream(dir.path / "global2d.json") << R"({"global": [64, 32], "local": [16, 4]})";
  RunResult sidecar = liftx("features '" + dir / "global2d.lift" +
                            "' --profile amd --size M=40,N=112 --format json");
  REQUIRE(sidecar.exit_code == 0);
  const nlohmann::json from_sidecar = nlohmann::json::parse(sidecar.out).at(0);
  CHECK(from_sidecar.at("global_size_0") == 64);
  CHECK(from_sidecar.at("global_size_1") == 32);
  CHECK(from_sidecar.at("local_size_0") == 16);
  CHECK(from_sidecar.at("local_size_1") == 4);
  CHECK(from_sidecar.at("work_groups") == 32);
  CHECK(from_sidecar == given);
}

// Under the sanitizers: collect's bar (the same progress code) below.
TEST_CASE("enumerating and ranking show a running count on stderr, and nothing with --quiet" *
          doctest::skip(kPlainBuildOnly)) {
  // The count appears after 2 s; these commands take less, so the delay is set to 0.
  ::setenv("LIFTX_PROGRESS_AFTER_MS", "0", 1);
  TempDir dir("progress");
  const std::string model = (fs::path(LIFTX_SOURCE_DIR) / "model/data/cpu-model.json").string();
  const struct {
    std::string command, line;
  } cases[] = {
      {"variants stencils/jacobi2d5pt.lift --size 16 --count", "enumerating "},
      {"variants stencils/jacobi2d5pt.lift --size 16 --sample 5", "enumerating "},
      {"rank stencils/jacobi2d5pt.lift --model '" + model + "' --size 16 --top 3", "ranking "},
      {"rank stencils/jacobi2d5pt.lift --model '" + model + "' --size 16 --top 3 --sample 10",
       "sampling "},
      {"explore stencils/jacobi2d5pt.lift --device cpu --size 16 --budget 1 --repeat 1 --db '" +
           dir / "e.db" + "'",
       "ranking "},
  };
  for (const auto& c : cases) {
    CAPTURE(c.command);
    RunResult shown = liftx(c.command);
    CAPTURE(shown.err);
    REQUIRE(shown.exit_code == 0);
    // Not a terminal: whole lines ("ranking 4096 variants, 00:00"), no carriage returns.
    const std::vector<std::string> lines = lines_starting(shown.err, c.line);
    REQUIRE_FALSE(lines.empty());
    CHECK(contains(lines.front(), " variants, 00:0"));
    CHECK_FALSE(contains(shown.err, "\r"));
    RunResult quiet = liftx(c.command + " --quiet");
    REQUIRE(quiet.exit_code == 0);
    CHECK(lines_starting(quiet.err, c.line).empty());
    CHECK(quiet.out.size() > 0);
  }
  ::unsetenv("LIFTX_PROGRESS_AFTER_MS");
}

TEST_CASE("evaluate, replay and train name each step on stderr as they go; --quiet keeps silent") {
  TempDir dir("steps");
  const std::string db = copy_of_pocl_db(dir);
  const struct {
    std::string command, first_step;
  } cases[] = {
      {"evaluate --db '" + db + "' --kind knn", "evaluate  fold 1 of 8: leave out gaussian, 00:"},
      {"evaluate --db '" + db + "' --kind knn --protocol size", "evaluate  fold 1 of 1: "},
      {"replay --db '" + db + "' --kind knn --strategies static --budget 3 --seeds 1",
       "replay    training the prior without gaussian, 00:"},
      {"train --db '" + db + "' -o '" + dir / "m.json" + "'",
       "train     reading the database, 00:"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.command);
    RunResult shown = liftx(c.command);
    CAPTURE(shown.err);
    REQUIRE(shown.exit_code == 0);
    CHECK(shown.err.rfind(c.first_step, 0) == 0);
    const std::string name = c.command.substr(0, c.command.find(' '));
    RunResult quiet = liftx(c.command + " --quiet");
    REQUIRE(quiet.exit_code == 0);
    CHECK(lines_starting(quiet.err, name + " ").empty());
    if (name != "train") // its output names the time it took
      CHECK(quiet.out == shown.out);
  }
}

TEST_CASE("collect draws its bar on stderr while it works, says nothing it did not do, and "
          "nothing with --quiet") {
  TempDir dir("collect_bar");
  const std::string base = "collect stencils/jacobi2d5pt.lift --device cpu --size M=16,N=24 "
                           "--repeat 2 --db '" +
                           dir / "c.db" + "'";
  RunResult first = liftx(base + " --sample 3");
  CAPTURE(first.err);
  REQUIRE(first.exit_code == 0);
  // Not a terminal: whole lines. The plan is enumerated, then the bar ends full.
  CHECK(lines_starting(first.err, "enumerating jacobi2d5pt M=16 N=24").size() == 1);
  const std::vector<std::string> bars = lines_starting(first.err, "[");
  REQUIRE_FALSE(bars.empty());
  CHECK(contains(bars.back(), "] 3/3 100% elapsed "));
  CHECK_FALSE(contains(first.err, "\r"));
  // Resumed with everything measured: the plan is read, not enumerated, and there is no bar.
  RunResult resumed = liftx(base + " --sample 3 --resume");
  CAPTURE(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.empty());
  CHECK(contains(resumed.out, "\nvariants  3 planned, 0 measured, 3 already measured (skipped)\n"));
  RunResult quiet = liftx(base + " --sample 2 --quiet");
  REQUIRE(quiet.exit_code == 0);
  CHECK(quiet.err.empty());
}

TEST_CASE("collect --format json|csv prints this run's measurements, the report on stderr") {
  TempDir dir("collect_data");
  const std::string base = "collect stencils/jacobi2d5pt.lift --device cpu --repeat 2 --quiet "
                           "--db '" +
                           dir / "c.db" + "'";
  RunResult json = liftx(base + " --size M=16,N=24 --sample 3 --format json");
  CAPTURE(json.err);
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out); // stdout is the document alone
  CHECK(doc.at("measured") == 3);
  CHECK(doc.at("profile") == "cpu");
  CHECK(doc.at("device").get<std::string>().rfind("pocl:", 0) == 0);
  REQUIRE(doc.at("measurements").size() == 3);
  for (const nlohmann::json& m : doc.at("measurements")) {
    CHECK(m.at("program") == "jacobi2d5pt");
    CHECK(m.at("sizes") == nlohmann::json({{"M", 16}, {"N", 24}}));
    CHECK(m.at("configuration").contains("global_size_x"));
    if (m.at("status") == "ok") {
      CHECK(m.at("median_ms").get<double>() > 0);
      CHECK(m.at("repetitions") == 2);
    } else {
      CHECK(m.contains("message"));
    }
  }
  CHECK(contains(json.err, "\nvariants  3 planned, 3 measured"));
  // The T4 export keeps every timed run of a measurement (its runtimes), as Kernel Tuner does.
  RunResult t4 = liftx("db --db '" + dir / "c.db" + "' --t4 -");
  REQUIRE(t4.exit_code == 0);
  const nlohmann::json t4_doc = nlohmann::json::parse(t4.out);
  REQUIRE(t4_doc.at("results").size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const nlohmann::json& result = t4_doc.at("results")[i];
    const nlohmann::json& m = doc.at("measurements")[i];
    if (m.at("status") != "ok")
      continue;
    const nlohmann::json& runtimes = result.at("times").at("runtimes");
    REQUIRE(runtimes.size() == 2);
    CHECK(std::min(runtimes[0].get<double>(), runtimes[1].get<double>()) ==
          doctest::Approx(m.at("min_ms").get<double>()));
    CHECK(std::max(runtimes[0].get<double>(), runtimes[1].get<double>()) ==
          doctest::Approx(m.at("max_ms").get<double>()));
  }

  // Another size set: only the two measurements of this run, in `db --csv`'s columns.
  RunResult csv = liftx(base + " --size M=16,N=32 --sample 2 --format csv");
  CAPTURE(csv.err);
  REQUIRE(csv.exit_code == 0);
  const std::vector<std::string> rows = lines_of(csv.out);
  REQUIRE(rows.size() == 1 + 2);
  CHECK(rows[0].rfind(kDbCsvPrefix + ",", 0) == 0);
  for (size_t i = 1; i < rows.size(); ++i)
    CHECK(csv_fields(rows[i])[2] == R"({"M":16,"N":32})");
  CHECK(contains(csv.err, "\nvariants  2 planned, 2 measured"));
}

TEST_CASE("db summarises a database and exports it as CSV and T4 JSON") {
  TempDir dir("db");
  const std::string db = copy_of_pocl_db(dir);
  // Commands that only read open the database read-only: not a byte of it changes (no journal
  // mode switch, no tables a newer liftx added), so the tracked pocl.db stays clean.
  const std::string before = read_text(db);
  RunResult summary = liftx("db --db '" + db + "'");
  CAPTURE(summary.err);
  REQUIRE(summary.exit_code == 0);
  std::string expected =
      "database  " + db + "\ndevice    " + kPoclDevice +
      "\n  features profile cpu: 800 configurations\n"
      // pocl.db predates two columns: the summary says so.
      "    rows stored by an older liftx lack line_segments_per_warp_access, "
      "global_access_width: `liftx db --refresh-features cpu [--device-key KEY]` "
      "recomputes them\n";
  for (const std::string& s : kStencils)
    expected += "  " + s + std::string(14 - s.size(), ' ') + "   100: ok 100\n";
  CHECK(summary.out == expected);

  RunResult csv = liftx("db --db '" + db + "' --csv '" + dir / "export.csv" + "'");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("exported  800 measurements of ", 0) == 0);
  const std::string csv_text = read_text(dir.path / "export.csv");
  const std::vector<std::string> rows = lines_of(csv_text);
  REQUIRE(rows.size() == 801);
  const std::vector<std::string> header = csv_fields(rows[0]);
  CHECK(rows[0].rfind(kDbCsvPrefix + ",", 0) == 0);
  // The feature columns are `features`' own, in its order.
  RunResult features =
      liftx("features stencils/variants/jacobi2d5pt/global2d.lift --profile cpu --size 16");
  REQUIRE(features.exit_code == 0);
  CHECK(rows[0] == kDbCsvPrefix + lines_of(features.out)[0].substr(std::string("program").size()));
  std::map<std::string, int> per_program;
  std::set<std::string> statuses;
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> f = csv_fields(rows[i]);
    REQUIRE(f.size() == header.size());
    ++per_program[f[1]];
    statuses.insert(f[10]);
  }
  CHECK(per_program.size() == 8);
  for (const std::string& s : kStencils)
    CHECK(per_program[s] == 100);
  CHECK(statuses == std::set<std::string>{"ok"});
  RunResult to_stdout = liftx("db --db '" + db + "' --csv -");
  REQUIRE(to_stdout.exit_code == 0);
  CHECK(to_stdout.out == csv_text);

  RunResult t4 = liftx("db --db '" + db + "' --t4 -");
  REQUIRE(t4.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(t4.out);
  CHECK(doc.at("schema_version") == "1.0.0");
  CHECK(doc.at("device") == kPoclDevice);
  REQUIRE(doc.at("results").size() == 800);
  const nlohmann::json& first = doc.at("results")[0];
  CHECK(first.at("configuration").at("program") == csv_fields(rows[1])[1]);
  CHECK(first.at("configuration").at("variant") == csv_fields(rows[1])[3]);
  CHECK(first.at("configuration").at("M").is_number());
  CHECK(first.at("configuration").contains("local_size_x"));
  CHECK(doc.at("metadata").at("tool") == "liftx");
  CHECK(first.at("objectives") == nlohmann::json({"time"}));
  CHECK(first.at("status") == "ok");
  CHECK(first.at("correctness") == 1);
  CHECK(first.at("measurements").at(0).at("name") == "time");
  CHECK(first.at("measurements").at(0).at("unit") == "ms");
  CHECK(first.at("times").at("runtimes").at(0) == first.at("measurements").at(0).at("value"));
  RunResult t4_file =
      liftx("db --db '" + db + "' --device-key " + kPoclDevice + " --t4 '" + dir / "t4.json" + "'");
  REQUIRE(t4_file.exit_code == 0);
  CHECK(read_text(dir.path / "t4.json") == t4.out);
  // A device the database does not hold is an error, not an empty export (issue 20).
  for (const std::string export_option : {"--csv", "--t4"}) {
    CAPTURE(export_option);
    const fs::path unwritten = dir.path / "nope-export";
    RunResult unknown = liftx("db --db '" + db + "' --device nope " + export_option + " '" +
                              unwritten.string() + "'");
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("no device 'nope' in the database") != std::string::npos);
    CHECK_FALSE(fs::exists(unwritten));
  }

  RunResult trained = liftx("train --db '" + db + "' -o '" + dir / "m.json" + "'");
  REQUIRE(trained.exit_code == 0);
  RunResult evaluated = liftx("evaluate --db '" + db + "'");
  REQUIRE(evaluated.exit_code == 0);
  CHECK(read_text(db) == before);
  // Nor does reading leave journal files beside it (the shipped database is in WAL mode).
  CHECK_FALSE(fs::exists(db + "-wal"));
  CHECK_FALSE(fs::exists(db + "-shm"));
}

TEST_CASE("db --refresh-features reports what it rewrote; refuses an unknown profile untouched") {
  TempDir dir("refresh");
  const std::string db = copy_of_pocl_db(dir);
  RunResult first = liftx("db --db '" + db + "' --refresh-features cpu");
  CAPTURE(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string prefix = db + ": features of profile cpu refreshed for ";
  CHECK(first.out.rfind(prefix, 0) == 0);
  // Refreshing again rewrites the same values: nothing changes, nothing is removed.
  RunResult second = liftx("db --db '" + db + "' --refresh-features cpu");
  REQUIRE(second.exit_code == 0);
  const std::string counts = second.out.substr(prefix.size());
  const std::string n = counts.substr(0, counts.find(' '));
  CHECK(counts == n + " of " + n + " configurations (0 with a changed value); 0 removed\n");
  RunResult summary = liftx("db --db '" + db + "'");
  REQUIRE(summary.exit_code == 0);
  CHECK_FALSE(contains(summary.out, "lack"));

  const std::string before = read_text(db);
  RunResult bad = liftx("db --db '" + db + "' --refresh-features gpu9");
  check_user_error(bad);
  CHECK(contains(bad.err, "gpu9"));
  RunResult both = liftx("db --db '" + db + "' --refresh-features cpu --csv -");
  CHECK(both.exit_code != 0);
  RunResult no_device =
      liftx("db --db '" + db + "' --refresh-features cpu --device-key no-such-device");
  check_user_error(no_device);
  CHECK(contains(no_device.err, "no-such-device"));
  // A profile the database stored no features for (here with --device, which skips the name
  // check): refused, not reported as 0 of 0 refreshed.
  RunResult no_features = liftx("db --db '" + db + "' --refresh-features nvidia --device-key " +
                                std::string(kPoclDevice));
  check_user_error(no_features);
  CHECK(contains(no_features.err, "no features stored for profile nvidia"));
  CHECK(read_text(db) == before);

  // With the device that measured them (the data were collected with --profile detect).
  RunResult measured =
      liftx("db --db '" + db + "' --refresh-features cpu --device " + std::string(kPoclDevice));
  CAPTURE(measured.err);
  REQUIRE(measured.exit_code == 0);
  CHECK(measured.out.rfind(prefix, 0) == 0);
}

TEST_CASE("the model and database commands report bad input with a message and exit code 2") {
  TempDir dir("errors");
  const std::string missing_db = dir / "missing.db";
  const std::string missing_model = dir / "missing.json";
  const std::string explore_db = dir / "explore.db";
  const std::string model = "--model model/data/cpu-model.json";
  struct Case {
    std::string args;
    std::string message;
  };
  const Case cases[] = {
      // Missing files.
      {"explore stencils/no_such.lift --device cpu --db '" + explore_db + "'",
       "cannot read stencils/no_such.lift"},
      {"explore stencils/jacobi2d5pt.lift --device cpu --size 16 --model '" + missing_model +
           "' --db '" + explore_db + "'",
       "model file " + missing_model + " does not exist"},
      {"rank stencils/no_such.lift " + model + " --size 16", "cannot read stencils/no_such.lift"},
      {"rank stencils/jacobi2d5pt.lift --model '" + missing_model + "' --size 16",
       "cannot read model file " + missing_model},
      {"rank stencils/jacobi2d5pt.lift --model stencils/jacobi2d5pt.lift --size 16",
       "stencils/jacobi2d5pt.lift: not JSON"},
      {"train --db '" + missing_db + "' -o '" + dir / "m.json" + "'",
       "database " + missing_db + " does not exist"},
      {"evaluate --db '" + missing_db + "'", "database " + missing_db + " does not exist"},
      {"db --db '" + missing_db + "'", missing_db + ": no such database"},
      {"db --db stencils/jacobi2d5pt.lift", "not a usable liftx performance database"},
      {"variants stencils/no_such.lift --size 16", "cannot read stencils/no_such.lift"},
      {"features stencils/variants/no_such.lift --size 16",
       "stencils/variants/no_such.lift: no such file or directory"},
      // Unknown device profiles and devices.
      {"variants stencils/jacobi2d5pt.lift --size 16 --profile tpu",
       "unknown device profile 'tpu'"},
      {"features stencils/variants/jacobi2d5pt/global2d.lift --size 16 --profile tpu",
       "unknown device profile 'tpu'"},
      {"rank stencils/jacobi2d5pt.lift " + model + " --size 16 --profile tpu",
       "unknown device profile 'tpu'"},
      {"explore stencils/jacobi2d5pt.lift --device no-such-device --size 16 --db '" + explore_db +
           "'",
       "no OpenCL device matches 'no-such-device'"},
      // Malformed sizes.
      {"variants stencils/jacobi2d5pt.lift --size M=abc,N=16", "--size M: 'abc' is not an integer"},
      {"variants stencils/jacobi2d5pt.lift --size M=16,N=", "--size N: '' is not an integer"},
      {"rank stencils/jacobi2d5pt.lift " + model + " --size M=16,N=0",
       "--size N: 0 is out of range"},
      {"rank stencils/jacobi2d5pt.lift " + model + " --size M=16", "missing --size for N"},
      {"explore stencils/jacobi2d5pt.lift --device cpu --size 16y16 --db '" + explore_db + "'",
       "--size: '16y16' is not an integer"},
      {"explore stencils/jacobi2d5pt.lift --device cpu --size M=16,K=4 --db '" + explore_db + "'",
       "no size named K"},
      {"features stencils/variants/jacobi2d5pt/global2d.lift --size M=16,M=16",
       "--size: M is given twice"},
      // Other options.
      {"variants stencils/jacobi2d5pt.lift --size 16 --where strategy", "expected KEY=VALUE"},
      {"explore stencils/variants/jacobi2d5pt/global2d.lift --size 16 --db '" + explore_db + "'",
       "is already lowered (a variant, not a high-level stencil): explore works on the variants"},
      {"rank stencils/variants/jacobi2d5pt/global2d.lift " + model + " --size 16",
       "is already lowered (a variant, not a high-level stencil): rank works on the variants"},
      {"train --db '" + missing_db + "' --model my-model.json -o out.json",
       "--model my-model.json: this command takes the model kind as --kind knn|tree|boosted"},
      {"replay --db '" + missing_db + "' --model a.json --model b.json",
       "replay: one --model file at most (got 2)"},
      {"replay --db '" + missing_db + "' --model missing-model.json", "missing-model.json"},
      {"explore stencils/jacobi2d5pt.lift --strategy best", "--strategy: best not in"},
      {"rank stencils/jacobi2d5pt.lift " + model + " --size 16 --format xml",
       "--format: xml not in"},
      {"evaluate --db '" + missing_db + "' --orders 50", "--orders: Value 50 not in range"},
      {"rank stencils/jacobi2d5pt.lift", "--size is required"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    RunResult r = liftx(c.args);
    CAPTURE(r.err);
    check_user_error(r);
    CHECK(contains(r.err, c.message));
  }
  // Nothing was explored, so no database was created.
  CHECK_FALSE(fs::exists(explore_db));
  CHECK_FALSE(fs::exists(dir.path / "m.json"));

  // Errors that need a database: options that select nothing in it.
  const std::string db = copy_of_pocl_db(dir);
  const Case with_db[] = {
      {"train --db '" + db + "' --device nvidia -o '" + dir / "m.json" + "'",
       "no device 'nvidia' in the database; it holds:\n  " + std::string(kPoclDevice)},
      {"train --db '" + db + "' --profile nvidia -o '" + dir / "m.json" + "'",
       "no measurement of device " + std::string(kPoclDevice) +
           " with features for profile nvidia"},
      {"train --db '" + db + "' --kind forest -o '" + dir / "m.json" + "'",
       "unknown model kind 'forest'"},
      {"evaluate --db '" + db + "' --transform sqrt", "unknown feature transform 'sqrt'"},
  };
  for (const Case& c : with_db) {
    CAPTURE(c.args);
    RunResult r = liftx(c.args);
    CAPTURE(r.err);
    check_user_error(r);
    CHECK(contains(r.err, c.message));
  }
  CHECK_FALSE(fs::exists(dir.path / "m.json"));
}
