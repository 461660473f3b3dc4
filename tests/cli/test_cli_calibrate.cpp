// End-to-end tests of `liftx calibrate` on PoCL: a tiny designed collection, the model stored
// where explore finds it, resuming within the budget, and bad input.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace cli_test;

namespace {

// The design: 3 programs x 2 sizes x 3 variants. (Both cases that measure it are left to the
// plain build: under the sanitizers each measurement's worker runs for seconds.)
constexpr int kSample = 3;
constexpr const char* kSizes = "32,48";

/// The one model file calibrate wrote under the test's user data folder.
fs::path calibrated_model(const TempDir& dir) {
  fs::path found;
  for (const fs::directory_entry& e : fs::directory_iterator(dir.path / "data/liftx/models"))
    found = e.path();
  return found;
}

} // namespace

// Under the sanitizers: tests/explore/test_calibrate.cpp, and collect and train end to end.
TEST_CASE("calibrate measures its design, stores the device's model and explore uses it" *
          doctest::skip(kPlainBuildOnly)) {
  TempDir dir("calibrate");
  const std::string args = "calibrate --device cpu --stencils stencils/jacobi2d5pt.lift "
                           "--stencils stencils/gradient.lift --synthetic 1 --sizes " +
                           std::string(kSizes) + " --sample " + std::to_string(kSample) +
                           " --minutes 60 --quiet --db '" + dir / "cal.db" + "'";
  const int planned = 3 * 2 * kSample;
  RunResult r = liftx(args);
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out,
                 fmt::format("design    3 stencils (1 synthetic) x sizes 32, 48 x {} variants each",
                             kSample)));
  CHECK(contains(
      r.out, fmt::format("measured  {} now (0 already measured), 0 left in the plan", planned)));
  CHECK(contains(r.out, "model     boosted trees on "));
  const fs::path model = calibrated_model(dir);
  REQUIRE(fs::exists(model));
  const nlohmann::json j = nlohmann::json::parse(read_text(model));
  CHECK(j.at("profile") == "cpu");
  CHECK(j.at("provenance").at("calibration").at("sizes") == nlohmann::json::array({32, 48}));
  CHECK(j.at("provenance").at("programs").size() == 3);

  // Run again: the plan is measured already, the budget's state says what was spent.
  RunResult again = liftx(args);
  CAPTURE(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(contains(again.out, fmt::format("measured  0 now ({} already measured), 0 left in the plan",
                                        planned)));

  // explore finds the calibrated model before the shipped one.
  RunResult explored = liftx("explore stencils/jacobi2d5pt.lift --device cpu --size 32 --budget 2 "
                             "--db '" +
                             dir / "explore.db" + "'");
  CAPTURE(explored.out);
  CAPTURE(explored.err);
  REQUIRE(explored.exit_code == 0);
  CHECK(contains(explored.out, "model     " + model.string()));
}

// Under the sanitizers: collect resuming after time-limited runs (tests/explore/test_explore.cpp).
TEST_CASE("calibrate stops at its budget and a later run measures the rest" *
          doctest::skip(kPlainBuildOnly)) {
  TempDir dir("calibrate-budget");
  // 3 seconds: the first chunk of targets is planned and partly measured, then the budget ends.
  const std::string base = "calibrate --device cpu --stencils stencils/jacobi2d5pt.lift "
                           "--stencils stencils/gradient.lift --stencils stencils/srad2.lift "
                           "--stencils stencils/stencil2d.lift --stencils stencils/gaussian.lift "
                           "--synthetic 0 --sizes 32 --sample " +
                           std::to_string(kSample + 1) + " --db '" + dir / "cal.db" +
                           "' --minutes ";
  RunResult first = liftx(base + "0.05 --quiet");
  CAPTURE(first.out);
  CAPTURE(first.err);
  CHECK_FALSE(contains(first.err, "enumerating")); // --quiet: no progress
  CHECK_FALSE(contains(first.err, "elapsed"));
  CHECK(contains(first.out, "left in the plan"));
  CHECK(!contains(first.out, " 0 left in the plan"));
  CHECK(contains(first.out, "next      the budget ran out before the plan"));
  // The design is fixed by the first run: a larger budget resumes it and finishes the plan.
  RunResult second = liftx(base + "60");
  CAPTURE(second.out);
  CAPTURE(second.err);
  REQUIRE(second.exit_code == 0);
  // Without --quiet: the bar of the measurements on stderr, the report alone on stdout.
  CHECK(contains(second.err, "100% elapsed"));
  CHECK_FALSE(contains(second.out, "elapsed"));
  CHECK(contains(second.out, " 0 left in the plan"));
  CHECK(contains(second.out, " measurements of 5 programs: "));
  // A plan this small trains a model of a few dozen measurements: said, with what to do.
  CHECK(contains(second.out, "\nwarning   "));
  CHECK(contains(second.out, " measurements are few for a ranking model"));
}

TEST_CASE("calibrate refuses bad input with a clear message") {
  TempDir dir("calibrate-bad");
  RunResult r = liftx("calibrate --device no-such-device --minutes 1");
  CHECK(r.exit_code != 0);
  CHECK(contains(r.err, "no-such-device"));
  r = liftx("calibrate --device cpu --minutes 0");
  CHECK(r.exit_code != 0);
  r = liftx("calibrate --device cpu --stencils missing.lift --synthetic 0 --minutes 1");
  CHECK(r.exit_code != 0);
  CHECK(contains(r.err, "missing.lift"));
}
