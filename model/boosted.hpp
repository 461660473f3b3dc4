#pragma once
/// Gradient-boosted trees through XGBoost's C API (libxgboost-dev): RAII owners of
/// its DMatrix and Booster handles, training with the options of TrainOptions, prediction,
/// per-feature contributions (TreeSHAP) and the model as bytes (UBJSON) for the model file.
///
/// Every XGBoost call is checked: a failure throws InternalError with XGBoost's own message
/// (XGBGetLastError), except loading model bytes, which throws UserError (the bytes come from a
/// file). Model (model.hpp) holds a trained Booster behind a shared pointer: a Booster does not
/// change once trained or loaded, so copies of a Model share it.
///
/// Training uses TrainOptions::threads; XGBoost's prediction and contributions run on one thread:
/// liftx explains one row at a time, where OpenMP's start-up costs more than the work (a row's
/// contributions from 400 trees: 3.3 ms on one thread, 12 ms on two on a loaded 2-core machine).
///
/// Margins come from our own copy of the trees (model/tree_ensemble.hpp), built once when the
/// booster is trained or loaded: bit-for-bit XGBoost's margins, without a DMatrix per call and
/// several times faster (ranking a variant space predicts millions of rows).
#include "model/model.hpp"
#include "model/tree_ensemble.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace liftx::model::xgb {

/// A dense matrix handed to XGBoost (float32, row-major copy; NaN would mean "missing").
class DMatrix {
public:
  explicit DMatrix(const Matrix& rows);
  ~DMatrix();
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrix(DMatrix&& other) noexcept;
  DMatrix& operator=(DMatrix&& other) noexcept;

  /// The regression target or ranking relevance of each row.
  void set_labels(const Vector& labels);
  /// Query groups for ranking objectives: the sizes of consecutive runs of rows.
  void set_group_sizes(const std::vector<unsigned>& sizes);
  void* handle() const { return handle_; }

private:
  void* handle_ = nullptr; ///< DMatrixHandle
};

class Booster {
public:
  ~Booster();
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  Booster(Booster&& other) noexcept;
  Booster& operator=(Booster&& other) noexcept;

  /// Trains `options.trees` rounds of tree_method "hist" on `data` (labels, and group sizes for
  /// the pairwise objective, already set). The options must have been validated.
  static Booster train(const DMatrix& data, const TrainOptions& options, double base_score);
  /// A booster from the bytes of to_ubj(); UserError (naming `origin`) if XGBoost rejects them.
  static Booster from_ubj(std::string_view bytes, const std::string& origin);

  /// XGBoost's model as Universal Binary JSON: exact (float32 values stored as bits).
  std::string to_ubj() const;
  /// The number of feature columns the booster was trained on.
  int features() const;
  /// The raw output per row: the sum of the trees' leaves plus the base score (the objective's
  /// link is the identity for both objectives used here). Computed by the TreeEnsemble; bit-for-bit
  /// predict_margin_xgboost's.
  std::vector<double> predict_margin(const Matrix& rows) const;
  /// predict_margin's values for the rows that may reach their floors; -infinity for others
  /// (TreeEnsemble::margins_reaching).
  std::vector<double> predict_margin_reaching(const Matrix& rows,
                                              const std::vector<double>& floors) const;
  /// The same margins from XGBoost's own predictor (tests and debugging comparisons).
  std::vector<double> predict_margin_xgboost(const Matrix& rows) const;
  const TreeEnsemble& ensemble() const { return ensemble_; }
  /// TreeSHAP contributions: rows x (features + 1), the last column the bias; each row sums to
  /// predict_margin's value for the row.
  Matrix contributions(const Matrix& rows) const;

private:
  Booster();
  /// Once trained or loaded: XGBoost on one thread, and the ensemble built from its model (a
  /// UserError naming `origin` if it cannot be).
  void finish(const std::string& origin);
  void* handle_ = nullptr; ///< BoosterHandle
  TreeEnsemble ensemble_;
};

/// Standard base64 (RFC 4648, padded) of bytes; decode throws UserError for malformed text.
std::string base64_encode(std::string_view bytes);
std::string base64_decode(std::string_view text);

/// "major.minor.patch" of the libxgboost this program runs with.
std::string version();

} // namespace liftx::model::xgb
