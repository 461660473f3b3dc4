#include "model/evaluate.hpp"

#include "model/protocol.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <tuple>

namespace liftx::model {

namespace {

std::string group_key(const Sample& s) {
  return s.program + "\x1f" + s.input;
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

/// How inputs are ordered: objects of numbers first, by their keys (alphabetical), then their
/// numbers key by key, then as text; anything else after them, as text.
struct InputKey {
  bool numeric = false;
  std::vector<std::string> keys;
  std::vector<double> numbers;
};

InputKey input_key(const std::string& input) {
  InputKey key;
  try {
    const nlohmann::json j = nlohmann::json::parse(input);
    if (!j.is_object())
      return key;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!it.value().is_number())
        return InputKey{};
      key.keys.push_back(it.key());
      key.numbers.push_back(it.value().get<double>());
    }
    key.numeric = true;
  } catch (const nlohmann::json::exception&) {
    return InputKey{};
  }
  return key;
}

/// Text order, except that runs of digits compare as numbers (synth_2 before synth_10).
bool natural_less(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei]))
        ++ei;
      while (ej < b.size() && digit(b[ej]))
        ++ej;
      // Without leading zeros, a shorter run is a smaller number.
      size_t si = i, sj = j;
      while (si + 1 < ei && a[si] == '0')
        ++si;
      while (sj + 1 < ej && b[sj] == '0')
        ++sj;
      const std::string_view na(a.data() + si, ei - si), nb(b.data() + sj, ej - sj);
      if (na.size() != nb.size())
        return na.size() < nb.size();
      if (na != nb)
        return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j])
        return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((i < a.size()) != (j < b.size()))
    return i >= a.size(); // a prefix first
  return a < b;           // equal but for leading zeros
}

} // namespace

bool input_less(const std::string& a, const std::string& b) {
  const InputKey ka = input_key(a), kb = input_key(b);
  // Numeric objects (0) before anything else (1).
  return std::forward_as_tuple(!ka.numeric, ka.keys, ka.numbers, a) <
         std::forward_as_tuple(!kb.numeric, kb.keys, kb.numbers, b);
}

void sort_groups(std::vector<GroupResult>& groups) {
  std::stable_sort(groups.begin(), groups.end(), [](const GroupResult& x, const GroupResult& y) {
    if (x.program != y.program)
      return natural_less(x.program, y.program);
    return input_less(x.input, y.input);
  });
}

Matrix feature_matrix(const Dataset& data, const std::vector<size_t>& rows,
                      const std::vector<int>& columns) {
  const size_t width = columns.empty() ? data.feature_names.size() : columns.size();
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(width));
  for (size_t r = 0; r < rows.size(); ++r) {
    const Sample& s = data.samples[rows[r]];
    LIFTX_USER_CHECK(s.features.size() == data.feature_names.size(),
                     "sample of {} has {} features, expected {}", s.program, s.features.size(),
                     data.feature_names.size());
    for (size_t c = 0; c < width; ++c)
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) =
          s.features[columns.empty() ? c : size_t(columns[c])];
  }
  return m;
}

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
    if (options.progress)
      options.progress(fmt::format("fold {} of {}: leave out {}", &program - programs.data() + 1,
                                   programs.size(), program));
    std::vector<size_t> train_rows, test_rows;
    for (size_t i = 0; i < data.samples.size(); ++i)
      (data.samples[i].program == program ? test_rows : train_rows).push_back(i);
    const Model m = train_on(data, targets, train_rows, options.kind, options.train);
    for (GroupResult& g :
         judge(m, data, test_rows, options.random_orders, options.seed, options.fraction))
      ev.groups.push_back(std::move(g));
  }
  sort_groups(ev.groups);
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

std::string kind_of(const Dataset& data, std::string_view program) {
  const auto it = data.program_kinds.find(std::string(stencil_of(program)));
  return it == data.program_kinds.end() ? "unknown" : it->second;
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
