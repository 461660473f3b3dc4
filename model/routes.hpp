#pragma once
/// A model per kind of program, chosen inside the training data. A model trained on every kind
/// ranks reductions and products far better than one trained on 2D stencils only, and the 2D
/// stencils worse (docs/results.md, 2026-12-02): no single model passes the ship rule. Routes
/// keep the base model for every kind it was trained on and hand a kind it never saw to a
/// specialist (one setting trained on all the data) only where, on that kind's programs of the
/// training data, the specialist trained without each program ranked it better than the base. The
/// base is judged on the same programs, which it never saw either, so the choice uses only
/// held-out figures of the training data; the regression suite stays unseen for the ship rule.
#include "model/protocol.hpp"
#include "model/ship_rule.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace liftx::model {

/// What was decided for one kind of program in the training data.
struct RouteDecision {
  std::string kind;
  /// Not among the kinds asked for (RoutingOptions::only_kinds): it keeps the model that ranks it
  /// now, unjudged.
  bool kept = false;
  std::vector<std::string> programs; ///< the kind's programs in the training data
  /// The base model was trained on one of them: the kind stays with it, unjudged (its figures on
  /// programs it trained on would flatter it).
  bool base_trained = false;
  KindSummary base; ///< the base model on the kind's inputs (when judged)
  /// The specialist, each program held out of its training; or the route model, which never saw
  /// them (RoutingOptions::route_model).
  KindSummary specialist;
  bool routed = false;
  /// Why the specialist does not take the kind: the ship rule's lines against the base, or that
  /// it is no better on either figure. Empty when routed or not judged.
  std::vector<std::string> refusals;
};

struct RoutingOptions {
  Setting specialist; ///< what is trained for the routes (its kind, options and columns)
  /// A model trained elsewhere that takes the specialist's place: judged on each judged kind's
  /// programs as it is (it must not have trained on any of them, so they are unseen by it, as
  /// held out), and the route as it is where it wins. A bag of boosters retrained on the 2D
  /// stencils alone ranks 3D stencils differently from both the base and a specialist trained on
  /// every kind (docs/results.md, "The footprint column trained"); this lets the training data
  /// choose between them. No specialist is trained when it is set.
  std::optional<Model> route_model;
  ShipRule rule; ///< a route must pass it against the base on its kind, and be better
  /// Empty: every kind is judged afresh, from the base without its routes. Otherwise only these
  /// kinds are judged, each against the model that ranks it now (its route, or the base), and the
  /// base keeps every route it has: a kind can be given a route without retraining the others.
  std::vector<std::string> only_kinds;
  /// With only_kinds: judge those kinds as a full routing does, against the base without its
  /// routes, and drop their routes (each kind then goes to the specialist where it wins, else to
  /// the base). A route that trained on every program of its kind leaves no program to judge a
  /// new specialist against it; the base, which never saw the kind, still has them unseen, and
  /// the ship rule on the regression suite then says whether the result may replace what ships.
  bool against_base = false;
  int random_orders = 100;
  /// Told before each held-out program is trained for ("aniso3d (stencil3d), 3 of 13").
  std::function<void(const std::string& message)> progress;
};

struct Routing {
  std::vector<RouteDecision> decisions; ///< one per kind of the data, in kind-name order
  /// The base (without the routes it had, unless only some kinds were judged) with a route, the
  /// specialist trained on all of `data`, for every kind routed.
  Model model;
};

/// UserError when `base` (or the route that ranks a judged kind, or the route model) does not list
/// the programs it was trained on (provenance "programs", as `liftx train` writes it), `data` has
/// no successful measurement, a kind of `options.only_kinds` has no program in `data`, or the
/// route model has routes of its own, another profile than the base, or trained on a program of a
/// kind it is judged on, or `options.against_base` is set without `options.only_kinds`.
Routing choose_routes(const Model& base, const Dataset& data, const RoutingOptions& options);

} // namespace liftx::model
