// Standardisation, PCA, kNN, tree, metrics, evaluation, model files, plots (no IR).
#include "model/evaluate.hpp"
#include "model/metrics.hpp"
#include "model/model.hpp"
#include "model/plot.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <random>

using namespace liftx;
using namespace liftx::model;

namespace {

/// n samples of 6 features that are linear mixes of 2 latent factors (plus a constant column).
Matrix low_rank(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Matrix mix(2, 6);
  mix << 1, 2, 0, -1, 3, 0.5, 0, 1, 1, 2, -1, 4;
  Matrix latent(n, 2);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 2; ++j)
      latent(i, j) = normal(rng);
  Matrix x(n, 7);
  x.leftCols(6) = latent * mix;
  x.col(6).setConstant(3.0);
  return x;
}

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back("f" + std::to_string(i));
  return out;
}

} // namespace

TEST_CASE("standardisation drops constant columns and gives mean 0, std 1") {
  Matrix x = low_rank(200, 1);
  Standardiser s = Standardiser::fit(x);
  CHECK(s.kept.size() == 6);
  CHECK(std::find(s.kept.begin(), s.kept.end(), 6) == s.kept.end());
  Matrix z = s.apply(x);
  for (Eigen::Index c = 0; c < z.cols(); ++c) {
    CHECK(std::abs(z.col(c).mean()) < 1e-9);
    CHECK(std::abs(std::sqrt(z.col(c).squaredNorm() / double(z.rows())) - 1) < 1e-9);
  }
}

TEST_CASE("PCA recovers a known rank-2 structure") {
  Matrix x = low_rank(300, 2);
  Standardiser s = Standardiser::fit(x);
  Matrix z = s.apply(x);
  Pca pca = Pca::fit(z, 0.95);
  CHECK(pca.basis.cols() == 2);
  CHECK(pca.variance_kept.sum() == doctest::Approx(1.0).epsilon(1e-9));
  // Orthonormal basis, and projecting back loses nothing.
  CHECK((pca.basis.transpose() * pca.basis - Matrix::Identity(2, 2)).norm() < 1e-9);
  Matrix back = pca.project(z) * pca.basis.transpose();
  CHECK((back - z).norm() < 1e-6 * z.norm());
  // A lower threshold keeps fewer components.
  CHECK(Pca::fit(z, 0.5).basis.cols() == 1);
}

TEST_CASE("kNN with k = 1 is exact on its training points; k = 5 averages") {
  Matrix x = low_rank(50, 3);
  Vector y(50);
  for (int i = 0; i < 50; ++i)
    y[i] = 0.1 + 0.9 * double(i) / 49;
  TrainOptions o;
  o.k = 1;
  o.variance = 1.0;
  Model m = Model::train(Kind::knn, names(7), x, y, o);
  Vector p = m.predict(x);
  for (int i = 0; i < 50; ++i)
    CHECK(p[i] == doctest::Approx(y[i]));
  // k = 5 on a constant target predicts the constant.
  Model five = Model::train(Kind::knn, names(7), x, Vector::Constant(50, 0.5));
  CHECK(five.predict(x.topRows(3)).isApprox(Vector::Constant(3, 0.5)));
}

TEST_CASE("distance-weighted kNN: nearer neighbours count more; the file keeps the choice") {
  Matrix x(4, 1);
  x << 0, 1, 3, 7;
  Vector y(4);
  y << 0, 1, 3, 7;
  TrainOptions o;
  o.k = 2;
  o.variance = 1.0;
  Model uniform = Model::train(Kind::knn, names(1), x, y, o);
  o.distance_weighted = true;
  Model weighted = Model::train(Kind::knn, names(1), x, y, o);
  Matrix q(3, 1);
  q << 0.25, 0.5, 1;
  // 0.25 lies 3 times nearer to 0 than to 1: weights 3 : 1. Midway both count the same. On a
  // training point its own target dominates.
  const Vector pu = uniform.predict(q), pw = weighted.predict(q);
  CHECK(pu[0] == doctest::Approx(0.5));
  CHECK(pw[0] == doctest::Approx(0.25));
  CHECK(pw[1] == doctest::Approx(0.5));
  CHECK(pw[2] == doctest::Approx(1).epsilon(1e-4));
  CHECK(pu[2] == doctest::Approx(0.5)); // uniform: the nearest two are 1 and 0 (tie to the lower)
  Model back = Model::from_json(weighted.to_json(), "m.json");
  CHECK((back.predict(q) - pw).norm() < 1e-12);
  nlohmann::json old = weighted.to_json();
  old["options"].erase("distance_weighted"); // files from before the option: uniform
  CHECK((Model::from_json(old, "m.json").predict(q) - pu).norm() < 1e-12);
}

TEST_CASE("regression tree fits a step function") {
  Matrix x(40, 2);
  Vector y(40);
  for (int i = 0; i < 40; ++i) {
    x(i, 0) = i;
    x(i, 1) = (i * 7) % 5; // noise feature
    y[i] = i < 17 ? 0.2 : 0.9;
  }
  TrainOptions o;
  o.min_leaf = 2;
  Model m = Model::train(Kind::tree, names(2), x, y, o);
  Vector p = m.predict(x);
  for (int i = 0; i < 40; ++i)
    CHECK(p[i] == doctest::Approx(y[i]));
  CHECK(m.tree().size() == 3);
  CHECK(m.tree()[0].feature == 0);
  Matrix q(2, 2);
  q << 16.4, 0, 16.6, 0;
  Vector pq = m.predict(q);
  CHECK(pq[0] == doctest::Approx(0.2));
  CHECK(pq[1] == doctest::Approx(0.9));
}

TEST_CASE("normalised throughput per group") {
  Vector y = normalised_throughput({2, 4, 1, 8}, {"a", "a", "b", "b"});
  CHECK(y[0] == doctest::Approx(1.0));
  CHECK(y[1] == doctest::Approx(0.5));
  CHECK(y[2] == doctest::Approx(1.0));
  CHECK(y[3] == doctest::Approx(0.125));
  CHECK_THROWS_AS(normalised_throughput({0}, {"a"}), UserError);
}

TEST_CASE("Pearson and Spearman on hand-computed tables") {
  CHECK(pearson({1, 2, 3}, {2, 4, 6}) == doctest::Approx(1.0));
  CHECK(pearson({1, 2, 3}, {3, 2, 1}) == doctest::Approx(-1.0));
  // x = 1..4, y = 1,3,2,4: r = 0.8
  CHECK(pearson({1, 2, 3, 4}, {1, 3, 2, 4}) == doctest::Approx(0.8));
  CHECK(pearson({1, 1, 1}, {1, 2, 3}) == 0);
  // Ties share the mean rank.
  std::vector<double> r = ranks({10, 20, 20, 5});
  CHECK(r == std::vector<double>{2, 3.5, 3.5, 1});
  // Monotone but not linear: Spearman 1.
  CHECK(spearman({1, 2, 3, 4}, {1, 8, 27, 64}) == doctest::Approx(1.0));
  // With ties: ranks a = 1,2.5,2.5,4; b = 1,2,3,4 -> r = 4.5/sqrt(4.5*5) = 0.9487
  CHECK(spearman({1, 2, 2, 3}, {1, 2, 3, 4}) == doctest::Approx(0.948683).epsilon(1e-5));
}

TEST_CASE("runs and time to 90% in an order; failures cost a run") {
  // performance: 0.5, failed, 1.0, 0.95
  std::vector<Trial> t = {{0.5, 10}, {std::nullopt, 100}, {1.0, 1}, {0.95, 2}};
  CHECK(runs_to_fraction(t, {0, 1, 2, 3}) == 3);
  CHECK(time_to_fraction(t, {0, 1, 2, 3}) == doctest::Approx(111));
  CHECK(runs_to_fraction(t, {3, 2, 1, 0}) == 1);
  CHECK(runs_to_fraction(t, {1, 0, 3, 2}) == 3);
  CHECK(best_so_far(t, {1, 0, 3, 2}) == std::vector<double>{0, 0.5, 0.95, 1.0});
  // Random orders: 2 of 4 reach 90%; mean runs over all orders of 4 with 2 good = 5/3.
  RandomOrderStats r = random_orders(t, 2000, 7);
  CHECK(r.mean_runs == doctest::Approx(5.0 / 3).epsilon(0.03));
  CHECK(r.mean_best_so_far.back() == doctest::Approx(1.0));
  CHECK(runs_to_fraction({{std::nullopt, 1}}, {0}) == 0);
}

TEST_CASE("time to 90%: launches of one kernel pay its build once, whichever comes first") {
  // Trials 0 and 1 are two launches of kernel 7 (build 100); trial 2 builds its own kernel (50).
  std::vector<Trial> t = {{0.5, 1, 100, 7}, {0.6, 2, 100, 7}, {1.0, 3, 50, -1}};
  CHECK(time_to_fraction(t, {0, 1, 2}) == doctest::Approx(1 + 100 + 2 + 3 + 50));
  CHECK(time_to_fraction(t, {1, 0, 2}) == doctest::Approx(2 + 100 + 1 + 3 + 50));
  CHECK(time_to_fraction(t, {2}) == doctest::Approx(53));
  // Kernels without an id (-1) pay their build every time.
  std::vector<Trial> own = {{0.5, 1, 100, -1}, {0.5, 1, 100, -1}, {1.0, 1, 0, -1}};
  CHECK(time_to_fraction(own, {0, 1, 2}) == doctest::Approx(203));
}

TEST_CASE("normalised mutual information") {
  std::vector<double> x, y, noise;
  for (int i = 0; i < 100; ++i) {
    x.push_back(i);
    y.push_back(2 * i + 1);
    noise.push_back(i % 2);
  }
  CHECK(normalised_mutual_information(x, y) == doctest::Approx(1.0));
  CHECK(normalised_mutual_information(x, std::vector<double>(100, 4.0)) == 0);
  // Hand table: x = 0,0,1,1, y = 0,1,0,1 with 2 bins: independent -> 0.
  CHECK(normalised_mutual_information({0, 0, 1, 1}, {0, 1, 0, 1}, 2) == doctest::Approx(0.0));
  // x = 0,0,1,1, y = 0,0,1,1: identical -> 1.
  CHECK(normalised_mutual_information({0, 0, 1, 1}, {5, 5, 9, 9}, 2) == doctest::Approx(1.0));
  CHECK(quantile_bins({3, 1, 2, 2}, 2) == std::vector<int>{1, 0, 0, 0});
}

TEST_CASE("model files round trip; unknown versions and missing features are user errors") {
  Matrix x = low_rank(60, 4);
  Vector y = (x.col(0).array() - x.col(0).minCoeff() + 1).matrix();
  y /= y.maxCoeff();
  for (Kind kind : {Kind::knn, Kind::tree}) {
    Model m = Model::train(kind, names(7), x, y);
    m.profile = "cpu";
    m.provenance = {{"samples", 60}};
    const auto path = std::filesystem::temp_directory_path() / "liftx-test-model.json";
    m.save(path);
    Model back = Model::load(path);
    std::filesystem::remove(path);
    CHECK(back.kind() == kind);
    CHECK(back.profile == "cpu");
    CHECK(back.feature_names() == m.feature_names());
    CHECK((back.predict(x) - m.predict(x)).norm() < 1e-12);
    nlohmann::json j = m.to_json();
    j["version"] = 99;
    CHECK_THROWS_WITH_AS(Model::from_json(j, "m.json"), doctest::Contains("version 99"), UserError);
    j = m.to_json();
    j.erase("features");
    CHECK_THROWS_AS(Model::from_json(j, "m.json"), UserError);
    CHECK_THROWS_AS(Model::from_json(nlohmann::json::array(), "m.json"), UserError);
  }
  Model m = Model::train(Kind::knn, names(7), x, y);
  CHECK(m.feature_indices({"f6", "f5", "f4", "f3", "f2", "f1", "f0", "g"}) ==
        std::vector<int>{6, 5, 4, 3, 2, 1, 0});
  CHECK_THROWS_WITH_AS(m.feature_indices({"f0", "f1"}), doctest::Contains("f2"), UserError);
  // Explanations name the features furthest from the mean, in raw units.
  auto why = m.explain(x.row(0), 3);
  CHECK(why.size() == 3);
  CHECK(std::abs(why[0].standardised) >= std::abs(why[2].standardised));
}

TEST_CASE("model files with a bad k or no kNN points are user errors naming the file") {
  Matrix x = low_rank(20, 5);
  Vector y = (x.col(0).array() - x.col(0).minCoeff() + 1).matrix();
  const nlohmann::json good = Model::train(Kind::knn, names(7), x, y).to_json();
  // Issue 20: 0 and 2^40 (truncated to 0) crashed kNN prediction, -1 was an
  // internal error there, and 2.5 was read as 2.
  for (const nlohmann::json& k : {nlohmann::json(0), nlohmann::json(int64_t{1} << 40),
                                  nlohmann::json(-1), nlohmann::json(2.5), nlohmann::json("5")}) {
    nlohmann::json j = good;
    j["options"]["k"] = k;
    CHECK_THROWS_WITH_AS(Model::from_json(j, "m.json"), doctest::Contains("m.json: options.k"),
                         UserError);
  }
  nlohmann::json j = good;
  j["options"]["k"] = 1;
  CHECK(Model::from_json(j, "m.json").options().k == 1);
  // Found by fuzz/model.cpp: a kept column of 1e18 was undefined behaviour (float to int).
  j = good;
  j["standardisation"]["kept"][0] = 9.8e17;
  CHECK_THROWS_WITH_AS(Model::from_json(j, "m.json"), doctest::Contains("m.json: a kept column"),
                       UserError);
  j = good;
  j["standardisation"]["kept"] = 3;
  CHECK_THROWS_AS(Model::from_json(j, "m.json"), UserError);
  // Found by fuzz/model.cpp: a "format" that is not a string was a JSON type error.
  j = good;
  j["format"] = 1;
  CHECK_THROWS_WITH_AS(Model::from_json(j, "m.json"), doctest::Contains("not a liftx model"),
                       UserError);
  // Without points every prediction was 0.
  j = good;
  j["points"] = nlohmann::json::array();
  j["targets"] = nlohmann::json::array();
  CHECK_THROWS_WITH_AS(Model::from_json(j, "m.json"), doctest::Contains("m.json: the kNN model"),
                       UserError);
}

TEST_CASE("feature transforms: logarithms and launch sizes relative to the bytes moved") {
  const std::vector<std::string> cols{"work_items", "bytes_moved", "occupancy_fraction"};
  Matrix raw(2, 3);
  raw << 1023, 4095, 0.5, //
      65535, 1048575, 1;
  CHECK(apply_transform(Transform::raw, cols, raw) == raw);
  Matrix logged = apply_transform(Transform::log, cols, raw);
  CHECK(logged(0, 0) == doctest::Approx(10));
  CHECK(logged(1, 1) == doctest::Approx(20));
  CHECK(logged(0, 2) == doctest::Approx(std::log2(1.5)));
  // work_items is a launch size: a ratio to bytes_moved; the others stay logarithms.
  Matrix relative = apply_transform(Transform::log_relative, cols, raw);
  CHECK(relative(0, 0) == doctest::Approx(10 - 12));
  CHECK(relative(1, 0) == doctest::Approx(16 - 20));
  CHECK(relative(1, 1) == doctest::Approx(20));
  CHECK(relative(1, 2) == doctest::Approx(1));
  // A launch scaled with the input keeps its relative sizes.
  Matrix doubled = raw;
  doubled.col(0) = (raw.col(0).array() + 1) * 4 - 1;
  doubled.col(1) = (raw.col(1).array() + 1) * 4 - 1;
  CHECK(apply_transform(Transform::log_relative, cols, doubled)(0, 0) ==
        doctest::Approx(relative(0, 0)));
  CHECK_THROWS_AS(apply_transform(Transform::log_relative, {"work_items", "a", "b"}, raw),
                  UserError);
  CHECK(parse_transform("log_relative") == Transform::log_relative);
  CHECK_THROWS_WITH_AS(parse_transform("sqrt"), doctest::Contains("raw, log or log_relative"),
                       UserError);
  // A model applies its transform when it predicts, and its file says which one.
  Matrix x = low_rank(60, 9).cwiseAbs();
  Vector y = (x.col(0).array() + 1).inverse().matrix();
  TrainOptions options;
  options.transform = Transform::log;
  Model m = Model::train(Kind::knn, names(7), x, y, options);
  options.k = 1;
  Model exact = Model::train(Kind::knn, names(7), x, y, options);
  CHECK((exact.predict(x) - y).norm() < 1e-9);
  Model back = Model::from_json(m.to_json(), "m.json");
  CHECK(back.transform() == Transform::log);
  CHECK((back.predict(x) - m.predict(x)).norm() < 1e-12);
  nlohmann::json old = m.to_json();
  old["options"].erase("transform"); // files from before transforms: raw features
  CHECK(Model::from_json(old, "m.json").transform() == Transform::raw);
  nlohmann::json bad = m.to_json();
  bad["options"]["transform"] = "sqrt";
  CHECK_THROWS_WITH_AS(Model::from_json(bad, "m.json"),
                       doctest::Contains("m.json: unknown feature transform 'sqrt'"), UserError);
}

TEST_CASE("leave-one-benchmark-out evaluation on synthetic programs") {
  // Three programs whose time falls with feature 0 the same way: the model transfers.
  Dataset d;
  d.feature_names = {"a", "b"};
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  for (const char* p : {"p1", "p2", "p3"})
    for (int i = 0; i < 30; ++i) {
      Sample s;
      s.program = p;
      s.input = "{\"N\":64}";
      const double a = i, b = u(rng);
      s.features = {a, b};
      if (i % 10 == 3)
        s.time_ms = std::nullopt; // failed
      else
        s.time_ms = 1.0 + 0.1 * a;
      s.cost_ms = 5;
      d.samples.push_back(s);
    }
  Evaluation ev = evaluate(d);
  REQUIRE(ev.groups.size() == 3);
  for (const GroupResult& g : ev.groups) {
    CHECK(g.configurations == 30);
    CHECK(g.failed == 3);
    // The relation carries over from the other programs: predictions order them well.
    CHECK(g.spearman > 0.9);
    CHECK(g.model_runs >= 1);
    CHECK(double(g.model_runs) <= g.random_runs);
    CHECK(g.model_curve.size() == 30);
    CHECK(g.model_curve.back() == doctest::Approx(1.0));
  }
  REQUIRE(ev.feature_nmi.size() == 2);
  CHECK(ev.feature_nmi[0].second > ev.feature_nmi[1].second);
  Dataset one = d;
  for (Sample& s : one.samples)
    s.program = "p1";
  CHECK_THROWS_AS(evaluate(one), UserError);
}

TEST_CASE("SVG charts are well-formed text") {
  std::string line = line_chart_svg("t <1>", "runs", "y", {{"a", {0.1, 0.5, 1}, "red", false}});
  CHECK(line.rfind("<svg", 0) == 0);
  CHECK(line.find("t &lt;1&gt;") != std::string::npos);
  CHECK(line.find("</svg>") != std::string::npos);
  std::string bars = bar_chart_svg("nmi", "NMI", {{"x", 0.5}, {"y", 0.25}});
  CHECK(bars.find("<rect") != std::string::npos);
}

TEST_CASE("an evaluation's summary: means, median and worst runs, summed times") {
  auto group = [](int64_t runs, double random_runs, double pearson, double spearman,
                  double model_ms, double random_ms) {
    model::GroupResult g;
    g.model_runs = runs;
    g.random_runs = random_runs;
    g.pearson = pearson;
    g.spearman = spearman;
    g.model_time_ms = model_ms;
    g.random_time_ms = random_ms;
    return g;
  };
  model::Evaluation even;
  even.groups = {group(1, 10, 0.9, 0.8, 100, 1000), group(3, 20, 0.7, 0.6, 200, 2000),
                 group(8, 30, 0.8, 0.4, 300, 3000), group(2, 40, 1.0, 0.2, 400, 4000)};
  const model::EvaluationSummary s = model::summarize(even);
  CHECK(s.inputs == 4);
  CHECK(s.mean_model_runs == doctest::Approx(3.5));   // (1 + 3 + 8 + 2) / 4
  CHECK(s.mean_random_runs == doctest::Approx(25));   // (10 + 20 + 30 + 40) / 4
  CHECK(s.median_model_runs == doctest::Approx(2.5)); // sorted 1 2 3 8: (2 + 3) / 2
  CHECK(s.worst_model_runs == doctest::Approx(8));
  CHECK(s.mean_pearson == doctest::Approx(0.85)); // 3.4 / 4
  CHECK(s.mean_spearman == doctest::Approx(0.5)); // 2.0 / 4
  CHECK(s.model_time_ms == doctest::Approx(1000));
  CHECK(s.random_time_ms == doctest::Approx(10000));
  CHECK(s.time_reduction == doctest::Approx(10));

  model::Evaluation odd;
  odd.groups = {group(5, 1, 0, 0, 0, 50), group(1, 1, 0, 0, 0, 50), group(3, 1, 0, 0, 0, 50)};
  const model::EvaluationSummary o = model::summarize(odd);
  CHECK(o.median_model_runs == doctest::Approx(3)); // sorted 1 3 5
  CHECK(o.time_reduction == 0);                     // no model time: no ratio

  const model::EvaluationSummary none = model::summarize(model::Evaluation{});
  CHECK(none.inputs == 0);
  CHECK(none.mean_model_runs == 0);
  CHECK(none.worst_model_runs == 0);
}
