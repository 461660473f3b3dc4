#include "model/evaluate.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace liftx::model {

namespace {

std::string group_key(const Sample& s) {
  return s.program + "\x1f" + s.input;
}

Matrix feature_matrix(const Dataset& data, const std::vector<size_t>& rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()),
           static_cast<Eigen::Index>(data.feature_names.size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    const Sample& s = data.samples[rows[r]];
    LIFTX_USER_CHECK(s.features.size() == data.feature_names.size(),
                     "sample of {} has {} features, expected {}", s.program, s.features.size(),
                     data.feature_names.size());
    for (size_t c = 0; c < s.features.size(); ++c)
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = s.features[c];
  }
  return m;
}

Model train_on(const Dataset& data, const std::vector<std::optional<double>>& targets,
               const std::vector<size_t>& candidates, Kind kind, const TrainOptions& options) {
  std::vector<size_t> rows;
  for (size_t i : candidates)
    if (targets[i])
      rows.push_back(i);
  Vector y(static_cast<Eigen::Index>(rows.size()));
  std::vector<std::string> groups; // for ranking objectives
  for (size_t r = 0; r < rows.size(); ++r) {
    y[static_cast<Eigen::Index>(r)] = *targets[rows[r]];
    groups.push_back(data.samples[rows[r]].program + "|" + data.samples[rows[r]].input);
  }
  return Model::train(kind, data.feature_names, feature_matrix(data, rows), y, options, &groups);
}

} // namespace

std::vector<std::optional<double>> normalised_targets(const Dataset& data) {
  std::map<std::string, double> best;
  for (const Sample& s : data.samples)
    if (s.time_ms) {
      LIFTX_USER_CHECK(*s.time_ms > 0, "non-positive time {} ms for {}", *s.time_ms, s.program);
      auto [it, inserted] = best.emplace(group_key(s), *s.time_ms);
      if (!inserted)
        it->second = std::min(it->second, *s.time_ms);
    }
  std::vector<std::optional<double>> out;
  for (const Sample& s : data.samples)
    out.push_back(s.time_ms ? std::optional<double>(best[group_key(s)] / *s.time_ms)
                            : std::nullopt);
  return out;
}

Model train(const Dataset& data, Kind kind, const TrainOptions& options) {
  std::vector<size_t> all(data.samples.size());
  std::iota(all.begin(), all.end(), size_t{0});
  return train_on(data, normalised_targets(data), all, kind, options);
}

Evaluation evaluate(const Dataset& data, const EvaluateOptions& options) {
  std::vector<std::string> programs;
  for (const Sample& s : data.samples)
    if (std::find(programs.begin(), programs.end(), s.program) == programs.end())
      programs.push_back(s.program);
  std::sort(programs.begin(), programs.end());
  LIFTX_USER_CHECK(programs.size() >= 2,
                   "leave-one-out evaluation needs at least two programs; the data has {}",
                   programs.size());
  const auto targets = normalised_targets(data);
  Evaluation ev;
  ev.kind = options.kind;
  ev.random_orders = options.random_orders;
  for (const std::string& program : programs) {
    std::vector<size_t> train_rows, test_rows;
    for (size_t i = 0; i < data.samples.size(); ++i)
      (data.samples[i].program == program ? test_rows : train_rows).push_back(i);
    const Model m = train_on(data, targets, train_rows, options.kind, options.train);
    const Vector predicted = m.predict(feature_matrix(data, test_rows));
    // Per input of the held-out program.
    std::map<std::string, std::vector<size_t>> by_input; // input -> positions in test_rows
    for (size_t t = 0; t < test_rows.size(); ++t)
      by_input[data.samples[test_rows[t]].input].push_back(t);
    for (const auto& [input, positions] : by_input) {
      GroupResult g;
      g.program = program;
      g.input = input;
      g.configurations = static_cast<int>(positions.size());
      std::vector<Trial> trials;
      std::vector<double> pred_ok, meas_ok, pred_all;
      std::map<std::string, int64_t> kernel_ids;
      for (size_t t : positions) {
        const size_t row = test_rows[t];
        const Sample& s = data.samples[row];
        const double p = predicted[static_cast<Eigen::Index>(t)];
        const int64_t kernel =
            s.kernel.empty() ? -1
                             : kernel_ids.emplace(s.kernel, static_cast<int64_t>(kernel_ids.size()))
                                   .first->second;
        trials.push_back({targets[row], s.cost_ms, s.build_ms, kernel});
        pred_all.push_back(p);
        if (targets[row]) {
          pred_ok.push_back(p);
          meas_ok.push_back(*targets[row]);
        } else {
          ++g.failed;
        }
      }
      g.pearson = pearson(pred_ok, meas_ok);
      g.spearman = spearman(pred_ok, meas_ok);
      std::vector<size_t> order(trials.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return pred_all[a] > pred_all[b]; });
      g.model_runs = runs_to_fraction(trials, order, options.fraction);
      g.model_time_ms = time_to_fraction(trials, order, options.fraction);
      g.model_curve = best_so_far(trials, order);
      RandomOrderStats r =
          random_orders(trials, options.random_orders, options.seed, options.fraction);
      g.random_runs = r.mean_runs;
      g.random_time_ms = r.mean_time_ms;
      g.random_curve = std::move(r.mean_best_so_far);
      g.run_speedup = g.model_runs > 0 ? g.random_runs / double(g.model_runs) : 0;
      g.time_speedup = g.model_time_ms > 0 ? g.random_time_ms / g.model_time_ms : 0;
      ev.groups.push_back(std::move(g));
    }
  }
  // Fig. 4: how much each feature alone tells about performance.
  std::vector<double> y;
  std::vector<size_t> ok;
  for (size_t i = 0; i < data.samples.size(); ++i)
    if (targets[i]) {
      ok.push_back(i);
      y.push_back(*targets[i]);
    }
  for (size_t c = 0; c < data.feature_names.size(); ++c) {
    std::vector<double> x;
    for (size_t i : ok)
      x.push_back(data.samples[i].features[c]);
    ev.feature_nmi.emplace_back(data.feature_names[c], normalised_mutual_information(x, y));
  }
  return ev;
}

EvaluationSummary summarize(const Evaluation& evaluation) {
  EvaluationSummary s;
  s.inputs = evaluation.groups.size();
  if (s.inputs == 0)
    return s;
  std::vector<double> runs;
  for (const GroupResult& g : evaluation.groups) {
    s.mean_spearman += g.spearman;
    s.mean_pearson += g.pearson;
    s.mean_model_runs += static_cast<double>(g.model_runs);
    s.mean_random_runs += g.random_runs;
    s.model_time_ms += g.model_time_ms;
    s.random_time_ms += g.random_time_ms;
    runs.push_back(static_cast<double>(g.model_runs));
  }
  const auto n = static_cast<double>(s.inputs);
  s.mean_spearman /= n;
  s.mean_pearson /= n;
  s.mean_model_runs /= n;
  s.mean_random_runs /= n;
  std::sort(runs.begin(), runs.end());
  const size_t mid = runs.size() / 2;
  s.median_model_runs = runs.size() % 2 ? runs[mid] : (runs[mid - 1] + runs[mid]) / 2;
  s.worst_model_runs = runs.back();
  s.time_reduction = s.model_time_ms > 0 ? s.random_time_ms / s.model_time_ms : 0;
  return s;
}

} // namespace liftx::model
