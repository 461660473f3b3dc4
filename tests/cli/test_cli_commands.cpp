// End-to-end tests of the `liftx` commands around the cost model and the performance database:
// explore, rank, train, evaluate, variants, features and db, on PoCL at small sizes. Each test
// checks what the command prints or writes, not only its exit code.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <nlohmann/json.hpp>

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

namespace {

/// A fresh folder of the scratch directory, removed when the test is done with it. Every test
/// that writes a database, a model or variants does so here, and sets LIFTX_DB and
/// LIFTX_CACHE_DIR under it so that no command touches the user's database or build cache.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(scratch_dir() / name) {
    fs::remove_all(path);
    fs::create_directories(path);
    setenv("LIFTX_DB", (path / "default.db").c_str(), 1);
    setenv("LIFTX_CACHE_DIR", (scratch_dir() / "cache").c_str(), 1);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

/// A copy of the shipped PoCL dataset (model/data/pocl.db: 800 measurements, 8 stencils, 2 size
/// sets, one device), so that no test opens the tracked file itself.
std::string copy_of_pocl_db(const TempDir& dir) {
  const fs::path copy = dir.path / "pocl.db";
  fs::copy_file(fs::path(LIFTX_SOURCE_DIR) / "model/data/pocl.db", copy);
  return copy.string();
}

constexpr const char* kPoclDevice =
    "pocl:pthread-skylake-avx512-intel-r-xeon-r-processor:3-1-debian";
const std::vector<std::string> kStencils = {"gaussian",    "gradient", "hotspot2d", "jacobi2d5pt",
                                            "jacobi2d9pt", "srad1",    "srad2",     "stencil2d"};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

/// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& line : lines_of(text))
    if (line.rfind(prefix, 0) == 0)
      out.push_back(line);
  return out;
}

/// The one line of `text` that starts with `prefix`, without the prefix; "" (and a failed check)
/// if there is none.
std::string field(const std::string& text, const std::string& prefix) {
  std::vector<std::string> found = lines_starting(text, prefix);
  CHECK_MESSAGE(found.size() == 1, "expected one line starting with '", prefix, "' in:\n", text);
  return found.empty() ? "" : found.front().substr(prefix.size());
}

/// The fields of one CSV line; double quotes enclose fields with commas ("" is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

/// The cells of a markdown table row `| a | b |`, trimmed.
std::vector<std::string> table_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] != '|') {
      cell += row[i];
      continue;
    }
    const size_t first = cell.find_first_not_of(' ');
    const size_t last = cell.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    cell.clear();
  }
  return cells;
}

/// The feature columns the "Columns" table of docs/features.md documents (`program` and the
/// features; `global_size_0..2` stands for three columns).
std::set<std::string> documented_feature_columns() {
  const std::string doc = read_text(fs::path(LIFTX_SOURCE_DIR) / "docs/features.md");
  const size_t section = doc.find("\n## Columns\n");
  REQUIRE(section != std::string::npos);
  std::set<std::string> names;
  bool in_table = false;
  for (const std::string& line : lines_of(doc.substr(section + 1))) {
    if (line.rfind("| `", 0) != 0) {
      if (in_table)
        break;
      continue;
    }
    in_table = true;
    const std::string first_cell = line.substr(1, line.find('|', 1) - 1);
    for (size_t at = first_cell.find('`'); at != std::string::npos;) {
      const size_t end = first_cell.find('`', at + 1);
      std::string name = first_cell.substr(at + 1, end - at - 1);
      if (name.size() > 5 && name.substr(name.size() - 5) == "_0..2") {
        for (int d = 0; d < 3; ++d)
          names.insert(name.substr(0, name.size() - 4) + std::to_string(d));
      } else {
        names.insert(name);
      }
      at = first_cell.find('`', end + 1);
    }
  }
  return names;
}

/// A row of the `rank` table: rank, predicted, variant index.
struct RankRow {
  int rank = 0;
  double predicted = 0;
  long index = 0;
};

std::vector<RankRow> rank_table_rows(const std::string& out) {
  std::vector<RankRow> rows;
  bool after_header = false;
  for (const std::string& line : lines_of(out)) {
    if (after_header) {
      std::istringstream in(line);
      RankRow r;
      in >> r.rank >> r.predicted >> r.index;
      CHECK_MESSAGE(!in.fail(), "not a rank row: ", line);
      rows.push_back(r);
    }
    after_header |= line.rfind(" rank predicted  index  strategy and parameters", 0) == 0;
  }
  CHECK(after_header);
  return rows;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string replace_all(std::string s, char from, char to) {
  std::replace(s.begin(), s.end(), from, to);
  return s;
}

size_t files_with_extension(const fs::path& dir, const std::string& extension) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    n += e.path().extension() == extension;
  return n;
}

void check_user_error(const RunResult& r) {
  CHECK(r.exit_code == 2);
  CHECK_FALSE(contains(r.err, "internal error"));
  CHECK_FALSE(contains(r.err, "terminate"));
  CHECK_FALSE(contains(r.err, "bug in liftx"));
}

const std::string kDbCsvPrefix =
    "measurement_id,program,sizes,variant,strategy,parameters,dims,global,local,tied,status,"
    "median_ms,min_ms,max_ms,q1_ms,q3_ms,repetitions,compile_ms,timestamp,message,"
    "feature_profile";

} // namespace

TEST_CASE("explore runs and verifies the best-ranked variants, reports the best with its kernel, "
          "and records every run in --db") {
  TempDir dir("explore");
  const std::string db = dir / "explore.db";
  RunResult r = liftx("explore stencils/jacobi2d5pt.lift --device cpu --size M=16,N=16 --budget 2 "
                      "--sample 20 --repeat 2 --db '" +
                      db + "'");
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(field(r.out, "program   ") == "jacobi2d5pt (stencils/jacobi2d5pt.lift), sizes M=16 N=16");
  CHECK(contains(field(r.out, "device    "), "(pocl:"));
  CHECK(contains(r.out, "/cpu-model.json (knn, trained for profile cpu)\n")); // the shipped one
  CHECK(field(r.out, "space     ") == "20 variants ranked (a uniform sample, seed 1; --sample 0 "
                                      "ranks all); strategy model, budget 2");
  // One line per variant run, best-ranked first, each timed (a failed run shows its status).
  const std::vector<std::string> attempts = lines_starting(r.out, "  [");
  REQUIRE(attempts.size() == 2);
  CHECK(attempts[0].rfind("  [  1/2] rank     1 predicted ", 0) == 0);
  CHECK(attempts[1].rfind("  [  2/2] rank     2 predicted ", 0) == 0);
  for (const std::string& a : attempts)
    CHECK(ends_with(a, " ms"));
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
  REQUIRE((best_rank == 1 || best_rank == 2));
  const std::string& attempt = attempts[size_t(best_rank - 1)];
  CHECK(contains(attempt, "predicted " + predicted + "  " + parameters + " "));
  CHECK(contains(attempt, launch));
  CHECK(contains(field(r.out, "time      "), " ms median of 2 runs"));
  CHECK(contains(r.out, "\nwhy       "));

  // Its program and kernel follow; the program printed runs and verifies at the launch given.
  const std::string program_marker = "\n--- jacobi2d5pt.lift ---\n";
  const std::string kernel_marker = "\n--- kernel ---\n";
  const size_t program_at = r.out.find(program_marker);
  const size_t kernel_at = r.out.find(kernel_marker);
  REQUIRE(program_at != std::string::npos);
  REQUIRE(kernel_at != std::string::npos);
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

TEST_CASE("rank --top N prints the N best-ranked variants, best first, in every format") {
  TempDir dir("rank");
  const std::string base = "rank stencils/jacobi2d5pt.lift --model model/data/cpu-model.json "
                           "--size M=16,N=16 --sample 20";
  RunResult table = liftx(base + " --top 5");
  CAPTURE(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(field(table.out, "program   ") ==
        "jacobi2d5pt (stencils/jacobi2d5pt.lift), sizes M=16 N=16, model "
        "model/data/cpu-model.json (knn, profile cpu)");
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
  RunResult features =
      liftx("features '" + dir / "best" + "' --device-profile cpu --size M=16,N=16");
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
  RunResult t = liftx("train --db '" + db + "' --model tree --transform log -o '" + tree + "'");
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
  for (const auto& [file, kind] :
       std::vector<std::pair<std::string, std::string>>{{model, "knn"}, {tree, "tree"}}) {
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
  // One row per stencil and size set, in order.
  std::vector<std::string> rows;
  for (const std::string& line : lines_starting(r.out, "| "))
    if (line != header)
      rows.push_back(line);
  REQUIRE(rows.size() == 16);
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(rows[i]);
    const std::vector<std::string> cells = table_cells(rows[i]);
    REQUIRE(cells.size() == 12);
    CHECK(cells[0] == kStencils[i / 2]);
    CHECK(cells[1] == (i % 2 == 0 ? "M=128,N=128" : "M=64,N=128"));
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

  // The tree model is evaluated the same way.
  RunResult tree = liftx("evaluate --db '" + db + "' --model tree");
  REQUIRE(tree.exit_code == 0);
  CHECK(contains(tree.out, "leave-one-benchmark-out evaluation of the tree model"));
  CHECK(lines_starting(tree.out, "| ").size() == 17);
  CHECK_FALSE(contains(tree.out, "written   "));
}

TEST_CASE("variants --count counts the variants that variants --out writes") {
  TempDir dir("variants");
  const std::string base =
      "variants stencils/jacobi2d5pt.lift --size M=16,N=16 --device-profile cpu";
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
}

TEST_CASE("features prints the documented columns in CSV and in JSON") {
  const std::set<std::string> documented = documented_feature_columns();
  REQUIRE(documented.size() == 30); // program + 29 features
  RunResult csv =
      liftx("features stencils/variants/jacobi2d5pt --device-profile nvidia --size M=40,N=112");
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
                         "--device-profile nvidia --size M=40,N=112 --format json");
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
                                "' --device-profile amd --size M=40,N=112 --global 64,32 "
                                "--local 16,4 --format json");
  REQUIRE(free_launch.exit_code == 0);
  const nlohmann::json given = nlohmann::json::parse(free_launch.out).at(0);
  std::ofstream(dir.path / "global2d.json") << R"({"global": [64, 32], "local": [16, 4]})";
  RunResult sidecar = liftx("features '" + dir / "global2d.lift" +
                            "' --device-profile amd --size M=40,N=112 --format json");
  REQUIRE(sidecar.exit_code == 0);
  const nlohmann::json from_sidecar = nlohmann::json::parse(sidecar.out).at(0);
  CHECK(from_sidecar.at("global_size_0") == 64);
  CHECK(from_sidecar.at("global_size_1") == 32);
  CHECK(from_sidecar.at("local_size_0") == 16);
  CHECK(from_sidecar.at("local_size_1") == 4);
  CHECK(from_sidecar.at("work_groups") == 32);
  CHECK(from_sidecar == given);
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
  std::string expected = "database  " + db + "\ndevice    " + kPoclDevice +
                         "\n  features profile cpu: 800 configurations\n";
  for (const std::string& s : kStencils)
    expected += "  " + s + std::string(14 - s.size(), ' ') + "   100: ok 100\n";
  CHECK(summary.out == expected);

  RunResult csv = liftx("db --db '" + db + "' --csv '" + dir / "export.csv" + "'");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.empty());
  const std::string csv_text = read_text(dir.path / "export.csv");
  const std::vector<std::string> rows = lines_of(csv_text);
  REQUIRE(rows.size() == 801);
  const std::vector<std::string> header = csv_fields(rows[0]);
  CHECK(rows[0].rfind(kDbCsvPrefix + ",", 0) == 0);
  // The feature columns are `features`' own, in its order.
  RunResult features =
      liftx("features stencils/variants/jacobi2d5pt/global2d.lift --device-profile cpu --size 16");
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
  CHECK(first.at("objectives") == nlohmann::json({"time"}));
  CHECK(first.at("status") == "ok");
  CHECK(first.at("correctness") == 1);
  CHECK(first.at("measurements").at(0).at("name") == "time");
  CHECK(first.at("measurements").at(0).at("unit") == "ms");
  CHECK(first.at("times").at("runtimes").at(0) == first.at("measurements").at(0).at("value"));
  RunResult t4_file =
      liftx("db --db '" + db + "' --device " + kPoclDevice + " --t4 '" + dir / "t4.json" + "'");
  REQUIRE(t4_file.exit_code == 0);
  CHECK(read_text(dir.path / "t4.json") == t4.out);

  RunResult trained = liftx("train --db '" + db + "' -o '" + dir / "m.json" + "'");
  REQUIRE(trained.exit_code == 0);
  RunResult evaluated = liftx("evaluate --db '" + db + "'");
  REQUIRE(evaluated.exit_code == 0);
  CHECK(read_text(db) == before);
  // Nor does reading leave journal files beside it (the shipped database is in WAL mode).
  CHECK_FALSE(fs::exists(db + "-wal"));
  CHECK_FALSE(fs::exists(db + "-shm"));
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
      {"variants stencils/jacobi2d5pt.lift --size 16 --device-profile tpu",
       "unknown device profile 'tpu'"},
      {"features stencils/variants/jacobi2d5pt/global2d.lift --size 16 --device-profile tpu",
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
      {"explore stencils/jacobi2d5pt.lift --device cpu --size 16x16 --db '" + explore_db + "'",
       "--size: '16x16' is not an integer"},
      {"explore stencils/jacobi2d5pt.lift --device cpu --size M=16,K=4 --db '" + explore_db + "'",
       "no size named K"},
      {"features stencils/variants/jacobi2d5pt/global2d.lift --size M=16,M=16",
       "--size: M is given twice"},
      // Other options.
      {"variants stencils/jacobi2d5pt.lift --size 16 --where strategy", "expected KEY=VALUE"},
      {"variants stencils/jacobi2d5pt.lift --size 16 --where strategy=window --sample 3",
       "--where and --sample cannot be combined"},
      {"explore stencils/jacobi2d5pt.lift --strategy best", "--strategy: best not in"},
      {"rank stencils/jacobi2d5pt.lift " + model + " --size 16 --format xml",
       "--format: xml not in"},
      {"evaluate --db '" + missing_db + "' --orders 50", "--orders: Value 50 not in range"},
      {"rank stencils/jacobi2d5pt.lift --size 16", "--model is required"},
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
      {"train --db '" + db + "' --model forest -o '" + dir / "m.json" + "'",
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
