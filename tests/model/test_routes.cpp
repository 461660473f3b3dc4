// Per-kind routes (Model::for_kind, model/routes.hpp): the model file keeps them, and a kind the
// base never trained on goes to the specialist only where the specialist, trained without each of
// its programs, ranked them better.
#include "model/routes.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <random>

using namespace liftx;
using namespace liftx::model;

namespace {

const std::vector<std::string> kColumns = {"x", "flag"};

/// 2 inputs x 24 variants of `program`: feature x in [0, 1) and a constant `flag`; the variants
/// get faster with x when `faster_with_x`, slower otherwise.
void add_program(Dataset& data, const std::string& program, double flag, bool faster_with_x,
                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  for (const char* input : {"{\"N\":64}", "{\"N\":128}"})
    for (int v = 0; v < 24; ++v) {
      Sample s;
      s.program = program;
      s.input = input;
      const double x = uniform(rng);
      s.features = {x, flag};
      s.time_ms = faster_with_x ? 1 / (0.2 + x) : 1 / (1.2 - x);
      s.cost_ms = *s.time_ms;
      data.samples.push_back(std::move(s));
    }
}

/// Stencils (flag 0) get faster with x, reductions (flag 1) slower; one multi-output program has
/// a reduction's flag but a stencil's trend, so a model that learnt the flag misranks it; one
/// program has no known kind.
Dataset kinds_data() {
  Dataset data;
  data.feature_names = kColumns;
  uint64_t seed = 1;
  for (const char* p : {"s1", "s2", "s3"}) {
    add_program(data, p, 0, true, seed++);
    data.program_kinds[p] = "stencil2d";
  }
  for (const char* p : {"r1", "r2", "r3"}) {
    add_program(data, p, 1, false, seed++);
    data.program_kinds[p] = "reduction";
  }
  add_program(data, "m1", 1, true, seed++);
  data.program_kinds["m1"] = "multi_output";
  add_program(data, "u1", 0, true, seed++);
  return data;
}

Setting tree_setting() {
  Setting s;
  s.name = "tree";
  s.kind = Kind::tree;
  s.train.min_leaf = 2;
  return s;
}

/// The rows of the programs whose names start with `letter` ('s': the stencils).
std::vector<size_t> rows_of(const Dataset& data, char letter) {
  std::vector<size_t> rows;
  for (size_t r = 0; r < data.samples.size(); ++r)
    if (data.samples[r].program[0] == letter)
      rows.push_back(r);
  return rows;
}

/// A tree trained on the stencils only, listing them as its training programs.
Model stencil_base(const Dataset& data) {
  Model base = train_on(data, rows_of(data, 's'), tree_setting());
  base.profile = "nvidia";
  base.provenance = {{"programs", {"s1", "s2", "s3"}}};
  return base;
}

/// A tree trained on the programs whose names start with `letter`, listing `programs` as its
/// training programs: a route that trained on every program of its kind.
Model route_trained_on(const Dataset& data, char letter, const std::vector<std::string>& programs) {
  Model route = train_on(data, rows_of(data, letter), tree_setting());
  route.profile = "nvidia";
  route.provenance = {{"programs", programs}};
  return route;
}

const RouteDecision& decision(const Routing& routing, const std::string& kind) {
  for (const RouteDecision& d : routing.decisions)
    if (d.kind == kind)
      return d;
  FAIL("no decision for " << kind);
  return routing.decisions.front(); // not reached: FAIL throws
}

} // namespace

TEST_CASE("a kind the base never saw goes to the specialist only where it ranks it better") {
  const Dataset data = kinds_data();
  const Model base = stencil_base(data);
  RoutingOptions options;
  options.specialist = tree_setting();
  std::vector<std::string> told;
  options.progress = [&](const std::string& message) { told.push_back(message); };
  const Routing routing = choose_routes(base, data, options);

  // Held-out training for each program of an unseen kind (r1-r3, m1), then the final specialist.
  REQUIRE(told.size() == 5);
  CHECK(told.front() == "m1 (multi_output), 1 of 4");
  CHECK(told.back() == "the specialist on all the data");

  const RouteDecision& stencils = decision(routing, "stencil2d");
  CHECK(stencils.base_trained);
  CHECK_FALSE(stencils.routed);
  CHECK(stencils.refusals.empty());

  // The base ranks reductions backwards; the specialist learnt the flag from the other two.
  const RouteDecision& reductions = decision(routing, "reduction");
  CHECK_FALSE(reductions.base_trained);
  CHECK(reductions.programs == std::vector<std::string>{"r1", "r2", "r3"});
  CHECK(reductions.base.inputs == 6);
  CHECK(reductions.specialist.inputs == 6);
  CHECK(reductions.specialist.mean_runs_95 < reductions.base.mean_runs_95);
  CHECK(reductions.routed);

  // The flag misleads the specialist on m1, which the base ranks by x alone.
  const RouteDecision& multi = decision(routing, "multi_output");
  CHECK(multi.specialist.mean_runs_95 > multi.base.mean_runs_95);
  CHECK_FALSE(multi.routed);
  REQUIRE_FALSE(multi.refusals.empty());
  CHECK(multi.refusals.front().rfind("multi_output: ", 0) == 0);

  const RouteDecision& unknown = decision(routing, "unknown");
  CHECK_FALSE(unknown.routed);
  CHECK(unknown.refusals.empty());

  REQUIRE(routing.model.routes().size() == 1);
  CHECK(&routing.model.for_kind("stencil2d") == &routing.model);
  CHECK(&routing.model.for_kind("multi_output") == &routing.model);
  const Model& route = routing.model.for_kind("reduction");
  CHECK(&route != &routing.model);
  CHECK(route.profile == "nvidia");
  CHECK(route.provenance["programs"].size() == 8);

  // Judged as explore would rank (each kind by its route), the routed model is the base on the
  // stencils and better on the reductions.
  const std::vector<KindSummary> with_routes =
      summarize_by_kind(judge_all(routing.model, data, 10), data);
  const std::vector<KindSummary> without = summarize_by_kind(judge_all(base, data, 10), data);
  REQUIRE(with_routes.size() == without.size());
  for (size_t k = 0; k < with_routes.size(); ++k) {
    CAPTURE(with_routes[k].kind);
    if (with_routes[k].kind == "reduction")
      CHECK(with_routes[k].mean_runs_95 < without[k].mean_runs_95);
    else
      CHECK(with_routes[k].mean_runs_95 == without[k].mean_runs_95);
  }

  // Routing a routed model again starts from its base: the same decisions.
  const Routing again = choose_routes(routing.model, data, options);
  CHECK(again.model.routes().size() == 1);
  CHECK(again.model.for_kind("reduction").to_json() == route.to_json());
}

TEST_CASE("only the kinds asked for are judged, each against what ranks it now; the other routes "
          "are kept") {
  const Dataset data = kinds_data();
  Model base = stencil_base(data);
  const Model multi_route = route_trained_on(data, 'm', {"m1"});
  base.set_route({"multi_output"}, multi_route);

  RoutingOptions options;
  options.specialist = tree_setting();
  options.only_kinds = {"reduction"};
  std::vector<std::string> told;
  options.progress = [&](const std::string& message) { told.push_back(message); };
  const Routing routing = choose_routes(base, data, options);

  // Only the reductions were trained for, held out in turn.
  REQUIRE(told.size() == 4);
  CHECK(told.front() == "r1 (reduction), 1 of 3");
  const RouteDecision& reductions = decision(routing, "reduction");
  CHECK_FALSE(reductions.kept);
  CHECK(reductions.routed);
  for (const char* kind : {"multi_output", "stencil2d", "unknown"}) {
    CAPTURE(kind);
    CHECK(decision(routing, kind).kept);
    CHECK_FALSE(decision(routing, kind).routed);
    CHECK(decision(routing, kind).base.inputs == 0);
  }

  // The base and its route for multi-output programs are as they were; the reductions have theirs.
  REQUIRE(routing.model.routes().size() == 2);
  CHECK(routing.model.without_routes().to_json() == base.without_routes().to_json());
  CHECK(routing.model.for_kind("multi_output").to_json() == multi_route.to_json());
  CHECK(&routing.model.for_kind("reduction") != &routing.model);
  CHECK(routing.model.for_kind("reduction").provenance["programs"].size() == 8);

  // Asked for, a kind is judged against the route that ranks it, which trained on its program:
  // it stays unjudged and keeps that route.
  options.only_kinds = {"multi_output"};
  const Routing multi = choose_routes(base, data, options);
  CHECK(decision(multi, "multi_output").base_trained);
  CHECK_FALSE(decision(multi, "multi_output").routed);
  CHECK(multi.model.to_json() == base.to_json());

  // Neither a kind the data has no program of nor the programs of no known kind can be asked for.
  options.only_kinds = {"product"};
  CHECK_THROWS_WITH_AS(choose_routes(base, data, options),
                       doctest::Contains("no program of kind product in the data"), UserError);
  options.only_kinds = {"unknown"};
  CHECK_THROWS_WITH_AS(choose_routes(base, data, options),
                       doctest::Contains("programs of unknown kind (stored without their source) "
                                         "cannot be routed"),
                       UserError);
}

TEST_CASE("judged against the base, a kind whose route trained on its programs is judged afresh "
          "and its route dropped") {
  const Dataset data = kinds_data();
  Model base = stencil_base(data);
  // Routes that trained on every program of their kind: none is unseen by them.
  const Model reduction_route = route_trained_on(data, 'r', {"r1", "r2", "r3"});
  base.set_route({"reduction"}, reduction_route);
  const Model multi_route = route_trained_on(data, 'm', {"m1"});
  base.set_route({"multi_output"}, multi_route);

  RoutingOptions options;
  options.specialist = tree_setting();
  options.only_kinds = {"reduction"};
  // Against its route, the kind cannot be judged: it keeps the route.
  const Routing kept = choose_routes(base, data, options);
  CHECK(decision(kept, "reduction").base_trained);
  CHECK(kept.model.to_json() == base.to_json());

  // Against the base, which never saw a reduction, it is judged held out and routed anew.
  options.against_base = true;
  const Routing afresh = choose_routes(base, data, options);
  const RouteDecision& reductions = decision(afresh, "reduction");
  CHECK_FALSE(reductions.base_trained);
  CHECK(reductions.base.inputs == 6);
  CHECK(reductions.routed);
  CHECK(afresh.model.for_kind("reduction").provenance["programs"].size() == 8);
  CHECK(afresh.model.for_kind("multi_output").to_json() == multi_route.to_json());
  CHECK(afresh.model.without_routes().to_json() == base.without_routes().to_json());

  // A kind whose specialist loses to the base loses its route: the base ranks it, as in a full
  // routing.
  options.only_kinds = {"multi_output"};
  const Routing dropped = choose_routes(base, data, options);
  CHECK_FALSE(decision(dropped, "multi_output").routed);
  CHECK(&dropped.model.for_kind("multi_output") == &dropped.model);
  CHECK(dropped.model.for_kind("reduction").to_json() == reduction_route.to_json());

  options.only_kinds.clear();
  CHECK_THROWS_WITH_AS(choose_routes(base, data, options),
                       doctest::Contains("judging against the base alone needs the kinds"),
                       UserError);
}

TEST_CASE("routes need to know what the base trained on") {
  const Dataset data = kinds_data();
  Model base = stencil_base(data);
  base.provenance = nlohmann::json::object();
  RoutingOptions options;
  options.specialist = tree_setting();
  CHECK_THROWS_WITH_AS(choose_routes(base, data, options),
                       doctest::Contains("does not list the programs it was trained on"),
                       UserError);
}

TEST_CASE("a model file keeps its routes; nested routes and another profile are refused") {
  const Dataset data = kinds_data();
  Model base = stencil_base(data);
  Model route = train_on(data, rows_of(data, 'r'), tree_setting());
  route.profile = "nvidia";
  base.set_route({"reduction", "product"}, route);

  const nlohmann::json saved = base.to_json();
  REQUIRE(saved.contains("routes"));
  // One model for both kinds, kept once.
  CHECK(saved["route_models"].size() == 1);
  CHECK(saved["routes"] == nlohmann::json{{"product", 0}, {"reduction", 0}});
  const Model loaded = Model::from_json(saved, "routed.json");
  REQUIRE(loaded.routes().size() == 2);
  CHECK(&loaded.for_kind("reduction") == &loaded.for_kind("product"));
  CHECK(loaded.for_kind("reduction").to_json() == route.to_json());
  CHECK(&loaded.for_kind("stencil2d") == &loaded);
  CHECK_FALSE(loaded.without_routes().to_json().contains("routes"));
  CHECK(loaded.to_json() == saved);

  nlohmann::json nested = saved;
  nested["route_models"][0]["routes"] = saved["routes"];
  nested["route_models"][0]["route_models"] = saved["route_models"];
  CHECK_THROWS_WITH_AS(
      Model::from_json(nested, "nested.json"),
      doctest::Contains("nested.json (route model 0): a route has routes of its own"), UserError);
  nlohmann::json other_profile = saved;
  other_profile["route_models"][0]["profile"] = "cpu";
  CHECK_THROWS_WITH_AS(
      Model::from_json(other_profile, "cpu.json"),
      doctest::Contains("cpu.json (route model 0): a model for profile cpu in a model for profile "
                        "nvidia"),
      UserError);
  nlohmann::json out_of_range = saved;
  out_of_range["routes"]["product"] = 1;
  CHECK_THROWS_WITH_AS(Model::from_json(out_of_range, "range.json"),
                       doctest::Contains("range.json: the route of product names model 1 of 1"),
                       UserError);
  nlohmann::json not_object = saved;
  not_object["routes"] = {1, 2};
  CHECK_THROWS_AS(Model::from_json(not_object, "list.json"), UserError);
  nlohmann::json no_models = saved;
  no_models.erase("route_models");
  CHECK_THROWS_AS(Model::from_json(no_models, "none.json"), UserError);

  Model cpu_route = route;
  cpu_route.profile = "cpu";
  CHECK_THROWS_AS(base.set_route({"product"}, cpu_route), UserError);
  CHECK_THROWS_AS(base.set_route({"product"}, loaded), UserError); // it has routes
}

TEST_CASE("a route model trained elsewhere is judged as it is and routed only where it wins") {
  const Dataset data = kinds_data();
  const Model base = stencil_base(data);
  // Trained on a program of its own (a reduction's flag and trend) that the data does not hold.
  Dataset elsewhere;
  elsewhere.feature_names = kColumns;
  add_program(elsewhere, "t1", 1, false, 99);
  std::vector<size_t> all(elsewhere.samples.size());
  for (size_t r = 0; r < all.size(); ++r)
    all[r] = r;
  Model route_model = train_on(elsewhere, all, tree_setting());
  route_model.profile = "nvidia";
  route_model.provenance = {{"programs", {"t1"}}};

  RoutingOptions options;
  options.specialist = tree_setting();
  options.route_model = route_model;
  std::vector<std::string> told;
  options.progress = [&](const std::string& message) { told.push_back(message); };
  const Routing routing = choose_routes(base, data, options);
  CHECK(told.empty()); // nothing trained

  // It ranks the reductions as they are; on m1 (a reduction's flag, a stencil's trend) it is
  // backwards, so the base keeps that kind.
  const RouteDecision& reductions = decision(routing, "reduction");
  CHECK(reductions.specialist.inputs == 6);
  CHECK(reductions.specialist.mean_runs_95 < reductions.base.mean_runs_95);
  CHECK(reductions.routed);
  const RouteDecision& multi = decision(routing, "multi_output");
  CHECK_FALSE(multi.routed);
  CHECK_FALSE(multi.refusals.empty());
  REQUIRE(routing.model.routes().size() == 1);
  CHECK(routing.model.for_kind("reduction").to_json() == route_model.to_json());
  CHECK(&routing.model.for_kind("multi_output") == &routing.model);

  // Refused: a route model that trained on a judged kind's program, has routes of its own, is
  // for another profile, or does not say what it trained on.
  Model seen = route_model;
  seen.provenance = {{"programs", {"t1", "r2"}}};
  options.route_model = seen;
  CHECK_THROWS_WITH_AS(choose_routes(base, data, options),
                       doctest::Contains("the route model trained on r2 (kind reduction)"),
                       UserError);
  // Judging only the multi-output kind, a route model that saw the reductions is fine.
  options.only_kinds = {"multi_output"};
  CHECK_NOTHROW(choose_routes(base, data, options));
  options.only_kinds.clear();
  Model routed = route_model;
  routed.set_route({"product"}, route_model);
  options.route_model = routed;
  CHECK_THROWS_WITH_AS(choose_routes(base, data, options),
                       doctest::Contains("the route model has routes of its own"), UserError);
  Model cpu = route_model;
  cpu.profile = "cpu";
  options.route_model = cpu;
  CHECK_THROWS_WITH_AS(choose_routes(base, data, options),
                       doctest::Contains("the route model is for profile cpu, the base for "
                                         "profile nvidia"),
                       UserError);
  Model unlisted = route_model;
  unlisted.provenance = nlohmann::json::object();
  options.route_model = unlisted;
  CHECK_THROWS_WITH_AS(choose_routes(base, data, options),
                       doctest::Contains("the route model does not list the programs"), UserError);
}
