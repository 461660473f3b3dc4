#include "model/routes.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace liftx::model {

namespace {

/// `which` names the model in the error ("the base model").
std::set<std::string> trained_programs(const Model& model, const std::string& which) {
  const nlohmann::json& provenance = model.provenance;
  LIFTX_USER_CHECK(provenance.is_object() && provenance.contains("programs") &&
                       provenance["programs"].is_array(),
                   "{} does not list the programs it was trained on (provenance \"programs\"), "
                   "so no kind can be told unseen by it",
                   which);
  std::set<std::string> out;
  for (const nlohmann::json& name : provenance["programs"])
    if (name.is_string())
      out.insert(std::string(stencil_of(name.get<std::string>())));
  return out;
}

/// Why the specialist may not take a kind from the base: the ship rule's refusals against the
/// base's figures, or, when it passes, that it is better on neither mean runs to 95% nor first
/// picks within 95%. Empty when it may.
std::vector<std::string> route_refusals(const KindSummary& specialist, const KindSummary& base,
                                        const ShipRule& rule) {
  std::vector<std::string> refusals = ship_refusals({specialist}, {base}, rule);
  if (refusals.empty() && specialist.mean_runs_95 >= base.mean_runs_95 &&
      specialist.first_within_95 <= base.first_within_95)
    refusals.push_back(fmt::format("{}: no better than the base (mean runs to 95% {:.2f} against "
                                   "{:.2f}, first picks within 95% {} against {})",
                                   base.kind, specialist.mean_runs_95, base.mean_runs_95,
                                   specialist.first_within_95, base.first_within_95));
  return refusals;
}

} // namespace

Routing choose_routes(const Model& base_with_routes, const Dataset& data,
                      const RoutingOptions& options) {
  const bool some_kinds = !options.only_kinds.empty();
  LIFTX_USER_CHECK(some_kinds || !options.against_base,
                   "judging against the base alone needs the kinds to judge: a full routing "
                   "judges every kind against it already");
  // What judged kinds are measured against, and what keeps the kinds not routed: with
  // against_base, the judged kinds' routes are dropped, as a full routing drops all.
  Model base = some_kinds ? base_with_routes : base_with_routes.without_routes();
  if (options.against_base)
    base.drop_routes(options.only_kinds);
  std::map<std::string, std::set<std::string>> programs_by_kind;
  std::map<std::string, std::vector<size_t>> rows_by_program;
  for (size_t r = 0; r < data.samples.size(); ++r) {
    const std::string program(stencil_of(data.samples[r].program));
    programs_by_kind[kind_of(data, program)].insert(program);
    rows_by_program[program].push_back(r);
  }
  std::vector<std::string> kinds_in_data;
  for (const auto& [kind, programs] : programs_by_kind)
    kinds_in_data.push_back(kind);
  for (const std::string& kind : options.only_kinds) {
    LIFTX_USER_CHECK(kind != "unknown",
                     "programs of unknown kind (stored without their source) cannot be routed");
    LIFTX_USER_CHECK(programs_by_kind.count(kind) > 0,
                     "no program of kind {} in the data, so it cannot be routed (its kinds: {})",
                     kind, fmt::join(kinds_in_data, ", "));
  }

  Routing routing;
  size_t to_train = 0;
  for (const auto& [kind, programs] : programs_by_kind) {
    RouteDecision d;
    d.kind = kind;
    d.programs.assign(programs.begin(), programs.end());
    d.kept = some_kinds && std::find(options.only_kinds.begin(), options.only_kinds.end(), kind) ==
                               options.only_kinds.end();
    if (!d.kept) {
      // Judged against what ranks the kind now, which must not have trained on its programs.
      const std::set<std::string> seen = trained_programs(base.for_kind(kind), "the base model");
      for (const std::string& p : programs)
        d.base_trained = d.base_trained || seen.count(p) > 0;
    }
    if (!d.kept && !d.base_trained && kind != "unknown")
      to_train += programs.size();
    routing.decisions.push_back(std::move(d));
  }
  if (options.route_model) {
    const Model& candidate = *options.route_model;
    LIFTX_USER_CHECK(candidate.routes().empty(),
                     "the route model has routes of its own; a route cannot have routes");
    LIFTX_USER_CHECK(candidate.profile == base.profile,
                     "the route model is for profile {}, the base for profile {}",
                     candidate.profile, base.profile);
    const std::set<std::string> seen = trained_programs(candidate, "the route model");
    for (const RouteDecision& d : routing.decisions) {
      if (d.kept || d.base_trained || d.kind == "unknown")
        continue;
      for (const std::string& p : d.programs)
        LIFTX_USER_CHECK(seen.count(p) == 0,
                         "the route model trained on {} (kind {}), so its figures on that kind "
                         "would flatter it; train it without the kind's programs",
                         p, d.kind);
    }
  }

  size_t trained = 0;
  for (RouteDecision& d : routing.decisions) {
    // A kind of unknown programs (stored without their source) cannot be routed to.
    if (d.kept || d.base_trained || d.kind == "unknown")
      continue;
    const Model& ranker = base.for_kind(d.kind);
    std::vector<GroupResult> base_groups;
    std::vector<GroupResult> specialist_groups;
    for (const std::string& program : d.programs) {
      const std::vector<size_t>& held_out = rows_by_program.at(program);
      if (options.route_model) {
        for (GroupResult& g :
             judge(*options.route_model, data, held_out, options.random_orders, 1, 0.95))
          specialist_groups.push_back(std::move(g));
      } else {
        if (options.progress)
          options.progress(fmt::format("{} ({}), {} of {}", program, d.kind, ++trained, to_train));
        std::vector<size_t> rest;
        for (size_t r = 0; r < data.samples.size(); ++r)
          if (stencil_of(data.samples[r].program) != program)
            rest.push_back(r);
        const Model specialist = train_on(data, rest, options.specialist);
        for (GroupResult& g : judge(specialist, data, held_out, options.random_orders, 1, 0.95))
          specialist_groups.push_back(std::move(g));
      }
      for (GroupResult& g : judge(ranker, data, held_out, options.random_orders, 1, 0.95))
        base_groups.push_back(std::move(g));
    }
    d.base = summarize_by_kind(base_groups, data).at(0);
    d.specialist = summarize_by_kind(specialist_groups, data).at(0);
    d.refusals = route_refusals(d.specialist, d.base, options.rule);
    d.routed = d.refusals.empty();
  }

  routing.model = base;
  std::vector<std::string> routed_kinds;
  for (const RouteDecision& d : routing.decisions)
    if (d.routed)
      routed_kinds.push_back(d.kind);
  if (routed_kinds.empty())
    return routing;
  if (options.route_model) {
    routing.model.set_route(routed_kinds, *options.route_model);
    return routing;
  }
  if (options.progress)
    options.progress("the specialist on all the data");
  std::vector<size_t> all(data.samples.size());
  for (size_t r = 0; r < all.size(); ++r)
    all[r] = r;
  Model specialist = train_on(data, all, options.specialist);
  specialist.profile = base.profile;
  std::set<std::string> programs;
  int successful = 0;
  for (const Sample& s : data.samples) {
    programs.emplace(stencil_of(s.program));
    successful += s.time_ms.has_value();
  }
  specialist.provenance = {{"programs", std::vector<std::string>(programs.begin(), programs.end())},
                           {"samples", successful},
                           {"setting", options.specialist.name}};
  routing.model.set_route(routed_kinds, std::move(specialist));
  return routing;
}

} // namespace liftx::model
