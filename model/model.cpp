// The cost models: normalised throughput, standardisation and PCA, kNN, regression trees,
// boosted trees, and the Model's training, prediction, explanation and routes. Its JSON form
// (to_json, from_json, save, load) is in model_json.cpp.
#include "model/model.hpp"

#include "model/boosted.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace liftx::model {

Vector normalised_throughput(const std::vector<double>& times_ms,
                             const std::vector<std::string>& groups) {
  LIFTX_INTERNAL_CHECK(times_ms.size() == groups.size(), "times and groups differ in length");
  std::map<std::string, double> best;
  for (size_t i = 0; i < times_ms.size(); ++i) {
    LIFTX_USER_CHECK(times_ms[i] > 0 && std::isfinite(times_ms[i]),
                     "measured time {} of group {} is not positive", times_ms[i], groups[i]);
    auto [it, inserted] = best.emplace(groups[i], times_ms[i]);
    if (!inserted)
      it->second = std::min(it->second, times_ms[i]);
  }
  Vector y(static_cast<Eigen::Index>(times_ms.size()));
  for (size_t i = 0; i < times_ms.size(); ++i)
    y[static_cast<Eigen::Index>(i)] = best[groups[i]] / times_ms[i];
  return y;
}

// ---- standardisation and PCA --------------------------------------------------------------------

Standardiser Standardiser::fit(const Matrix& raw) {
  LIFTX_USER_CHECK(raw.rows() > 0, "cannot standardise an empty feature matrix");
  Standardiser s;
  std::vector<double> means, scales;
  const double n = static_cast<double>(raw.rows());
  for (Eigen::Index c = 0; c < raw.cols(); ++c) {
    const double mean = raw.col(c).mean();
    const double var = (raw.col(c).array() - mean).square().sum() / n;
    const double sd = std::sqrt(var);
    // Constant (to rounding) columns carry no information and would divide by zero.
    if (!(sd > 1e-12 * std::max(1.0, std::abs(mean))))
      continue;
    s.kept.push_back(static_cast<int>(c));
    means.push_back(mean);
    scales.push_back(sd);
  }
  s.mean = Eigen::Map<Vector>(means.data(), static_cast<Eigen::Index>(means.size()));
  s.scale = Eigen::Map<Vector>(scales.data(), static_cast<Eigen::Index>(scales.size()));
  return s;
}

Matrix Standardiser::apply(const Matrix& raw) const {
  Matrix out(raw.rows(), static_cast<Eigen::Index>(kept.size()));
  for (size_t j = 0; j < kept.size(); ++j) {
    const auto jj = static_cast<Eigen::Index>(j);
    out.col(jj) = (raw.col(kept[j]).array() - mean[jj]) / scale[jj];
  }
  return out;
}

Pca Pca::fit(const Matrix& standardised, double variance) {
  LIFTX_USER_CHECK(standardised.cols() > 0, "no feature varies in the training data");
  const Matrix cov =
      standardised.transpose() * standardised / static_cast<double>(standardised.rows());
  Eigen::SelfAdjointEigenSolver<Matrix> solver(cov);
  LIFTX_INTERNAL_CHECK(solver.info() == Eigen::Success, "PCA eigen decomposition failed");
  const Vector values = solver.eigenvalues().cwiseMax(0.0); // ascending
  const Matrix vectors = solver.eigenvectors();
  const double total = values.sum();
  LIFTX_INTERNAL_CHECK(total > 0, "PCA of data without variance");
  const Eigen::Index d = values.size();
  Eigen::Index keep = 0;
  double cumulative = 0;
  while (keep < d) {
    cumulative += values[d - 1 - keep];
    ++keep;
    if (cumulative >= variance * total - 1e-12 * total)
      break;
  }
  Pca pca;
  pca.basis.resize(d, keep);
  pca.variance_kept.resize(keep);
  for (Eigen::Index c = 0; c < keep; ++c) {
    Vector v = vectors.col(d - 1 - c);
    // A deterministic sign: the largest component positive.
    Eigen::Index arg = 0;
    v.cwiseAbs().maxCoeff(&arg);
    if (v[arg] < 0)
      v = -v;
    pca.basis.col(c) = v;
    pca.variance_kept[c] = values[d - 1 - c] / total;
  }
  return pca;
}

// ---- kNN ----------------------------------------------------------------------------------------

namespace {

Vector knn_predict(const Matrix& points, const Vector& targets, const Matrix& queries, int k,
                   bool distance_weighted) {
  const Eigen::Index n = points.rows();
  const int kk = static_cast<int>(std::min<Eigen::Index>(k, n));
  Vector out(queries.rows());
  if (n == 0) {
    out.setZero();
    return out;
  }
  // |q - p|^2 = |q|^2 + |p|^2 - 2 q.p, in blocks so that memory stays bounded.
  const Vector point_norms = points.rowwise().squaredNorm();
  const Eigen::Index block = 256; // a block of distances stays in cache
  std::vector<std::pair<double, Eigen::Index>> best(static_cast<size_t>(kk));
  for (Eigen::Index start = 0; start < queries.rows(); start += block) {
    const Eigen::Index rows = std::min(block, queries.rows() - start);
    const Matrix q = queries.middleRows(start, rows);
    const Vector query_norms = q.rowwise().squaredNorm();
    // Column r: |p|^2 - 2 q.p for every point p, contiguous for the scan below (|q|^2 is the same
    // for every point of a query, so it does not change which are nearest).
    Matrix d = -2.0 * points * q.transpose();
    d.colwise() += point_norms;
    for (Eigen::Index r = 0; r < rows; ++r) {
      // Keep the kk smallest (distance, index) pairs. Points come in index order, so a later
      // point at an equal distance never displaces an earlier one: ties go to the lower index.
      const double* column = d.col(r).data();
      int filled = 0;
      double worst = std::numeric_limits<double>::infinity();
      for (Eigen::Index p = 0; p < n; ++p) {
        const double dist = column[p];
        if (filled == kk && !(dist < worst))
          continue;
        int pos = filled == kk ? kk - 1 : filled++;
        while (pos > 0 && dist < best[size_t(pos - 1)].first) {
          best[size_t(pos)] = best[size_t(pos - 1)];
          --pos;
        }
        best[size_t(pos)] = {dist, p};
        if (filled == kk)
          worst = best[size_t(kk - 1)].first;
      }
      double sum = 0, weights = 0;
      for (int i = 0; i < kk; ++i) {
        // A training point equal to the query (distance 0) gets a large but finite weight.
        const double distance = std::sqrt(std::max(0.0, best[size_t(i)].first + query_norms[r]));
        const double w = distance_weighted ? 1.0 / (distance + 1e-6) : 1.0;
        sum += w * targets[best[size_t(i)].second];
        weights += w;
      }
      out[start + r] = sum / weights;
    }
  }
  return out;
}

// ---- regression tree (CART: the split that reduces the squared error most) ----------------------

struct TreeBuilder {
  const Matrix& x;
  const Vector& y;
  const TrainOptions& options;
  std::vector<TreeNode> nodes;

  int build(std::vector<Eigen::Index>& samples, int depth) {
    const int id = static_cast<int>(nodes.size());
    nodes.emplace_back();
    double sum = 0, sum_sq = 0;
    for (Eigen::Index s : samples) {
      sum += y[s];
      sum_sq += y[s] * y[s];
    }
    const double n = static_cast<double>(samples.size());
    nodes[size_t(id)].value = sum / n;
    nodes[size_t(id)].samples = static_cast<int>(samples.size());
    const double sse = sum_sq - sum * sum / n;
    if (depth >= options.max_depth ||
        samples.size() < 2 * static_cast<size_t>(std::max(1, options.min_leaf)) || sse <= 1e-12)
      return id;
    const size_t min_leaf = static_cast<size_t>(std::max(1, options.min_leaf));
    double best_gain = 1e-12;
    int best_feature = -1;
    double best_threshold = 0;
    std::vector<Eigen::Index> order = samples;
    for (Eigen::Index f = 0; f < x.cols(); ++f) {
      std::sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) {
        return x(a, f) < x(b, f) || (x(a, f) == x(b, f) && a < b);
      });
      double left_sum = 0, left_sq = 0;
      for (size_t i = 0; i + 1 < order.size(); ++i) {
        left_sum += y[order[i]];
        left_sq += y[order[i]] * y[order[i]];
        const size_t nl = i + 1, nr = order.size() - nl;
        if (nl < min_leaf || nr < min_leaf)
          continue;
        const double a = x(order[i], f), b = x(order[i + 1], f);
        if (a == b)
          continue;
        const double right_sum = sum - left_sum, right_sq = sum_sq - left_sq;
        const double split_sse = (left_sq - left_sum * left_sum / double(nl)) +
                                 (right_sq - right_sum * right_sum / double(nr));
        const double gain = sse - split_sse;
        if (gain > best_gain) {
          best_gain = gain;
          best_feature = static_cast<int>(f);
          best_threshold = 0.5 * (a + b);
        }
      }
    }
    if (best_feature < 0)
      return id;
    std::vector<Eigen::Index> left, right;
    for (Eigen::Index s : samples)
      (x(s, best_feature) <= best_threshold ? left : right).push_back(s);
    samples.clear();
    samples.shrink_to_fit();
    const int l = build(left, depth + 1);
    const int r = build(right, depth + 1);
    nodes[size_t(id)].feature = best_feature;
    nodes[size_t(id)].threshold = best_threshold;
    nodes[size_t(id)].left = l;
    nodes[size_t(id)].right = r;
    return id;
  }
};

} // namespace

std::string to_string(Kind kind) {
  switch (kind) {
  case Kind::knn:
    return "knn";
  case Kind::tree:
    return "tree";
  case Kind::boosted:
    return "boosted";
  }
  LIFTX_UNREACHABLE("model kind {}", static_cast<int>(kind));
}

Kind parse_kind(const std::string& text) {
  for (Kind kind : {Kind::knn, Kind::tree, Kind::boosted})
    if (to_string(kind) == text)
      return kind;
  throw UserError(fmt::format("unknown model kind '{}' (knn, tree or boosted)", text));
}

std::string to_string(Objective objective) {
  return objective == Objective::pairwise ? "pairwise" : "regression";
}

Objective parse_objective(const std::string& text) {
  for (Objective objective : {Objective::regression, Objective::pairwise})
    if (to_string(objective) == text)
      return objective;
  throw UserError(fmt::format("unknown boosting objective '{}' (regression or pairwise)", text));
}

namespace {

void check_boosting_options(const TrainOptions& o) {
  LIFTX_USER_CHECK(o.trees >= 1, "boosted trees: the number of trees must be at least 1, not {}",
                   o.trees);
  LIFTX_USER_CHECK(o.parallel_trees >= 1 && o.parallel_trees <= 100,
                   "boosted trees: the parallel trees per round must be 1 to 100, not {}",
                   o.parallel_trees);
  LIFTX_USER_CHECK(o.learning_rate > 0 && o.learning_rate <= 1,
                   "boosted trees: the learning rate must lie in (0, 1], not {}", o.learning_rate);
  LIFTX_USER_CHECK(o.boost_depth >= 1, "boosted trees: the depth must be at least 1, not {}",
                   o.boost_depth);
  LIFTX_USER_CHECK(o.min_child_weight >= 0,
                   "boosted trees: the minimum child weight must not be negative, not {}",
                   o.min_child_weight);
  LIFTX_USER_CHECK(o.subsample > 0 && o.subsample <= 1,
                   "boosted trees: the row subsample must lie in (0, 1], not {}", o.subsample);
  LIFTX_USER_CHECK(o.colsample > 0 && o.colsample <= 1,
                   "boosted trees: the column subsample must lie in (0, 1], not {}", o.colsample);
  LIFTX_USER_CHECK(o.seeds >= 1 && o.seeds <= 100,
                   "boosted trees: the seeds to average must be 1 to 100, not {}", o.seeds);
  LIFTX_USER_CHECK(o.seed <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) -
                                 static_cast<uint64_t>(o.seeds - 1),
                   "boosted trees: the seed (and the seeds after it) must be below 2^63");
  LIFTX_USER_CHECK(o.threads >= 0, "boosted trees: the thread count must not be negative, not {}",
                   o.threads);
}

/// Trains XGBoost on the standardised features `z`: regression on log2(y), or pairwise ranking
/// within `groups` (rows reordered so that each group's rows are adjacent, as XGBoost needs).
xgb::Booster train_boosted(const Matrix& z, const Vector& targets, const TrainOptions& options,
                           const std::vector<std::string>* groups) {
  LIFTX_USER_CHECK(z.cols() > 0, "no feature varies in the training data");
  Vector label(targets.size());
  for (Eigen::Index i = 0; i < targets.size(); ++i) {
    LIFTX_USER_CHECK(targets[i] > 0 && std::isfinite(targets[i]),
                     "normalised throughput {} of training sample {} is not positive", targets[i],
                     i);
    label[i] = std::log2(targets[i]);
  }
  if (options.objective == Objective::regression) {
    xgb::DMatrix data(z);
    data.set_labels(label);
    return xgb::Booster::train(data, options, label.mean());
  }
  LIFTX_USER_CHECK(groups != nullptr,
                   "the pairwise objective needs the (program, input) group of every sample");
  LIFTX_INTERNAL_CHECK(groups->size() == static_cast<size_t>(z.rows()),
                       "{} group labels for {} samples", groups->size(), z.rows());
  // Groups in order of first appearance, each group's rows in their order.
  std::map<std::string, size_t> index;
  std::vector<std::vector<Eigen::Index>> members;
  for (size_t r = 0; r < groups->size(); ++r) {
    auto [it, inserted] = index.emplace((*groups)[r], members.size());
    if (inserted)
      members.emplace_back();
    members[it->second].push_back(static_cast<Eigen::Index>(r));
  }
  Matrix ordered(z.rows(), z.cols());
  Vector ordered_label(z.rows());
  std::vector<unsigned> sizes;
  Eigen::Index next = 0;
  for (const auto& rows : members) {
    sizes.push_back(static_cast<unsigned>(rows.size()));
    for (Eigen::Index r : rows) {
      ordered.row(next) = z.row(r);
      ordered_label[next] = label[r];
      ++next;
    }
  }
  xgb::DMatrix data(ordered);
  data.set_labels(ordered_label);
  data.set_group_sizes(sizes);
  return xgb::Booster::train(data, options, 0.0);
}

/// A boosted model's output f -> its prediction, > 0 (see Objective).
double boosted_prediction(Objective objective, double f) {
  const double y = objective == Objective::pairwise ? 1.0 / (1.0 + std::exp(-f)) : std::exp2(f);
  return std::max(y, std::numeric_limits<double>::min());
}

/// The smallest margin whose boosted_prediction is at least `prediction`, or a little less: every
/// margin below it predicts less than `prediction`.
double boosted_margin_floor(Objective objective, double prediction) {
  constexpr double infinity = std::numeric_limits<double>::infinity();
  if (!(prediction > std::numeric_limits<double>::min()))
    return -infinity; // boosted_prediction's own floor: every margin may reach it
  double margin = 0;
  if (objective == Objective::pairwise) {
    if (prediction >= 1)
      return 30; // the sigmoid of anything below 30 is below 1 - 1e-13
    margin = std::log(prediction) - std::log1p(-prediction);
  } else {
    margin = std::log2(prediction);
  }
  // exp2, exp and log round: a relative margin of 1e-9 covers them many times over.
  return margin - 1e-9 * (1 + std::abs(margin));
}

} // namespace

Model Model::train(Kind kind, std::vector<std::string> feature_names, const Matrix& features,
                   const Vector& targets, const TrainOptions& options,
                   const std::vector<std::string>* groups) {
  LIFTX_INTERNAL_CHECK(static_cast<size_t>(features.cols()) == feature_names.size(),
                       "feature matrix has {} columns for {} names", features.cols(),
                       feature_names.size());
  LIFTX_INTERNAL_CHECK(features.rows() == targets.size(), "features and targets differ in rows");
  LIFTX_USER_CHECK(features.rows() > 0, "no training data (no successful measurement)");
  LIFTX_USER_CHECK(options.k >= 1, "k must be at least 1");
  if (kind == Kind::boosted)
    check_boosting_options(options);
  LIFTX_INTERNAL_CHECK(!groups || groups->size() == static_cast<size_t>(features.rows()),
                       "{} group labels for {} samples", groups ? groups->size() : 0,
                       features.rows());
  Model m;
  m.kind_ = kind;
  m.feature_names_ = std::move(feature_names);
  m.options_ = options;
  const Matrix transformed = apply_transform(options.transform, m.feature_names_, features);
  m.standardiser_ = Standardiser::fit(transformed);
  const Matrix z = m.standardiser_.apply(transformed);
  if (kind == Kind::knn) {
    m.pca_ = Pca::fit(z, options.variance);
    m.points_ = m.pca_.project(z);
    m.targets_ = targets;
  } else if (kind == Kind::boosted) {
    for (int s = 0; s < options.seeds; ++s) {
      TrainOptions seeded = options;
      seeded.seed = options.seed + static_cast<uint64_t>(s);
      m.boosters_.push_back(
          std::make_shared<const xgb::Booster>(train_boosted(z, targets, seeded, groups)));
    }
    m.boosted_samples_ = static_cast<int>(z.rows());
  } else {
    TreeBuilder builder{z, targets, options, {}};
    std::vector<Eigen::Index> all(static_cast<size_t>(z.rows()));
    std::iota(all.begin(), all.end(), Eigen::Index{0});
    builder.build(all, 0);
    m.tree_ = std::move(builder.nodes);
  }
  return m;
}

int Model::training_samples() const {
  if (kind_ == Kind::knn)
    return static_cast<int>(points_.rows());
  if (kind_ == Kind::boosted)
    return boosted_samples_;
  return tree_.empty() ? 0 : tree_[0].samples;
}

Matrix Model::standardised(const Matrix& features) const {
  // standardiser_.apply(apply_transform(...)) with the same operations on each value, in one
  // pass and only over the kept columns (ranking predicts millions of rows).
  size_t bytes_moved = 0;
  const std::vector<bool> relative =
      relative_columns(options_.transform, feature_names_, bytes_moved);
  Eigen::VectorXd reference;
  if (options_.transform == Transform::log_relative)
    reference = features.col(static_cast<Eigen::Index>(bytes_moved)).unaryExpr([&](double x) {
      return transformed_value(options_.transform, x);
    });
  Matrix z(features.rows(), static_cast<Eigen::Index>(standardiser_.kept.size()));
  for (size_t j = 0; j < standardiser_.kept.size(); ++j) {
    const auto jj = static_cast<Eigen::Index>(j);
    const int c = standardiser_.kept[j];
    const double mean = standardiser_.mean[jj], scale = standardiser_.scale[jj];
    const double* raw = features.col(c).data();
    double* out = z.col(jj).data();
    for (Eigen::Index r = 0; r < features.rows(); ++r) {
      double t = transformed_value(options_.transform, raw[r]);
      if (relative[static_cast<size_t>(c)])
        t -= reference[r];
      out[r] = (t - mean) / scale;
    }
  }
  return z;
}

Vector Model::predict(const Matrix& features) const {
  LIFTX_INTERNAL_CHECK(static_cast<size_t>(features.cols()) == feature_names_.size(),
                       "prediction with {} feature columns for a model of {}", features.cols(),
                       feature_names_.size());
  const Matrix z = standardised(features);
  if (kind_ == Kind::knn)
    return knn_predict(points_, targets_, pca_.project(z), options_.k, options_.distance_weighted);
  Vector out(z.rows());
  if (kind_ == Kind::boosted) {
    const std::vector<double> f = boosted_margins(z);
    for (Eigen::Index r = 0; r < z.rows(); ++r)
      out[r] = boosted_prediction(options_.objective, f[static_cast<size_t>(r)]);
    return out;
  }
  for (Eigen::Index r = 0; r < z.rows(); ++r) {
    size_t node = 0;
    while (tree_[node].feature >= 0)
      node = size_t(z(r, tree_[node].feature) <= tree_[node].threshold ? tree_[node].left
                                                                       : tree_[node].right);
    out[r] = tree_[node].value;
  }
  return out;
}

Vector Model::predict_reaching(const Matrix& features, const std::vector<double>& floors) const {
  LIFTX_INTERNAL_CHECK(floors.size() == static_cast<size_t>(features.rows()),
                       "{} floors for {} rows", floors.size(), features.rows());
  if (kind_ != Kind::boosted)
    return predict(features);
  std::vector<double> margin_floors(floors.size());
  for (size_t r = 0; r < floors.size(); ++r)
    margin_floors[r] = boosted_margin_floor(options_.objective, floors[r]);
  const std::vector<double> f = boosted_margins_reaching(standardised(features), margin_floors);
  Vector out(static_cast<Eigen::Index>(f.size()));
  for (size_t r = 0; r < f.size(); ++r)
    out[static_cast<Eigen::Index>(r)] = std::isinf(f[r]) && f[r] < 0
                                            ? -std::numeric_limits<double>::infinity()
                                            : boosted_prediction(options_.objective, f[r]);
  return out;
}

std::vector<double> Model::boosted_margins(const Matrix& z) const {
  std::vector<double> sum = boosters_.front()->predict_margin(z);
  if (boosters_.size() == 1)
    return sum;
  for (size_t b = 1; b < boosters_.size(); ++b) {
    const std::vector<double> f = boosters_[b]->predict_margin(z);
    for (size_t r = 0; r < sum.size(); ++r)
      sum[r] += f[r];
  }
  for (double& f : sum)
    f /= static_cast<double>(boosters_.size());
  return sum;
}

std::vector<double>
Model::boosted_margins_reaching(const Matrix& z, const std::vector<double>& margin_floors) const {
  const std::shared_ptr<const xgb::Booster>& first = boosters_.front();
  if (boosters_.size() == 1)
    return first->predict_margin_reaching(z, margin_floors);
  // The mean of n margins reaches a floor only if the first booster's margin reaches n times
  // the floor less the most the others can add: rows certainly below that stop there.
  const auto n = static_cast<double>(boosters_.size());
  double others_highest = 0;
  for (size_t b = 1; b < boosters_.size(); ++b)
    others_highest += boosters_[b]->ensemble().highest_margin();
  std::vector<double> first_floors(margin_floors.size());
  for (size_t r = 0; r < margin_floors.size(); ++r)
    first_floors[r] = std::isfinite(others_highest) ? n * margin_floors[r] - others_highest
                                                    : -std::numeric_limits<double>::infinity();
  std::vector<double> out = first->predict_margin_reaching(z, first_floors);
  std::vector<Eigen::Index> live;
  for (size_t r = 0; r < out.size(); ++r)
    if (!(std::isinf(out[r]) && out[r] < 0))
      live.push_back(static_cast<Eigen::Index>(r));
  if (live.empty())
    return out;
  const Matrix rows = z(live, Eigen::all);
  for (size_t b = 1; b < boosters_.size(); ++b) {
    const std::vector<double> f = boosters_[b]->predict_margin(rows);
    for (size_t k = 0; k < live.size(); ++k)
      out[size_t(live[k])] += f[k];
  }
  for (Eigen::Index r : live)
    out[size_t(r)] /= n;
  return out;
}

std::vector<Explanation> Model::explain(const Eigen::Ref<const Eigen::RowVectorXd>& sample,
                                        size_t count) const {
  std::vector<Explanation> all;
  const Matrix z = standardised(Matrix(sample));
  // Boosted: TreeSHAP contributions, one per kept column, then the bias (not a feature).
  Matrix contributions;
  for (const auto& booster : boosters_) { // the mean margin's: the boosters' mean contributions
    const Matrix c = booster->contributions(z);
    contributions = contributions.size() == 0 ? c : Matrix(contributions + c);
  }
  if (!boosters_.empty())
    contributions /= static_cast<double>(boosters_.size());
  for (size_t j = 0; j < standardiser_.kept.size(); ++j) {
    const auto jj = static_cast<Eigen::Index>(j);
    const int column = standardiser_.kept[j];
    all.push_back({feature_names_[size_t(column)], sample[column], z(0, jj),
                   kind_ == Kind::boosted ? contributions(0, jj) : 0.0});
  }
  std::stable_sort(all.begin(), all.end(), [&](const Explanation& a, const Explanation& b) {
    if (kind_ == Kind::boosted)
      return std::abs(a.contribution) > std::abs(b.contribution);
    return std::abs(a.standardised) > std::abs(b.standardised);
  });
  if (all.size() > count)
    all.resize(count);
  return all;
}

std::vector<int> Model::feature_indices(const std::vector<std::string>& available) const {
  std::vector<int> indices;
  std::vector<std::string> missing;
  for (const std::string& name : feature_names_) {
    auto it = std::find(available.begin(), available.end(), name);
    if (it == available.end())
      missing.push_back(name);
    else
      indices.push_back(static_cast<int>(it - available.begin()));
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& name : missing)
      list += (list.empty() ? "" : ", ") + name;
    throw UserError(fmt::format("the model needs features this liftx does not compute: {} "
                                "(retrain the model with this version)",
                                list));
  }
  return indices;
}

const Model& Model::for_kind(std::string_view program_kind) const {
  const auto it = routes_.find(program_kind);
  return it == routes_.end() ? *this : *it->second;
}

void Model::set_route(const std::vector<std::string>& program_kinds, Model route) {
  LIFTX_USER_CHECK(route.routes_.empty(), "a route has routes of its own");
  LIFTX_USER_CHECK(route.profile == profile, "a route for profile {} in a model for profile {}",
                   route.profile, profile);
  const auto shared = std::make_shared<const Model>(std::move(route));
  for (const std::string& kind : program_kinds)
    routes_[kind] = shared;
}

Model Model::without_routes() const {
  Model m = *this;
  m.routes_.clear();
  return m;
}

void Model::drop_routes(const std::vector<std::string>& program_kinds) {
  for (const std::string& kind : program_kinds)
    routes_.erase(kind);
}

} // namespace liftx::model
