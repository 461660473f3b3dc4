// End-to-end tests of `liftx route` on the shipped PoCL database (8 stencils, all of kind
// stencil2d): a kind goes to the specialist only where, held out, it ranks better than the base;
// the routed file is a model like any other; bad bases are refused with a message.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

using namespace cli_test;

namespace {

/// A kNN model trained on `db` with its throughputs turned upside down (it ranks every input's
/// variants slowest first) and claiming to have trained on other programs, so that the kind
/// counts as unseen and is judged.
void write_backwards_base(const std::string& db, const TempDir& dir) {
  REQUIRE(liftx("train --db '" + db + "' --kind knn --transform log -o '" + dir / "good.json" + "'")
              .exit_code == 0);
  nlohmann::json base = nlohmann::json::parse(read_text(dir / "good.json"));
  for (nlohmann::json& target : base.at("targets"))
    target = 2.0 - target.get<double>();
  base["provenance"]["programs"] = {"elsewhere"};
  std::ofstream(dir / "backwards.json") << base.dump();
}

/// `liftx route` on `db` from the base file `base` of `dir`, writing `output` there.
RunResult route(const std::string& db, const TempDir& dir, const std::string& base,
                const std::string& output, const std::string& options = "--kind knn --quiet") {
  return liftx("route --db '" + db + "' --base '" + dir / base + "' " + options + " -o '" +
               dir / output + "'");
}

} // namespace

TEST_CASE("route gives a kind the base ranks backwards to the specialist, and the file serves it") {
  TempDir dir("route");
  const std::string db = copy_of_pocl_db(dir);
  write_backwards_base(db, dir);
  RunResult r =
      route(db, dir, "backwards.json", "routed.json", "--kind knn --transform log --quiet");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "| stencil2d | gaussian, gradient, hotspot2d, jacobi2d5pt, jacobi2d9pt, "
                        "srad1 and 2 more | "));
  CHECK(ends_with(lines_starting(r.out, "| stencil2d |").at(0), "| specialist |"));
  CHECK(contains(r.out, "routed.json (routes for stencil2d)"));
  const nlohmann::json routed = nlohmann::json::parse(read_text(dir / "routed.json"));
  CHECK(routed["routes"] == nlohmann::json{{"stencil2d", 0}});
  CHECK(routed["route_models"].size() == 1);

  // Asked for by name, the kind is judged the same way; a kind the data lacks is refused.
  RunResult asked = route(db, dir, "backwards.json", "asked.json",
                          "--kind knn --transform log --quiet --add-route stencil2d");
  CAPTURE(asked.err);
  REQUIRE(asked.exit_code == 0);
  CHECK(contains(asked.out, "; its routes kept, only stencil2d judged"));
  CHECK(read_text(dir / "asked.json") == read_text(dir / "routed.json"));
  check_user_error(
      route(db, dir, "backwards.json", "product.json", "--kind knn --add-route product"),
      "no program of kind product in the data");

  // Judged per kind, the routed model ranks with its route and passes the ship rule against the
  // base.
  RunResult judged = liftx("evaluate --db '" + db + "' --model '" + dir / "routed.json" +
                           "' --baseline '" + dir / "backwards.json" + "'");
  CAPTURE(judged.out);
  CHECK(judged.exit_code == 0);
  CHECK(contains(judged.out, "; stencil2d programs by a knn model of "));
  CHECK(contains(judged.out, "routed.json is no worse than "));

  // Ranking a program of the routed kind names the route it ranks with.
  RunResult ranked = liftx("rank stencils/jacobi2d5pt.lift --model '" + dir / "routed.json" +
                           "' --size 64 --top 3");
  CAPTURE(ranked.err);
  REQUIRE(ranked.exit_code == 0);
  CHECK(contains(ranked.out, "(knn, profile cpu; its route for stencil2d programs)"));
}

TEST_CASE("route keeps every kind the base trained on, and refuses bases it cannot judge") {
  TempDir dir("route-kept");
  const std::string db = copy_of_pocl_db(dir);
  write_backwards_base(db, dir);
  RunResult kept = route(db, dir, "good.json", "kept.json");
  CAPTURE(kept.err);
  REQUIRE(kept.exit_code == 0);
  CHECK(ends_with(lines_starting(kept.out, "| stencil2d |").at(0),
                  "| - | - | - | - | base (trained on the kind) |"));
  CHECK(contains(kept.out, "kept.json (the base alone: no kind routed)"));
  CHECK_FALSE(nlohmann::json::parse(read_text(dir / "kept.json")).contains("routes"));

  nlohmann::json anonymous = nlohmann::json::parse(read_text(dir / "good.json"));
  anonymous["provenance"].erase("programs");
  std::ofstream(dir / "anonymous.json") << anonymous.dump();
  check_user_error(route(db, dir, "anonymous.json", "out.json"),
                   "does not list the programs it was trained on");
  check_user_error(route(db, dir, "good.json", "out.json", "--kind knn --profile nvidia"),
                   "is a model for profile cpu, the data is read for profile nvidia");
  const std::string good = read_text(dir / "good.json");
  check_user_error(route(db, dir, "good.json", "good.json"));
  CHECK(read_text(dir / "good.json") == good);
  CHECK_FALSE(fs::exists(dir / "out.json"));
}
