#include "model/protocol.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace liftx::model {

namespace {

/// Element count of an input, e.g. {"M":512,"N":1024} -> 524288 (the product of its sizes); 0 for
/// an input that is not a JSON object of numbers.
double input_elements(const std::string& input) {
  const nlohmann::json sizes = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!sizes.is_object() || sizes.empty())
    return 0;
  double product = 1;
  for (const auto& [name, value] : sizes.items()) {
    if (!value.is_number())
      return 0;
    product *= value.get<double>();
  }
  return product;
}

/// The positions of `names` in the data's columns; UserError naming the first missing one.
std::vector<int> columns_of(const Dataset& data, const std::vector<std::string>& names,
                            const std::string& user) {
  std::vector<int> columns;
  for (const std::string& name : names) {
    auto it = std::find(data.feature_names.begin(), data.feature_names.end(), name);
    LIFTX_USER_CHECK(it != data.feature_names.end(), "{} uses column {}, which the data lacks",
                     user, name);
    columns.push_back(static_cast<int>(it - data.feature_names.begin()));
  }
  return columns;
}

Model train_setting(const Dataset& data, const std::vector<std::optional<double>>& targets,
                    const std::vector<size_t>& candidates, const Setting& setting) {
  std::vector<size_t> rows;
  for (size_t i : candidates)
    if (targets[i])
      rows.push_back(i);
  LIFTX_USER_CHECK(!rows.empty(), "no successful measurement to train {} on", setting.name);
  Vector y(static_cast<Eigen::Index>(rows.size()));
  std::vector<std::string> groups; // for ranking objectives
  for (size_t r = 0; r < rows.size(); ++r) {
    y[static_cast<Eigen::Index>(r)] = *targets[rows[r]];
    groups.push_back(data.samples[rows[r]].program + "|" + data.samples[rows[r]].input);
  }
  const std::vector<int> columns = columns_of(data, setting.features, "setting " + setting.name);
  std::vector<std::string> names;
  if (columns.empty())
    names = data.feature_names;
  else
    for (int c : columns)
      names.push_back(data.feature_names[size_t(c)]);
  return Model::train(setting.kind, names, feature_matrix(data, rows, columns), y, setting.train,
                      &groups);
}

/// The programs of `rows`, sorted.
std::vector<std::string> programs_of(const Dataset& data, const std::vector<size_t>& rows) {
  std::set<std::string> programs;
  for (size_t i : rows)
    programs.insert(data.samples[i].program);
  return {programs.begin(), programs.end()};
}

bool better(const EvaluationSummary& a, const EvaluationSummary& b) {
  if (a.mean_model_runs != b.mean_model_runs)
    return a.mean_model_runs < b.mean_model_runs;
  return a.mean_pearson > b.mean_pearson;
}

/// Chooses the candidate for training rows `rows` of `data` by the inner folds.
FoldChoice choose(const Dataset& data, const std::vector<std::optional<double>>& targets,
                  const std::vector<size_t>& rows, InnerSplit split,
                  const ProtocolOptions& options) {
  FoldChoice choice;
  if (options.candidates.size() == 1) {
    choice.setting = options.candidates[0].name;
    return choice;
  }
  const std::vector<Fold> folds = inner_folds(data, rows, split, options.inner_folds);
  LIFTX_USER_CHECK(!folds.empty(),
                   "choosing a setting needs at least two programs or sizes to train on");
  size_t best = 0;
  for (size_t c = 0; c < options.candidates.size(); ++c) {
    Evaluation inner;
    for (const Fold& f : folds) {
      const Model m = train_setting(data, targets, f.train, options.candidates[c]);
      for (GroupResult& g :
           judge(m, data, f.test, options.random_orders, options.seed, options.fraction))
        inner.groups.push_back(std::move(g));
    }
    choice.inner.emplace_back(options.candidates[c].name, summarize(inner));
    if (c > 0 && better(choice.inner[c].second, choice.inner[best].second))
      best = c;
  }
  choice.setting = options.candidates[best].name;
  return choice;
}

const Setting& setting_named(const ProtocolOptions& options, const std::string& name) {
  for (const Setting& s : options.candidates)
    if (s.name == name)
      return s;
  LIFTX_UNREACHABLE("no candidate setting {}", name);
}

} // namespace

std::vector<Fold> inner_folds(const Dataset& data, const std::vector<size_t>& rows,
                              InnerSplit split, int max_folds) {
  std::vector<Fold> folds;
  if (split == InnerSplit::size_steps) {
    std::set<double> sizes;
    for (size_t i : rows)
      sizes.insert(input_elements(data.samples[i].input));
    const size_t steps = std::min(sizes.size() - 1, static_cast<size_t>(std::max(max_folds, 1)));
    auto held_out = sizes.rbegin();
    for (size_t step = 0; step < steps; ++step, ++held_out) {
      Fold f;
      f.name = fmt::format("training size step {} ({} elements held out)", step + 1, *held_out);
      for (size_t i : rows) {
        const double elements = input_elements(data.samples[i].input);
        if (elements == *held_out)
          f.test.push_back(i);
        else if (elements < *held_out)
          f.train.push_back(i);
      }
      folds.push_back(std::move(f));
    }
    if (!folds.empty())
      return folds;
    // A single training size: fall back to program groups.
  }
  // Grouped by stencil: another device's rows of a stencil are held out with it, or the inner
  // score would learn the stencil from them.
  std::set<std::string, std::less<>> stencils;
  for (const std::string& program : programs_of(data, rows))
    stencils.emplace(stencil_of(program));
  const size_t count = std::min(stencils.size(), static_cast<size_t>(std::max(max_folds, 2)));
  if (stencils.size() < 2)
    return folds;
  std::map<std::string, size_t, std::less<>> group; // stencil -> inner fold, round robin by name
  for (const std::string& stencil : stencils)
    group.emplace(stencil, group.size() % count);
  folds.resize(count);
  for (size_t g = 0; g < count; ++g)
    folds[g].name = fmt::format("program group {}", g);
  for (size_t i : rows) {
    const size_t g = group.find(stencil_of(data.samples[i].program))->second;
    for (size_t f = 0; f < count; ++f)
      (f == g ? folds[f].test : folds[f].train).push_back(i);
  }
  return folds;
}

std::vector<Fold> leave_one_program_out(const Dataset& data, const std::string& test_prefix) {
  std::vector<size_t> all(data.samples.size());
  std::iota(all.begin(), all.end(), size_t{0});
  std::vector<Fold> folds;
  for (const std::string& program : programs_of(data, all)) {
    if (program.rfind(test_prefix, 0) != 0)
      continue;
    Fold f;
    f.name = program;
    for (size_t i = 0; i < data.samples.size(); ++i)
      (data.samples[i].program == program ? f.test : f.train).push_back(i);
    folds.push_back(std::move(f));
  }
  LIFTX_USER_CHECK(!folds.empty(), "no program{} to hold out",
                   test_prefix.empty() ? "" : " named " + test_prefix + "*");
  return folds;
}

std::vector<Fold> leave_largest_size_out(const Dataset& data) {
  double largest = 0;
  std::string largest_input;
  for (const Sample& s : data.samples)
    if (input_elements(s.input) > largest) {
      largest = input_elements(s.input);
      largest_input = s.input;
    }
  Fold f;
  f.name = "largest size " + largest_input;
  f.inner = InnerSplit::size_steps;
  for (size_t i = 0; i < data.samples.size(); ++i)
    (input_elements(data.samples[i].input) == largest ? f.test : f.train).push_back(i);
  LIFTX_USER_CHECK(!f.train.empty(), "leave-one-size-out needs at least two input sizes");
  return {f};
}

ProtocolResult evaluate_folds(const Dataset& data, const std::vector<Fold>& folds,
                              const ProtocolOptions& options) {
  LIFTX_USER_CHECK(!options.candidates.empty(), "no model setting to evaluate");
  const std::vector<std::optional<double>> targets = normalised_targets(data);
  ProtocolResult result;
  result.evaluation.kind = options.candidates[0].kind;
  result.evaluation.random_orders = options.random_orders;
  for (const Fold& fold : folds) {
    LIFTX_USER_CHECK(!fold.train.empty() && !fold.test.empty(),
                     "fold {} has no training or no test rows", fold.name);
    if (options.progress)
      options.progress(
          fmt::format("fold {} of {}: {}", &fold - folds.data() + 1, folds.size(), fold.name));
    FoldChoice choice = choose(data, targets, fold.train, fold.inner, options);
    choice.fold = fold.name;
    const Model m =
        train_setting(data, targets, fold.train, setting_named(options, choice.setting));
    for (GroupResult& g :
         judge(m, data, fold.test, options.random_orders, options.seed, options.fraction))
      result.evaluation.groups.push_back(std::move(g));
    result.choices.push_back(std::move(choice));
  }
  return result;
}

ProtocolResult evaluate_transfer(const Dataset& train, const Dataset& test,
                                 const ProtocolOptions& options) {
  LIFTX_USER_CHECK(!options.candidates.empty(), "no model setting to evaluate");
  LIFTX_USER_CHECK(train.feature_names == test.feature_names,
                   "the training and test data have different feature columns");
  const std::vector<std::optional<double>> targets = normalised_targets(train);
  std::vector<size_t> train_rows(train.samples.size()), test_rows(test.samples.size());
  std::iota(train_rows.begin(), train_rows.end(), size_t{0});
  std::iota(test_rows.begin(), test_rows.end(), size_t{0});
  ProtocolResult result;
  result.evaluation.kind = options.candidates[0].kind;
  result.evaluation.random_orders = options.random_orders;
  if (options.progress)
    options.progress(fmt::format("choosing among {} settings on the training data, then judging "
                                 "on the test data",
                                 options.candidates.size()));
  FoldChoice choice = choose(train, targets, train_rows, InnerSplit::programs, options);
  choice.fold = "transfer";
  const Model m = train_setting(train, targets, train_rows, setting_named(options, choice.setting));
  result.evaluation.groups =
      judge(m, test, test_rows, options.random_orders, options.seed, options.fraction);
  result.choices.push_back(std::move(choice));
  return result;
}

Model train_on(const Dataset& data, const std::vector<size_t>& rows, const Setting& setting) {
  return train_setting(data, normalised_targets(data), rows, setting);
}

Dataset select_columns(const Dataset& data, const std::vector<std::string>& names) {
  const std::vector<int> columns = columns_of(data, names, "the column selection");
  Dataset out;
  out.feature_names = names;
  out.samples = data.samples;
  out.program_kinds = data.program_kinds;
  for (Sample& sample : out.samples) {
    std::vector<double> kept;
    kept.reserve(columns.size());
    for (int c : columns)
      kept.push_back(sample.features[size_t(c)]);
    sample.features = std::move(kept);
  }
  return out;
}

std::vector<GroupResult> judge(const Model& model, const Dataset& data,
                               const std::vector<size_t>& rows, int orders, uint64_t seed,
                               double fraction) {
  const std::vector<std::optional<double>> targets = normalised_targets(data);
  const Vector predicted =
      model.predict(feature_matrix(data, rows, model.feature_indices(data.feature_names)));
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> by_group; // -> positions
  for (size_t t = 0; t < rows.size(); ++t)
    by_group[{data.samples[rows[t]].program, data.samples[rows[t]].input}].push_back(t);
  std::vector<GroupResult> out;
  for (const auto& [key, positions] : by_group) {
    GroupResult g;
    g.program = key.first;
    g.input = key.second;
    g.configurations = static_cast<int>(positions.size());
    std::vector<Trial> trials;
    std::vector<double> pred_ok, meas_ok, pred_all;
    std::map<std::string, int64_t> kernel_ids;
    for (size_t t : positions) {
      const size_t row = rows[t];
      const Sample& s = data.samples[row];
      const double p = predicted[static_cast<Eigen::Index>(t)];
      const int64_t kernel =
          s.kernel.empty()
              ? -1
              : kernel_ids.emplace(s.kernel, static_cast<int64_t>(kernel_ids.size())).first->second;
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
    g.predicted = std::move(pred_ok);
    g.measured = std::move(meas_ok);
    // Equal predictions in a seeded random order: the rows' order follows the database's, which
    // is correlated with speed and would flatter a model that predicts ties.
    std::vector<size_t> order(trials.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::mt19937_64 rng(seed ^ std::hash<std::string>{}(g.program + "|" + g.input));
    std::shuffle(order.begin(), order.end(), rng);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return pred_all[a] > pred_all[b]; });
    g.model_runs = runs_to_fraction(trials, order, fraction);
    g.model_time_ms = time_to_fraction(trials, order, fraction);
    g.model_curve = best_so_far(trials, order);
    RandomOrderStats r = random_orders(trials, orders, seed, fraction);
    g.random_runs = r.mean_runs;
    g.random_time_ms = r.mean_time_ms;
    g.random_curve = std::move(r.mean_best_so_far);
    g.run_speedup = g.model_runs > 0 ? g.random_runs / double(g.model_runs) : 0;
    g.time_speedup = g.model_time_ms > 0 ? g.random_time_ms / g.model_time_ms : 0;
    out.push_back(std::move(g));
  }
  return out;
}

} // namespace liftx::model
