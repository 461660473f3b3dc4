#pragma once
/// Cost models over plain feature matrices (seed 003 §5, seed 001 §3): features standardised
/// (mean 0, std 1; constant columns dropped), then either PCA keeping 95% of the variance and kNN
/// regression (k = 5) in that space, or a CART regression tree. Both predict throughput normalised
/// by the best configuration of its program and input, y = best_time / time in (0, 1].
///
/// Model files are versioned JSON: format version, kind, feature names in order, the device
/// profile, the standardisation, the PCA basis and training points (kNN) or the tree, and the
/// training provenance. This library knows nothing of the IR.
#include "model/transform.hpp"

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
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

enum class Kind { knn, tree };
std::string to_string(Kind kind);
/// "knn" or "tree"; UserError otherwise.
Kind parse_kind(const std::string& text);

struct TrainOptions {
  Transform transform = Transform::raw; ///< applied to the raw features before standardising
  int k = 5;
  /// kNN: average the neighbours weighted by 1 / distance (a near neighbour says more than a far
  /// one) instead of uniformly.
  bool distance_weighted = false;
  double variance = 0.95;
  int max_depth = 8;
  int min_leaf = 5;
};

/// One feature's part in a prediction: its raw value and how far it is from the training mean.
struct Explanation {
  std::string feature;
  double value = 0;        ///< raw
  double standardised = 0; ///< (transformed value - mean) / std
};

class Model {
public:
  /// `features`: samples x feature_names.size(); `targets`: normalised throughput.
  static Model train(Kind kind, std::vector<std::string> feature_names, const Matrix& features,
                     const Vector& targets, const TrainOptions& options = {});

  /// Raw features (columns in feature_names() order) -> predicted normalised throughput.
  Vector predict(const Matrix& features) const;
  /// The `count` features of a sample that stand out most (largest |standardised value|).
  std::vector<Explanation> explain(const Eigen::Ref<const Eigen::RowVectorXd>& sample,
                                   size_t count = 3) const;

  Kind kind() const { return kind_; }
  const std::vector<std::string>& feature_names() const { return feature_names_; }
  const Standardiser& standardiser() const { return standardiser_; }
  Transform transform() const { return options_.transform; }
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
};

} // namespace liftx::model
