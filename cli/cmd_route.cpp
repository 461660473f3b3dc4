// liftx route --base BASE.json --db DB [--add-db DB2 ...] [--add-route KIND ...] [setting options]
//   -o OUT.json
//   gives the kinds of program the base model never trained on to a specialist trained on all the
//   data, each only where the specialist, trained without each of the kind's programs, ranked
//   them better than the base (model/routes.hpp); writes the base with those routes. With
//   --add-route, only the kinds named are judged and the base keeps its other routes (with
//   --against-base, those kinds are judged against the base without their routes). With
//   --route-model, a model trained elsewhere (never on the judged kinds' programs) takes the
//   specialist's place: judged on them as it is, and the route as it is.
#include "cli/app.hpp"
#include "cli/model_options.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "model/routes.hpp"
#include "perfdb/db.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <memory>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

struct RouteOptions {
  std::string base;
  std::string output;
  std::vector<std::string> add_db;
  std::vector<std::string> add_route;
  std::string route_model;
  bool against_base = false;
  double tolerance = model::ShipRule{}.tolerance;
  bool quiet = false;
};

std::string figures(const model::KindSummary& k) {
  return fmt::format("{:.2f} | {} of {}", k.mean_runs_95, k.first_within_95, k.inputs);
}

/// `unseen_route`: the specialist is a route model trained elsewhere, judged as it is.
void print_decisions(const std::vector<model::RouteDecision>& decisions, bool unseen_route) {
  fmt::print("| kind | programs | base: mean runs to 95% | first picks within 95% | {}: mean "
             "runs to 95% | first picks within 95% | ranked by |\n"
             "|---|---|---|---|---|---|---|\n",
             unseen_route ? "route model, unseen" : "specialist, held out");
  for (const model::RouteDecision& d : decisions) {
    const std::string not_judged =
        d.base_trained || d.kept ? "- | - | - | -" : "- | - | - | - (programs of unknown kind)";
    // A kind of many programs (the synthetic stencils) is named by its first few.
    const size_t named = std::min<size_t>(d.programs.size(), 6);
    const std::string programs =
        fmt::format("{}", fmt::join(d.programs.begin(), d.programs.begin() + long(named), ", ")) +
        (named < d.programs.size() ? fmt::format(" and {} more", d.programs.size() - named) : "");
    fmt::print("| {} | {} | {} | {} |\n", d.kind, programs,
               d.kept || d.base_trained || d.kind == "unknown"
                   ? not_judged
                   : figures(d.base) + " | " + figures(d.specialist),
               d.routed         ? "specialist"
               : d.kept         ? "unchanged (not asked for)"
               : d.base_trained ? "base (trained on the kind)"
                                : "base");
  }
  for (const model::RouteDecision& d : decisions)
    for (const std::string& why : d.refusals)
      fmt::print("not routed: {}\n", why);
}

} // namespace

void add_route_command(CLI::App& app) {
  auto o = std::make_shared<DataOptions>();
  auto r = std::make_shared<RouteOptions>();
  CLI::App* cmd = app.add_subcommand(
      "route", "Give the kinds of program a model never trained on to a specialist where it ranks "
               "them better");
  add_data_options(cmd, *o);
  cmd->add_option("--base", r->base, "the model that keeps every kind it was trained on (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", r->output, "the model with its routes to write (JSON)")
      ->required();
  cmd->add_option("--add-db", r->add_db,
                  "also learn from DB (its only device) or DB@DEVICE_KEY (repeatable)");
  cmd->add_option("--add-route", r->add_route,
                  "judge only this kind of program (repeatable) and keep the base's other routes "
                  "as they are, instead of judging every kind afresh");
  cmd->add_option("--route-model", r->route_model,
                  "a model (JSON) that never trained on the judged kinds' programs, judged and "
                  "routed as it is instead of a specialist trained here (the setting options are "
                  "then unused)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--against-base", r->against_base,
                "judge the kinds of --add-route against the base without their routes, as a "
                "full routing does, and drop those routes (for a route that trained on every "
                "program of its kind, so none is unseen by it)");
  cmd->add_option("--tolerance", r->tolerance,
                  "the ship rule a route must pass against the base on its kind (default 0.1)")
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_flag("--quiet", r->quiet, "no progress lines (on stderr)");
  cmd->callback([o, r] {
    std::vector<fs::path> inputs{r->base,
                                 o->db.empty() ? perfdb::PerfDb::default_path() : fs::path(o->db)};
    for (const std::string& spec : r->add_db)
      inputs.emplace_back(spec.substr(0, spec.rfind('@')));
    if (!r->route_model.empty())
      inputs.emplace_back(r->route_model);
    refuse_overwriting_input(r->output, inputs, "--output");
    const model::Model base = model::Model::load(r->base);
    LIFTX_USER_CHECK(base.profile == o->profile,
                     "{} is a model for profile {}, the data is read for profile {} (--profile)",
                     r->base, base.profile, o->profile);
    perfdb::LoadedData loaded = load_data(*o);
    perfdb::add_databases(loaded, r->add_db, o->profile);
    model::RoutingOptions options;
    options.specialist.name = fmt::format("{} {}", o->kind, o->transform);
    options.specialist.kind = model::parse_kind(o->kind);
    options.specialist.train = o->train_options();
    options.specialist.features = o->columns(loaded.data.feature_names);
    options.rule.tolerance = r->tolerance;
    options.only_kinds = r->add_route;
    options.against_base = r->against_base;
    if (!r->route_model.empty())
      options.route_model = model::Model::load(r->route_model);
    const auto step = step_lines("route", r->quiet);
    if (step)
      options.progress = [step](const std::string& message) { step("training " + message); };
    const model::Routing routing = model::choose_routes(base, loaded.data, options);
    fmt::print(
        "base      {} ({}), trained on {} programs{}\n", r->base, model::to_string(base.kind()),
        base.provenance["programs"].size(),
        r->add_route.empty() ? ""
        : r->against_base
            ? fmt::format("; only {} judged, against the base without their routes",
                          fmt::join(r->add_route, ", "))
            : fmt::format("; its routes kept, only {} judged", fmt::join(r->add_route, ", ")));
    if (options.route_model)
      fmt::print("route     {} ({}), trained elsewhere on {} programs, none of a judged kind\n\n",
                 r->route_model, model::to_string(options.route_model->kind()),
                 options.route_model->provenance["programs"].size());
    else
      fmt::print("specialist {} on {} samples, each judged kind's programs held out in turn\n\n",
                 options.specialist.name, loaded.data.samples.size());
    print_decisions(routing.decisions, options.route_model.has_value());
    routing.model.save(r->output);
    std::vector<std::string> routed;
    for (const auto& [kind, route] : routing.model.routes())
      routed.push_back(kind);
    fmt::print("\nwritten   {} ({})\n", r->output,
               routed.empty() ? "the base alone: no kind routed"
                              : fmt::format("routes for {}", fmt::join(routed, ", ")));
  });
}

} // namespace liftx::cli
