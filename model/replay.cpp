#include "model/replay.hpp"

#include "model/kind_spread.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace liftx::model {

std::string to_string(ReplayStrategy strategy) {
  switch (strategy) {
  case ReplayStrategy::static_order:
    return "static";
  case ReplayStrategy::online:
    return "online";
  case ReplayStrategy::online_knn:
    return "online-knn";
  case ReplayStrategy::online_ei:
    return "online-ei";
  case ReplayStrategy::random:
    return "random";
  case ReplayStrategy::hillclimb:
    return "hillclimb";
  case ReplayStrategy::static_spread:
    return "static-spread";
  case ReplayStrategy::online_spread:
    return "online-spread";
  }
  return "?";
}

ReplayStrategy parse_replay_strategy(const std::string& text) {
  for (ReplayStrategy s :
       {ReplayStrategy::static_order, ReplayStrategy::online, ReplayStrategy::online_knn,
        ReplayStrategy::online_ei, ReplayStrategy::random, ReplayStrategy::hillclimb,
        ReplayStrategy::static_spread, ReplayStrategy::online_spread})
    if (to_string(s) == text)
      return s;
  throw UserError(fmt::format("unknown replay strategy '{}' (static, online, online-knn, "
                              "online-ei, random, hillclimb, static-spread or online-spread)",
                              text));
}

namespace {

/// The positions of `names` in the data's columns (all columns when empty).
std::vector<int> columns_of(const Dataset& data, const std::vector<std::string>& names) {
  std::vector<int> columns;
  for (const std::string& name : names) {
    auto it = std::find(data.feature_names.begin(), data.feature_names.end(), name);
    LIFTX_USER_CHECK(it != data.feature_names.end(),
                     "the prior uses column {}, which the data lacks", name);
    columns.push_back(static_cast<int>(it - data.feature_names.begin()));
  }
  return columns;
}

Model train_prior(const Dataset& data, const std::vector<std::optional<double>>& targets,
                  const std::vector<size_t>& candidates, const Setting& setting) {
  std::vector<size_t> rows;
  for (size_t i : candidates)
    if (targets[i])
      rows.push_back(i);
  LIFTX_USER_CHECK(!rows.empty(), "no successful measurement to train the prior on");
  Vector y(static_cast<Eigen::Index>(rows.size()));
  std::vector<std::string> groups;
  for (size_t r = 0; r < rows.size(); ++r) {
    y[static_cast<Eigen::Index>(r)] = *targets[rows[r]];
    groups.push_back(data.samples[rows[r]].program + "|" + data.samples[rows[r]].input);
  }
  const std::vector<int> columns = columns_of(data, setting.features);
  std::vector<std::string> names;
  for (int c : columns)
    names.push_back(data.feature_names[size_t(c)]);
  return Model::train(setting.kind, columns.empty() ? data.feature_names : names,
                      feature_matrix(data, rows, columns), y, setting.train, &groups);
}

/// Element count of an input ({"M":512,"N":512} -> 262144); 0 when it is not sizes.
double input_elements(const std::string& input) {
  const nlohmann::json sizes = nlohmann::json::parse(input, nullptr, false);
  if (!sizes.is_object() || sizes.empty())
    return 0;
  double product = 1;
  for (const auto& [name, value] : sizes.items())
    product *= value.is_number() ? value.get<double>() : 0;
  return product;
}

/// The pool's normalised throughput per row (0 for a failed run).
std::vector<double> truth_of(const Dataset& data, const std::vector<size_t>& rows) {
  double best = 0;
  for (size_t i : rows)
    if (data.samples[i].time_ms)
      best = std::max(best, 1 / *data.samples[i].time_ms);
  std::vector<double> out;
  for (size_t i : rows)
    out.push_back(data.samples[i].time_ms && best > 0 ? 1 / *data.samples[i].time_ms / best : 0);
  return out;
}

/// Runs until the best found reaches `fraction`, budget + 1 when it does not within the budget.
int64_t runs_to(const std::vector<size_t>& order, const std::vector<double>& truth, double fraction,
                int64_t budget) {
  for (size_t r = 0; r < order.size() && int64_t(r) < budget; ++r)
    if (truth[order[r]] >= fraction - 1e-12)
      return int64_t(r) + 1;
  return budget + 1;
}

ReplayOutcome outcome_of(ReplayStrategy strategy, const std::vector<size_t>& order,
                         const std::vector<double>& truth, int64_t budget) {
  ReplayOutcome o;
  o.strategy = strategy;
  o.runs_to_90 = double(runs_to(order, truth, 0.9, budget));
  o.runs_to_95 = double(runs_to(order, truth, 0.95, budget));
  o.censored_90 = o.runs_to_90 > double(budget);
  o.censored_95 = o.runs_to_95 > double(budget);
  return o;
}

/// Best predicted first; ties in a seeded random order (row order correlates with speed).
std::vector<size_t> static_order(const std::vector<double>& prior, uint64_t seed) {
  std::vector<size_t> order(prior.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return prior[a] > prior[b]; });
  return order;
}

/// Each pool position's kind of kernel (its rewrite strategy) as an id.
std::vector<int64_t> kinds_of(const Dataset& data, const std::vector<size_t>& rows) {
  std::map<std::string, int64_t> ids;
  std::vector<int64_t> out;
  for (size_t i : rows)
    out.push_back(ids.emplace(data.samples[i].strategy, int64_t(ids.size())).first->second);
  return out;
}

/// Pool positions that differ from `i` in exactly one coordinate, with its rewrite strategy.
std::vector<std::vector<size_t>> neighbourhoods(const Dataset& data,
                                                const std::vector<size_t>& rows) {
  auto differences = [&](const Sample& a, const Sample& b) {
    std::set<std::string> names;
    for (const auto& [k, v] : a.coordinates)
      names.insert(k);
    for (const auto& [k, v] : b.coordinates)
      names.insert(k);
    int diff = 0;
    for (const std::string& name : names) {
      auto ia = a.coordinates.find(name), ib = b.coordinates.find(name);
      diff += ia == a.coordinates.end() || ib == b.coordinates.end() || ia->second != ib->second;
    }
    return diff;
  };
  std::vector<std::vector<size_t>> out(rows.size());
  for (size_t a = 0; a < rows.size(); ++a)
    for (size_t b = a + 1; b < rows.size(); ++b) {
      const Sample& sa = data.samples[rows[a]];
      const Sample& sb = data.samples[rows[b]];
      if (sa.strategy == sb.strategy && differences(sa, sb) == 1) {
        out[a].push_back(b);
        out[b].push_back(a);
      }
    }
  return out;
}

std::vector<size_t> hillclimb_order(const std::vector<std::vector<size_t>>& neighbours,
                                    const std::vector<size_t>& by_prior,
                                    const std::vector<double>& truth, int64_t budget) {
  std::vector<size_t> rank(by_prior.size()), order;
  for (size_t r = 0; r < by_prior.size(); ++r)
    rank[by_prior[r]] = r;
  std::vector<bool> measured(by_prior.size(), false);
  std::optional<size_t> best;
  while (int64_t(order.size()) < budget && order.size() < by_prior.size()) {
    std::optional<size_t> next;
    if (best)
      for (size_t j : neighbours[*best])
        if (!measured[j] && (!next || rank[j] < rank[*next]))
          next = j;
    for (size_t r = 0; !next && r < by_prior.size(); ++r)
      if (!measured[by_prior[r]])
        next = by_prior[r];
    measured[*next] = true;
    order.push_back(*next);
    if (truth[*next] > 0 && (!best || truth[*next] > truth[*best]))
      best = *next;
  }
  return order;
}

/// Each pool position's launch shape (launch_shape_of) from its coordinates ("dims", "local0"..);
/// -1 where they are missing or not numbers (a runtime-chosen work-group).
std::vector<int64_t> launch_shapes_of(const Dataset& data, const std::vector<size_t>& rows) {
  auto number = [](const std::map<std::string, std::string>& c,
                   const std::string& name) -> std::optional<int64_t> {
    const auto it = c.find(name);
    int64_t value = 0;
    if (it == c.end() ||
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), value).ec !=
            std::errc())
      return std::nullopt;
    return value;
  };
  std::vector<int64_t> out;
  for (size_t i : rows) {
    const auto& c = data.samples[i].coordinates;
    const std::optional<int64_t> dims = number(c, "dims");
    std::array<int64_t, 3> local{1, 1, 1};
    bool known = dims && *dims >= 1 && *dims <= 3;
    for (int64_t d = 0; known && d < *dims; ++d) {
      const std::optional<int64_t> size = number(c, fmt::format("local{}", d));
      known = size.has_value();
      local[size_t(d)] = size.value_or(0);
    }
    out.push_back(known ? launch_shape_of(int(*dims), local) : -1);
  }
  return out;
}

ReplayOutcome online_outcome(ReplayStrategy strategy, const Dataset& data,
                             const std::vector<size_t>& rows, const std::vector<double>& prior,
                             const Matrix& prior_rows, const std::vector<double>& truth,
                             const ReplayOptions& options) {
  OnlineOptions online = options.online;
  online.method = strategy == ReplayStrategy::online_knn ? OnlineMethod::knn : OnlineMethod::gp;
  if (strategy == ReplayStrategy::online_ei)
    online.acquisition = OnlineAcquisition::expected_improvement;
  if (strategy == ReplayStrategy::online_spread) {
    online.spread_kinds = options.spread_kinds;
    online.kind_correlation = options.kind_correlation;
  }
  OnlineRanker ranker(prior, prior_rows, online);
  ranker.set_kinds(kinds_of(data, rows));
  // Samples with the same kernel id (one build) are launches of one kernel; an empty id is a
  // kernel of its own.
  std::map<std::string, int64_t> ids;
  std::vector<int64_t> kernel_of;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string& k = data.samples[rows[r]].kernel;
    kernel_of.push_back(k.empty() ? -1 - int64_t(r)
                                  : ids.emplace(k, int64_t(ids.size())).first->second);
  }
  ranker.set_kernels(std::move(kernel_of));
  ranker.set_launch_shapes(launch_shapes_of(data, rows));
  std::vector<size_t> order;
  int64_t auto_runs = 0;
  const auto budget = std::min<int64_t>(options.budget, int64_t(rows.size()));
  while (int64_t(order.size()) < budget) {
    const std::vector<size_t> batch =
        ranker.next_batch(std::min<size_t>(options.batch, size_t(budget) - order.size()));
    for (size_t i : batch) {
      order.push_back(i);
      ranker.observe(i, data.samples[rows[i]].time_ms);
    }
    if (!auto_runs && ranker.remaining_gain() < options.stop_gain)
      auto_runs = int64_t(order.size());
  }
  ReplayOutcome o = outcome_of(strategy, order, truth, options.budget);
  if (auto_runs) {
    o.auto_runs = auto_runs;
    for (int64_t r = 0; r < auto_runs; ++r)
      o.auto_fraction = std::max(o.auto_fraction, truth[order[size_t(r)]]);
  }
  return o;
}

ReplayOutcome random_outcome(const std::vector<double>& truth, const ReplayOptions& options) {
  ReplayOutcome mean;
  mean.strategy = ReplayStrategy::random;
  for (int s = 0; s < options.random_seeds; ++s) {
    std::vector<size_t> order(truth.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::shuffle(order.begin(), order.end(), std::mt19937_64(options.seed + uint64_t(s)));
    const ReplayOutcome o = outcome_of(ReplayStrategy::random, order, truth, options.budget);
    mean.runs_to_90 += o.runs_to_90 / options.random_seeds;
    mean.runs_to_95 += o.runs_to_95 / options.random_seeds;
    mean.censored_90 = mean.censored_90 || o.censored_90;
    mean.censored_95 = mean.censored_95 || o.censored_95;
  }
  return mean;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

} // namespace

ReplayGroup replay_group(const Dataset& data, const std::vector<size_t>& rows,
                         const std::vector<double>& prior, const Matrix& prior_rows,
                         const ReplayOptions& options) {
  LIFTX_USER_CHECK(!rows.empty() && prior.size() == rows.size(),
                   "replay: {} prior predictions for {} variants", prior.size(), rows.size());
  ReplayGroup g;
  g.program = data.samples[rows[0]].program;
  g.input = data.samples[rows[0]].input;
  g.pool = int(rows.size());
  const std::vector<double> truth = truth_of(data, rows);
  g.failed = int(std::count(truth.begin(), truth.end(), 0.0));
  const std::vector<size_t> by_prior = static_order(prior, options.seed);
  for (ReplayStrategy s : options.strategies) {
    switch (s) {
    case ReplayStrategy::static_order:
      g.outcomes.push_back(outcome_of(s, by_prior, truth, options.budget));
      break;
    case ReplayStrategy::static_spread:
      g.outcomes.push_back(
          outcome_of(s, spread_over_kinds(by_prior, kinds_of(data, rows), options.spread_kinds),
                     truth, options.budget));
      break;
    case ReplayStrategy::online:
    case ReplayStrategy::online_knn:
    case ReplayStrategy::online_ei:
    case ReplayStrategy::online_spread:
      g.outcomes.push_back(online_outcome(s, data, rows, prior, prior_rows, truth, options));
      break;
    case ReplayStrategy::random:
      g.outcomes.push_back(random_outcome(truth, options));
      break;
    case ReplayStrategy::hillclimb:
      g.outcomes.push_back(outcome_of(
          s, hillclimb_order(neighbourhoods(data, rows), by_prior, truth, options.budget), truth,
          options.budget));
      break;
    }
  }
  return g;
}

ReplayResult replay(const Dataset& data, const ReplayOptions& options) {
  LIFTX_USER_CHECK(options.budget >= 1, "replay: the budget must be at least 1 run");
  LIFTX_USER_CHECK(options.batch >= 1, "replay: the batch must hold at least 1 variant");
  LIFTX_USER_CHECK(!options.prior_data || options.prior_data->feature_names == data.feature_names,
                   "replay: the prior's data and the replayed data have different feature columns");
  const Dataset& prior_data = options.prior_data ? *options.prior_data : data;
  const std::vector<std::optional<double>> prior_targets = normalised_targets(prior_data);
  const std::vector<int> columns = columns_of(data, options.prior.features);
  ReplayResult result;
  for (const Fold& fold : leave_one_program_out(data)) {
    if (options.replayed && !options.replayed(fold.name))
      continue;
    std::map<std::string, std::vector<size_t>> inputs; // the fold's rows per input
    for (size_t i : fold.test)
      inputs[data.samples[i].input].push_back(i);
    if (options.fixed_prior) {
      const Model& prior = options.fixed_prior->for_kind(kind_of(data, fold.name));
      const std::vector<int> model_columns = prior.feature_indices(data.feature_names);
      for (const auto& [input, rows] : inputs) {
        const Matrix raw = feature_matrix(data, rows, model_columns);
        const Vector predicted = prior.predict(raw);
        result.groups.push_back(replay_group(
            data, rows, std::vector<double>(predicted.begin(), predicted.end()), raw, options));
      }
      continue;
    }
    if (options.progress)
      options.progress(fmt::format("training the prior without {}", fold.name));
    std::vector<size_t> prior_rows = fold.train;
    if (options.prior_data) {
      prior_rows.clear();
      for (size_t i = 0; i < prior_data.samples.size(); ++i)
        if (prior_data.samples[i].program != fold.name)
          prior_rows.push_back(i);
    }
    LIFTX_USER_CHECK(!prior_rows.empty(),
                     "replay: the prior's database holds no program but {} to train on", fold.name);
    const Model prior = train_prior(prior_data, prior_targets, prior_rows, options.prior);
    for (const auto& [input, rows] : inputs) {
      const Matrix raw = feature_matrix(data, rows, columns);
      const Vector predicted = prior.predict(raw);
      result.groups.push_back(replay_group(
          data, rows, std::vector<double>(predicted.begin(), predicted.end()), raw, options));
    }
  }
  LIFTX_USER_CHECK(!result.groups.empty(), "replay: no program to replay");
  result.summaries = summarize(result.groups, options.strategies);
  std::map<std::string, std::vector<ReplayGroup>> by_kind;
  for (const ReplayGroup& g : result.groups)
    by_kind[kind_of(data, g.program)].push_back(g);
  for (const auto& [kind, groups] : by_kind)
    result.kind_summaries.emplace_back(kind, summarize(groups, options.strategies));
  return result;
}

std::vector<ReplaySummary> summarize(const std::vector<ReplayGroup>& groups,
                                     const std::vector<ReplayStrategy>& strategies) {
  // Each program's largest input.
  std::map<std::string, double> largest;
  for (const ReplayGroup& g : groups)
    largest[g.program] = std::max(largest[g.program], input_elements(g.input));
  std::vector<ReplaySummary> out;
  for (size_t s = 0; s < strategies.size(); ++s) {
    ReplaySummary sum;
    sum.strategy = strategies[s];
    std::vector<double> r90, r95;
    for (const ReplayGroup& g : groups) {
      const ReplayOutcome& o = g.outcomes.at(s);
      r90.push_back(o.runs_to_90);
      r95.push_back(o.runs_to_95);
      sum.censored_90 += o.censored_90;
      sum.censored_95 += o.censored_95;
      if (o.auto_runs) {
        ++sum.auto_stopped;
        sum.mean_auto_runs += double(o.auto_runs);
        sum.mean_auto_fraction += o.auto_fraction;
      }
      if (input_elements(g.input) == largest[g.program]) {
        ++sum.largest_programs;
        sum.largest_95_within_10 += o.runs_to_95 <= 10;
      }
    }
    sum.inputs = groups.size();
    if (sum.inputs == 0) {
      out.push_back(sum);
      continue;
    }
    const double n = double(sum.inputs);
    sum.mean_90 = std::accumulate(r90.begin(), r90.end(), 0.0) / n;
    sum.mean_95 = std::accumulate(r95.begin(), r95.end(), 0.0) / n;
    sum.median_90 = median_of(r90);
    sum.median_95 = median_of(r95);
    sum.worst_90 = *std::max_element(r90.begin(), r90.end());
    sum.worst_95 = *std::max_element(r95.begin(), r95.end());
    if (sum.auto_stopped) {
      sum.mean_auto_runs /= double(sum.auto_stopped);
      sum.mean_auto_fraction /= double(sum.auto_stopped);
    }
    out.push_back(sum);
  }
  return out;
}

} // namespace liftx::model
