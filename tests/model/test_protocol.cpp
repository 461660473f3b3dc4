// Evaluation protocols with nested selection (model/protocol.hpp): the folds hold out what they
// say, the setting is chosen on training rows only, and ties do not ride on row order.
#include "model/protocol.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <random>
#include <set>

using namespace liftx;
using namespace liftx::model;

namespace {

/// Programs p0..p{programs-1} at two sizes, 40 configurations each. Time falls with column
/// "signal"; column "noise" is random. Programs named in `inverted` run the other way round.
Dataset synthetic(int programs, const std::set<std::string>& inverted = {}) {
  Dataset d;
  d.feature_names = {"signal", "noise"};
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (int p = 0; p < programs; ++p)
    for (const char* input : {"{\"M\":64,\"N\":64}", "{\"M\":128,\"N\":256}"})
      for (int i = 0; i < 40; ++i) {
        Sample s;
        s.program = "p" + std::to_string(p);
        s.input = input;
        const double signal = i + u(rng);
        s.features = {signal, u(rng)};
        const bool inv = inverted.count(s.program) > 0;
        s.time_ms = inv ? 1.0 + 0.1 * (40 - signal) : 1.0 + 0.1 * signal;
        s.cost_ms = 1;
        d.samples.push_back(s);
      }
  return d;
}

Setting knn_on(const std::string& name, std::vector<std::string> columns) {
  Setting s;
  s.name = name;
  s.kind = Kind::knn;
  s.train.k = 3;
  s.features = std::move(columns);
  return s;
}

} // namespace

TEST_CASE("leave one program out: each fold holds out one program, all of its rows") {
  const Dataset d = synthetic(4);
  const std::vector<Fold> folds = leave_one_program_out(d);
  REQUIRE(folds.size() == 4);
  for (const Fold& f : folds) {
    CHECK(f.test.size() == 80);
    CHECK(f.train.size() == 240);
    for (size_t i : f.test)
      CHECK(d.samples[i].program == f.name);
    for (size_t i : f.train)
      CHECK(d.samples[i].program != f.name);
  }
  CHECK(leave_one_program_out(d, "p3").size() == 1);
  CHECK_THROWS_AS(leave_one_program_out(d, "synth_"), UserError);
}

TEST_CASE("leave the largest size out: the test rows are the largest input, by element count") {
  const Dataset d = synthetic(3);
  const std::vector<Fold> folds = leave_largest_size_out(d);
  REQUIRE(folds.size() == 1);
  CHECK(folds[0].inner == InnerSplit::size_steps);
  CHECK(folds[0].test.size() == 120);
  for (size_t i : folds[0].test)
    CHECK(d.samples[i].input == "{\"M\":128,\"N\":256}");
  Dataset one_size = d;
  for (Sample& s : one_size.samples)
    s.input = "{\"N\":8}";
  CHECK_THROWS_AS(leave_largest_size_out(one_size), UserError);
}

TEST_CASE("size steps: each training size but the smallest held out in turn, trained on smaller") {
  Dataset d;
  d.feature_names = {"x"};
  const std::vector<std::string> inputs = {"{\"M\":512,\"N\":512}", "{\"M\":64,\"N\":64}",
                                           "{\"M\":128,\"N\":128}", "{\"M\":256,\"N\":128}"};
  for (const std::string program : {"a", "b"})
    for (const std::string& input : inputs)
      for (int i = 0; i < 3; ++i)
        d.samples.push_back({program, input, {double(i)}, 1.0 + i, 1, 0, "", "", {}});
  std::vector<size_t> rows(d.samples.size());
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i] = i;
  auto elements = [&](size_t row) {
    const nlohmann::json sizes = nlohmann::json::parse(d.samples[row].input);
    return sizes.at("M").get<int>() * sizes.at("N").get<int>();
  };
  const std::vector<Fold> folds = inner_folds(d, rows, InnerSplit::size_steps, 4);
  REQUIRE(folds.size() == 3); // 512x512, 256x128, 128x128 held out; 64x64 only trains
  const int held_out[] = {512 * 512, 256 * 128, 128 * 128};
  for (size_t f = 0; f < folds.size(); ++f) {
    CAPTURE(folds[f].name);
    CHECK(folds[f].test.size() == 6);
    for (size_t i : folds[f].test)
      CHECK(elements(i) == held_out[f]);
    CHECK(folds[f].train.size() == 6 * (folds.size() - f));
    for (size_t i : folds[f].train)
      CHECK(elements(i) < held_out[f]);
  }
  CHECK(inner_folds(d, rows, InnerSplit::size_steps, 2).size() == 2);
  // One training size: nothing to extrapolate to, so program groups.
  std::vector<size_t> one_size;
  for (size_t i : rows)
    if (elements(i) == 64 * 64)
      one_size.push_back(i);
  const std::vector<Fold> groups = inner_folds(d, one_size, InnerSplit::size_steps, 4);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].name == "program group 0");
}

TEST_CASE("program groups hold out another device's rows of a stencil with the stencil") {
  Dataset d;
  d.feature_names = {"x"};
  for (const std::string program : {"a", "b", "c", "a@gpu:2", "c@gpu:2"})
    for (int i = 0; i < 2; ++i)
      d.samples.push_back({program, "{\"N\":8}", {double(i)}, 1.0 + i, 1, 0, "", "", {}});
  std::vector<size_t> rows(d.samples.size());
  std::iota(rows.begin(), rows.end(), size_t{0});
  const std::vector<Fold> folds = inner_folds(d, rows, InnerSplit::programs, 4);
  REQUIRE(folds.size() == 3); // three stencils, not five programs
  for (const Fold& f : folds) {
    CAPTURE(f.name);
    std::set<std::string> held_out, trained;
    for (size_t i : f.test)
      held_out.emplace(stencil_of(d.samples[i].program));
    for (size_t i : f.train)
      trained.emplace(stencil_of(d.samples[i].program));
    CHECK(held_out.size() == 1);
    for (const std::string& stencil : held_out)
      CHECK_FALSE(trained.contains(stencil));
    CHECK(f.test.size() + f.train.size() == rows.size());
  }
  CHECK(stencil_of("jacobi@nvidia:h200:580") == "jacobi");
  CHECK(stencil_of("jacobi") == "jacobi");
}

TEST_CASE("nested selection chooses the informative setting inside the training folds") {
  const Dataset d = synthetic(5);
  ProtocolOptions options;
  options.candidates = {knn_on("noise only", {"noise"}), knn_on("signal", {"signal"})};
  const ProtocolResult r = evaluate_folds(d, leave_one_program_out(d), options);
  REQUIRE(r.choices.size() == 5);
  for (const FoldChoice& c : r.choices) {
    CHECK(c.setting == "signal");
    REQUIRE(c.inner.size() == 2);
    CHECK(c.inner[1].second.mean_model_runs < c.inner[0].second.mean_model_runs);
  }
  REQUIRE(r.evaluation.groups.size() == 10);
  for (const GroupResult& g : r.evaluation.groups)
    CHECK(g.spearman > 0.9);
}

TEST_CASE("the held-out program never takes part in choosing its setting") {
  // p4 runs the other way round: a choice that saw it would not be the same as the others'.
  // Inner scores are computed from training rows only, so p4's fold scores its candidates on
  // p0..p3 exactly as a dataset without p4 would.
  const Dataset d = synthetic(5, {"p4"});
  ProtocolOptions options;
  options.candidates = {knn_on("noise only", {"noise"}), knn_on("signal", {"signal"})};
  const ProtocolResult r = evaluate_folds(d, leave_one_program_out(d, "p4"), options);
  REQUIRE(r.choices.size() == 1);
  Dataset without = synthetic(4);
  std::vector<size_t> all(without.samples.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  // The same inner evaluation on the four training programs alone.
  const ProtocolResult alone = evaluate_transfer(without, without, options);
  REQUIRE(alone.choices.size() == 1);
  REQUIRE(alone.choices[0].inner.size() == 2);
  for (size_t c = 0; c < 2; ++c)
    CHECK(r.choices[0].inner[c].second.mean_model_runs ==
          alone.choices[0].inner[c].second.mean_model_runs);
  CHECK(r.choices[0].setting == "signal");
  // ... and on p4 itself the informative setting now orders backwards.
  REQUIRE(r.evaluation.groups.size() == 2);
  for (const GroupResult& g : r.evaluation.groups)
    CHECK(g.spearman < -0.9);
}

TEST_CASE("transfer trains on one dataset and judges every input of the other") {
  const Dataset train = synthetic(3);
  const Dataset test = synthetic(2);
  ProtocolOptions options;
  options.candidates = {knn_on("signal", {"signal"})};
  const ProtocolResult r = evaluate_transfer(train, test, options);
  CHECK(r.evaluation.groups.size() == 4);
  Dataset other = test;
  other.feature_names = {"signal", "other"};
  CHECK_THROWS_AS(evaluate_transfer(train, other, options), UserError);
}

TEST_CASE("equal predictions are tried in a seeded random order, not in row order") {
  // The fastest configuration comes first in every group, and a group's rows all look alike, so
  // the model predicts one value per group: it must not find the best in one run by riding on
  // the row order.
  Dataset d;
  d.feature_names = {"constant", "also"};
  for (int g = 0; g < 20; ++g)
    for (int i = 0; i < 50; ++i) {
      Sample s;
      s.program = "p" + std::to_string(g % 2);
      s.input = "{\"N\":" + std::to_string(g) + "}";
      s.features = {double(g), 2.0 * g};
      s.time_ms = i == 0 ? 1.0 : 10.0;
      d.samples.push_back(s);
    }
  Setting flat = knn_on("flat", {});
  ProtocolOptions options;
  options.candidates = {flat};
  const ProtocolResult r = evaluate_folds(d, leave_one_program_out(d), options);
  REQUIRE(r.evaluation.groups.size() == 20);
  double mean = 0;
  for (const GroupResult& g : r.evaluation.groups)
    mean += double(g.model_runs) / 20;
  CHECK(mean > 5); // random: 25.5 expected
  // The same seed gives the same order.
  const ProtocolResult again = evaluate_folds(d, leave_one_program_out(d), options);
  for (size_t i = 0; i < 20; ++i)
    CHECK(again.evaluation.groups[i].model_runs == r.evaluation.groups[i].model_runs);
}

TEST_CASE("select_columns keeps the named columns in the given order") {
  const Dataset d = synthetic(2);
  const Dataset s = select_columns(d, {"noise", "signal"});
  CHECK(s.feature_names == std::vector<std::string>{"noise", "signal"});
  CHECK(s.samples[5].features[0] == d.samples[5].features[1]);
  CHECK_THROWS_AS(select_columns(d, {"missing"}), UserError);
}
