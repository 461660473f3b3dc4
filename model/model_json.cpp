// The model file: Model::to_json and Model::from_json (with the readers that check each part
// of the file), Model::save and Model::load.
#include "model/model.hpp"

#include "model/boosted.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
#include <map>

namespace liftx::model {
namespace {

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
                    {"model", xgb::base64_encode(boosters_.front()->to_ubj())}};
    // A bag over seeds: the other seeds' boosters after the first (a file of one booster is
    // written as before bags existed).
    if (boosters_.size() > 1) {
      o["seeds"] = options_.seeds;
      nlohmann::json& more = j["boosted"]["more_models"];
      more = nlohmann::json::array();
      for (size_t b = 1; b < boosters_.size(); ++b)
        more.push_back(xgb::base64_encode(boosters_[b]->to_ubj()));
    }
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
  options.seeds = o.contains("seeds") ? int_option(o, "seeds", origin, 1) : defaults.seeds;
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

/// One XGBoost model of "boosted" (UBJSON in base64) of `kept` features.
std::shared_ptr<const xgb::Booster> read_booster(const nlohmann::json& encoded, Eigen::Index kept,
                                                 const std::string& origin) {
  std::string bytes;
  try {
    bytes = xgb::base64_decode(encoded.get<std::string>());
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
      m.boosters_.push_back(read_booster(b.at("model"), kept, origin));
      if (b.contains("more_models")) {
        LIFTX_USER_CHECK(b["more_models"].is_array(), "{}: boosted.more_models is not a list",
                         origin);
        for (const nlohmann::json& more : b["more_models"])
          m.boosters_.push_back(read_booster(more, kept, origin));
      }
      LIFTX_USER_CHECK(int(m.boosters_.size()) == m.options_.seeds,
                       "{}: {} boosted models for options.seeds {}", origin, m.boosters_.size(),
                       m.options_.seeds);
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
