// Our compiled trees (model/tree_ensemble.hpp) against XGBoost's own predictor: margins must be
// bit-for-bit equal (compared with memcmp, never a tolerance), for the shipped models and models
// trained here; malformed tree JSON is a UserError.
#include "model/boosted.hpp"
#include "model/model.hpp"
#include "model/tree_ensemble.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <thread>
#include <utility>

using namespace liftx;
using namespace liftx::model;
using nlohmann::json;

namespace {

/// The booster stored in a model file (the bytes Model::load hands XGBoost).
xgb::Booster shipped_booster(const std::string& name) {
  const std::string path = std::string(LIFTX_SOURCE_DIR) + "/model/data/" + name;
  std::ifstream in(path);
  REQUIRE(in);
  const json file = json::parse(in);
  REQUIRE(file.at("kind") == "boosted");
  return xgb::Booster::from_ubj(
      xgb::base64_decode(file.at("boosted").at("model").get<std::string>()), path);
}

json model_json(const xgb::Booster& booster) {
  return json::from_ubjson(booster.to_ubj());
}

json& trees_of(json& model) {
  return model["learner"]["gradient_booster"]["model"]["trees"];
}
const json& trees_of(const json& model) {
  return model.at("learner").at("gradient_booster").at("model").at("trees");
}

/// Every split (feature, threshold) of the model.
std::vector<std::pair<int, float>> splits(const json& model) {
  std::vector<std::pair<int, float>> out;
  for (const json& tree : trees_of(model))
    for (size_t i = 0; i < tree["left_children"].size(); ++i)
      if (tree["left_children"][i].get<int>() != -1)
        out.emplace_back(tree["split_indices"][i].get<int>(),
                         static_cast<float>(tree["split_conditions"][i].get<double>()));
  return out;
}

/// Rows that probe every way a value can meet a split: Gaussian z values (some scaled far out),
/// thresholds exactly, their float neighbours, doubles that round to a threshold as floats, and
/// missing values (NaN). No infinities: XGBoost refuses them.
Matrix probing_rows(const json& model, int features, Eigen::Index count, uint64_t seed) {
  const auto thresholds = splits(model);
  std::vector<std::vector<float>> by_feature(static_cast<size_t>(features));
  for (const auto& [feature, threshold] : thresholds)
    by_feature[static_cast<size_t>(feature)].push_back(threshold);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gaussian;
  std::uniform_int_distribution<int> kind(0, 19);
  Matrix rows(count, features);
  for (Eigen::Index r = 0; r < count; ++r)
    for (int f = 0; f < features; ++f) {
      const auto& own = by_feature[static_cast<size_t>(f)];
      const int k = kind(rng);
      double value = gaussian(rng);
      if (k == 0)
        value = std::numeric_limits<double>::quiet_NaN();
      else if (k == 1)
        value *= 1e3;
      else if (k == 2)
        value *= 1e37; // near float's largest, still finite
      else if (k >= 3 && k <= 10 && !own.empty()) {
        const float t = own[std::uniform_int_distribution<size_t>(0, own.size() - 1)(rng)];
        const float inf = std::numeric_limits<float>::infinity();
        switch (k) {
        case 3:
        case 4:
          value = t;
          break;
        case 5:
          value = std::nextafter(t, inf);
          break;
        case 6:
          value = std::nextafter(t, -inf);
          break;
        case 7: // rounds to t as a float
          value = std::nextafter(double(t), 1e300);
          break;
        case 8:
          value = std::nextafter(double(t), -1e300);
          break;
        default: // halfway between t and its float neighbour: rounds to even
          value = (double(t) + double(std::nextafter(t, inf))) / 2;
        }
      }
      rows(r, f) = value;
    }
  // Whole rows missing, and rows of zeros.
  rows.row(0).setConstant(std::numeric_limits<double>::quiet_NaN());
  rows.row(1).setZero();
  return rows;
}

/// Rows as a variant space gives them: within each block of 64 rows (the ensemble's unit of
/// work) a feature is the same in every row, the same within each group of 8, or varies; the
/// values probe the splits as probing_rows() does, without missing values (with them, no walk is
/// shared).
Matrix blocked_rows(const json& model, int features, Eigen::Index count, uint64_t seed) {
  Matrix rows = probing_rows(model, features, count, seed);
  rows = rows.unaryExpr([](double v) { return std::isnan(v) ? 0.25 : v; });
  std::mt19937_64 rng(seed + 1);
  std::uniform_int_distribution<int> mode(0, 3);
  for (Eigen::Index block = 0; block < count; block += 64)
    for (int f = 0; f < features; ++f) {
      const int m = mode(rng);
      const Eigen::Index span = m <= 1 ? 64 : m == 2 ? 8 : 1; // 64: the block, 8: a group
      for (Eigen::Index r = block; r < std::min(count, block + 64); ++r)
        rows(r, f) = rows(r - (r - block) % span, f);
    }
  return rows;
}

/// How many margins differ from XGBoost's in any bit.
size_t differing(const std::vector<double>& ours, const std::vector<double>& xgboost) {
  REQUIRE(ours.size() == xgboost.size());
  size_t out = 0;
  for (size_t i = 0; i < ours.size(); ++i)
    out += std::memcmp(&ours[i], &xgboost[i], sizeof(double)) != 0;
  return out;
}

/// A leaf's value is stored in split_conditions; in these trees it equals its base weight.
void check_leaves_are_base_weights(const json& model) {
  size_t leaves = 0, equal = 0;
  for (const json& tree : trees_of(model))
    for (size_t i = 0; i < tree["left_children"].size(); ++i)
      if (tree["left_children"][i].get<int>() == -1) {
        ++leaves;
        equal += tree["split_conditions"][i].get<double>() == tree["base_weights"][i].get<double>();
      }
  CHECK(leaves > 0);
  CHECK(equal == leaves);
}

void check_identical(const xgb::Booster& booster, Eigen::Index count, uint64_t seed) {
  const json model = model_json(booster);
  const Matrix rows = probing_rows(model, booster.features(), count, seed);
  const std::vector<double> xgboost = booster.predict_margin_xgboost(rows);
  const std::vector<double> ours = booster.predict_margin(rows);
  CHECK(differing(ours, xgboost) == 0);
  // Rows whose blocks and groups share features, so that walks are shared.
  const Matrix blocked = blocked_rows(model, booster.features(), count, seed + 7);
  CHECK(differing(booster.predict_margin(blocked), booster.predict_margin_xgboost(blocked)) == 0);
  // Chunks that are not multiples of the block, and a single row.
  for (Eigen::Index size : {Eigen::Index(1), Eigen::Index(63), Eigen::Index(65)}) {
    CAPTURE(size);
    const std::vector<double> part = booster.predict_margin(rows.topRows(size));
    CHECK(differing(part, std::vector<double>(xgboost.begin(), xgboost.begin() + size)) == 0);
  }
  CHECK(booster.predict_margin(rows.topRows(0)).empty());
}

/// Features uniform in [-2, 2], a tenth missing, and a throughput that depends on two of them.
struct Data {
  Matrix x;
  Vector y;
};

Data synthetic(int n, int features, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  Data d{Matrix(n, features), Vector(n)};
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < features; ++c)
      d.x(i, c) = u(rng) < -1.6 ? std::numeric_limits<double>::quiet_NaN() : u(rng);
    const double a = std::isnan(d.x(i, 0)) ? 0.5 : d.x(i, 0);
    const double b = std::isnan(d.x(i, 1)) ? -1 : d.x(i, 1);
    d.y[i] = -(a * a + (b > 0 ? std::sin(2 * b) : 0) + 1);
  }
  return d;
}

xgb::Booster trained(Objective objective, const Data& d, double base_score, int depth = 6) {
  TrainOptions o;
  o.trees = 60;
  o.learning_rate = 0.3;
  o.boost_depth = depth;
  o.threads = 1; // OpenMP's barriers crawl on a loaded 2-core machine
  o.objective = objective;
  xgb::DMatrix data(d.x);
  data.set_labels(d.y);
  if (objective == Objective::pairwise)
    data.set_group_sizes(std::vector<unsigned>(10, static_cast<unsigned>(d.x.rows() / 10)));
  return xgb::Booster::train(data, o, base_score);
}

/// A small valid model to break (60 trees over 3 features).
json small_model() {
  static const json model = model_json(trained(Objective::regression, synthetic(400, 3, 9), 0.0));
  return model;
}

void check_rejected(const json& model, const char* expected) {
  CAPTURE(expected);
  CHECK_THROWS_WITH_AS(TreeEnsemble::from_xgboost_json(model), doctest::Contains(expected),
                       UserError);
}

/// margins_reaching against margins() on `rows`, with floors chosen per block of 64 rows (every
/// row far above its margin, just above it, at it, an ulp below or above it, far below it, none
/// (-infinity), a mix of these per row, or far above in some groups of 8 and below in others).
/// A row whose margin reaches its floor must get margins()'s value bit for bit; any other row
/// margins()'s value or -infinity. Returns how many rows were left unfinished.
size_t check_reaching(const TreeEnsemble& ensemble, const Matrix& rows, uint64_t seed) {
  const std::vector<double> exact = ensemble.margins(rows);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, 7);
  const double inf = std::numeric_limits<double>::infinity();
  auto floor_of = [&](int mode, double margin) {
    switch (mode) {
    case 0:
      return margin + 100;
    case 1:
      return margin + 0.05;
    case 2:
      return margin;
    case 3:
      return std::nextafter(margin, -inf);
    case 4:
      return std::nextafter(margin, inf);
    case 5:
      return margin - 1;
    default:
      return -inf;
    }
  };
  std::vector<double> floors(exact.size());
  for (size_t block = 0; block < floors.size(); block += 64) {
    const int mode = pick(rng);
    for (size_t r = block; r < std::min(floors.size(), block + 64); ++r) {
      int row_mode = mode;
      if (mode == 7) // a mix, row by row
        row_mode = pick(rng) % 7;
      if (mode == 6) // far above in the even groups of 8, far below in the odd ones
        row_mode = (r - block) / 8 % 2 == 0 ? 0 : 5;
      floors[r] = floor_of(row_mode, exact[r]);
    }
  }
  const std::vector<double> reaching = ensemble.margins_reaching(rows, floors);
  REQUIRE(reaching.size() == exact.size());
  size_t unfinished = 0, wrong = 0;
  for (size_t r = 0; r < exact.size(); ++r) {
    const bool same = std::memcmp(&reaching[r], &exact[r], sizeof(double)) == 0;
    if (same)
      continue;
    if (exact[r] >= floors[r] || reaching[r] != -inf)
      ++wrong;
    else
      ++unfinished;
  }
  CHECK(wrong == 0);
  return unfinished;
}

} // namespace

TEST_CASE("tree ensemble: margins reaching a floor are exact; rows below it may stop early") {
  SUBCASE("the shipped model (complete trees)") {
    const xgb::Booster booster = shipped_booster("nvidia-model.json");
    const json model = model_json(booster);
    // Blocks of rows sharing features, as a variant space gives them: their feature ranges are
    // narrow, and rows far below their floors stop.
    CHECK(check_reaching(booster.ensemble(), blocked_rows(model, booster.features(), 6400, 21),
                         31) > 0);
    // With missing values (the global bound) and rows that share nothing.
    CHECK(check_reaching(booster.ensemble(), probing_rows(model, booster.features(), 6400, 22),
                         32) > 0);
    // Chunks that are not multiples of the block.
    const Matrix rows = blocked_rows(model, booster.features(), 100, 23);
    check_reaching(booster.ensemble(), rows.topRows(63), 33);
    check_reaching(booster.ensemble(), rows.topRows(65), 34);
    CHECK(booster.ensemble().margins_reaching(rows.topRows(0), {}).empty());
  }
  SUBCASE("a pairwise model with a base score") {
    const xgb::Booster booster = trained(Objective::pairwise, synthetic(2000, 5, 2), -1.25);
    const json model = model_json(booster);
    CHECK(check_reaching(booster.ensemble(), blocked_rows(model, booster.features(), 3200, 24),
                         35) > 0);
  }
  SUBCASE("deep trees (the linked layout)") {
    const xgb::Booster booster = trained(Objective::regression, synthetic(3000, 5, 7), 0.5, 14);
    REQUIRE(booster.ensemble().depth() > 10);
    const json model = model_json(booster);
    CHECK(check_reaching(booster.ensemble(), blocked_rows(model, booster.features(), 3200, 25),
                         36) > 0);
  }
}

TEST_CASE("tree ensemble: the shipped models give XGBoost's margins bit for bit") {
  for (const char* name : {"nvidia-model.json", "cpu-model.json"}) {
    CAPTURE(name);
    const xgb::Booster booster = shipped_booster(name);
    CHECK(booster.ensemble().trees() == 400);
    CHECK(booster.ensemble().features() == booster.features());
    check_leaves_are_base_weights(model_json(booster));
    check_identical(booster, 12'000, 1);
  }
}

TEST_CASE("tree ensemble: trained models (regression, pairwise) give XGBoost's margins") {
  const Data d = synthetic(2000, 5, 2);
  for (Objective objective : {Objective::regression, Objective::pairwise}) {
    for (double base_score : {0.0, -1.2345678901}) {
      CAPTURE(to_string(objective));
      CAPTURE(base_score);
      const xgb::Booster booster = trained(objective, d, base_score);
      const json model = model_json(booster);
      // Missing values in training give both default directions: both paths are tested.
      std::set<int> directions;
      for (const json& tree : trees_of(model))
        for (const json& value : tree["default_left"])
          directions.insert(value.get<int>());
      CHECK(directions == std::set<int>{0, 1});
      check_leaves_are_base_weights(model);
      check_identical(booster, 10'000, 3);
      // Loaded from its bytes: the same margins.
      const xgb::Booster loaded = xgb::Booster::from_ubj(booster.to_ubj(), "test");
      const Matrix rows = probing_rows(model, booster.features(), 2000, 4);
      CHECK(differing(loaded.predict_margin(rows), booster.predict_margin_xgboost(rows)) == 0);
    }
  }
}

TEST_CASE("tree ensemble: deep trees (the linked layout) give XGBoost's margins") {
  // Trees deeper than 10 are not stored complete: the other kernel.
  const xgb::Booster booster = trained(Objective::regression, synthetic(3000, 5, 7), 0.5, 14);
  CHECK(booster.ensemble().depth() > 10);
  check_identical(booster, 10'000, 8);
}

TEST_CASE("tree ensemble: the comparison sees a slightly different leaf") {
  // The checks above must be able to fail: an ensemble whose first leaf is a few ulps of the
  // margin off (one ulp of the leaf vanishes in the sum) differs from XGBoost on the rows that
  // reach that leaf.
  const xgb::Booster booster = shipped_booster("nvidia-model.json");
  json model = model_json(booster);
  json& tree = trees_of(model)[0];
  const Matrix rows = probing_rows(model, booster.features(), 4000, 5);
  // The leaf the first row reaches (XGBoost's walk: value < split goes left, a missing value
  // its default side), so that at least one row sees the change whatever the model.
  size_t leaf = 0;
  while (tree["left_children"][leaf].get<int>() != -1) {
    const auto value = static_cast<float>(rows(0, tree["split_indices"][leaf].get<int>()));
    const json& default_left = tree["default_left"][leaf];
    const bool left =
        std::isnan(value)
            ? (default_left.is_boolean() ? default_left.get<bool>() : default_left.get<int>() != 0)
            : value < static_cast<float>(tree["split_conditions"][leaf].get<double>());
    leaf = tree[left ? "left_children" : "right_children"][leaf].get<size_t>();
  }
  const float value = static_cast<float>(tree["split_conditions"][leaf].get<double>());
  tree["split_conditions"][leaf] = value + 2e-6f;
  const TreeEnsemble changed = TreeEnsemble::from_xgboost_json(model);
  const size_t differ = differing(changed.margins(rows), booster.predict_margin_xgboost(rows));
  CHECK(differ > 0);
  CHECK(differ < 4000);
}

TEST_CASE("tree ensemble: concurrent calls give the same margins") {
  const xgb::Booster booster = shipped_booster("nvidia-model.json");
  const Matrix rows = probing_rows(model_json(booster), booster.features(), 3000, 6);
  const std::vector<double> expected = booster.predict_margin_xgboost(rows);
  std::vector<double> a, b;
  std::thread first([&] { a = booster.predict_margin(rows); });
  std::thread second([&] { b = booster.predict_margin(rows); });
  first.join();
  second.join();
  CHECK(differing(a, expected) == 0);
  CHECK(differing(b, expected) == 0);
}

TEST_CASE("tree ensemble: malformed trees are user errors") {
  REQUIRE_NOTHROW(TreeEnsemble::from_xgboost_json(small_model()));
  auto broken = [](auto&& change) {
    json model = small_model();
    change(model, trees_of(model)[0]);
    return model;
  };
  // The root's left child is at index 1 in XGBoost's numbering.
  check_rejected(broken([](json&, json& t) { t["left_children"][0] = 100000; }), "outside");
  check_rejected(broken([](json&, json& t) { t["right_children"][0] = -7; }), "outside");
  check_rejected(broken([](json&, json& t) { t["split_indices"][0] = 3; }), "feature 3 of 3");
  check_rejected(broken([](json&, json& t) { t["split_indices"][0] = -1; }), "feature -1");
  // Children pointing back to the root: a cycle.
  check_rejected(broken([](json&, json& t) {
                   const int l = t["left_children"][0].get<int>();
                   t["left_children"][l] = 0;
                   t["right_children"][l] = 1;
                 }),
                 "reached twice");
  check_rejected(broken([](json&, json& t) {
                   const int l = t["left_children"][0].get<int>();
                   t["left_children"][l] = l;
                   t["right_children"][l] = l + 1;
                 }),
                 "reached twice");
  check_rejected(broken([](json&, json& t) { t["right_children"][0] = 5; }), "not adjacent");
  check_rejected(broken([](json&, json& t) {
                   const int l = t["left_children"][0].get<int>();
                   t["left_children"][l] = -1;
                 }),
                 "no left");
  // Node counts that disagree: the parameter, or one array shorter than the others.
  check_rejected(broken([](json&, json& t) {
                   t["tree_param"]["num_nodes"] = std::to_string(t["left_children"].size() + 2);
                 }),
                 "declares");
  check_rejected(broken([](json&, json& t) { t["default_left"].erase(0); }), "declares");
  check_rejected(broken([](json&, json& t) { t["split_conditions"] = json::array(); }), "declares");
  check_rejected(broken([](json&, json& t) { t["tree_param"]["num_nodes"] = "many"; }),
                 "not an integer");
  check_rejected(broken([](json&, json& t) { t["left_children"][0] = "1"; }), "not an integer");
  check_rejected(broken([](json&, json& t) { t["split_conditions"][0] = "x"; }), "not a number");
  check_rejected(broken([](json&, json& t) { t.erase("right_children"); }), "right_children");
  check_rejected(broken([](json&, json& t) { t["split_type"][0] = 1; }), "categories");
  // The ensemble as a whole.
  check_rejected(broken([](json& m, json&) { trees_of(m).erase(1); }), "trees declared");
  check_rejected(
      broken([](json& m, json&) { m["learner"]["gradient_booster"]["model"]["tree_info"][1] = 1; }),
      "output group");
  check_rejected(
      broken([](json& m, json&) { m["learner"]["objective"]["name"] = "binary:logistic"; }),
      "objective");
  check_rejected(broken([](json& m, json&) { m["learner"]["gradient_booster"]["name"] = "dart"; }),
                 "booster dart");
  check_rejected(
      broken([](json& m, json&) { m["learner"]["learner_model_param"]["base_score"] = "0.5x"; }),
      "base_score");
  check_rejected(
      broken([](json& m, json&) { m["learner"]["learner_model_param"]["num_feature"] = "-3"; }),
      "features");
  check_rejected(json::array(), "not an object");
  check_rejected(json::object(), "no \"learner\"");
  CHECK_THROWS_AS(TreeEnsemble::from_xgboost_ubj("{not ubjson"), UserError);
  CHECK_THROWS_AS(TreeEnsemble::from_xgboost_ubj(""), UserError);
}
