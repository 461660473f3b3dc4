// The performance database (round trip, idempotent upserts, exports, default path), the
// collection's resume guarantee (an interrupted and resumed run ends with the same measured
// configurations as an uninterrupted one), and the features the ranking computes for a variant.
#include "codegen/launch.hpp"
#include "explore/collect.hpp"
#include "explore/explore.hpp"
#include "explore/rank.hpp"
#include "explore_test_env.hpp"
#include "features/features.hpp"
#include "ir/host_iteration.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/db.hpp"
#include "perfdb/record.hpp"
#include "rewrite/product.hpp"
#include "runtime/device.hpp"
#include "runtime/isolate.hpp"
#include "space/variant_filter.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace liftx;
using namespace explore_test;

namespace {

target::DeviceProfile test_device() {
  target::DeviceProfile p = runtime::named_profile("cpu");
  p.key = "test:cpu-device:1.0";
  p.device_name = "test cpu device";
  return p;
}

size_t count_lines(const std::string& text) {
  size_t n = 0;
  for (char c : text)
    n += c == '\n';
  return n;
}

/// The first column of every row `sql` selects from the database at `path`, opened read-only.
std::vector<std::string> sql_column(const fs::path& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open_v2(path.string().c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  std::vector<std::string> values;
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
  while (sqlite3_step(statement) == SQLITE_ROW)
    values.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)));
  sqlite3_finalize(statement);
  return values;
}

} // namespace

TEST_CASE("db: rows round-trip, upserts are idempotent, and a reopened file keeps everything") {
  TempDir dir("roundtrip");
  const fs::path path = dir.path / "sub" / "perf.db"; // parent folders are created
  int64_t configuration = 0, other_configuration = 0;
  {
    perfdb::PerfDb db(path);
    const int64_t device = db.device(test_device());
    CHECK(db.device(test_device()) == device);
    const int64_t program = db.program("jacobi", "def jacobi(a: [float]N) = a");
    CHECK(db.program("jacobi", "def jacobi(a: [float]N) = a") == program);
    CHECK(db.program("jacobi", "def jacobi(a: [float]N) = map(x => x, a)") != program);
    const int64_t variant = db.variant(program, "def v1 = ...", "global2d_10", {{"tile_x", 4}});
    CHECK(db.variant(program, "def v1 = ...", "global2d_10", {{"tile_x", 4}}) == variant);
    const int64_t variant2 = db.variant(program, "def v2 = ...", "chunks", {{"chunk", 8}});
    CHECK(variant2 != variant);
    const nlohmann::json sizes = {{"M", 16}, {"N", 32}};
    const nlohmann::json launch = {
        {"dims", 2}, {"global", {32, 16}}, {"local", {8, 4}}, {"tied", true}};
    configuration = db.configuration(variant, sizes, launch);
    CHECK(db.configuration(variant, sizes, launch) == configuration);
    nlohmann::json free_launch = launch;
    free_launch["tied"] = false;
    other_configuration = db.configuration(variant2, sizes, free_launch);
    CHECK(other_configuration != configuration);
    CHECK(db.configuration(variant, sizes, free_launch) != configuration);

    db.put_features(configuration, "cpu", {{"work_items", 512}, {"occupancy_fraction", 0.5}});
    db.put_features(configuration, "cpu",
                    {{"work_items", 512}, {"occupancy_fraction", 0.75}}); // replaces
    db.put_features(other_configuration, "cpu", {{"work_items", 4}, {"occupancy_fraction", 0.25}});
    CHECK_FALSE(db.has_measurement(configuration, device));
    perfdb::Measurement ok;
    ok.median_ms = 1.5;
    ok.min_ms = 1.25;
    ok.max_ms = 2.5;
    ok.q1_ms = 1.375;
    ok.q3_ms = 1.75;
    ok.repetitions = 10;
    ok.compile_ms = 120;
    db.put_measurement(configuration, device, ok);
    perfdb::Measurement failed;
    failed.status = runtime::Status::build_error;
    failed.message = "error: \"x\" undeclared, line 3";
    db.put_measurement(other_configuration, device, failed);
    CHECK(db.has_measurement(configuration, device));
  }
  perfdb::PerfDb db(path); // reopened: nothing lost
  CHECK(db.device_keys() == std::vector<std::string>{"test:cpu-device:1.0"});
  std::vector<perfdb::Row> rows = db.rows("test:cpu-device:1.0", "cpu");
  REQUIRE(rows.size() == 2);
  const perfdb::Row& r = rows[0];
  CHECK(r.configuration_id == configuration);
  CHECK(r.program == "jacobi");
  CHECK(nlohmann::json::parse(r.sizes) == nlohmann::json{{"M", 16}, {"N", 32}});
  CHECK(r.strategy == "global2d_10");
  CHECK(r.printed == "def v1 = ...");
  CHECK(r.launch.at("dims") == 2);
  CHECK(r.launch.at("global") == nlohmann::json{32, 16});
  CHECK(r.launch.at("local") == nlohmann::json{8, 4});
  CHECK(r.launch.at("tied") == true);
  CHECK(r.features.at("occupancy_fraction") == 0.75);
  REQUIRE(r.measurement);
  CHECK(r.measurement->status == runtime::Status::ok);
  CHECK(r.measurement->median_ms == 1.5);
  CHECK(r.measurement->q3_ms == 1.75);
  CHECK(r.measurement->repetitions == 10);
  CHECK(r.measurement->compile_ms == 120);
  CHECK(rows[1].measurement->status == runtime::Status::build_error);
  CHECK(rows[1].measurement->message == "error: \"x\" undeclared, line 3");
  CHECK(rows[1].launch.at("tied") == false);
  // Other profiles and devices have nothing.
  CHECK(db.rows("test:cpu-device:1.0", "nvidia").empty());
  CHECK(db.rows("no such device", "cpu").empty());

  // A re-measurement: rows() gives the latest, the exports every measurement.
  perfdb::Measurement again;
  again.median_ms = 1.0;
  again.repetitions = 5;
  db.put_measurement(configuration, db.device(test_device()), again);
  rows = db.rows("test:cpu-device:1.0", "cpu");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].measurement->median_ms == 1.0);

  std::ostringstream csv;
  db.export_csv(csv, "test:cpu-device:1.0");
  const std::string text = csv.str();
  CHECK(count_lines(text) == 4); // header + 3 measurements
  CHECK(text.rfind("measurement_id,program,sizes,variant,strategy", 0) == 0);
  CHECK(text.find("occupancy_fraction") != std::string::npos);
  CHECK(text.find(",32x16,8x4,true,ok,1.5,1.25,2.5,1.375,1.75,10,120,") != std::string::npos);
  CHECK(text.find("build_error") != std::string::npos);
  CHECK(text.find(",build_error,,,,,,") != std::string::npos); // a failed run has no times
  CHECK(text.find("\"error: \"\"x\"\" undeclared, line 3\"") != std::string::npos); // quoted
  CHECK(text.find(",0.75") != std::string::npos);
  CHECK(text.find(",512,") != std::string::npos);

  std::ostringstream t4;
  db.export_t4(t4, "test:cpu-device:1.0");
  nlohmann::json doc = nlohmann::json::parse(t4.str());
  CHECK(doc.at("schema_version") == "1.0.0");
  REQUIRE(doc.at("results").size() == 3);
  const nlohmann::json& first = doc.at("results")[0];
  // Kernel Tuner's shape: a flat parameter -> value map (2D launch: z is 1).
  const nlohmann::json& flat = first.at("configuration");
  for (const auto& item : flat.items()) {
    const std::string& name = item.key();
    const nlohmann::json& value = item.value();
    CAPTURE(name);
    CHECK((value.is_number() || value.is_string()));
  }
  CHECK(flat.at("strategy") == "global2d_10");
  CHECK(flat.at("global_size_x") == 32);
  CHECK(flat.at("global_size_y") == 16);
  CHECK(flat.at("global_size_z") == 1);
  CHECK(flat.at("local_size_x") == 8);
  CHECK(flat.at("local_size_y") == 4);
  CHECK(flat.at("threads_tied") == 1);
  CHECK(flat.at("tile_x") == 4);
  CHECK(flat.at("N") == 32);
  CHECK(doc.at("metadata").at("time_unit") == "ms");
  CHECK(doc.at("metadata").at("device").at("key") == "test:cpu-device:1.0");
  // Which liftx wrote the file: MAJOR.MINOR.PATCH.
  const std::string version = doc.at("metadata").at("liftx_version").get<std::string>();
  CHECK(std::regex_match(version, std::regex(R"(\d+\.\d+\.\d+)")));
  CHECK(first.at("times").at("compilation_time") == 120.0);
  CHECK(first.at("times").at("runtimes") == nlohmann::json{1.5});
  CHECK(first.at("status") == "ok");
  CHECK(first.at("invalidity") == "correct");
  CHECK(first.at("correctness") == 1);
  CHECK(first.at("measurements")[0].at("value") == 1.5);
  CHECK(first.at("measurements")[0].at("unit") == "ms");
  std::map<std::string, double> measured;
  for (const nlohmann::json& m : first.at("measurements"))
    measured[m.at("name")] = m.at("value").get<double>();
  CHECK(measured == std::map<std::string, double>{{"time", 1.5},
                                                  {"time_min", 1.25},
                                                  {"time_max", 2.5},
                                                  {"time_q1", 1.375},
                                                  {"time_q3", 1.75},
                                                  {"repetitions", 10}});
  const nlohmann::json& second = doc.at("results")[1];
  CHECK(second.at("status") == "failed");
  CHECK(second.at("invalidity") == "compile");
  CHECK(second.at("correctness") == 0);
  CHECK(second.at("times").at("runtimes").empty());
}

TEST_CASE("db: each run status has its T4 invalidity") {
  using runtime::Status;
  const std::vector<std::pair<Status, std::string>> table{
      {Status::ok, "correct"},
      {Status::build_error, "compile"},
      {Status::run_error, "runtime"},
      {Status::out_of_resources, "runtime"}, // as Kernel Tuner files CL_OUT_OF_RESOURCES
      {Status::timeout, "timeout"},
      {Status::wrong_result, "correctness"}};
  for (const auto& row : table) { // (no structured binding: clang 14's CAPTURE cannot take one)
    const std::string status(runtime::to_string(row.first));
    CAPTURE(status);
    CHECK(perfdb::t4_invalidity(row.first) == row.second);
  }
}

TEST_CASE("db: files that are not liftx databases are refused") {
  TempDir dir("refuse");
  const fs::path garbage = dir.path / "garbage.db";
  {
    std::ofstream out(garbage);
    out << "this is not an SQLite database, just some text long enough to have a header......\n";
  }
  CHECK_THROWS_AS(perfdb::PerfDb{garbage}, UserError);
  // An SQLite file with someone else's tables.
  const fs::path foreign = dir.path / "foreign.db";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(foreign.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "CREATE TABLE t(x INTEGER)", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  CHECK_THROWS_AS(perfdb::PerfDb{foreign}, UserError);
}

TEST_CASE("launch sidecars: read back as run options; anything else is a user error") {
  exec::RunOptions o = perfdb::read_launch_sidecar(
      R"({"dims": 2, "global": [64, 32], "local": [8, 4], "tied": true})", "v.json");
  CHECK(o.global == std::vector<int64_t>{64, 32});
  CHECK(o.local == std::vector<int64_t>{8, 4});
  // A local size with a 0 (or none) leaves the choice to the runtime.
  CHECK(perfdb::read_launch_sidecar(R"({"global": [64], "local": [0]})", "v.json").local.empty());
  CHECK(perfdb::read_launch_sidecar(R"({"global": [64]})", "v.json").local.empty());
  // Issue 20: a string size was a JSON type error (an internal error in the CLI).
  for (const char* text :
       {R"({"global":["a"]})", R"({"global":[]})", R"({"global":[1,2,3,4]})", R"({"global":[-1]})",
        R"({"global":[2.5]})", R"({"global":[4294967296]})", R"({"global":8})", R"({"local":[4]})",
        R"({"global":[8],"local":[4,4]})", R"({"global":[8],"local":[-4]})", "null", "[]", "{", ""})
    CHECK_THROWS_WITH_AS(perfdb::read_launch_sidecar(text, "v.json"), doctest::Contains("v.json: "),
                         UserError);
}

TEST_CASE("db: the default path honours LIFTX_DB, then XDG_DATA_HOME, then HOME") {
  {
    ScopedEnv db("LIFTX_DB", "/tmp/somewhere/mine.db");
    CHECK(perfdb::PerfDb::default_path() == fs::path("/tmp/somewhere/mine.db"));
  }
  {
    ScopedEnv db("LIFTX_DB", nullptr);
    ScopedEnv xdg("XDG_DATA_HOME", "/tmp/xdg-data");
    CHECK(perfdb::PerfDb::default_path() == fs::path("/tmp/xdg-data/liftx/perf.db"));
  }
  {
    ScopedEnv db("LIFTX_DB", "");
    ScopedEnv xdg("XDG_DATA_HOME", nullptr);
    ScopedEnv home("HOME", "/tmp/home-of-test");
    CHECK(perfdb::PerfDb::default_path() ==
          fs::path("/tmp/home-of-test/.local/share/liftx/perf.db"));
  }
}

namespace {

using MeasuredKey = std::tuple<std::string, std::string, std::string, std::string>;

/// What a collection measured: (variant text, sizes, launch, status) per configuration, and the
/// number of measurements (duplicates would show here).
std::pair<std::set<MeasuredKey>, size_t> measured(const fs::path& path) {
  perfdb::PerfDb db(path);
  std::vector<std::string> keys = db.device_keys();
  REQUIRE(keys.size() == 1);
  std::set<MeasuredKey> set;
  for (const perfdb::Row& r : db.rows(keys[0], "cpu"))
    set.emplace(r.printed, r.sizes, r.launch.dump(),
                std::string(runtime::to_string(r.measurement->status)));
  std::ostringstream csv;
  db.export_csv(csv, keys[0]);
  return {set, count_lines(csv.str()) - 1};
}

runtime::IsolatedResult collect(const fs::path& db, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {
      LIFTX_BINARY, "collect",  std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift",
      "--device",   "cpu",      "--size",
      "M=16,N=32",  "--sample", "12",
      "--seed",     "5",        "--repeat",
      "3",          "--warmup", "1",
      "--db",       db.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return runtime::run_isolated(argv, std::chrono::milliseconds(120000));
}

} // namespace

TEST_CASE("collect: killed midway and resumed, it ends with the rows of an uninterrupted run") {
  TempDir dir("resume");
  ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  const fs::path a = dir.path / "a.db", b = dir.path / "b.db";

  runtime::IsolatedResult whole = collect(a, {});
  INFO(whole.stderr_text);
  REQUIRE(whole.succeeded());
  auto [rows_a, measurements_a] = measured(a);
  CHECK(rows_a.size() == 12);
  CHECK(measurements_a == 12);
  size_t ok = 0;
  for (const MeasuredKey& k : rows_a)
    ok += std::get<3>(k) == "ok";
  CHECK(ok > 0);

  runtime::IsolatedResult interrupted = collect(b, {"--stop-after", "5"});
  CHECK(interrupted.exit_code == 75); // std::_Exit in the middle of the run
  auto [rows_cut, measurements_cut] = measured(b);
  CHECK(measurements_cut == 5);
  CHECK(rows_cut.size() == 5);

  runtime::IsolatedResult resumed = collect(b, {"--resume"});
  INFO(resumed.stderr_text);
  REQUIRE(resumed.succeeded());
  CHECK(resumed.stdout_text.find("7 measured, 5 already measured") != std::string::npos);
  auto [rows_b, measurements_b] = measured(b);
  CHECK(measurements_b == 12); // nothing measured twice
  CHECK(rows_b == rows_a);

  // Resuming a complete collection measures nothing.
  runtime::IsolatedResult again = collect(b, {"--resume"});
  REQUIRE(again.succeeded());
  CHECK(again.stdout_text.find("0 measured, 12 already measured") != std::string::npos);
  CHECK(measured(b).second == 12);
}

TEST_CASE("collect: the features profile name of a device") {
  target::DeviceProfile p = runtime::named_profile("cpu");
  p.type = target::DeviceType::cpu;
  CHECK(explore::profile_name_for(p) == "cpu");
  p.type = target::DeviceType::gpu;
  p.vendor = "NVIDIA Corporation";
  CHECK(explore::profile_name_for(p) == "nvidia");
  p.vendor = "Advanced Micro Devices, Inc.";
  p.platform_name = "AMD Accelerated Parallel Processing";
  CHECK(explore::profile_name_for(p) == "amd");
}

TEST_CASE("collect: a worker that crashes, hangs or whose kernel fails costs one variant, and the "
          "run goes on in a new worker") {
  TempDir dir("crash");
  ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  ScopedEnv crash("LIFTX_TEST_WORKER_CRASH_AT", "1");
  ScopedEnv kernel_fails("LIFTX_TEST_WORKER_KERNEL_FAILS_AT", "2");
  ScopedEnv hang("LIFTX_TEST_WORKER_HANG_AT", "3");
  const fs::path db_path = dir.path / "c.db";
  std::vector<std::string> argv = {LIFTX_BINARY,
                                   "collect",
                                   std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift",
                                   "--size",
                                   "M=16,N=32",
                                   "--sample",
                                   "5",
                                   "--seed",
                                   "5",
                                   "--repeat",
                                   "2",
                                   "--warmup",
                                   "0",
                                   "--timeout-ms",
                                   "1500",
                                   "--db",
                                   db_path.string()};
  runtime::IsolatedResult run = runtime::run_isolated(argv, std::chrono::milliseconds(120000));
  INFO(run.stderr_text);
  REQUIRE(run.succeeded());
  CHECK(run.stdout_text.find("restarted 3 times") != std::string::npos);
  perfdb::PerfDb db(db_path);
  std::vector<perfdb::Row> rows = db.rows(db.device_keys().at(0), "cpu");
  REQUIRE(rows.size() == 5);
  std::vector<std::string> statuses;
  for (const perfdb::Row& r : rows)
    statuses.emplace_back(runtime::to_string(r.measurement->status));
  CHECK(statuses == std::vector<std::string>{"ok", "run_error", "run_error", "timeout", "ok"});
  CHECK(rows[2].measurement->message.find("test hook") != std::string::npos);
  CHECK(rows[1].measurement->message.find("signal 11") != std::string::npos);
}

TEST_CASE("collect: a target's reference is not counted in its first job's timeout, and a time "
          "limit reached while it is interpreted stores nothing for the job") {
  TempDir dir("slow-reference");
  ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  const fs::path db_path = dir.path / "r.db";
  auto collect = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        LIFTX_BINARY, "collect",   std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift",
        "--size",     "M=16,N=32", "--sample",
        "3",          "--seed",    "5",
        "--repeat",   "2",         "--warmup",
        "0",          "--db",      db_path.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return runtime::run_isolated(argv, std::chrono::milliseconds(120000));
  };
  auto statuses = [&] {
    std::vector<std::string> out;
    perfdb::PerfDb db(db_path);
    if (db.device_keys().empty())
      return out;
    for (const perfdb::Row& r : db.rows(db.device_keys().at(0), "cpu"))
      out.emplace_back(runtime::to_string(r.measurement->status));
    return out;
  };
  {
    // The time limit passes while the (slowed) reference is interpreted: the run stops there.
    ScopedEnv slow("LIFTX_TEST_WORKER_SLOW_REFERENCE_MS", "30000");
    const auto start = std::chrono::steady_clock::now();
    runtime::IsolatedResult cut = collect({"--time-limit", "3"});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(cut.stderr_text);
    REQUIRE(cut.succeeded());
    CHECK(seconds < 20);
    CHECK(cut.stdout_text.find("3 not measured") != std::string::npos);
    CHECK(statuses().empty());
  }
  {
    // A reference slower than the per-variant timeout: every variant is measured all the same.
    ScopedEnv slow("LIFTX_TEST_WORKER_SLOW_REFERENCE_MS", "4500");
    runtime::IsolatedResult run = collect({"--timeout-ms", "3000", "--resume"});
    INFO(run.stderr_text);
    REQUIRE(run.succeeded());
    CHECK(run.stdout_text.find("restarted") == std::string::npos);
  }
  CHECK(statuses() == std::vector<std::string>{"ok", "ok", "ok"});
}

TEST_CASE("db: a plan is stored whole, read back in order, and replaced by a new one") {
  TempDir dir("plan");
  perfdb::PerfDb db(dir.path / "p.db");
  const int64_t program = db.program("jacobi", "def jacobi ...");
  const nlohmann::json sizes = {{"M", 16}, {"N", 32}};
  CHECK_FALSE(db.plan(program, sizes, "cpu", "all"));

  std::vector<std::pair<int64_t, int64_t>> ids;
  std::vector<nlohmann::json> launches;
  for (int i = 0; i < 3; ++i) {
    const int64_t variant = db.variant(program, fmt::format("variant {}", i), "global2d_01", {});
    nlohmann::json launch = {
        {"dims", 2}, {"global", {32, 16 * (i + 1)}}, {"local", {8, 4}}, {"tied", i == 0}};
    launches.push_back(launch);
    ids.emplace_back(db.configuration(variant, sizes, launch), 10 * (2 - i));
  }
  db.put_plan(program, sizes, "cpu", "sample 3 seed 1", ids);
  CHECK_FALSE(db.plan(program, sizes, "cpu", "all"));                // another selection
  CHECK_FALSE(db.plan(program, sizes, "nvidia", "sample 3 seed 1")); // another profile
  auto plan = db.plan(program, sizes, "cpu", "sample 3 seed 1");
  REQUIRE(plan);
  REQUIRE(plan->size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK((*plan)[size_t(i)].configuration_id == ids[size_t(i)].first);
    CHECK((*plan)[size_t(i)].variant_index == 10 * (2 - i));
    CHECK((*plan)[size_t(i)].printed == fmt::format("variant {}", i));
    CHECK((*plan)[size_t(i)].launch == launches[size_t(i)]);
  }
  db.put_plan(program, sizes, "cpu", "sample 3 seed 1", {ids[2]});
  plan = db.plan(program, sizes, "cpu", "sample 3 seed 1");
  REQUIRE(plan);
  REQUIRE(plan->size() == 1);
  CHECK(plan->front().configuration_id == ids[2].first);
}

TEST_CASE("collect: planned without a device, measured later by builders and a worker, in "
          "time-limited runs") {
  TempDir dir("plan-collect");
  ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  const fs::path db_path = dir.path / "p.db";
  const std::string stencil = std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift";
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        LIFTX_BINARY, "collect", stencil,         "--size", "M=16,N=32", "--sample", "8",
        "--seed",     "3",       "--repeat",      "2",      "--warmup",  "0",        "--profile",
        "cpu",        "--db",    db_path.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return runtime::run_isolated(argv, std::chrono::milliseconds(120000));
  };

  runtime::IsolatedResult detect =
      runtime::run_isolated({LIFTX_BINARY, "collect", stencil, "--size", "M=16,N=32", "--plan-only",
                             "--db", (dir.path / "d.db").string()},
                            std::chrono::milliseconds(60000));
  CHECK(detect.exit_code != 0);
  CHECK(detect.stderr_text.find("needs a named --profile") != std::string::npos);

  runtime::IsolatedResult planned = run({"--plan-only"});
  INFO(planned.stderr_text);
  REQUIRE(planned.succeeded());
  CHECK(planned.stdout_text.find("1 targets, 1 enumerated now") != std::string::npos);
  CHECK(planned.stdout_text.find("8 planned, 0 measured") != std::string::npos);
  CHECK(perfdb::PerfDb(db_path).device_keys().empty());

  // A first run that may stop at its time limit, then a resumed one: together they measure the
  // plan once, without enumerating it again.
  runtime::IsolatedResult first =
      run({"--device", "cpu", "--build-jobs", "2", "--time-limit", "1", "--resume"});
  INFO(first.stderr_text);
  REQUIRE(first.succeeded());
  CHECK(first.stdout_text.find("1 targets, 0 enumerated now") != std::string::npos);
  runtime::IsolatedResult rest = run({"--device", "cpu", "--build-jobs", "2", "--resume"});
  INFO(rest.stderr_text);
  REQUIRE(rest.succeeded());
  CHECK(rest.stdout_text.find("0 enumerated now") != std::string::npos);
  CHECK(rest.stdout_text.find("left") == std::string::npos);

  perfdb::PerfDb db(db_path);
  std::vector<perfdb::Row> rows = db.rows(db.device_keys().at(0), "cpu");
  CHECK(rows.size() == 8);
  double compiled_ms = 0;
  for (const perfdb::Row& r : rows) {
    CHECK(runtime::to_string(r.measurement->status) == std::string_view("ok"));
    compiled_ms += r.measurement->compile_ms;
  }
  // Kernels the builders compiled still carry their compile time (read beside the binary).
  CHECK(compiled_ms > 0);
  std::ostringstream csv;
  db.export_csv(csv, db.device_keys().at(0));
  CHECK(count_lines(csv.str()) == 9); // header + each configuration once
}

TEST_CASE("variant filters: KEY=V1|V2 parsed, matched on strategy, launch and parameters, and "
          "named back") {
  space::Variant v;
  v.strategy = "window";
  v.parameters = {{"tile_x", 4}, {"vector", 2}};
  v.launch.dims = 2;
  v.launch.global = {1024, 512, 1};
  v.launch.local = {32, 8, 1};
  v.launch.tied = true;
  auto keeps = [&](std::vector<std::string> texts) {
    std::vector<space::VariantFilter> filters;
    for (const std::string& t : texts)
      filters.push_back(space::parse_variant_filter(t));
    const bool kept = space::matches(v, filters);
    // A ranking filters by the variant's parts before it builds the Variant: the same answer.
    CHECK(space::matches(v.strategy, v.parameters, v.launch, filters) == kept);
    return kept;
  };
  CHECK(keeps({}));
  CHECK(keeps({"strategy=global2d|window", "local=32x8", "tied=true", "tile_x=2|4"}));
  CHECK(keeps({"global=1024x512", "tile_y=none"}));
  CHECK_FALSE(keeps({"strategy=window", "vector=4"}));
  CHECK_FALSE(keeps({"local=32x8x1"})); // a 2D launch has two sizes
  CHECK_FALSE(keeps({"tile_y=1"}));
  const std::vector<space::VariantFilter> two = {space::parse_variant_filter("tile_x=2|4"),
                                                 space::parse_variant_filter("tied=false")};
  CHECK(space::describe(two) == "tile_x=2|4 tied=false");
  for (const char* bad : {"tile_x", "=4", "tile_x=", "tile_x=2||4", "tile_x=4|"})
    CHECK_THROWS_AS(space::parse_variant_filter(bad), UserError);
}

TEST_CASE("collect --where: the plan samples only the variants the filters keep, and is a plan "
          "of its own") {
  TempDir dir("plan-where");
  const fs::path db_path = dir.path / "p.db";
  const std::string stencil = std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift";
  auto plan = [&](std::vector<std::string> where) {
    std::vector<std::string> argv = {LIFTX_BINARY, "collect",       stencil, "--size",
                                     "M=16,N=32",  "--sample",      "6",     "--seed",
                                     "3",          "--profile",     "cpu",   "--plan-only",
                                     "--db",       db_path.string()};
    for (const std::string& w : where) {
      argv.push_back("--where");
      argv.push_back(w);
    }
    return runtime::run_isolated(argv, std::chrono::milliseconds(120000));
  };
  runtime::IsolatedResult filtered = plan({"strategy=global2d_01", "local=8x4|4x8"});
  INFO(filtered.stderr_text);
  REQUIRE(filtered.succeeded());
  CHECK(filtered.stdout_text.find("6 planned") != std::string::npos);
  runtime::IsolatedResult whole = plan({});
  REQUIRE(whole.succeeded());
  CHECK(whole.stdout_text.find("1 enumerated now") != std::string::npos); // not the filtered plan

  auto column = [&](const std::string& sql) { return sql_column(db_path, sql); };
  CHECK(column("SELECT selection FROM plans ORDER BY id") ==
        std::vector<std::string>{"sample 6 seed 3 where strategy=global2d_01 local=8x4|4x8",
                                 "sample 6 seed 3"});
  const std::vector<std::string> kept =
      column("SELECT v.strategy || ' ' || c.local_json FROM plan_configurations p JOIN plans "
             "ON plans.id = p.plan_id JOIN configurations c ON c.id = p.configuration_id JOIN "
             "variants v ON v.id = c.variant_id WHERE plans.selection LIKE '%where%'");
  REQUIRE(kept.size() == 6);
  for (const std::string& k : kept)
    CHECK((k == "global2d_01 [8,4]" || k == "global2d_01 [4,8]"));
  const std::vector<std::string> all_strategies =
      column("SELECT DISTINCT v.strategy FROM plan_configurations p JOIN plans ON plans.id = "
             "p.plan_id JOIN configurations c ON c.id = p.configuration_id JOIN variants v ON "
             "v.id = c.variant_id WHERE plans.selection = 'sample 6 seed 3'");
  CHECK(all_strategies.size() > 1);

  runtime::IsolatedResult none = plan({"strategy=window3d"});
  CHECK(none.exit_code != 0);
  CHECK(none.stderr_text.find("no variant of jacobi2d5pt") != std::string::npos);
  runtime::IsolatedResult malformed = plan({"tile_x"});
  CHECK(malformed.exit_code != 0);
  CHECK(malformed.stderr_text.find("--where tile_x: expected KEY=VALUE") != std::string::npos);
}

TEST_CASE("collect --check-size: each variant is verified at the smaller sizes and timed at its "
          "own, and the run's sizes are never interpreted") {
  TempDir dir("check-size");
  ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  const fs::path db_path = dir.path / "c.db";
  const std::string heat = std::string(LIFTX_SOURCE_DIR) + "/stencils/iterated/heat2d.lift";
  auto collect = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {LIFTX_BINARY,
                                     "collect",
                                     heat,
                                     "--device",
                                     "cpu",
                                     "--size",
                                     "M=64,N=96",
                                     "--where",
                                     "strategy=temporal2d",
                                     "--where",
                                     "steps_per_launch=2|3",
                                     "--sample",
                                     "2",
                                     "--repeat",
                                     "2",
                                     "--warmup",
                                     "0",
                                     "--db",
                                     db_path.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return runtime::run_isolated(argv, std::chrono::milliseconds(300000));
  };
  auto references = [&] {
    size_t n = 0;
    if (fs::exists(dir.path / "cache" / "references"))
      for ([[maybe_unused]] const auto& entry :
           fs::recursive_directory_iterator(dir.path / "cache" / "references"))
        n += entry.is_regular_file();
    return n;
  };
  auto messages = [&] {
    std::vector<std::string> out;
    perfdb::PerfDb db(db_path);
    for (const perfdb::Row& r : db.rows(db.device_keys().at(0), "cpu")) {
      CHECK(r.measurement->status == runtime::Status::ok);
      CHECK(r.measurement->median_ms > 0);
      out.push_back(r.measurement->message);
    }
    return out;
  };

  runtime::IsolatedResult smaller = collect({"--check-size", "M=32,N=32"});
  INFO(smaller.stderr_text);
  REQUIRE(smaller.succeeded());
  CHECK(messages() == std::vector<std::string>{"checked at M=32 N=32", "checked at M=32 N=32"});
  const size_t interpreted = references();
  CHECK(interpreted >= 1);

  // Measured again into a new database, checked at the run's sizes: one more reference (the
  // run's sizes), and no message.
  fs::remove(db_path);
  runtime::IsolatedResult full = collect({});
  INFO(full.stderr_text);
  REQUIRE(full.succeeded());
  CHECK(messages() == std::vector<std::string>{"", ""});
  CHECK(references() == interpreted + 1);

  // A check size larger than the run's, in one dimension, is refused before anything is planned.
  runtime::IsolatedResult larger = collect({"--check-size", "M=32,N=128"});
  CHECK(larger.exit_code != 0);
  CHECK(larger.stderr_text.find("--check-size M=32 N=128 is larger than the size M=64 N=96") !=
        std::string::npos);
}

TEST_CASE("collect --check-size grows a check size the variant's tiles do not divide") {
  // The kernel's tiles (split 2 of 32 columns) need N to be a multiple of 64: checked at 16 x 16
  // it could not run, and collect recorded the variant as out of resources. The check is made at
  // the sizes doubled until it can (64 x 64), and says so.
  TempDir dir("check-size-grown");
  ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  const fs::path db_path = dir.path / "g.db";
  const runtime::IsolatedResult r =
      runtime::run_isolated({LIFTX_BINARY,
                             "collect",
                             std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift",
                             "--device",
                             "cpu",
                             "--size",
                             "M=128,N=128",
                             "--check-size",
                             "M=16,N=16",
                             "--where",
                             "strategy=workgroup2d",
                             "--where",
                             "split=2",
                             "--where",
                             "tile_x=32",
                             "--where",
                             "tile_y=4",
                             "--sample",
                             "1",
                             "--repeat",
                             "1",
                             "--warmup",
                             "0",
                             "--db",
                             db_path.string()},
                            std::chrono::milliseconds(120000));
  INFO(r.stderr_text);
  REQUIRE(r.succeeded());
  perfdb::PerfDb db(db_path);
  const std::vector<perfdb::Row> rows = db.rows(db.device_keys().at(0), "cpu");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].measurement->status == runtime::Status::ok);
  CHECK(rows[0].measurement->message == "checked at M=64 N=64");
}

TEST_CASE("collect --warp-streams: the space has the warp streams, in a plan of its own") {
  TempDir dir("plan-warp");
  const fs::path db_path = dir.path / "w.db";
  const std::string heat = std::string(LIFTX_SOURCE_DIR) + "/stencils/iterated/heat2d.lift";
  auto plan = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {LIFTX_BINARY,  "collect",       heat,      "--size",
                                     "M=256,N=256", "--sample",      "4",       "--profile",
                                     "cpu",         "--plan-only",   "--where", "warp=1",
                                     "--db",        db_path.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return runtime::run_isolated(argv, std::chrono::milliseconds(120000));
  };
  runtime::IsolatedResult without = plan({});
  CHECK(without.exit_code != 0);
  CHECK(without.stderr_text.find("no variant of heat2d") != std::string::npos);
  runtime::IsolatedResult with = plan({"--warp-streams"});
  INFO(with.stderr_text);
  REQUIRE(with.succeeded());
  CHECK(with.stdout_text.find("4 planned") != std::string::npos);
  CHECK(sql_column(db_path, "SELECT selection FROM plans") ==
        std::vector<std::string>{"sample 4 seed 1 where warp=1 with warp streams"});
}

TEST_CASE("default sizes: as many points as the 2D default, a power of two per dimension") {
  explore::DeviceDefaults gpu{2048, 0}, cpu{128, 0};
  CHECK(gpu.extent(2) == 2048);
  CHECK(cpu.extent(2) == 128);
  CHECK(gpu.extent(1) == 2048 * 2048);
  CHECK(cpu.extent(1) == 128 * 128);
  CHECK(gpu.extent(3) == 128); // 161³ would match 2048²; 128 is the power of two below
  CHECK(cpu.extent(3) == 16);  // 25³ ~ 128²
}

TEST_CASE("explore checks what takes minutes to interpret at smaller sizes its tiles allow") {
  const ir::Module mm =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/linalg/mm.lift");
  const ir::Module jacobi =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift");
  auto cube = [](int64_t m, int64_t n, int64_t k) { return Sizes{{"M", m}, {"N", n}, {"K", k}}; };
  CHECK(explore::checks_at_smaller_sizes(mm.main(), cube(4096, 4096, 4096)));
  CHECK_FALSE(explore::checks_at_smaller_sizes(mm.main(), cube(512, 512, 512)));
  CHECK_FALSE(explore::checks_at_smaller_sizes(jacobi.main(), {{"M", 8192}, {"N", 8192}}));
  CHECK_FALSE(explore::checks_at_smaller_sizes(ir::iterate_step(jacobi.main(), 64, 0),
                                               {{"M", 16384}, {"N", 16384}}));

  const ir::Program blocked =
      std::get<ir::Program>(rewrite::build_register_blocked(mm.main(), {16, 8, 4, true}));
  const ir::Program tiled = std::get<ir::Program>(
      rewrite::build_local_tiled(mm.main(), {16, 16, 8, 8, 16, true, false, 1}));
  CHECK(explore::check_sizes_for(mm.main(), blocked, cube(4096, 4096, 4096)) ==
        cube(512, 512, 512));
  CHECK(explore::check_sizes_for(mm.main(), tiled, cube(4096, 2048, 4096)) == cube(512, 256, 512));
  // Halving stops where a chunk of 4 steps would no longer divide K (1026), and cannot start
  // from an odd size.
  CHECK(explore::check_sizes_for(mm.main(), blocked, cube(4096, 4096, 4104)) ==
        cube(2048, 2048, 2052));
  CHECK(explore::check_sizes_for(mm.main(), blocked, cube(4096, 4096, 4097)).empty());
  // A 128-row tile stops the halving at 128 rows.
  CHECK(explore::check_sizes_for(mm.main(), tiled, cube(256, 8192, 8192)) == cube(128, 4096, 4096));
}

TEST_CASE("explore_batches: variants measured several at a time are the ones, in the order and "
          "with the scores, of one at a time") {
  // 40 variants on a line, predicted 0.9^i; the fast ones near 30 (the online strategy finds them
  // by re-ranking); variant 0 fails (the static strategies' until-success rule).
  std::vector<explore::RankedVariant> ranked(40);
  for (size_t i = 0; i < ranked.size(); ++i) {
    ranked[i].variant.index = int64_t(i);
    ranked[i].predicted = std::pow(0.9, double(i));
    ranked[i].rank = int(i) + 1;
    ranked[i].columns = {double(i)};
  }
  auto report_of = [](const explore::RankedVariant& r) {
    exec::RunReport report;
    const auto i = double(r.variant.index);
    if (r.variant.index < 3) {
      report.status = runtime::Status::run_error;
      return report;
    }
    runtime::Timing t;
    t.median_ms = std::abs(i - 30) < 4 ? 0.1 : 1 / std::pow(0.9, i);
    t.samples_ms = {t.median_ms};
    report.timing = t;
    return report;
  };
  for (const explore::Strategy strategy :
       {explore::Strategy::online, explore::Strategy::model, explore::Strategy::random}) {
    CAPTURE(explore::to_string(strategy));
    explore::ExploreOptions options;
    options.strategy = strategy;
    options.budget = strategy == explore::Strategy::online ? 14 : 2; // the model's 2 fail
    options.until_success_limit = 6;
    options.batch = 4;
    const explore::ExploreResult alone = explore::explore(ranked, options, report_of);
    options.parallel = 100;
    std::vector<size_t> batch_sizes;
    const explore::ExploreResult batched = explore::explore_batches(
        ranked, options, [&](const std::vector<const explore::RankedVariant*>& variants) {
          batch_sizes.push_back(variants.size());
          std::vector<exec::RunReport> reports;
          for (auto it = variants.rbegin(); it != variants.rend(); ++it) // any order inside
            reports.insert(reports.begin(), report_of(**it));
          return reports;
        });
    REQUIRE(batched.attempts.size() == alone.attempts.size());
    for (size_t a = 0; a < alone.attempts.size(); ++a) {
      CHECK(batched.attempts[a].ranked_index == alone.attempts[a].ranked_index);
      CHECK(batched.attempts[a].predicted == doctest::Approx(alone.attempts[a].predicted));
    }
    CHECK(batched.best == alone.best);
    CHECK(batch_sizes.size() < alone.attempts.size()); // some measured together
  }
}

TEST_CASE("a worker's measurement survives JSON, the bytes it moved included") {
  perfdb::Measurement m;
  m.median_ms = 1.5;
  m.q1_ms = 1.25;
  m.repetitions = 2;
  m.samples_ms = {1.25, 1.75};
  m.bytes_moved = 8192;
  const perfdb::Measurement back = perfdb::measurement_from(perfdb::to_json(m));
  CHECK(back.status == runtime::Status::ok);
  CHECK(back.median_ms == 1.5);
  CHECK(back.q1_ms == 1.25);
  CHECK(back.repetitions == 2);
  CHECK(back.samples_ms == m.samples_ms);
  CHECK(back.bytes_moved == 8192);
  CHECK_FALSE(perfdb::to_json(perfdb::Measurement{}).contains("bytes_moved"));
}

TEST_CASE("a measurement records a check made shorter or smaller than the run, and keeps a failed "
          "run's error") {
  exec::RunReport full;
  full.verification.checked = full.verification.passed = true;
  CHECK(perfdb::measurement_of(full).message.empty());

  exec::RunReport shortened = full;
  shortened.verification.steps_checked = 14;
  shortened.verification.steps = 64;
  CHECK(perfdb::measurement_of(shortened).message == "checked on 14 of 64 steps");

  exec::RunReport smaller = full;
  smaller.verification.checked_sizes = {{"M", 512}, {"N", 512}};
  CHECK(perfdb::measurement_of(smaller).message == "checked at M=512 N=512");

  exec::RunReport failed = smaller;
  failed.status = runtime::Status::wrong_result;
  failed.message = "3 of 1024 elements differ (checked at M=512 N=512)";
  CHECK(perfdb::measurement_of(failed).message == failed.message);
}

namespace {

/// Five steps of a 5-point heat stencil with clamp boundaries: its 2D fused variants, warp streams
/// among them, are in the NVIDIA space at small sizes.
ir::Program clamped_heat_five_steps() {
  return parse::parse_module(
             "userfun star(c: float, n: float, s: float, e: float, w: float): float { return "
             "0.5f * c + 0.2f * n + 0.1f * s + 0.15f * e + 0.05f * w; }\ndef heat(grid: "
             "[[float]N]M) = iterate(5, x => map2D(nbh => star(nbh[1][1], nbh[0][1], nbh[2][1], "
             "nbh[1][2], nbh[1][0]), slide2D(3, 1, pad2D(1, 1, clamp, x))), grid)",
             "<test>")
      .main();
}

} // namespace

TEST_CASE("explore checks a deep fused launch on a large grid with every step at smaller sizes") {
  // One launch of five fused steps at 8192² interprets 5 x 2^26 point-steps (minutes); every
  // step at 2048² interprets 5 x 2^22.
  const ir::Program program = clamped_heat_five_steps();
  space::SpaceOptions o;
  o.sizes = {{"M", 128}, {"N", 256}};
  o.device = runtime::named_profile("nvidia").limits();
  o.free_global_halvings = 0;
  space::VariantStream stream(program, o);
  space::Variant deep;
  space::Variant single;
  while (stream.next(deep) && space::steps_per_launch(deep) < 5)
    if (space::steps_per_launch(deep) == 1 && single.parameters.empty())
      single = deep;
  REQUIRE(space::steps_per_launch(deep) == 5);
  REQUIRE(space::steps_per_launch(single) == 1);
  const Sizes large{{"M", 8192}, {"N", 8192}};
  CHECK(explore::one_launch_check_is_long(program, deep.program, 5, large));
  CHECK(explore::check_sizes_for(program, deep.program, large) == Sizes{{"M", 2048}, {"N", 2048}});
  // One step at 8192² is the bound itself; five at 2048² are well inside it.
  CHECK_FALSE(explore::one_launch_check_is_long(program, single.program, 1, large));
  CHECK_FALSE(
      explore::one_launch_check_is_long(program, deep.program, 5, {{"M", 2048}, {"N", 2048}}));
  // An odd size halves to nothing smaller: such a variant keeps its one-launch check, shorter
  // than every step at the run's sizes.
  const Sizes odd{{"M", 8191}, {"N", 8192}};
  CHECK(explore::one_launch_check_is_long(program, deep.program, 5, odd));
  CHECK(explore::check_sizes_for(program, deep.program, odd).empty());
}

TEST_CASE("rank: a warp stream's features are those of the kernel that runs on the device") {
  // On NVIDIA's devices `liftx run` keeps a warp stream's rows in registers, exchanged by
  // shfl.sync; elsewhere in local memory. The features (and so the ranking) see the same kernel.
  const ir::Program program = clamped_heat_five_steps();
  const Sizes sizes{{"M", 128}, {"N", 256}};
  for (const std::string name : {"nvidia", "cpu"}) {
    CAPTURE(name);
    const target::DeviceProfile profile = runtime::named_profile(name);
    space::SpaceOptions o;
    o.sizes = sizes;
    o.device = profile.limits();
    o.warp_streams = true;
    o.free_global_halvings = 0;
    space::VariantStream stream(program, o);
    space::Variant v;
    bool found = false;
    while (!found && stream.next(v))
      found = v.parameters.count("warp") > 0;
    REQUIRE(found);
    explore::FeatureCache cache(profile);
    const nlohmann::json ranked = features::to_stored_json(cache.compute(v.program, v, sizes));
    auto features_with = [&](codegen::SubgroupRows rows) {
      codegen::Options options{v.launch.tied};
      options.subgroup_rows = rows;
      return features::to_stored_json(
          features::compute(codegen::generate(v.program, options), v.launch, sizes, profile));
    };
    const nlohmann::json in_registers = features_with(codegen::SubgroupRows::nvidia_shuffle);
    const nlohmann::json in_local = features_with(codegen::SubgroupRows::local_memory);
    CHECK(in_registers != in_local);
    CHECK(ranked == (name == "nvidia" ? in_registers : in_local));
  }
}
