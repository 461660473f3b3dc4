// The ship rule (model/ship_rule.hpp): per-kind figures computed from the best-so-far curves, and
// a candidate refused when it is worse than the shipped model on any one kind, whatever it gains
// on the others.
#include "model/ship_rule.hpp"

#include <doctest/doctest.h>

using namespace liftx::model;

namespace {

/// A group whose model order reaches the normalised throughputs `curve` (best so far per run).
GroupResult group(const std::string& program, const std::string& input, std::vector<double> curve) {
  GroupResult g;
  g.program = program;
  g.input = input;
  g.configurations = int(curve.size());
  g.model_curve = std::move(curve);
  return g;
}

Dataset kinds() {
  Dataset d;
  d.program_kinds = {{"jacobi", "stencil2d"}, {"gauss", "stencil2d"}, {"tmv", "reduction"}};
  return d;
}

} // namespace

TEST_CASE("runs to a fraction are read off the best-so-far curve") {
  const GroupResult g = group("jacobi", "{}", {0.5, 0.91, 0.91, 0.96, 1.0});
  CHECK(runs_to(g, 0.9) == 2);
  CHECK(runs_to(g, 0.95) == 4);
  CHECK(runs_to(g, 1.0) == 5);
  CHECK(runs_to(group("jacobi", "{}", {1.0, 1.0}), 0.95) == 1);
  // No successful variant: every run is spent.
  CHECK(runs_to(group("jacobi", "{}", {0, 0, 0}), 0.9) == 3);
}

TEST_CASE("summaries group inputs by kind, another device's rows with their stencil") {
  const std::vector<GroupResult> groups = {
      group("jacobi", "a", {1.0}), group("gauss@other", "a", {0.2, 0.92, 1.0}),
      group("tmv", "a", {0.1, 0.5, 0.8, 1.0}), group("mystery", "a", {1.0})};
  const std::vector<KindSummary> s = summarize_by_kind(groups, kinds());
  REQUIRE(s.size() == 3);
  CHECK(s[0].kind == "reduction");
  CHECK(s[0].inputs == 1);
  CHECK(s[0].mean_runs_95 == 4);
  CHECK(s[0].first_within_95 == 0);
  CHECK(s[1].kind == "stencil2d");
  CHECK(s[1].inputs == 2);
  CHECK(s[1].mean_runs_90 == doctest::Approx(1.5));
  CHECK(s[1].mean_runs_95 == doctest::Approx(2));
  CHECK(s[1].worst_runs_95 == 3);
  CHECK(s[1].first_within_95 == 1);
  CHECK(s[2].kind == "unknown");
}

TEST_CASE("a model worse on one kind is refused, however much better it is on the others") {
  const Dataset d = kinds();
  const std::vector<KindSummary> shipped =
      summarize_by_kind({group("jacobi", "a", {0.5, 0.8, 0.9, 1.0}),
                         group("gauss", "a", {0.6, 0.9, 1.0}), group("tmv", "a", {1.0})},
                        d);
  const std::vector<KindSummary> better_on_2d_worse_on_reductions =
      summarize_by_kind({group("jacobi", "a", {1.0}), group("gauss", "a", {1.0}),
                         group("tmv", "a", {0.1, 0.2, 0.3, 0.4, 1.0})},
                        d);
  const std::vector<std::string> refusals =
      ship_refusals(better_on_2d_worse_on_reductions, shipped);
  REQUIRE(refusals.size() == 2); // runs to 95% and the first pick, both of the reduction
  CHECK(refusals[0].find("reduction") == 0);
  CHECK(refusals[1].find("reduction") == 0);
  CHECK(refusals[1].find("first pick") != std::string::npos);

  // The same model against itself, and a model better everywhere, pass.
  CHECK(ship_refusals(shipped, shipped).empty());
  CHECK(ship_refusals(summarize_by_kind({group("jacobi", "a", {1.0}), group("gauss", "a", {1.0}),
                                         group("tmv", "a", {1.0})},
                                        d),
                      shipped)
            .empty());
}

TEST_CASE("the tolerance forgives half a run and the relative margin, not more") {
  const Dataset d = kinds();
  const auto summary = [&](double runs) {
    std::vector<double> curve(size_t(runs) - 1, 0.1);
    curve.push_back(1.0);
    return summarize_by_kind({group("jacobi", "a", curve)}, d);
  };
  CHECK(ship_refusals(summary(11), summary(10), {0.1}).empty());       // 10%: allowed
  CHECK_FALSE(ship_refusals(summary(12), summary(10), {0.1}).empty()); // 20%: refused
  CHECK(ship_refusals(summary(3), summary(3), {0.0}).empty());
  CHECK_FALSE(ship_refusals(summary(4), summary(3), {0.0}).empty()); // a whole run: refused
}

TEST_CASE("a kind the shipped model was judged on must be judged for the candidate") {
  const Dataset d = kinds();
  const auto shipped =
      summarize_by_kind({group("jacobi", "a", {1.0}), group("tmv", "a", {1.0})}, d);
  const auto candidate = summarize_by_kind({group("jacobi", "a", {1.0})}, d);
  const std::vector<std::string> refusals = ship_refusals(candidate, shipped);
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0].find("reduction: not judged") == 0);
}
