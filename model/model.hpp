#pragma once
/// Cost models over plain feature matrices (seed 003 §5, seed 001 §3): features standardised
/// (mean 0, std 1; constant columns dropped), then either PCA keeping 95% of the variance and kNN
/// regression (k = 5) in that space, a CART regression tree, or gradient-boosted trees (XGBoost,
/// model/boosted.hpp). All predict throughput normalised by the best configuration of its program
/// and input, y = best_time / time: in (0, 1] for measured variants; a boosted prediction may
/// exceed 1 for a variant the model thinks faster than any it saw.
///
/// Model files are versioned JSON: format version, kind, feature names in order, the device
/// profile, the standardisation, the PCA basis and training points (kNN), the tree, or XGBoost's
/// model (boosted), the training provenance, and optional per-kind routes ("route_models", whole
/// models, each once, and "routes", the index of each kind's). This library knows nothing of the
/// IR.
#include "model/transform.hpp"

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::model {

using Matrix = Eigen::MatrixXd; ///< rows = samples, columns = features
using Vector = Eigen::VectorXd;

inline constexpr int kFormatVersion = 1;

/// y = best_time / time within each group (same label); times must be positive.
Vector normalised_throughput(const std::vector<double>& times_ms,
                             const std::vector<std::string>& groups);

/// Standardisation of the non-constant columns.
struct Standardiser {
  std::vector<int> kept; ///< column indices of the raw matrix that vary
  Vector mean;           ///< per kept column
  Vector scale;          ///< per kept column (population standard deviation, > 0)

  static Standardiser fit(const Matrix& raw);
  /// samples x kept.size()
  Matrix apply(const Matrix& raw) const;
};

/// Principal components of standardised data keeping `variance` of the total.
struct Pca {
  Matrix basis;         ///< kept features x components (orthonormal columns)
  Vector variance_kept; ///< per component, fraction of the total variance

  static Pca fit(const Matrix& standardised, double variance = 0.95);
  Matrix project(const Matrix& standardised) const { return standardised * basis; }
};

struct TreeNode {
  int feature = -1;     ///< standardised (kept) column; -1 for a leaf
  double threshold = 0; ///< go left when value <= threshold
  int left = -1;
  int right = -1;
  double value = 0; ///< mean target of the node's samples
  int samples = 0;
};

enum class Kind { knn, tree, boosted };
std::string to_string(Kind kind);
/// "knn", "tree" or "boosted"; UserError otherwise.
Kind parse_kind(const std::string& text);

/// What the boosted trees learn.
enum class Objective {
  /// Squared error on log2(y): the prediction 2^f is a normalised throughput. It is not clipped
  /// at 1: variants the model thinks faster than any it saw keep their order instead of tying
  /// (clipping made the top five of a 1024² Jacobi space tie at 1.000).
  regression,
  /// XGBoost's rank:pairwise within each (program, input) group: f is a score that orders the
  /// variants of one group; the prediction 1 / (1 + e^-f) keeps that order but is not a throughput
  /// (uncalibrated, and not comparable between groups).
  pairwise,
};
std::string to_string(Objective objective);
/// "regression" or "pairwise"; UserError otherwise.
Objective parse_objective(const std::string& text);

struct TrainOptions {
  Transform transform = Transform::raw; ///< applied to the raw features before standardising
  int k = 5;
  /// kNN: average the neighbours weighted by 1 / distance (a near neighbour says more than a far
  /// one) instead of uniformly.
  bool distance_weighted = false;
  double variance = 0.95;
  int max_depth = 8; ///< the CART tree's (boost_depth is the boosted trees')
  int min_leaf = 5;
  // Boosted trees (XGBoost, tree_method "hist"). Training twice with the same options and data
  // gives identical models (tests/model/test_boosted.cpp). 1, 2, 8 and 16 threads trained the same
  // model on 20,000 synthetic rows, but XGBoost does not promise that across thread counts.
  int trees = 400; ///< boosting rounds
  /// Trees grown side by side in each round, each on its own row and column sample, their step
  /// averaged (XGBoost's num_parallel_tree): a bagged step, so that the ranking depends less on
  /// which rows one sample drew.
  int parallel_trees = 1;
  double learning_rate = 0.05; ///< XGBoost's eta, in (0, 1]
  int boost_depth = 6;         ///< XGBoost's max_depth (kept apart from the CART tree's default 8)
  double min_child_weight = 1; ///< minimum hessian sum in a leaf (rows, for squared error)
  double subsample = 0.8;      ///< fraction of rows sampled per tree, in (0, 1]
  double colsample = 0.8;      ///< fraction of columns sampled per tree, in (0, 1]
  Objective objective = Objective::regression;
  uint64_t seed = 1; ///< XGBoost's seed (row and column sampling), below 2^63
  /// Boosters trained side by side with the seeds seed, seed + 1, ..., their margins averaged (a
  /// bag over seeds): one booster's ranking of the top moves with its seed as much as with the
  /// recipe (docs/results.md, "3D stencils at 512³"), an average of several moves less.
  int seeds = 1;
  int threads = 0; ///< 0: every core
};

/// One feature's part in a prediction: its raw value and how far it is from the training mean;
/// for boosted models also its additive share of the prediction before the link (TreeSHAP).
struct Explanation {
  std::string feature;
  double value = 0;        ///< raw
  double standardised = 0; ///< (transformed value - mean) / std
  /// Boosted: the feature's contribution to f (log2 of the predicted throughput, or the pairwise
  /// score); the contributions and a bias sum to f. 0 for kNN and tree models.
  double contribution = 0;
};

namespace xgb {
class Booster;
}

class Model {
public:
  /// `features`: samples x feature_names.size(); `targets`: normalised throughput. `groups`, one
  /// label per sample (its program and input), is needed by the pairwise objective (samples of a
  /// group need not be adjacent) and ignored otherwise. UserError for invalid options.
  static Model train(Kind kind, std::vector<std::string> feature_names, const Matrix& features,
                     const Vector& targets, const TrainOptions& options = {},
                     const std::vector<std::string>* groups = nullptr);

  /// Raw features (columns in feature_names() order) -> predicted normalised throughput (pairwise
  /// boosted models: an uncalibrated score in (0, 1), see Objective).
  Vector predict(const Matrix& features) const;
  /// predict() for the rows whose prediction may reach their floor (`floors`, one per row, in
  /// predict()'s units): a boosted model may stop early on rows certainly below it, which are then
  /// -infinity; every row at or above its floor gets predict()'s value, bit for bit. kNN and tree
  /// models predict every row.
  Vector predict_reaching(const Matrix& features, const std::vector<double>& floors) const;
  /// Raw features -> the standardised (transformed) columns the model works on.
  Matrix standardised(const Matrix& features) const;
  /// The `count` features of a sample that stand out most: for kNN and tree models the largest
  /// |standardised value|, for boosted models the largest |contribution| to its prediction.
  std::vector<Explanation> explain(const Eigen::Ref<const Eigen::RowVectorXd>& sample,
                                   size_t count = 3) const;

  Kind kind() const { return kind_; }
  const std::vector<std::string>& feature_names() const { return feature_names_; }
  const Standardiser& standardiser() const { return standardiser_; }
  Transform transform() const { return options_.transform; }
  const TrainOptions& options() const { return options_; }
  const Pca& pca() const { return pca_; }
  const std::vector<TreeNode>& tree() const { return tree_; }
  int training_samples() const;

  /// The device profile the features were computed for ("cpu", "nvidia", ...).
  std::string profile;
  /// Free-form: database, device key, programs, sample counts, date.
  nlohmann::json provenance = nlohmann::json::object();

  nlohmann::json to_json() const;
  /// UserError (naming `origin`) for another format version, kind or missing fields.
  static Model from_json(const nlohmann::json& json, const std::string& origin = "model");
  void save(const std::filesystem::path& path) const;
  static Model load(const std::filesystem::path& path);

  /// Checks that the model's features are all in `available` (in any order); UserError naming
  /// the missing ones otherwise. Returns, per model feature, its index in `available`.
  std::vector<int> feature_indices(const std::vector<std::string>& available) const;

  /// Per-kind routes: a model may carry other models, each for one kind of program (the caller's
  /// names, e.g. rewrite::ProgramKind's "reduction"), chosen where they ranked that kind's held-out
  /// programs better (model/routes.hpp). One model file then serves every kind without a model
  /// trained for one kind having to carry on all the others.
  /// The model that ranks programs of `program_kind`: its route, or this model.
  const Model& for_kind(std::string_view program_kind) const;
  const std::map<std::string, std::shared_ptr<const Model>, std::less<>>& routes() const {
    return routes_;
  }
  /// Routes every kind of `program_kinds` to `route` (one model, kept once in the file), replacing
  /// their routes. UserError when `route` has routes of its own or another profile.
  void set_route(const std::vector<std::string>& program_kinds, Model route);
  /// This model without its routes (what ranks every kind they do not name).
  Model without_routes() const;
  /// Drops the routes of `program_kinds` (those without one are skipped): this model ranks them.
  void drop_routes(const std::vector<std::string>& program_kinds);

private:
  Kind kind_ = Kind::knn;
  std::vector<std::string> feature_names_;
  Standardiser standardiser_;
  TrainOptions options_;
  // kNN
  Pca pca_;
  Matrix points_; ///< training samples in PCA space
  Vector targets_;
  // tree
  std::vector<TreeNode> tree_;
  // boosted: one booster per seed (TrainOptions::seeds), immutable once trained or loaded,
  // shared by copies
  std::vector<std::shared_ptr<const xgb::Booster>> boosters_;
  /// The boosters' mean margin per row (a single booster's own, bit for bit).
  std::vector<double> boosted_margins(const Matrix& z) const;
  /// boosted_margins() for the rows whose mean margin may reach `margin_floors`; -infinity for
  /// others.
  std::vector<double> boosted_margins_reaching(const Matrix& z,
                                               const std::vector<double>& margin_floors) const;
  int boosted_samples_ = 0;
  // routes: immutable once set, shared by copies
  std::map<std::string, std::shared_ptr<const Model>, std::less<>> routes_;
};

} // namespace liftx::model
