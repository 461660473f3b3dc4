#include "model/model.hpp"

#include "model/boosted.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
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

nlohmann::json matrix_json(const Matrix& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c)
      row.push_back(m(r, c));
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json vector_json(const Vector& v) {
  nlohmann::json out = nlohmann::json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i)
    out.push_back(v[i]);
  return out;
}

/// `value` as an int from `lo` to INT_MAX: get<int>() would truncate 2^40 to 0 and 2.5 to 2, and
/// is undefined behaviour for 1e18. `what` names it in the message.
int int_value(const nlohmann::json& value, const std::string& what, const std::string& origin,
              int lo) {
  const bool in_range =
      value.is_number_integer() &&
      (value.is_number_unsigned() ? int64_t(lo) <= 0 || value.get<uint64_t>() >= uint64_t(lo)
                                  : value.get<int64_t>() >= lo) &&
      (value.is_number_unsigned() ? value.get<uint64_t>() <= uint64_t{INT_MAX}
                                  : value.get<int64_t>() <= INT_MAX);
  LIFTX_USER_CHECK(in_range, "{}: {} must be an integer from {} to {}, not {}", origin, what, lo,
                   INT_MAX, value.dump());
  return value.get<int>();
}

/// `options[key]` as int_value; a k of 0 or below breaks kNN prediction.
int int_option(const nlohmann::json& options, const char* key, const std::string& origin, int lo) {
  return int_value(options.at(key), fmt::format("options.{}", key), origin, lo);
}

Vector vector_from(const nlohmann::json& j) {
  Vector v(static_cast<Eigen::Index>(j.size()));
  for (size_t i = 0; i < j.size(); ++i)
    v[static_cast<Eigen::Index>(i)] = j[i].get<double>();
  return v;
}

Matrix matrix_from(const nlohmann::json& j, Eigen::Index cols) {
  Matrix m(static_cast<Eigen::Index>(j.size()), cols);
  for (size_t r = 0; r < j.size(); ++r) {
    LIFTX_USER_CHECK(j[r].is_array() && static_cast<Eigen::Index>(j[r].size()) == cols,
                     "matrix row {} has {} values, expected {}", r, j[r].size(), cols);
    for (Eigen::Index c = 0; c < cols; ++c)
      m(static_cast<Eigen::Index>(r), c) = j[r][size_t(c)].get<double>();
  }
  return m;
}

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
  LIFTX_USER_CHECK(o.seed <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                   "boosted trees: the seed must be below 2^63");
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
    m.booster_ = std::make_shared<const xgb::Booster>(train_boosted(z, targets, options, groups));
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
    const std::vector<double> f = booster_->predict_margin(z);
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
  const std::vector<double> f =
      booster_->predict_margin_reaching(standardised(features), margin_floors);
  Vector out(static_cast<Eigen::Index>(f.size()));
  for (size_t r = 0; r < f.size(); ++r)
    out[static_cast<Eigen::Index>(r)] = std::isinf(f[r]) && f[r] < 0
                                            ? -std::numeric_limits<double>::infinity()
                                            : boosted_prediction(options_.objective, f[r]);
  return out;
}

std::vector<Explanation> Model::explain(const Eigen::Ref<const Eigen::RowVectorXd>& sample,
                                        size_t count) const {
  std::vector<Explanation> all;
  const Matrix z = standardised(Matrix(sample));
  // Boosted: TreeSHAP contributions, one per kept column, then the bias (not a feature).
  const Matrix contributions = kind_ == Kind::boosted ? booster_->contributions(z) : Matrix();
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

nlohmann::json Model::to_json() const {
  nlohmann::json j;
  j["format"] = "liftx-model";
  j["version"] = kFormatVersion;
  j["kind"] = to_string(kind_);
  j["profile"] = profile;
  j["features"] = feature_names_;
  j["target"] = "throughput normalised by the best of its program and input (best_time / time)";
  if (kind_ == Kind::boosted)
    j["target"] = options_.objective == Objective::regression
                      ? "throughput normalised by the best of its program and input (best_time / "
                        "time) as 2^f, f fitted to log2 of it; not clipped at 1"
                      : "uncalibrated 1 / (1 + e^-f), f a pairwise ranking score within each "
                        "program and input";
  j["standardisation"] = {{"kept", standardiser_.kept},
                          {"mean", vector_json(standardiser_.mean)},
                          {"scale", vector_json(standardiser_.scale)}};
  j["options"] = {{"transform", to_string(options_.transform)},
                  {"k", options_.k},
                  {"distance_weighted", options_.distance_weighted},
                  {"variance", options_.variance},
                  {"max_depth", options_.max_depth},
                  {"min_leaf", options_.min_leaf}};
  if (kind_ == Kind::boosted) {
    nlohmann::json& o = j["options"];
    o["trees"] = options_.trees;
    o["parallel_trees"] = options_.parallel_trees;
    o["learning_rate"] = options_.learning_rate;
    o["boost_depth"] = options_.boost_depth;
    o["min_child_weight"] = options_.min_child_weight;
    o["subsample"] = options_.subsample;
    o["colsample"] = options_.colsample;
    o["objective"] = to_string(options_.objective);
    o["seed"] = options_.seed;
    o["threads"] = options_.threads;
    j["boosted"] = {{"library", "xgboost " + xgb::version()},
                    {"training_samples", boosted_samples_},
                    {"format", "ubj"},
                    {"encoding", "base64"},
                    {"model", xgb::base64_encode(booster_->to_ubj())}};
  } else if (kind_ == Kind::knn) {
    j["pca"] = {{"basis", matrix_json(pca_.basis)},
                {"variance_kept", vector_json(pca_.variance_kept)}};
    j["points"] = matrix_json(points_);
    j["targets"] = vector_json(targets_);
  } else {
    nlohmann::json nodes = nlohmann::json::array();
    for (const TreeNode& n : tree_)
      nodes.push_back({n.feature, n.threshold, n.left, n.right, n.value, n.samples});
    j["tree"] = {{"columns", {"feature", "threshold", "left", "right", "value", "samples"}},
                 {"nodes", nodes}};
  }
  j["provenance"] = provenance;
  if (!routes_.empty()) {
    // Each model once, however many kinds it ranks: "routes" maps a kind to its index in
    // "route_models".
    nlohmann::json& routes = j["routes"] = nlohmann::json::object();
    nlohmann::json& models = j["route_models"] = nlohmann::json::array();
    std::vector<const Model*> written;
    for (const auto& [kind, route] : routes_) {
      auto at = std::find(written.begin(), written.end(), route.get());
      if (at == written.end()) {
        written.push_back(route.get());
        models.push_back(route->to_json());
        at = written.end() - 1;
      }
      routes[kind] = at - written.begin();
    }
  }
  return j;
}

namespace {

/// "standardisation": the kept columns (of `feature_count`), their means and scales.
Standardiser read_standardisation(const nlohmann::json& s, size_t feature_count,
                                  const std::string& origin) {
  Standardiser out;
  LIFTX_USER_CHECK(s.at("kept").is_array(), "{}: standardisation.kept is not a list", origin);
  for (const nlohmann::json& column : s.at("kept"))
    out.kept.push_back(int_value(column, "a kept column", origin, 0));
  out.mean = vector_from(s.at("mean"));
  out.scale = vector_from(s.at("scale"));
  const auto kept = static_cast<Eigen::Index>(out.kept.size());
  LIFTX_USER_CHECK(out.mean.size() == kept && out.scale.size() == kept,
                   "{}: inconsistent standardisation", origin);
  for (Eigen::Index c = 0; c < kept; ++c)
    LIFTX_USER_CHECK(std::isfinite(out.mean[c]) && std::isfinite(out.scale[c]) && out.scale[c] > 0,
                     "{}: standardisation of column {} has mean {} and scale {} "
                     "(both must be finite, the scale positive)",
                     origin, c, out.mean[c], out.scale[c]);
  for (int c : out.kept)
    LIFTX_USER_CHECK(c >= 0 && static_cast<size_t>(c) < feature_count,
                     "{}: standardisation names column {} of {}", origin, c, feature_count);
  return out;
}

/// The boosting options of "options" into `options` (absent ones keep their defaults).
void read_boosting_options(const nlohmann::json& o, const std::string& origin,
                           TrainOptions& options) {
  const TrainOptions defaults;
  // Integers through int_value: value<int>() of 1e18 is undefined behaviour.
  auto optional_int = [&](const char* key, int fallback) {
    return o.contains(key) ? int_option(o, key, origin, 0) : fallback;
  };
  options.trees = optional_int("trees", defaults.trees);
  options.parallel_trees = optional_int("parallel_trees", defaults.parallel_trees);
  options.learning_rate = o.value("learning_rate", defaults.learning_rate);
  options.boost_depth = optional_int("boost_depth", defaults.boost_depth);
  options.min_child_weight = o.value("min_child_weight", defaults.min_child_weight);
  options.subsample = o.value("subsample", defaults.subsample);
  options.colsample = o.value("colsample", defaults.colsample);
  LIFTX_USER_CHECK(!(o.contains("seed") && !o["seed"].is_number_unsigned()),
                   "{}: options.seed must be a non-negative integer, not {}", origin,
                   o["seed"].dump());
  options.seed = o.value("seed", defaults.seed);
  options.threads = optional_int("threads", defaults.threads);
  try {
    options.objective = parse_objective(o.value("objective", std::string("regression")));
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", origin, e.message()));
  }
}

/// "options"; the boosting ones only for a boosted model.
TrainOptions read_options(const nlohmann::json& o, Kind kind, const std::string& origin) {
  TrainOptions options;
  // Models written before transforms existed used the raw features.
  const std::string transform = o.value("transform", std::string("raw"));
  try {
    options.transform = parse_transform(transform);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", origin, e.message()));
  }
  options.k = int_option(o, "k", origin, 1);
  options.distance_weighted = o.value("distance_weighted", false);
  options.variance = o.at("variance").get<double>();
  options.max_depth = int_option(o, "max_depth", origin, 0);
  options.min_leaf = int_option(o, "min_leaf", origin, 0);
  if (kind == Kind::boosted)
    read_boosting_options(o, origin, options);
  return options;
}

/// "boosted": the XGBoost model (UBJSON in base64) of `kept` features.
std::shared_ptr<const xgb::Booster> read_booster(const nlohmann::json& b, Eigen::Index kept,
                                                 const std::string& origin) {
  std::string bytes;
  try {
    bytes = xgb::base64_decode(b.at("model").get<std::string>());
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: boosted model: {}", origin, e.message()));
  }
  auto booster = std::make_shared<const xgb::Booster>(xgb::Booster::from_ubj(bytes, origin));
  LIFTX_USER_CHECK(booster->features() == kept,
                   "{}: the boosted model has {} features, the standardisation {}", origin,
                   booster->features(), kept);
  return booster;
}

/// "tree": the nodes of a regression tree over `kept` columns.
std::vector<TreeNode> read_tree(const nlohmann::json& tree, Eigen::Index kept,
                                const std::string& origin) {
  std::vector<TreeNode> out;
  for (const auto& n : tree.at("nodes")) {
    auto field = [&](size_t i) { return int_value(n.at(i), "a tree node field", origin, -1); };
    TreeNode node{field(0), n.at(1).get<double>(), field(2),
                  field(3), n.at(4).get<double>(), field(5)};
    out.push_back(node);
  }
  const int size = static_cast<int>(out.size());
  LIFTX_USER_CHECK(size != 0, "{}: empty tree", origin);
  for (int i = 0; i < size; ++i) {
    const TreeNode& n = out[size_t(i)];
    LIFTX_USER_CHECK(n.feature < kept && !(n.feature >= 0 && (n.left <= i || n.left >= size ||
                                                              n.right <= i || n.right >= size)),
                     "{}: malformed tree node {}", origin, i);
  }
  return out;
}

/// "pca", "points" and "targets": a kNN model's PCA of `kept` columns and training samples.
void read_knn(const nlohmann::json& j, Eigen::Index kept, const std::string& origin, Pca& pca,
              Matrix& points, Vector& targets) {
  const auto& p = j.at("pca");
  pca.variance_kept = vector_from(p.at("variance_kept"));
  pca.basis = matrix_from(p.at("basis"), pca.variance_kept.size());
  LIFTX_USER_CHECK(pca.basis.rows() == kept, "{}: PCA basis does not match the standardisation",
                   origin);
  points = matrix_from(j.at("points"), pca.basis.cols());
  targets = vector_from(j.at("targets"));
  LIFTX_USER_CHECK(targets.size() == points.rows(), "{}: {} targets for {} points", origin,
                   targets.size(), points.rows());
  // Without points every prediction would be 0: the file is broken, not the model.
  LIFTX_USER_CHECK(points.rows() != 0, "{}: the kNN model has no points", origin);
}

/// "routes" and "route_models": per program kind, the model that ranks it (each a model for
/// `profile` without routes of its own).
std::map<std::string, std::shared_ptr<const Model>, std::less<>>
read_routes(const nlohmann::json& j, const std::string& profile, const std::string& origin) {
  LIFTX_USER_CHECK(j.contains("routes") && j["routes"].is_object() && j.contains("route_models") &&
                       j["route_models"].is_array(),
                   "{}: routes need 'routes' (an object: kind -> index) and "
                   "'route_models' (a list of models)",
                   origin);
  std::vector<std::shared_ptr<const Model>> models;
  for (const nlohmann::json& route : j["route_models"]) {
    const std::string where = fmt::format("{} (route model {})", origin, models.size());
    LIFTX_USER_CHECK(
        !(route.is_object() && (route.contains("routes") || route.contains("route_models"))),
        "{}: a route has routes of its own", where);
    Model routed = Model::from_json(route, where);
    LIFTX_USER_CHECK(routed.profile == profile,
                     "{}: a model for profile {} in a model for profile {}", where, routed.profile,
                     profile);
    models.push_back(std::make_shared<const Model>(std::move(routed)));
  }
  std::map<std::string, std::shared_ptr<const Model>, std::less<>> routes;
  for (const auto& [kind, index] : j["routes"].items()) {
    const int at = int_value(index, "the route of " + kind, origin, 0);
    LIFTX_USER_CHECK(size_t(at) < models.size(), "{}: the route of {} names model {} of {}", origin,
                     kind, at, models.size());
    routes.emplace(kind, models[size_t(at)]);
  }
  return routes;
}

} // namespace

Model Model::from_json(const nlohmann::json& j, const std::string& origin) {
  // Not value("format", ""): that throws a JSON type error when "format" is not a string.
  LIFTX_USER_CHECK(j.is_object() && j.contains("format") && j["format"] == "liftx-model",
                   "{}: not a liftx model file", origin);
  LIFTX_USER_CHECK(j.contains("version") && j["version"].is_number_integer() &&
                       j["version"].get<int>() == kFormatVersion,
                   "{}: model format version {} is not supported (this liftx reads "
                   "version {}); retrain it with `liftx train`",
                   origin, j.contains("version") ? j["version"].dump() : "(none)", kFormatVersion);
  try {
    for (const char* key : {"kind", "profile", "features", "standardisation", "options"})
      LIFTX_USER_CHECK(j.contains(key), "{}: model file lacks '{}'", origin, key);
    Model m;
    m.kind_ = parse_kind(j["kind"].get<std::string>());
    m.profile = j["profile"].get<std::string>();
    m.feature_names_ = j["features"].get<std::vector<std::string>>();
    m.standardiser_ = read_standardisation(j["standardisation"], m.feature_names_.size(), origin);
    const auto kept = static_cast<Eigen::Index>(m.standardiser_.kept.size());
    m.options_ = read_options(j["options"], m.kind_, origin);
    if (m.kind_ == Kind::boosted) {
      const auto& b = j.at("boosted");
      LIFTX_USER_CHECK(b.at("format").get<std::string>() == "ubj" &&
                           b.at("encoding").get<std::string>() == "base64",
                       "{}: boosted model stored as {} in {} (this liftx reads ubj "
                       "in base64)",
                       origin, b.at("format").dump(), b.at("encoding").dump());
      m.boosted_samples_ = int_value(b.at("training_samples"), "training_samples", origin, 0);
      m.booster_ = read_booster(b, kept, origin);
    } else if (m.kind_ == Kind::knn) {
      read_knn(j, kept, origin, m.pca_, m.points_, m.targets_);
    } else {
      m.tree_ = read_tree(j.at("tree"), kept, origin);
    }
    m.provenance = j.value("provenance", nlohmann::json::object());
    if (j.contains("routes") || j.contains("route_models"))
      m.routes_ = read_routes(j, m.profile, origin);
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: malformed model file: {}", origin, e.what()));
  }
}

void Model::save(const std::filesystem::path& path) const {
  if (path.has_parent_path())
    std::filesystem::create_directories(path.parent_path());
  write_output_file(path, to_json().dump(1) + "\n", {}, "the model file");
}

Model Model::load(const std::filesystem::path& path) {
  std::error_code ec;
  LIFTX_USER_CHECK(!std::filesystem::is_directory(path, ec),
                   "cannot read model file {}: it is a directory", path.string());
  std::ifstream in(path);
  LIFTX_USER_CHECK(in, "cannot read model file {}", path.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: not JSON: {}", path.string(), e.what()));
  }
  return from_json(j, path.string());
}

} // namespace liftx::model
