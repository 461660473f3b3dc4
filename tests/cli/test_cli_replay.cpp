// End-to-end test of `liftx replay` on the shipped PoCL database (8 stencils at 64x128 and
// 128x128).
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <filesystem>
#include <string>
#include <vector>

using namespace cli_test;
namespace fs = std::filesystem;

TEST_CASE("replay simulates the strategies per input and writes the summary and groups") {
  TempDir dir("replay");
  const std::string db = copy_of_pocl_db(dir);
  RunResult r = liftx("replay --db '" + db +
                      "' --kind knn --transform log --budget 12 --batch 2 --seeds 5 "
                      "--strategies static,online,online-knn,online-ei,random,hillclimb --out '" +
                      (dir.path / "out").string() + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "replay: device "));
  CHECK(contains(r.out, "trained without the replayed program"));
  const std::vector<std::string> rows = lines_starting(r.out, "| ");
  REQUIRE(rows.size() == 1 + 6); // the header, one row per strategy
  CHECK(rows[1].rfind("| static | 16 | ", 0) == 0);
  CHECK(rows[2].rfind("| online | 16 | ", 0) == 0);
  CHECK(contains(r.out, "runs-to figures average the 16 inputs"));
  const std::vector<std::string> summary = lines_of(read_text(dir.path / "out/summary.csv"));
  CHECK(summary.size() == 1 + 6);
  const std::vector<std::string> groups = lines_of(read_text(dir.path / "out/groups.csv"));
  CHECK(groups.size() == 1 + 16 * 6);
  CHECK(rows[4].rfind("| online-ei | 16 | ", 0) == 0);

  RunResult bad = liftx("replay --db '" + db + "' --kind knn --strategies static,greedy");
  CHECK(bad.exit_code != 0);
  CHECK(contains(bad.err, "unknown replay strategy 'greedy'"));
}

TEST_CASE("replay --prior-db trains the prior on another database, without the replayed program") {
  TempDir dir("replay-prior");
  const std::string db = copy_of_pocl_db(dir);
  const std::string prior = (dir.path / "prior.db").string();
  fs::copy_file(db, prior);
  // Only gaussian replayed: its prior learns from the other seven programs of the prior database.
  RunResult r = liftx("replay --db '" + db + "' --prior-db '" + prior +
                      "' --kind knn --transform log --budget 12 --seeds 5 --strategies "
                      "static,random --hold-out gaussian");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "(every other program of " + prior));
  const std::vector<std::string> rows = lines_starting(r.out, "| ");
  REQUIRE(rows.size() == 1 + 2);
  CHECK(rows[1].rfind("| static | 2 | ", 0) == 0); // gaussian's two inputs

  RunResult missing = liftx("replay --db '" + db + "' --prior-db '" +
                            (dir.path / "absent.db").string() + "' --kind knn");
  CHECK(missing.exit_code != 0);
  CHECK(contains(missing.err, "absent.db does not exist"));
}

TEST_CASE("explore --budget auto runs the online strategy and says how its re-ranking went") {
  TempDir dir("explore-auto");
  RunResult r =
      liftx("explore stencils/jacobi2d5pt.lift --size M=16,N=16 --sample 12 --budget auto "
            "--batch 3 --acquisition ei --repeat 2 --db '" +
            (dir.path / "explore.db").string() + "'");
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(field(r.out, "space     "), "strategy online (batches of 3, expected improvement "
                                             "first, launch shapes spread within 10%), budget "
                                             "auto (at most 50)"));
  CHECK(contains(field(r.out, "online    "), "re-ranked scores when chosen vs measured: "));
  RunResult bad = liftx("explore stencils/jacobi2d5pt.lift --budget auto --strategy model");
  // The launch-shape spread is the online strategy's, and a fraction.
  RunResult spread_alone = liftx("explore stencils/jacobi2d5pt.lift --launch-spread 0.2 "
                                 "--strategy model --size 16 --budget 1");
  CHECK(spread_alone.exit_code != 0);
  CHECK(contains(spread_alone.err, "--launch-spread goes with --strategy online, not model"));
  CHECK(liftx("explore stencils/jacobi2d5pt.lift --launch-spread 2 --size 16").exit_code != 0);
  CHECK(bad.exit_code != 0);
  CHECK(contains(bad.err, "--budget auto goes with --strategy online"));
  RunResult static_ei =
      liftx("explore stencils/jacobi2d5pt.lift --acquisition ei --strategy model");
  CHECK(static_ei.exit_code != 0);
  CHECK(contains(static_ei.err, "--acquisition ei goes with --strategy online, not model"));
}
