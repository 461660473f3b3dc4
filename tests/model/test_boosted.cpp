// Gradient-boosted trees (model/boosted.hpp, Kind::boosted): fit, ranking, files, determinism.
#include "model/boosted.hpp"
#include "model/evaluate.hpp"
#include "model/metrics.hpp"
#include "model/model.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

using namespace liftx;
using namespace liftx::model;

namespace {

std::vector<std::string> column_names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back("f" + std::to_string(i));
  return out;
}

/// Uniform features in [-2, 2] and a throughput in (0, 1] that depends on the first two
/// nonlinearly (the third is noise): y = 2^-(x0^2 + sin(2 x1)(x1 > 0) + 1).
struct Synthetic {
  Matrix x;
  Vector y;
};

double synthetic_throughput(double x0, double x1) {
  return std::exp2(-(x0 * x0 + (x1 > 0 ? std::sin(2 * x1) : 0) + 1));
}

Synthetic synthetic(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  Synthetic s{Matrix(n, 3), Vector(n)};
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c)
      s.x(i, c) = u(rng);
    s.y[i] = synthetic_throughput(s.x(i, 0), s.x(i, 1));
  }
  return s;
}

/// Small, fast settings for the tests (the defaults are for ~30,000 rows).
TrainOptions small() {
  TrainOptions o;
  o.trees = 150;
  o.learning_rate = 0.1;
  o.threads = 2;
  return o;
}

double mean_squared_error(const Vector& a, const Vector& b) {
  return (a - b).squaredNorm() / double(a.size());
}

/// Groups "g0".."g{groups-1}" of `per_group` rows each, interleaved (row i is in group i % groups),
/// with the same relation between features and throughput everywhere but a different best per
/// group: y = best(g) / time, time = 1 + x0^2 + |x1|.
struct Grouped {
  Matrix x;
  Vector y;
  std::vector<std::string> groups;
};

Grouped grouped(int groups, int per_group, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  const int n = groups * per_group;
  Grouped g{Matrix(n, 3), Vector(n), {}};
  std::vector<double> times;
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c)
      g.x(i, c) = u(rng);
    // Group-specific offset in a column the throughput does not depend on.
    g.x(i, 2) += 10 * (i % groups);
    times.push_back(1 + g.x(i, 0) * g.x(i, 0) + std::abs(g.x(i, 1)));
    g.groups.push_back("g" + std::to_string(i % groups));
  }
  g.y = normalised_throughput(times, g.groups);
  return g;
}

/// Mean over groups of the Spearman correlation of prediction and truth within each group.
double mean_group_spearman(const Grouped& g, const Vector& predicted, int groups) {
  double sum = 0;
  for (int k = 0; k < groups; ++k) {
    std::vector<double> p, t;
    for (Eigen::Index i = 0; i < g.y.size(); ++i)
      if (g.groups[size_t(i)] == "g" + std::to_string(k)) {
        p.push_back(predicted[i]);
        t.push_back(g.y[i]);
      }
    sum += spearman(p, t);
  }
  return sum / groups;
}

} // namespace

TEST_CASE("boosted: learns a nonlinear function far better than the mean") {
  const Synthetic train = synthetic(2000, 1), test = synthetic(500, 2);
  Model m = Model::train(Kind::boosted, column_names(3), train.x, train.y, small());
  CHECK(m.kind() == Kind::boosted);
  CHECK(m.training_samples() == 2000);
  const Vector p = m.predict(test.x);
  const double mean_error =
      mean_squared_error(Vector::Constant(test.y.size(), train.y.mean()), test.y);
  const double error = mean_squared_error(p, test.y);
  CAPTURE(mean_error);
  CAPTURE(error);
  CHECK(error < 0.05 * mean_error);
  CHECK(spearman(std::vector<double>(p.begin(), p.end()),
                 std::vector<double>(test.y.begin(), test.y.end())) > 0.95);
  // Predictions are normalised throughputs: positive, about 1 at most.
  CHECK(p.minCoeff() > 0);
  CHECK(p.maxCoeff() < 1.2);
  // A prediction above the best (2^f, f > 0) is not clipped, so the top keeps its order: a model
  // of a constant 2 predicts about 2.
  Model above = Model::train(Kind::boosted, column_names(3), train.x,
                             Vector::Constant(train.y.size(), 2.0), small());
  const Vector high = above.predict(test.x.topRows(3));
  for (Eigen::Index i = 0; i < high.size(); ++i)
    CHECK(high[i] == doctest::Approx(2.0).epsilon(0.05));
  // The model keeps the options it was trained with.
  CHECK(m.options().trees == 150);
}

TEST_CASE("boosted: regression ranks within groups; pairwise orders each group") {
  const int groups = 6;
  const Grouped g = grouped(groups, 150, 3);
  TrainOptions o = small();
  Model regression = Model::train(Kind::boosted, column_names(3), g.x, g.y, o, &g.groups);
  CHECK(mean_group_spearman(g, regression.predict(g.x), groups) > 0.9);

  o.objective = Objective::pairwise;
  Model pairwise = Model::train(Kind::boosted, column_names(3), g.x, g.y, o, &g.groups);
  const Vector p = pairwise.predict(g.x);
  CHECK(p.minCoeff() > 0);
  CHECK(p.maxCoeff() <= 1);
  // Groups not seen in training, interleaved: the order carries over.
  const Grouped unseen = grouped(groups, 150, 4);
  CHECK(mean_group_spearman(unseen, pairwise.predict(unseen.x), groups) > 0.9);
  CHECK(mean_group_spearman(unseen, regression.predict(unseen.x), groups) > 0.9);
  // The best-predicted row of each unseen group is among its 10 best of 150.
  const Vector q = pairwise.predict(unseen.x);
  for (int k = 0; k < groups; ++k) {
    Eigen::Index best = -1;
    for (Eigen::Index i = 0; i < q.size(); ++i)
      if (unseen.groups[size_t(i)] == "g" + std::to_string(k) && (best < 0 || q[i] > q[best]))
        best = i;
    int better = 0;
    for (Eigen::Index i = 0; i < q.size(); ++i)
      better +=
          unseen.groups[size_t(i)] == unseen.groups[size_t(best)] && unseen.y[i] > unseen.y[best];
    CAPTURE(k);
    CHECK(better < 10);
  }
  // The pairwise objective needs the groups.
  CHECK_THROWS_WITH_AS(Model::train(Kind::boosted, column_names(3), g.x, g.y, o),
                       doctest::Contains("group"), UserError);
}

TEST_CASE("boosted: training twice gives identical predictions; the seed matters") {
  const Synthetic s = synthetic(1500, 5);
  TrainOptions o = small();
  o.trees = 60;
  o.threads = 0; // all cores: still deterministic
  const Vector a = Model::train(Kind::boosted, column_names(3), s.x, s.y, o).predict(s.x);
  // Another model in between must not change the next one (XGBoost's random state is global).
  TrainOptions other = o;
  other.seed = 2;
  const Vector c = Model::train(Kind::boosted, column_names(3), s.x, s.y, other).predict(s.x);
  const Vector b = Model::train(Kind::boosted, column_names(3), s.x, s.y, o).predict(s.x);
  CHECK(a == b);
  CHECK(a != c);
  // The pairwise objective samples pairs: also seeded.
  const Grouped g = grouped(4, 100, 6);
  o.objective = Objective::pairwise;
  const Vector pa =
      Model::train(Kind::boosted, column_names(3), g.x, g.y, o, &g.groups).predict(g.x);
  const Vector pb =
      Model::train(Kind::boosted, column_names(3), g.x, g.y, o, &g.groups).predict(g.x);
  CHECK(pa == pb);
}

TEST_CASE("boosted: model files round trip exactly") {
  const Grouped g = grouped(3, 100, 7);
  for (Objective objective : {Objective::regression, Objective::pairwise}) {
    CAPTURE(to_string(objective));
    TrainOptions o = small();
    o.objective = objective;
    o.transform = Transform::log;
    o.trees = 40;
    o.boost_depth = 4;
    Model m = Model::train(Kind::boosted, column_names(3), g.x.cwiseAbs(), g.y, o, &g.groups);
    m.profile = "nvidia";
    m.provenance = {{"samples", 300}};
    const auto path = std::filesystem::temp_directory_path() / "liftx-test-boosted.json";
    m.save(path);
    Model back = Model::load(path);
    std::filesystem::remove(path);
    CHECK(back.kind() == Kind::boosted);
    CHECK(back.profile == "nvidia");
    CHECK(back.training_samples() == 300);
    CHECK(back.transform() == Transform::log);
    CHECK(back.options().objective == objective);
    CHECK(back.options().trees == 40);
    CHECK(back.options().boost_depth == 4);
    CHECK(back.options().learning_rate == o.learning_rate);
    CHECK(back.options().seed == o.seed);
    CHECK(back.predict(g.x.cwiseAbs()) == m.predict(g.x.cwiseAbs())); // bit for bit
    // Written again, the same file.
    CHECK(back.to_json() == m.to_json());
    // A copy shares the booster and predicts the same.
    const Model copy = back;
    CHECK(copy.predict(g.x.cwiseAbs()) == m.predict(g.x.cwiseAbs()));

    // Damaged files are user errors naming the file.
    nlohmann::json j = m.to_json();
    j["boosted"]["model"] = "not base64!";
    CHECK_THROWS_WITH_AS(Model::from_json(j, "b.json"), doctest::Contains("b.json"), UserError);
    j["boosted"]["model"] = xgb::base64_encode("{not a model");
    CHECK_THROWS_WITH_AS(Model::from_json(j, "b.json"), doctest::Contains("b.json: XGBoost"),
                         UserError);
    j = m.to_json();
    j.erase("boosted");
    CHECK_THROWS_WITH_AS(Model::from_json(j, "b.json"), doctest::Contains("b.json"), UserError);
    j = m.to_json();
    j["options"]["objective"] = "listwise";
    CHECK_THROWS_WITH_AS(Model::from_json(j, "b.json"),
                         doctest::Contains("unknown boosting objective 'listwise'"), UserError);
    j = m.to_json();
    j["version"] = 99;
    CHECK_THROWS_WITH_AS(Model::from_json(j, "b.json"), doctest::Contains("version 99"), UserError);
    j = m.to_json();
    j["standardisation"]["scale"][0] = 0.0;
    CHECK_THROWS_WITH_AS(Model::from_json(j, "b.json"),
                         doctest::Contains("b.json: standardisation of column 0"), UserError);
  }
}

TEST_CASE("boosted: parallel trees per round average their step, and the files keep them") {
  const Synthetic train = synthetic(1500, 8), test = synthetic(500, 9);
  TrainOptions o = small();
  o.trees = 60;
  TrainOptions bagged = o;
  bagged.parallel_trees = 4;
  // Model::train checks the compiled trees against XGBoost's own prediction (Booster::finish):
  // four trees a round must still sum to XGBoost's margin.
  const Model one = Model::train(Kind::boosted, column_names(3), train.x, train.y, o);
  const Model four = Model::train(Kind::boosted, column_names(3), train.x, train.y, bagged);
  CHECK(four.predict(test.x) != one.predict(test.x));
  // An averaged step learns as fast as one tree's: the fit is of the same quality.
  const double mse_one = mean_squared_error(one.predict(test.x), test.y);
  const double mse_four = mean_squared_error(four.predict(test.x), test.y);
  CHECK(mse_four < 2 * mse_one);
  const Model back = Model::from_json(four.to_json(), "four.json");
  CHECK(back.options().parallel_trees == 4);
  CHECK(back.predict(test.x) == four.predict(test.x));
  nlohmann::json older = one.to_json();
  older["options"].erase("parallel_trees"); // a file from before the option: one tree a round
  CHECK(Model::from_json(older, "older.json").options().parallel_trees == 1);
  bagged.parallel_trees = 0;
  CHECK_THROWS_WITH_AS(Model::train(Kind::boosted, column_names(3), train.x, train.y, bagged),
                       doctest::Contains("parallel trees per round must be 1 to 100"), UserError);
}

TEST_CASE("boosted: a bag over seeds predicts its boosters' mean margin, and the files keep it") {
  const Synthetic train = synthetic(1500, 8), test = synthetic(500, 9);
  TrainOptions o = small();
  o.trees = 60;
  o.seed = 4;
  TrainOptions bagged = o;
  bagged.seeds = 3;
  const Model bag = Model::train(Kind::boosted, column_names(3), train.x, train.y, bagged);
  // Its prediction is 2^(mean of the three seeds' log2 predictions).
  Vector log_sum = Vector::Zero(test.x.rows());
  for (uint64_t seed : {4, 5, 6}) {
    TrainOptions single = o;
    single.seed = seed;
    log_sum += Model::train(Kind::boosted, column_names(3), train.x, train.y, single)
                   .predict(test.x)
                   .unaryExpr([](double y) { return std::log2(y); });
  }
  const Vector mean = (log_sum / 3).unaryExpr([](double f) { return std::exp2(f); });
  const Vector predicted = bag.predict(test.x);
  CHECK((predicted - mean).cwiseAbs().maxCoeff() < 1e-9 * mean.cwiseAbs().maxCoeff());
  const Model one = Model::train(Kind::boosted, column_names(3), train.x, train.y, o);
  CHECK(predicted != one.predict(test.x));
  CHECK(mean_squared_error(predicted, test.y) <
        2 * mean_squared_error(one.predict(test.x), test.y));
  // Explanations: the boosters' mean contributions, three features of the three.
  CHECK(bag.explain(test.x.row(0), 3).size() == 3);

  // The file holds every booster and reads back bit for bit; one booster's file is as before.
  const nlohmann::json j = bag.to_json();
  CHECK(j["options"]["seeds"] == 3);
  CHECK(j["boosted"]["more_models"].size() == 2);
  const Model back = Model::from_json(j, "bag.json");
  CHECK(back.options().seeds == 3);
  CHECK(back.predict(test.x) == predicted);
  CHECK(back.to_json() == j);
  CHECK_FALSE(one.to_json()["options"].contains("seeds"));
  CHECK_FALSE(one.to_json()["boosted"].contains("more_models"));
  CHECK(Model::from_json(one.to_json(), "one.json").options().seeds == 1);
  nlohmann::json short_of_one = j;
  short_of_one["boosted"]["more_models"].erase(1);
  CHECK_THROWS_WITH_AS(Model::from_json(short_of_one, "bag.json"),
                       doctest::Contains("bag.json: 2 boosted models for options.seeds 3"),
                       UserError);
  bagged.seeds = 0;
  CHECK_THROWS_WITH_AS(Model::train(Kind::boosted, column_names(3), train.x, train.y, bagged),
                       doctest::Contains("seeds to average must be 1 to 100"), UserError);
  bagged.seeds = 2;
  bagged.seed = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  CHECK_THROWS_WITH_AS(Model::train(Kind::boosted, column_names(3), train.x, train.y, bagged),
                       doctest::Contains("below 2^63"), UserError);
}

TEST_CASE("boosted: features beyond float's range saturate instead of failing in XGBoost") {
  // (fuzz/regressions/model/standardisation-beyond-float-range.json: a mean of 2.8e76.)
  const Grouped g = grouped(3, 100, 7);
  const Model m =
      Model::train(Kind::boosted, column_names(3), g.x.cwiseAbs(), g.y, small(), &g.groups);
  Matrix rows(3, 3);
  rows << 1e300, 0.5, 0.5, //
      -1e300, 0.5, 0.5,    //
      1e30, 0.5, 0.5;
  // Predictions walk liftx's compiled trees; explanations hand the rows to XGBoost (TreeSHAP),
  // which refuses infinite values: the fuzz finding.
  const Vector predicted = m.predict(rows);
  REQUIRE(predicted.size() == 3);
  CHECK(predicted.allFinite());
  // Beyond the largest float, the same leaf as the largest float (and as any large value).
  CHECK(predicted[0] == predicted[2]);
  for (Eigen::Index r = 0; r < rows.rows(); ++r) {
    CAPTURE(r);
    const std::vector<Explanation> reasons = m.explain(rows.row(r), 3);
    REQUIRE(reasons.size() == 3);
    for (const Explanation& e : reasons)
      CHECK(std::isfinite(e.contribution));
  }
}

TEST_CASE("boosted: explanations are the features that move the prediction most") {
  const Synthetic s = synthetic(1500, 8);
  Model m = Model::train(Kind::boosted, column_names(3), s.x, s.y, small());
  // x0 far from 0 lowers the throughput most; x2 is noise.
  Matrix sample(1, 3);
  sample << 1.9, -0.5, 1.9;
  const auto why = m.explain(sample.row(0), 3);
  REQUIRE(why.size() == 3);
  CHECK(why[0].feature == "f0");
  CHECK(why[0].value == 1.9);
  CHECK(why[0].contribution < 0);
  CHECK(std::abs(why[2].contribution) <= std::abs(why[1].contribution));
  CHECK(why[2].feature == "f2");
  // Contributions and the bias add up to f = log2 of the prediction: between two samples the
  // bias cancels.
  Matrix other(1, 3);
  other << 0.5, -1, -1;
  auto sum = [](const std::vector<Explanation>& parts) {
    double total = 0;
    for (const Explanation& e : parts)
      total += e.contribution;
    return total;
  };
  const double difference = std::log2(m.predict(sample)[0]) - std::log2(m.predict(other)[0]);
  CHECK(sum(why) - sum(m.explain(other.row(0), 3)) == doctest::Approx(difference).epsilon(1e-4));
  CHECK(m.explain(sample.row(0), 1).size() == 1);
}

TEST_CASE("boosted: invalid options are user errors") {
  const Synthetic s = synthetic(100, 9);
  auto train_with = [&](auto change) {
    TrainOptions o = small();
    change(o);
    return Model::train(Kind::boosted, column_names(3), s.x, s.y, o);
  };
  CHECK_THROWS_WITH_AS(train_with([](TrainOptions& o) { o.trees = 0; }),
                       doctest::Contains("number of trees"), UserError);
  CHECK_THROWS_AS(train_with([](TrainOptions& o) { o.trees = -3; }), UserError);
  CHECK_THROWS_AS(train_with([](TrainOptions& o) { o.learning_rate = 0; }), UserError);
  CHECK_THROWS_AS(train_with([](TrainOptions& o) { o.boost_depth = 0; }), UserError);
  CHECK_THROWS_AS(train_with([](TrainOptions& o) { o.subsample = 1.5; }), UserError);
  CHECK_THROWS_AS(train_with([](TrainOptions& o) { o.colsample = 0; }), UserError);
  CHECK_THROWS_AS(train_with([](TrainOptions& o) { o.min_child_weight = -1; }), UserError);
  CHECK_THROWS_AS(train_with([](TrainOptions& o) { o.threads = -1; }), UserError);
  Vector zero = s.y;
  zero[0] = 0; // log2(0): not a throughput
  CHECK_THROWS_AS(Model::train(Kind::boosted, column_names(3), s.x, zero, small()), UserError);
  CHECK(parse_kind("boosted") == Kind::boosted);
  CHECK(to_string(Kind::boosted) == "boosted");
  CHECK_THROWS_WITH_AS(parse_kind("forest"), doctest::Contains("knn, tree or boosted"), UserError);
  CHECK(parse_objective("pairwise") == Objective::pairwise);
  CHECK_THROWS_AS(parse_objective("ndcg"), UserError);
}

TEST_CASE("boosted: base64 round trips every byte") {
  std::string bytes;
  for (int i = 0; i < 256; ++i)
    bytes += static_cast<char>(i);
  for (size_t n : {0, 1, 2, 3, 4, 255, 256}) {
    const std::string part = bytes.substr(0, n);
    CHECK(xgb::base64_decode(xgb::base64_encode(part)) == part);
  }
  CHECK(xgb::base64_encode("Man") == "TWFu");
  CHECK(xgb::base64_encode("Ma") == "TWE=");
  CHECK(xgb::base64_encode("M") == "TQ==");
  CHECK_THROWS_AS(xgb::base64_decode("TWF"), UserError);
  CHECK_THROWS_AS(xgb::base64_decode("T=Fu"), UserError);
}

TEST_CASE("boosted: leave-one-benchmark-out evaluation passes the groups (pairwise)") {
  Dataset d;
  d.feature_names = {"a", "b"};
  std::mt19937_64 rng(10);
  std::uniform_real_distribution<double> u(0, 1);
  for (const char* p : {"p1", "p2", "p3"})
    for (const char* input : {"{\"N\":64}", "{\"N\":128}"})
      for (int i = 0; i < 40; ++i) {
        Sample s;
        s.program = p;
        s.input = input;
        const double a = i % 20, b = u(rng);
        s.features = {a, b};
        s.time_ms = 1.0 + 0.1 * a;
        s.cost_ms = 5;
        d.samples.push_back(s);
      }
  EvaluateOptions options;
  options.kind = Kind::boosted;
  options.train = small();
  options.train.trees = 50;
  options.train.objective = Objective::pairwise;
  const Evaluation ev = evaluate(d, options);
  REQUIRE(ev.groups.size() == 6);
  for (const GroupResult& g : ev.groups)
    CHECK(g.spearman > 0.9);
  CHECK(train(d, Kind::boosted, options.train).training_samples() == 240);
}

TEST_CASE("boosted: predictions reaching a floor are predict()'s bit for bit; others may stop") {
  const int groups = 6;
  const Grouped g = grouped(groups, 400, 5);
  TrainOptions o = small();
  const double inf = std::numeric_limits<double>::infinity();
  auto check = [&](const Model& m, const Matrix& x) {
    const Vector p = m.predict(x);
    // Per row: far above its prediction, at it, a double's step either side, below, none.
    std::vector<double> floors(static_cast<size_t>(x.rows()));
    for (size_t r = 0; r < floors.size(); ++r) {
      const double v = p[static_cast<Eigen::Index>(r)];
      switch ((r / 64) % 6) { // whole blocks of the ensemble alike, so that some stop early
      case 0:
        floors[r] = 4 * v + 1;
        break;
      case 1:
        floors[r] = v;
        break;
      case 2:
        floors[r] = std::nextafter(v, -inf);
        break;
      case 3:
        floors[r] = std::nextafter(v, inf);
        break;
      case 4:
        floors[r] = v / 2;
        break;
      default:
        floors[r] = -inf;
      }
    }
    const Vector q = m.predict_reaching(x, floors);
    size_t unfinished = 0, wrong = 0;
    for (Eigen::Index r = 0; r < p.size(); ++r) {
      if (std::memcmp(&p[r], &q[r], sizeof(double)) == 0)
        continue;
      if (p[r] >= floors[static_cast<size_t>(r)] || q[r] != -inf)
        ++wrong;
      else
        ++unfinished;
    }
    CHECK(wrong == 0);
    return unfinished;
  };
  const Model regression = Model::train(Kind::boosted, column_names(3), g.x, g.y, o, &g.groups);
  CHECK(check(regression, g.x) > 0);
  o.objective = Objective::pairwise;
  const Model pairwise = Model::train(Kind::boosted, column_names(3), g.x, g.y, o, &g.groups);
  CHECK(check(pairwise, g.x) > 0);
  // A bag over seeds stops rows on its first booster, bounded by what the others can add.
  o.objective = Objective::regression;
  o.seeds = 3;
  const Model bag = Model::train(Kind::boosted, column_names(3), g.x, g.y, o, &g.groups);
  CHECK(check(bag, g.x) > 0);
  // kNN predicts every row.
  const Model knn = Model::train(Kind::knn, column_names(3), g.x, g.y, TrainOptions{});
  CHECK(check(knn, g.x) == 0);
}
