// End-to-end tests of `liftx evaluate`'s protocols on the shipped PoCL database (8 stencils at
// 64x128 and 128x128): leave one size out, nested selection, transfer, feature sets, bad input.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <filesystem>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

/// The rows of the per-input table (header excluded; the per-kind table after it left out).
std::vector<std::string> table_rows(const std::string& out) {
  std::vector<std::string> rows;
  for (const std::string& line :
       lines_starting(out.substr(0, out.find("per kind of program")), "| "))
    if (line.rfind("| program ", 0) != 0)
      rows.push_back(line);
  return rows;
}

} // namespace

TEST_CASE("evaluate --protocol size trains without the largest size and tests on it") {
  TempDir dir("evaluate-size");
  const std::string db = copy_of_pocl_db(dir);
  RunResult r = liftx("evaluate --db '" + db + "' --protocol size --kind knn --transform log");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "evaluation: train without the largest input size, test on it; device "));
  CHECK(contains(r.out, "; setting knn log; random = mean of 100 seeded orders\n"));
  const std::vector<std::string> rows = table_rows(r.out);
  REQUIRE(rows.size() == 8); // the eight stencils at 128x128 only
  for (const std::string& row : rows) {
    CAPTURE(row);
    CHECK(table_cells(row)[1] == "M=128,N=128");
  }
  CHECK(contains(field(r.out, "summary: runs to 90% median "), "; mean pearson "));
}

TEST_CASE("evaluate --nested chooses a setting per fold on its training programs and says which") {
  TempDir dir("evaluate-nested");
  const std::string db = copy_of_pocl_db(dir);
  RunResult r = liftx("evaluate --db '" + db +
                      "' --nested --kinds knn,tree --inner-folds 2 --out '" + dir / "nested" + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "evaluation: leave one program out; "));
  CHECK(contains(r.out, "setting chosen among 10 inside each training fold"));
  const std::vector<std::string> folds = lines_starting(r.out, "fold ");
  REQUIRE(folds.size() == 8);
  for (size_t i = 0; i < folds.size(); ++i) {
    CAPTURE(folds[i]);
    CHECK(folds[i].rfind("fold " + kStencils[i] + ": chose ", 0) == 0);
  }
  CHECK(table_rows(r.out).size() == 16);
  // choices.csv: 10 candidates per fold, exactly one chosen.
  const std::vector<std::string> choices = lines_of(read_text(dir.path / "nested/choices.csv"));
  REQUIRE(choices.size() == 1 + 8 * 10);
  int chosen = 0;
  for (size_t i = 1; i < choices.size(); ++i)
    chosen += csv_fields(choices[i])[2] == "1";
  CHECK(chosen == 8);
}

TEST_CASE("evaluate --test-db trains on one database and tests on another") {
  TempDir dir("evaluate-transfer");
  const std::string db = copy_of_pocl_db(dir);
  RunResult r = liftx("evaluate --db '" + db + "' --test-db '" + db +
                      "' --kind knn --features size_free --transform log");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "evaluation: train on device "));
  CHECK(table_rows(r.out).size() == 16);
}

TEST_CASE("evaluate --add-db trains on the test device's other inputs, never on a test input") {
  TempDir dir("evaluate-add");
  const std::string db = copy_of_pocl_db(dir);
  // A second device: the same measurements under another key; its 128x128 rows are the test
  // data, its 64x128 rows the added training data.
  const std::string test = dir / "test.db";
  fs::copy_file(db, test);
  execute_sql(test, "UPDATE devices SET key = 'other:device:1'");
  const std::string added = dir / "added.db";
  fs::copy_file(test, added);
  const auto drop_size = [](const std::string& file, const std::string& m) {
    execute_sql(file, "DELETE FROM measurements WHERE configuration_id IN (SELECT id FROM "
                      "configurations WHERE sizes_json = '{\"M\":" +
                          m + ",\"N\":128}')");
  };
  drop_size(test, "64");
  drop_size(added, "128");
  const std::string base = "evaluate --db '" + db + "' --test-db '" + test +
                           "' --kind knn --features size_free --transform log";
  RunResult r = liftx(base + " --add-db '" + added + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "train on device " + std::string(kPoclDevice) +
                            ", test on device other:device:1 (400 samples)"));
  CHECK(contains(r.out, ", profile cpu, 1200 samples;")); // 800 + the added 400
  const std::vector<std::string> rows = table_rows(r.out);
  REQUIRE(rows.size() == 8);
  for (const std::string& row : rows)
    CHECK(table_cells(row)[1] == "M=128,N=128");

  // The test inputs themselves in the added data: refused, nothing judged.
  RunResult leak = liftx(base + " --add-db '" + test + "'");
  check_user_error(leak);
  CHECK(contains(leak.err, "the training data holds the test device's measurements of "));
  CHECK(contains(leak.err, " at M=128,N=128, an input of the test data"));
  RunResult alone = liftx("evaluate --db '" + db + "' --add-db '" + added + "'");
  check_user_error(alone);
  CHECK(contains(alone.err, "--add-db goes with --protocol transfer and --test-db"));
}

TEST_CASE("evaluate --fraction counts runs to another fraction of the best, never fewer for more") {
  TempDir dir("evaluate-fraction");
  const std::string db = copy_of_pocl_db(dir);
  const std::string base = "evaluate --db '" + db + "' --protocol size --kind knn --transform log";
  RunResult at90 = liftx(base);
  RunResult at99 = liftx(base + " --fraction 0.99 --out '" + dir / "ev" + "'");
  CAPTURE(at99.err);
  REQUIRE(at90.exit_code == 0);
  REQUIRE(at99.exit_code == 0);
  CHECK(contains(at99.out, "| runs to 99% model | random | speedup | time to 99% model (s) |"));
  CHECK(contains(at99.out, "summary: runs to 99% median "));
  CHECK(contains(read_text(dir.path / "ev/evaluation.csv"), ",model_runs_to_99,"));
  const std::vector<std::string> rows90 = table_rows(at90.out), rows99 = table_rows(at99.out);
  REQUIRE(rows90.size() == 8);
  REQUIRE(rows99.size() == rows90.size());
  bool later = false;
  for (size_t i = 0; i < rows90.size(); ++i) {
    CAPTURE(rows99[i]);
    const int runs90 = std::stoi(table_cells(rows90[i])[6]);
    const int runs99 = std::stoi(table_cells(rows99[i])[6]);
    CHECK(runs99 >= runs90);
    later |= runs99 > runs90;
  }
  CHECK(later); // some input's first run within 10% is not within 1%
  RunResult low = liftx(base + " --fraction 0.3");
  CHECK(low.exit_code == 2);
  CHECK(contains(low.err, "--fraction: Value 0.3 not in range"));
}

TEST_CASE("evaluate: bad protocol, feature set and kinds are refused with a message") {
  TempDir dir("evaluate-bad");
  const std::string db = copy_of_pocl_db(dir);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--protocol sideways", "unknown protocol 'sideways'"},
      {"--protocol transfer", "--protocol transfer needs --test-db"},
      {"--test-db /nonexistent/test.db", "database /nonexistent/test.db does not exist"},
      {"--features some", "unknown feature set 'some'"},
      {"--nested --kinds knn,forest", "forest"},
      {"--protocol program --hold-out synth_", "no program named synth_*"},
  };
  for (const auto& c : cases) {
    // (named, not a structured binding: clang 14's doctest macros cannot capture a binding)
    const auto& args = c.first;
    const auto& message = c.second;
    CAPTURE(args);
    RunResult r = liftx("evaluate --db '" + db + "' " + args);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, message));
  }
}

TEST_CASE("evaluate --model judges trained models per kind; --baseline refuses a worse one") {
  TempDir dir("evaluate-judge");
  const std::string db = copy_of_pocl_db(dir);
  REQUIRE(liftx("train --db '" + db + "' --kind knn --transform log -o '" + dir / "good.json" + "'")
              .exit_code == 0);
  // The same neighbours with their throughputs turned upside down: it ranks every input's
  // variants slowest first, so it is worse on the one kind the database holds.
  nlohmann::json inverted = nlohmann::json::parse(read_text(dir / "good.json"));
  for (nlohmann::json& target : inverted.at("targets"))
    target = 2.0 - target.get<double>();
  std::ofstream(dir / "inverted.json") << inverted.dump();

  // evaluate on the copy of pocl.db with the model files and options given.
  const auto evaluate = [&](const std::string& options) {
    return liftx("evaluate --db '" + db + "' --profile cpu " + options);
  };
  RunResult judged = evaluate("--model '" + dir / "good.json" + "' --out '" + dir / "judged" + "'");
  CAPTURE(judged.err);
  REQUIRE(judged.exit_code == 0);
  CHECK(contains(judged.out, "16 inputs; every measured variant of an input ranked by the model"));
  CHECK(contains(judged.out, "| stencil2d | 16 | "));
  CHECK(fs::exists(dir / "judged/kinds.csv"));
  CHECK(contains(read_text(dir / "judged/inputs.csv"), ",jacobi2d5pt,\"M=64,N=128\",stencil2d,"));

  RunResult refused =
      evaluate("--model '" + dir / "inverted.json" + "' --baseline '" + dir / "good.json" + "'");
  CAPTURE(refused.out);
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.out, "inverted.json is refused, worse than "));
  CHECK(contains(refused.out, "  stencil2d: mean runs to 95% "));

  RunResult shipped =
      evaluate("--model '" + dir / "good.json" + "' --baseline '" + dir / "inverted.json" + "'");
  CHECK(shipped.exit_code == 0);
  CHECK(contains(shipped.out, "good.json is no worse than "));

  check_user_error(evaluate("--baseline '" + dir / "good.json" + "'"),
                   "--baseline goes with --model");
  check_user_error(evaluate("--nested --model '" + dir / "good.json" + "'"),
                   "--model judges trained models");
  // A model file that is not there, and data without the columns a model needs: clear errors.
  check_user_error(evaluate("--model '" + dir / "missing.json" + "'"), "missing.json");
  execute_sql(db, "UPDATE features SET json = json_remove(json, '$.bytes_moved')");
  check_user_error(evaluate("--model '" + dir / "good.json" + "'"),
                   "needs feature columns the data's rows do not all have (bytes_moved");
}
