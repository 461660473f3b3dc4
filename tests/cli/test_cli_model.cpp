// End-to-end tests of the `liftx` commands around the cost model: explore, rank, train and
// evaluate, on PoCL at small sizes. Each test checks what the command prints or writes, not only
// its exit code.
#include <doctest/doctest.h>

#include "../scoped_env.hpp"
#include "cli_helpers.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace cli_test;

TEST_CASE("explore --format json|csv gives the runs as data on stdout, --out writes the winner") {
  TempDir dir("explore_data");
  const std::string base = "explore stencils/jacobi2d5pt.lift --device cpu --size M=16,N=16 "
                           "--budget 2 --sample 20 --repeat 3 --db '" +
                           dir / "e.db" + "'";
  RunResult json = liftx(base + " --format json --out '" + dir / "best" + "'");
  CAPTURE(json.err);
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out); // stdout is the document alone
  CHECK(doc.at("program") == "jacobi2d5pt");
  CHECK(doc.at("sizes") == nlohmann::json({{"M", 16}, {"N", 16}}));
  CHECK(doc.at("space").at("variants") == 20);
  REQUIRE(doc.at("runs").size() == 2);
  for (const nlohmann::json& run : doc.at("runs")) {
    CHECK(run.at("status") == "ok");
    CHECK(run.at("repetitions") == 3);
    CHECK(run.at("q1_ms").get<double>() <= run.at("median_ms").get<double>());
    CHECK(run.at("median_ms").get<double>() <= run.at("q3_ms").get<double>());
    CHECK(run.at("gflop_per_s").get<double>() > 0); // jacobi5's 10 flops a point
  }
  const int best = doc.at("best").get<int>();
  REQUIRE((best == 1 || best == 2));
  // The report goes to stderr, without the program and kernel listings.
  CHECK(contains(json.err, "\nbest      rank "));
  CHECK_FALSE(contains(json.err, "--- kernel ---"));
  // --out: the winner's program runs and verifies at its sidecar's launch.
  CHECK(contains(read_text(dir.path / "best" / "best.cl"), "kernel void jacobi2d5pt("));
  const nlohmann::json sidecar = nlohmann::json::parse(read_text(dir.path / "best" / "best.json"));
  CHECK(sidecar.at("strategy") == doc.at("runs")[size_t(best - 1)].at("strategy"));
  RunResult verified =
      liftx("run '" + (dir.path / "best" / "best.lift").string() + "' --launch '" +
            (dir.path / "best" / "best.json").string() +
            "' --device cpu --size M=16,N=16 --reference stencils/jacobi2d5pt.lift --repeat 1 "
            "--no-roofline");
  CAPTURE(verified.err);
  CHECK(verified.exit_code == 0);
  CHECK(contains(verified.out, "check     passed: 256 of 256 elements"));

  RunResult csv = liftx(base + " --format csv");
  CAPTURE(csv.err);
  REQUIRE(csv.exit_code == 0);
  const std::vector<std::string> rows = lines_of(csv.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == "run,rank,predicted,strategy,parameters,launch,status,median_ms,q1_ms,q3_ms,"
                   "min_ms,max_ms,repetitions,gb_per_s,roofline_fraction,stored,best,"
                   "gflop_per_s,fp32_peak_fraction");
  CHECK(rows[1].rfind("1,", 0) == 0);
  CHECK(contains(rows[1], ",ok,"));
  const auto best_field = [](const std::string& row) { // third from the end: numbers follow it
    const size_t end = row.rfind(',', row.rfind(',') - 1);
    const size_t start = row.rfind(',', end - 1) + 1;
    return row.substr(start, end - start);
  };
  CHECK((best_field(rows[1]) == "1") != (best_field(rows[2]) == "1")); // one best
}

TEST_CASE("explore takes what the database has measured from it, unless --remeasure") {
  TempDir dir("explore_stored");
  const std::string db = dir / "e.db";
  const std::string base = "explore stencils/jacobi2d5pt.lift --device cpu --size M=16,N=16 "
                           "--strategy model --budget 2 --sample 20 --repeat 3 --format json "
                           "--db '" +
                           db + "'";
  auto runs_of = [](const RunResult& r) {
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out).at("runs");
  };
  const nlohmann::json first = runs_of(liftx(base));
  REQUIRE(first.size() == 2);
  for (const nlohmann::json& run : first)
    CHECK(run.at("stored") == false);

  // The same two variants again (the static order): nothing runs, the stored times stand.
  RunResult again = liftx(base);
  const nlohmann::json second = runs_of(again);
  REQUIRE(second.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(second[i].at("stored") == true);
    CHECK(second[i].at("parameters") == first[i].at("parameters"));
    CHECK(second[i].at("launch") == first[i].at("launch"));
    CHECK(second[i].at("median_ms") == first[i].at("median_ms"));
    CHECK(second[i].at("repetitions") == 3);
  }
  CHECK(contains(again.err, "recorded  0 measurements in " + db +
                                "; 2 of the runs (marked stored) were measured before"));
  CHECK(lines_starting(again.err, "  [").size() == 2);
  for (const std::string& row : lines_starting(again.err, "  ["))
    CHECK(ends_with(row, " stored"));
  CHECK(contains(again.err, ", measured by an earlier run (stored)\n"));

  // --remeasure runs them again, and the database keeps every measurement.
  const nlohmann::json third = runs_of(liftx(base + " --remeasure"));
  for (const nlohmann::json& run : third)
    CHECK(run.at("stored") == false);
  RunResult csv = liftx("db --db '" + db + "' --csv -");
  REQUIRE(csv.exit_code == 0);
  CHECK(lines_of(csv.out).size() == 1 + 4);
}

TEST_CASE("explore warns when runs spread widely, and only then") {
  TempDir dir("explore_noisy");
  const std::string db = dir / "e.db";
  const std::string base = "explore stencils/jacobi2d5pt.lift --device cpu --size M=16,N=16 "
                           "--strategy model --budget 2 --sample 20 --repeat 3 --db '" +
                           db + "'";
  // The report is stdout (the table format).
  const std::string warning = " runs spread widely (interquartile range above 10% of the median)";
  RunResult first = liftx(base);
  CAPTURE(first.err);
  REQUIRE(first.exit_code == 0);

  // The stored runs are taken again, so their recorded spread decides the warning: a tight one
  // gives none, a wide one on one run of the two is counted and flagged in its row.
  execute_sql(db, "UPDATE measurements SET q1_ms = median_ms, q3_ms = median_ms * 1.05");
  RunResult tight = liftx(base);
  CAPTURE(tight.err);
  REQUIRE(tight.exit_code == 0);
  CHECK_FALSE(contains(tight.out, warning));
  CHECK_FALSE(contains(tight.out, " noisy"));
  CHECK(contains(tight.out, "±5%"));

  execute_sql(db, "UPDATE measurements SET q1_ms = median_ms * 0.8, q3_ms = median_ms * 1.3 "
                  "WHERE id = (SELECT min(id) FROM measurements)");
  RunResult wide = liftx(base);
  CAPTURE(wide.err);
  REQUIRE(wide.exit_code == 0);
  CHECK(contains(wide.out, "warning   1 of 2" + warning));
  const std::vector<std::string> rows = lines_starting(wide.out, "  [");
  REQUIRE(rows.size() == 2);
  CHECK(std::count_if(rows.begin(), rows.end(),
                      [](const std::string& row) { return contains(row, "±50% noisy"); }) == 1);
}

TEST_CASE("explore runs and verifies the best-ranked variants, reports the best with its kernel, "
          "and records every run in --db") {
  TempDir dir("explore");
  const std::string db = dir / "explore.db";
  RunResult r = liftx("explore stencils/jacobi2d5pt.lift --device cpu --size M=16,N=16 --budget 2 "
                      "--sample 20 --repeat 2 --print-kernel --db '" +
                      db + "'");
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(field(r.out, "program   ") == "jacobi2d5pt (stencils/jacobi2d5pt.lift), sizes M=16 N=16");
  CHECK(contains(field(r.out, "device    "), "(pocl:"));
  CHECK(contains(r.out, "/cpu-model.json (boosted, trained for profile cpu)\n")); // the shipped one
  CHECK(field(r.out, "space     ") ==
        "20 variants ranked (a uniform sample, seed 1; --sample 0 "
        "ranks all); strategy online (batches of 4, launch shapes spread "
        "within 10%), budget 2");
  // One line per variant run, best-ranked first, each timed (a failed run shows its status).
  const std::vector<std::string> attempts = lines_starting(r.out, "  [");
  REQUIRE(attempts.size() == 2);
  REQUIRE(lines_starting(r.out, "  run ").size() == 1); // the table's header
  CHECK(contains(lines_starting(r.out, "  run ")[0], "median ± interquartile range"));
  CHECK(attempts[0].rfind("  [  1/2]      1 ", 0) == 0);
  // The next best-ranked kernel: a launch of the first run's kernel may be passed over.
  REQUIRE(attempts[1].rfind("  [  2/2] ", 0) == 0);
  CHECK(std::stoi(attempts[1].substr(10, 6)) >= 2);
  for (const std::string& a : attempts)
    CHECK(contains(a, " ms ±"));
  CHECK(field(r.out, "recorded  ") == "2 measurements in " + db);
  CHECK(contains(field(r.out, "model     Spearman "), "between predicted and measured throughput "
                                                      "on the 2 variants run"));

  // The best is one of the variants run, with the same prediction, parameters and launch.
  const std::string best = field(r.out, "best      rank ");
  const std::string launch = field(r.out, "launch    ");
  const size_t open = best.find(" (predicted "), close = best.find("): ");
  REQUIRE(open != std::string::npos);
  REQUIRE(close != std::string::npos);
  const std::string predicted = best.substr(open + 12, close - open - 12);
  const std::string parameters = best.substr(close + 3);
  const int best_rank = std::stoi(best.substr(0, open));
  const auto run = std::find_if(attempts.begin(), attempts.end(), [&](const std::string& a) {
    return std::stoi(a.substr(10, 6)) == best_rank;
  });
  REQUIRE(run != attempts.end());
  const std::string& attempt = *run;
  CHECK(contains(attempt, " " + predicted + "  " + parameters + " "));
  CHECK(contains(attempt, launch));
  CHECK(contains(field(r.out, "time      "), " ms median of 2 runs"));
  CHECK(contains(r.out, "\nwhy       "));

  // With --print-kernel its program and kernel come before the summary, which ends the output;
  // the program printed runs and verifies at the launch given.
  const std::string program_marker = "\n--- jacobi2d5pt.lift ---\n";
  const std::string kernel_marker = "\n--- kernel ---\n";
  const size_t program_at = r.out.find(program_marker);
  const size_t kernel_at = r.out.find(kernel_marker);
  REQUIRE(program_at != std::string::npos);
  REQUIRE(kernel_at != std::string::npos);
  CHECK(kernel_at < r.out.find("\nbest      rank "));
  CHECK(contains(r.out.substr(r.out.rfind('\n', r.out.size() - 2)), "why       "));
  CHECK(contains(r.out.substr(kernel_at), "kernel void jacobi2d5pt(\n"));
  const fs::path best_file = dir.path / "best.lift";
  std::ofstream(best_file) << r.out.substr(program_at + program_marker.size(),
                                           kernel_at - program_at - program_marker.size());
  std::istringstream launch_words(launch);
  std::string global_word, global, local_word, local;
  launch_words >> global_word >> global >> local_word >> local;
  REQUIRE(global_word == "global");
  REQUIRE(local_word == "local");
  RunResult verified =
      liftx("run '" + best_file.string() +
            "' --device cpu --size M=16,N=16 --reference stencils/jacobi2d5pt.lift "
            "--global " +
            replace_all(global, 'x', ',') + " --local " + replace_all(local, 'x', ',') +
            " --repeat 1 --no-roofline");
  CAPTURE(verified.err);
  CHECK(verified.exit_code == 0);
  CHECK(contains(verified.out, "check     passed: 256 of 256 elements"));

  // The database holds both runs, with features, for this device.
  RunResult summary = liftx("db --db '" + db + "'");
  REQUIRE(summary.exit_code == 0);
  CHECK(field(summary.out, "database  ") == db);
  const std::string device_key = field(summary.out, "device    ");
  CHECK(device_key.rfind("pocl:", 0) == 0);
  CHECK(contains(summary.out, "\n  features profile cpu: 2 configurations\n"));
  CHECK(contains(summary.out, "\n  jacobi2d5pt        2: ok 2\n"));

  // A second exploration of the same database adds its run to the two there.
  RunResult again = liftx("explore stencils/jacobi2d5pt.lift --device cpu --size M=16,N=16 "
                          "--budget 1 --sample 20 --seed 2 --strategy random --repeat 2 --db '" +
                          db + "'");
  CAPTURE(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(field(again.out, "recorded  ") == "1 measurements in " + db);
  RunResult csv = liftx("db --db '" + db + "' --csv -");
  REQUIRE(csv.exit_code == 0);
  const std::vector<std::string> rows = lines_of(csv.out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].rfind(kDbCsvPrefix + ",", 0) == 0);
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> f = csv_fields(rows[i]);
    REQUIRE(f.size() == csv_fields(rows[0]).size());
    CHECK(f[0] == std::to_string(i)); // measurement_id
    CHECK(f[1] == "jacobi2d5pt");
    CHECK(f[2] == R"({"M":16,"N":16})");
    CHECK(f[10] == "ok");
    CHECK(f[16] == "2");   // repetitions
    CHECK(f[20] == "cpu"); // feature_profile
  }
  CHECK_FALSE(fs::exists(dir.path / "default.db")); // $LIFTX_DB: --db was given
}

TEST_CASE("rank without --model uses the model explore would for the profile's kind of device") {
  const std::string base = "rank stencils/jacobi2d5pt.lift --size 16 --sample 50 --top 1 --quiet";
  for (const char* kind : {"nvidia", "cpu"}) {
    CAPTURE(kind);
    RunResult r = liftx(base + " --profile " + kind);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, fmt::format("{}-model.json", kind)));
  }
  // No OpenCL device and neither a profile nor a model: refused, saying what to give instead.
  {
    liftx_test::ScopedEnv no_drivers("OCL_ICD_VENDORS", "/nonexistent");
    RunResult no_device = liftx(base);
    CHECK(no_device.exit_code == 2);
    CHECK(
        contains(no_device.err, "name the model (--model FILE) or the kind of device to rank for"));
  }
  // A named model still wins.
  RunResult named =
      liftx(base + " --profile nvidia --model model/data/cpu-model.json --format json");
  REQUIRE(named.exit_code == 0);
  CHECK(contains(named.out, "cpu-model.json"));
}

// Under the sanitizers: "codegen --profile nvidia prints the warp stream..." (the warp streams'
// planning) and "rank --top N prints..." (ranking).
TEST_CASE("rank ranks the warp streams among the other variants: by default where sub-groups "
          "shuffle, elsewhere with --warp-streams" *
          doctest::skip(kPlainBuildOnly)) {
  // 128 x 1024: columns of 128 rows, tiles of 32 to 128 columns (a warp stream's).
  const std::string base = "rank stencils/iterated/heat2d.lift --size M=128,N=1024 --top 0 "
                           "--format csv --quiet --profile ";
  RunResult plain = liftx(base + "amd");
  RunResult warp = liftx(base + "amd --warp-streams");
  RunResult nvidia = liftx(base + "nvidia");
  RunResult nvidia_flag = liftx(base + "nvidia --warp-streams");
  REQUIRE(plain.exit_code == 0);
  REQUIRE(warp.exit_code == 0);
  REQUIRE(nvidia.exit_code == 0);
  REQUIRE(nvidia_flag.exit_code == 0);
  const auto rows = [](const std::string& csv) { return std::count(csv.begin(), csv.end(), '\n'); };
  const auto warp_rows = [](const std::string& csv) {
    size_t n = 0;
    for (size_t at = csv.find("warp=1"); at != std::string::npos; at = csv.find("warp=1", at + 1))
      ++n;
    return n;
  };
  CHECK(warp_rows(plain.out) == 0);
  CHECK(warp_rows(warp.out) > 0);
  CHECK(rows(warp.out) == rows(plain.out) + static_cast<long>(warp_rows(warp.out)));
  // NVIDIA's profile shuffles: its space has them without the flag, and the flag adds nothing.
  CHECK(warp_rows(nvidia.out) > 0);
  CHECK(nvidia_flag.out == nvidia.out);
}

// Under the sanitizers: rank loading a trained model ("train writes a model file that rank
// loads").
TEST_CASE("rank --prune-traffic ranks only the variants within the traffic bound and says how "
          "many it left out") {
  const std::string base = "rank stencils/jacobi2d5pt.lift --model model/data/cpu-model.json "
                           "--size M=16,N=16 --sample 200 --top 0 --quiet";
  RunResult all = liftx(base + " --format json");
  RunResult pruned = liftx(base + " --prune-traffic 1.5 --format json");
  CAPTURE(pruned.err);
  REQUIRE(all.exit_code == 0);
  REQUIRE(pruned.exit_code == 0);
  const nlohmann::json a = nlohmann::json::parse(all.out), p = nlohmann::json::parse(pruned.out);
  CHECK_FALSE(a.contains("pruning"));
  const nlohmann::json& pruning = p.at("pruning");
  CHECK(pruning.at("factor") == 1.5);
  CHECK(pruning.at("bound").get<double>() ==
        doctest::Approx(1.5 * pruning.at("least_traffic").get<double>()));
  const int64_t left_out = pruning.at("pruned").get<int64_t>();
  CHECK(left_out > 0);
  CHECK(p.at("ranked").size() + size_t(left_out) == a.at("ranked").size());
  std::set<int64_t> every;
  for (const nlohmann::json& row : a.at("ranked"))
    every.insert(row.at("index").get<int64_t>());
  for (const nlohmann::json& row : p.at("ranked"))
    CHECK(every.contains(row.at("index").get<int64_t>()));

  RunResult table = liftx(base + " --prune-traffic 1.5");
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, fmt::format("pruned    {} of the 200 variants: modelled traffic above "
                                        "1.5 x the least",
                                        left_out)));
  RunResult below = liftx(base + " --prune-traffic 0.5");
  CHECK(below.exit_code == 2);
  CHECK(contains(below.err, "the traffic bound must be at least 1"));
}

TEST_CASE("rank --top N prints the N best-ranked variants, best first, in every format" *
          doctest::skip(kPlainBuildOnly)) {
  TempDir dir("rank");
  const std::string base = "rank stencils/jacobi2d5pt.lift --model model/data/cpu-model.json "
                           "--size M=16,N=16 --sample 20";
  RunResult table = liftx(base + " --top 5");
  CAPTURE(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(field(table.out, "program   ") ==
        "jacobi2d5pt (stencils/jacobi2d5pt.lift), sizes M=16 N=16, model "
        "model/data/cpu-model.json (boosted, profile cpu)");
  CHECK(field(table.out, "ranked    ").rfind("20 variants in ", 0) == 0);
  const std::vector<RankRow> rows = rank_table_rows(table.out);
  REQUIRE(rows.size() == 5);
  std::set<long> indices;
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].rank == int(i) + 1);
    CHECK(rows[i].predicted >= 0);
    if (i > 0)
      CHECK(rows[i].predicted <= rows[i - 1].predicted);
    indices.insert(rows[i].index);
  }
  CHECK(indices.size() == 5);

  // --top 0 shows all 20, and its first five rows are the ones above.
  RunResult all = liftx(base + " --top 0");
  REQUIRE(all.exit_code == 0);
  const std::vector<RankRow> all_rows = rank_table_rows(all.out);
  REQUIRE(all_rows.size() == 20);
  for (size_t i = 0; i < all_rows.size(); ++i) {
    if (i < rows.size())
      CHECK(all_rows[i].index == rows[i].index);
    if (i > 0)
      CHECK(all_rows[i].predicted <= all_rows[i - 1].predicted);
  }

  // CSV and JSON give the same rows.
  RunResult csv = liftx(base + " --top 5 --format csv");
  REQUIRE(csv.exit_code == 0);
  const std::vector<std::string> csv_lines = lines_of(csv.out);
  REQUIRE(csv_lines.size() == 6);
  CHECK(csv_lines[0] == "rank,predicted,index,strategy,parameters,launch,features");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::string> f = csv_fields(csv_lines[i + 1]);
    REQUIRE(f.size() == 7);
    CHECK(f[0] == std::to_string(rows[i].rank));
    CHECK(std::stod(f[1]) == doctest::Approx(rows[i].predicted).epsilon(0.002));
    CHECK(f[2] == std::to_string(rows[i].index));
    CHECK((f[4] == f[3] || f[4].rfind(f[3] + " ", 0) == 0)); // the strategy, then parameters
    CHECK(f[5].rfind("global ", 0) == 0);
  }
  RunResult json = liftx(base + " --top 5 --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  CHECK(j.at("program") == "jacobi2d5pt");
  CHECK(j.at("variants") == 20);
  REQUIRE(j.at("ranked").size() == 5);
  for (size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json& row = j.at("ranked")[i];
    CHECK(row.at("rank") == rows[i].rank);
    CHECK(row.at("index") == rows[i].index);
    CHECK(row.at("predicted").get<double>() == doctest::Approx(rows[i].predicted).epsilon(0.002));
    CHECK(row.at("launch").at("global").size() == row.at("launch").at("dims"));
    CHECK_FALSE(row.at("features").empty());
  }

  // --out writes the rows shown as runnable files whose sidecars carry their launches.
  RunResult out = liftx(base + " --top 3 --out '" + dir / "best" + "'");
  REQUIRE(out.exit_code == 0);
  CHECK(files_with_extension(dir.path / "best", ".lift") == 3);
  CHECK(files_with_extension(dir.path / "best", ".json") == 3);
  // Named <rank>-<index>-<strategy>; `features` reads their launches from the sidecars.
  RunResult features = liftx("features '" + dir / "best" + "' --profile cpu --size M=16,N=16");
  CAPTURE(features.err);
  REQUIRE(features.exit_code == 0);
  const std::vector<std::string> feature_lines = lines_of(features.out);
  REQUIRE(feature_lines.size() == 4);
  const std::vector<std::string> header = csv_fields(feature_lines[0]);
  const auto column = [&](const std::string& name) {
    return size_t(std::find(header.begin(), header.end(), name) - header.begin());
  };
  for (size_t i = 0; i < 3; ++i) {
    const nlohmann::json& row = j.at("ranked")[i];
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "%03d", int(i) + 1);
    const std::string stem = dir / "best" + "/" + prefix + "-" + std::to_string(rows[i].index) +
                             "-" + row.at("strategy").get<std::string>();
    CHECK(fs::is_regular_file(stem + ".lift"));
    const std::vector<std::string> f = csv_fields(feature_lines[i + 1]);
    REQUIRE(f.size() == header.size());
    CHECK(f[0] == stem + ".lift");
    const nlohmann::json& launch = row.at("launch");
    for (size_t d = 0; d < launch.at("global").size(); ++d) {
      CHECK(f[column("global_size_" + std::to_string(d))] == launch.at("global")[d].dump());
      CHECK(f[column("local_size_" + std::to_string(d))] == launch.at("local")[d].dump());
    }
  }
  // --local wins over the sidecar (as over `run --launch`): the first row at a work-group of
  // one work-item, or of its whole global size where the sidecar's already is one work-item.
  const nlohmann::json& first = j.at("ranked")[0].at("launch");
  std::vector<int64_t> local(first.at("global").size(), 1);
  if (first.at("local") == nlohmann::json(local))
    local = first.at("global").get<std::vector<int64_t>>();
  REQUIRE(nlohmann::json(local) != first.at("local"));
  const std::string first_file = dir / "best" + "/001-" + std::to_string(rows[0].index) + "-" +
                                 j.at("ranked")[0].at("strategy").get<std::string>() + ".lift";
  RunResult relaunched = liftx("features '" + first_file + "' --profile cpu --size M=16,N=16 " +
                               "--local " + fmt::format("{}", fmt::join(local, ",")));
  CAPTURE(relaunched.err);
  REQUIRE(relaunched.exit_code == 0);
  const std::vector<std::string> relaunched_lines = lines_of(relaunched.out);
  REQUIRE(relaunched_lines.size() == 2);
  const std::vector<std::string> f = csv_fields(relaunched_lines[1]);
  REQUIRE(f.size() == header.size());
  for (size_t d = 0; d < local.size(); ++d) {
    CHECK(f[column("global_size_" + std::to_string(d))] == first.at("global")[d].dump());
    CHECK(f[column("local_size_" + std::to_string(d))] == std::to_string(local[d]));
  }
}

TEST_CASE("train writes a model file that rank loads") {
  TempDir dir("train");
  const std::string db = copy_of_pocl_db(dir);
  const std::string model = dir / "models/knn.json"; // the folder is created
  RunResult r = liftx("train --db '" + db + "' -o '" + model + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(field(r.out, "trained   ") ==
        "knn model on 800 successful measurements of 8 programs (device " +
            std::string(kPoclDevice) + ", profile cpu)");
  CHECK(contains(field(r.out, "features  "), " principal components keep "));
  CHECK(field(r.out, "written   ") == model);
  const nlohmann::json m = nlohmann::json::parse(read_text(model));
  CHECK(m.at("format") == "liftx-model");
  CHECK(m.at("kind") == "knn");
  CHECK(m.at("profile") == "cpu");
  CHECK(m.at("options").at("k") == 5);
  CHECK(m.at("options").at("transform") == "raw");
  CHECK(m.at("points").size() == 800);
  CHECK(m.at("provenance").at("samples") == 800);
  CHECK(m.at("provenance").at("device") == kPoclDevice);
  CHECK(m.at("provenance").at("database") == db);
  CHECK(m.at("provenance").at("programs") == nlohmann::json(kStencils));

  // The choices given on the command line are stored in the file.
  const std::string tree = dir / "tree.json";
  RunResult t = liftx("train --db '" + db + "' --kind tree --transform log -o '" + tree + "'");
  REQUIRE(t.exit_code == 0);
  CHECK(field(t.out, "trained   ").rfind("tree model on 800 successful measurements", 0) == 0);
  CHECK(contains(field(t.out, "features  "), ", tree of "));
  const nlohmann::json tm = nlohmann::json::parse(read_text(tree));
  CHECK(tm.at("kind") == "tree");
  CHECK(tm.at("options").at("transform") == "log");
  const std::string weighted = dir / "weighted.json";
  RunResult w =
      liftx("train --db '" + db + "' --neighbours 3 --distance-weighted -o '" + weighted + "'");
  REQUIRE(w.exit_code == 0);
  const nlohmann::json wm = nlohmann::json::parse(read_text(weighted));
  CHECK(wm.at("options").at("k") == 3);
  CHECK(wm.at("options").at("distance_weighted") == true);

  // rank loads each of them.
  for (const auto& model_kind :
       std::vector<std::pair<std::string, std::string>>{{model, "knn"}, {tree, "tree"}}) {
    // (named, not a structured binding: clang 14's doctest macros cannot capture a binding)
    const std::string& file = model_kind.first;
    const std::string& kind = model_kind.second;
    CAPTURE(file);
    RunResult ranked = liftx("rank stencils/jacobi2d5pt.lift --model '" + file +
                             "' --size M=16,N=16 --sample 20 --top 3");
    CAPTURE(ranked.err);
    REQUIRE(ranked.exit_code == 0);
    CHECK(contains(field(ranked.out, "program   "),
                   "model " + file + " (" + kind + ", profile cpu)"));
    CHECK(rank_table_rows(ranked.out).size() == 3);
  }
}

TEST_CASE("train --add-db learns from several databases; another device's inputs stay its own") {
  TempDir dir("train-add");
  const std::string db = copy_of_pocl_db(dir);
  const std::string second = dir / "second.db";
  fs::copy_file(db, second);
  const std::string model = dir / "both.json";
  RunResult r = liftx("train --db '" + db + "' --add-db '" + second + "@" + kPoclDevice +
                      "' --kind tree -o '" + model + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  // One device in both files: its measurements count twice, under the one device.
  CHECK(field(r.out, "trained   ") ==
        "tree model on 1600 successful measurements of 8 programs (device " +
            std::string(kPoclDevice) + ", profile cpu)");
  const nlohmann::json m = nlohmann::json::parse(read_text(model));
  CHECK(m.at("provenance").at("samples") == 1600);
  CHECK(m.at("provenance").at("programs") == nlohmann::json(kStencils));
  REQUIRE(m.at("provenance").at("sources").size() == 2);
  CHECK(m.at("provenance").at("sources")[1].at("database") == second);
  CHECK(m.at("provenance").at("sources")[1].at("device") == kPoclDevice);

  RunResult unknown = liftx("train --db '" + db + "' --add-db '" + second +
                            "@no-such-device' -o '" + dir / "x.json" + "'");
  check_user_error(unknown);
  CHECK(contains(unknown.err, "no-such-device"));
  CHECK_FALSE(fs::exists(dir.path / "x.json"));
}

TEST_CASE("evaluate prints the leave-one-benchmark-out table and writes its CSV and plots") {
  TempDir dir("evaluate");
  const std::string db = copy_of_pocl_db(dir);
  RunResult r = liftx("evaluate --db '" + db + "' --out '" + dir / "ev" + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "leave-one-benchmark-out evaluation of the knn model: device " +
                            std::string(kPoclDevice) +
                            ", profile cpu, 800 samples, 28 features; random = mean of 100 "
                            "seeded orders\n"));
  const std::string header =
      "| program | input | configs | failed | pearson | spearman | runs to 90% model | random | "
      "speedup | time to 90% model (s) | random (s) | speedup |";
  CHECK(contains(r.out, "\n" + header + "\n|---|---|---|---|---|---|---|---|---|---|---|---|\n"));
  // One row per stencil and size set, in order (sizes compared as numbers).
  std::vector<std::string> rows;
  const std::string per_kind = "per kind of program (held-out inputs):\n";
  for (const std::string& line : lines_starting(r.out.substr(0, r.out.find(per_kind)), "| "))
    if (line != header)
      rows.push_back(line);
  REQUIRE(rows.size() == 16);
  // After it, the same inputs by kind of program: all eight stencils are 2D stencils.
  CHECK(contains(r.out.substr(r.out.find(per_kind)), "\n| stencil2d | 16 | "));
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(rows[i]);
    const std::vector<std::string> cells = table_cells(rows[i]);
    REQUIRE(cells.size() == 12);
    CHECK(cells[0] == kStencils[i / 2]);
    CHECK(cells[1] == (i % 2 == 0 ? "M=64,N=128" : "M=128,N=128")); // sizes as numbers
    CHECK(cells[2] == "50");
    CHECK(cells[3] == "0");
    for (size_t c : {4, 5}) { // pearson, spearman
      CHECK(std::stod(cells[c]) >= -1);
      CHECK(std::stod(cells[c]) <= 1);
    }
    const int runs = std::stoi(cells[6]);
    CHECK(runs >= 1);
    CHECK(runs <= 50);
    CHECK(std::stod(cells[7]) >= 1); // random runs to 90%
  }
  CHECK(field(r.out, "mean: spearman ").find(", runs to 90% model ") != std::string::npos);
  CHECK(field(r.out, "summary: runs to 90% median ").find("; mean pearson ") != std::string::npos);

  // --out: the table as CSV, the features' NMI, and SVG plots.
  const std::vector<std::string> csv = lines_of(read_text(dir.path / "ev/evaluation.csv"));
  REQUIRE(csv.size() == 17);
  CHECK(csv[0] == "program,input,configurations,failed,pearson,spearman,model_runs_to_90,"
                  "random_runs_to_90,run_speedup,model_time_to_90_ms,random_time_to_90_ms,"
                  "time_speedup");
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(csv[i + 1]);
    const std::vector<std::string> cells = table_cells(rows[i]);
    const std::vector<std::string> f = csv_fields(csv[i + 1]);
    REQUIRE(f.size() == 12);
    for (size_t c : {0, 1, 2, 3, 6}) // program, input, configurations, failed, model runs
      CHECK(f[c] == cells[c]);
    // The run speedup is random runs over model runs.
    CHECK(std::stod(f[8]) == doctest::Approx(std::stod(f[7]) / std::stod(f[6])).epsilon(0.001));
  }
  const std::vector<std::string> nmi = lines_of(read_text(dir.path / "ev/feature-nmi.csv"));
  REQUIRE(nmi.size() == 29);
  CHECK(nmi[0] == "feature,nmi");
  std::vector<std::string> svgs = {"runs-to-90.svg", "feature-nmi.svg"};
  for (const std::string& s : kStencils)
    svgs.push_back("best-so-far-" + s + ".svg");
  for (const std::string& svg : svgs) {
    CAPTURE(svg);
    const std::string text = read_text(dir.path / "ev" / svg);
    CHECK(text.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(contains(text, "</svg>"));
    CHECK(contains(field(r.out, "written   "), (dir.path / "ev" / svg).string()));
  }
  // predictions.csv: one row per successful configuration (800, none failed), in table order.
  const std::vector<std::string> predictions = lines_of(read_text(dir.path / "ev/predictions.csv"));
  REQUIRE(predictions.size() == 1 + 800);
  CHECK(predictions[0] == "program,input,predicted,measured");
  std::vector<std::string> groups;
  for (size_t i = 1; i < predictions.size(); ++i) {
    CAPTURE(predictions[i]);
    const std::vector<std::string> f = csv_fields(predictions[i]);
    REQUIRE(f.size() == 4);
    if (groups.empty() || groups.back() != f[0] + " " + f[1])
      groups.push_back(f[0] + " " + f[1]);
    CHECK(std::stod(f[2]) > 0);
    CHECK(std::stod(f[3]) > 0);
    CHECK(std::stod(f[3]) <= 1);
  }
  REQUIRE(groups.size() == 16);
  for (size_t i = 0; i < groups.size(); ++i)
    CHECK(groups[i] == kStencils[i / 2] + (i % 2 == 0 ? " M=64,N=128" : " M=128,N=128"));
  // scatter.svg: every pair as a circle, the pooled correlations with their count.
  const std::string scatter = read_text(dir.path / "ev/scatter.svg");
  CHECK(scatter.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(contains(scatter, "</svg>"));
  size_t circles = 0;
  for (size_t at = scatter.find("<circle"); at != std::string::npos;
       at = scatter.find("<circle", at + 1))
    ++circles;
  CHECK(circles == 800);
  CHECK(contains(scatter, "Pearson r = "));
  CHECK(contains(scatter, " over all 800 points"));
  CHECK(contains(scatter, "per input, mean over the 16 inputs: Pearson "));
  CHECK(contains(field(r.out, "written   "), (dir.path / "ev/predictions.csv").string()));
  CHECK(contains(field(r.out, "written   "), (dir.path / "ev/scatter.svg").string()));
  for (const std::string& s : kStencils) {
    CAPTURE(s);
    const fs::path per_program = dir.path / "ev" / ("scatter-" + s + ".svg");
    CHECK(contains(read_text(per_program), " over all 100 points"));
    CHECK(contains(field(r.out, "written   "), per_program.string()));
  }

  // The tree model is evaluated the same way.
  RunResult tree = liftx("evaluate --db '" + db + "' --kind tree");
  REQUIRE(tree.exit_code == 0);
  CHECK(contains(tree.out, "leave-one-benchmark-out evaluation of the tree model"));
  // The header and 16 inputs, then the per-kind table: its header and the one kind.
  CHECK(lines_starting(tree.out, "| ").size() == 17 + 2);
  CHECK_FALSE(contains(tree.out, "written   "));
}

namespace {

/// A database's one plan: its selection name, then its variants' indices and parameters (JSON) in
/// plan order.
struct OnlyPlan {
  std::string selection;
  std::vector<int64_t> indices;
  std::vector<nlohmann::json> parameters;
};

OnlyPlan only_plan(const std::string& db) {
  const std::vector<std::vector<std::string>> selections =
      query_rows(db, "SELECT selection FROM plans");
  REQUIRE(selections.size() == 1);
  OnlyPlan plan{selections[0][0], {}, {}};
  for (const std::vector<std::string>& row :
       query_rows(db, "SELECT pc.variant_index, v.parameters_json FROM plan_configurations pc "
                      "JOIN configurations c ON c.id = pc.configuration_id JOIN variants v ON "
                      "v.id = c.variant_id ORDER BY pc.position")) {
    plan.indices.push_back(std::stoll(row[0]));
    plan.parameters.push_back(nlohmann::json::parse(row[1]));
  }
  return plan;
}

} // namespace

TEST_CASE("collect --ranked-by plans the variants a model ranks best, in its order, among the "
          "--where ones" *
          doctest::skip(kPlainBuildOnly)) {
  TempDir dir("collect-ranked-by");
  const std::string target = "stencils/jacobi2d5pt.lift --size M=16,N=16 --profile cpu";
  RunResult ranking =
      liftx("rank " + target + " --model model/data/cpu-model.json --top 50 --format json --quiet");
  REQUIRE(ranking.exit_code == 0);
  const nlohmann::json ranked = nlohmann::json::parse(ranking.out).at("ranked");
  REQUIRE(ranked.size() == 50);
  std::vector<int64_t> best;
  for (size_t i = 0; i < 6; ++i)
    best.push_back(ranked[i].at("index").get<int64_t>());

  const std::string plan_base = "collect " + target +
                                " --plan-only --ranked-by model/data/cpu-model.json --sample 6 "
                                "--quiet --db ";
  RunResult plan = liftx(plan_base + dir / "top.db");
  CAPTURE(plan.err);
  REQUIRE(plan.exit_code == 0);
  const OnlyPlan top = only_plan(dir / "top.db");
  CHECK(top.indices == best);
  CHECK(top.selection.rfind("top 6 ranked by ", 0) == 0);

  // Among --where: a parameter value the best variant does not have. The plan's first is then
  // the first of the ranking with that value, and every variant planned has it.
  const nlohmann::json& first = ranked[0].at("parameters");
  std::string key;
  int64_t value = 0;
  int64_t expected_first = -1;
  for (const nlohmann::json& row : ranked) {
    for (const auto& [k, v] : row.at("parameters").items())
      if (key.empty() && first.contains(k) && first.at(k) != v) {
        key = k;
        value = v.get<int64_t>();
      }
    if (!key.empty() && row.at("parameters").value(key, int64_t{-1}) == value) {
      expected_first = row.at("index").get<int64_t>();
      break;
    }
  }
  REQUIRE_FALSE(key.empty()); // the 50 best differ from the first somewhere
  const std::string where = fmt::format("{}={}", key, value);
  RunResult only = liftx(plan_base + dir / "only.db" + " --where " + where);
  REQUIRE(only.exit_code == 0);
  const OnlyPlan filtered = only_plan(dir / "only.db");
  REQUIRE(filtered.indices.size() == 6);
  CHECK(filtered.indices.front() == expected_first);
  for (const nlohmann::json& parameters : filtered.parameters)
    CHECK(parameters.value(key, int64_t{-1}) == value);
  CHECK(filtered.selection == top.selection + " where " + where);

  RunResult wrong_profile =
      liftx("collect " + target + " --plan-only --ranked-by model/data/nvidia-model.json --db " +
            dir / "wrong.db");
  CHECK(wrong_profile.exit_code == 2);
  CHECK(contains(wrong_profile.err, "is for profile nvidia, the collection's features are for "
                                    "profile cpu"));
  RunResult with_all =
      liftx("collect " + target + " --plan-only --all --ranked-by model/data/cpu-model.json --db " +
            dir / "all.db");
  CHECK(with_all.exit_code == 2);
  CHECK(contains(with_all.err, "--all excludes --ranked-by"));
}

TEST_CASE("rank --profile FILE.json ranks for a device described by `liftx devices --json`" *
          doctest::skip(kPlainBuildOnly)) {
  TempDir dir("rank-saved-profile");
  RunResult devices = liftx("devices --json");
  REQUIRE(devices.exit_code == 0);
  const nlohmann::json listed = nlohmann::json::parse(devices.out);
  REQUIRE(!listed.empty()); // CI runs on PoCL
  const std::string saved = dir / "device.json";
  std::ofstream(saved) << nlohmann::json::array({listed[0]}).dump();
  const std::string base = "rank stencils/jacobi2d5pt.lift --model model/data/cpu-model.json "
                           "--size M=16,N=16 --top 20 --format json --quiet --profile ";
  RunResult detected = liftx(base + "detect");
  RunResult from_file = liftx(base + saved);
  CAPTURE(from_file.err);
  REQUIRE(detected.exit_code == 0);
  REQUIRE(from_file.exit_code == 0);
  // The same device, so the same ranking as opening it.
  const nlohmann::json detected_json = nlohmann::json::parse(detected.out);
  const nlohmann::json a = detected_json.at("ranked");
  const nlohmann::json b = nlohmann::json::parse(from_file.out).at("ranked");
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].at("index") == b[i].at("index"));
    CHECK(a[i].at("predicted") == b[i].at("predicted"));
  }
  // The file's own limits hold: work-groups of at most 4 work-items.
  nlohmann::json small = listed[0];
  small["max_work_group_size"] = 4;
  small["max_work_item_sizes"] = {4, 4, 4};
  const std::string small_file = dir / "small.json";
  std::ofstream(small_file) << small.dump();
  RunResult limited = liftx(base + small_file);
  REQUIRE(limited.exit_code == 0);
  const nlohmann::json limited_json = nlohmann::json::parse(limited.out);
  CHECK(limited_json.at("variants") < detected_json.at("variants"));
  const nlohmann::json c = limited_json.at("ranked");
  REQUIRE(!c.empty());
  for (const nlohmann::json& row : c) {
    int64_t items = 1;
    for (const nlohmann::json& extent : row.at("launch").at("local"))
      items *= extent.get<int64_t>();
    CHECK(items <= 4);
  }

  std::ofstream(dir / "two.json") << nlohmann::json::array({listed[0], listed[0]}).dump();
  RunResult two = liftx(base + dir / "two.json");
  CHECK(two.exit_code == 2);
  CHECK(contains(two.err, "2 device profiles; keep the one to rank for"));
  std::ofstream(dir / "bad.json") << "{\"device_name\": 3";
  RunResult bad = liftx(base + dir / "bad.json");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, dir / "bad.json" + ": not JSON"));
}
