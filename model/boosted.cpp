#include "model/boosted.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

namespace liftx::model::xgb {

namespace {

std::string last_error() {
  const char* text = XGBGetLastError();
  return text && *text ? text : "(XGBoost gave no message)";
}

/// InternalError naming the call unless XGBoost returned 0.
void check(int rc, const char* call) {
  LIFTX_INTERNAL_CHECK(rc == 0, "XGBoost {} failed: {}", call, last_error());
}

/// XGBoost rejects infinite inputs, and a finite double beyond float's range casts to one: such
/// a value saturates (it falls in the same leaf as the largest float would). NaN stays NaN, the
/// value XGBoost reads as missing.
float saturated_float(double value) {
  constexpr double largest = std::numeric_limits<float>::max();
  return std::isnan(value) ? std::numeric_limits<float>::quiet_NaN()
                           : static_cast<float>(std::clamp(value, -largest, largest));
}

std::vector<float> row_major_floats(const Matrix& rows) {
  std::vector<float> out(static_cast<size_t>(rows.rows() * rows.cols()));
  for (Eigen::Index r = 0; r < rows.rows(); ++r)
    for (Eigen::Index c = 0; c < rows.cols(); ++c)
      out[static_cast<size_t>(r * rows.cols() + c)] = saturated_float(rows(r, c));
  return out;
}

/// XGBoosterPredictFromDMatrix of `type` (1: margin, 2: contributions); `rows` x `width` values.
std::vector<float> predict(void* booster, const Matrix& rows, int type, size_t width) {
  const DMatrix data(rows);
  const std::string config =
      fmt::format(R"({{"type": {}, "training": false, "iteration_begin": 0, )"
                  R"("iteration_end": 0, "strict_shape": false}})",
                  type);
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  check(XGBoosterPredictFromDMatrix(booster, data.handle(), config.c_str(), &shape, &dims, &result),
        "XGBoosterPredictFromDMatrix");
  bst_ulong values = 1;
  for (bst_ulong d = 0; d < dims; ++d)
    values *= shape[d];
  const auto expected = static_cast<bst_ulong>(rows.rows()) * width;
  LIFTX_INTERNAL_CHECK(values == expected, "XGBoost predicted {} values, expected {}", values,
                       expected);
  // The result lives in XGBoost's buffer until the next call: copy it now.
  return std::vector<float>(result, result + values);
}

} // namespace

// ---- DMatrix ------------------------------------------------------------------------------------

DMatrix::DMatrix(const Matrix& rows) {
  const std::vector<float> values = row_major_floats(rows);
  check(XGDMatrixCreateFromMat(values.data(), static_cast<bst_ulong>(rows.rows()),
                               static_cast<bst_ulong>(rows.cols()),
                               std::numeric_limits<float>::quiet_NaN(), &handle_),
        "XGDMatrixCreateFromMat");
}

DMatrix::~DMatrix() {
  if (handle_)
    XGDMatrixFree(handle_); // cannot fail for a handle it made; a destructor must not throw
}

DMatrix::DMatrix(DMatrix&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

DMatrix& DMatrix::operator=(DMatrix&& other) noexcept {
  std::swap(handle_, other.handle_);
  return *this;
}

void DMatrix::set_labels(const Vector& labels) {
  std::vector<float> values(static_cast<size_t>(labels.size()));
  for (Eigen::Index i = 0; i < labels.size(); ++i)
    values[static_cast<size_t>(i)] = static_cast<float>(labels[i]);
  check(
      XGDMatrixSetFloatInfo(handle_, "label", values.data(), static_cast<bst_ulong>(values.size())),
      "XGDMatrixSetFloatInfo(label)");
}

void DMatrix::set_group_sizes(const std::vector<unsigned>& sizes) {
  check(XGDMatrixSetUIntInfo(handle_, "group", sizes.data(), static_cast<bst_ulong>(sizes.size())),
        "XGDMatrixSetUIntInfo(group)");
}

// ---- Booster ------------------------------------------------------------------------------------

Booster::Booster() = default;

Booster::~Booster() {
  if (handle_)
    XGBoosterFree(handle_);
}

Booster::Booster(Booster&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), ensemble_(std::move(other.ensemble_)) {}

Booster& Booster::operator=(Booster&& other) noexcept {
  std::swap(handle_, other.handle_);
  std::swap(ensemble_, other.ensemble_);
  return *this;
}

Booster Booster::train(const DMatrix& data, const TrainOptions& options, double base_score) {
  Booster b;
  void* matrices[] = {data.handle()};
  check(XGBoosterCreate(matrices, 1, &b.handle_), "XGBoosterCreate");
  auto set = [&](const char* name, const std::string& value) {
    check(XGBoosterSetParam(b.handle_, name, value.c_str()),
          fmt::format("XGBoosterSetParam({}, {})", name, value).c_str());
  };
  set("verbosity", "1"); // warnings only
  set("booster", "gbtree");
  set("tree_method", "hist");
  set("objective", options.objective == Objective::pairwise ? "rank:pairwise" : "reg:squarederror");
  set("base_score", fmt::format("{}", base_score));
  set("eta", fmt::format("{}", options.learning_rate));
  set("max_depth", fmt::format("{}", options.boost_depth));
  set("min_child_weight", fmt::format("{}", options.min_child_weight));
  set("subsample", fmt::format("{}", options.subsample));
  set("colsample_bytree", fmt::format("{}", options.colsample));
  set("seed", fmt::format("{}", options.seed));
  set("num_parallel_tree", fmt::format("{}", options.parallel_trees));
  if (options.threads > 0)
    set("nthread", fmt::format("{}", options.threads));
  for (int round = 0; round < options.trees; ++round)
    check(XGBoosterUpdateOneIter(b.handle_, round, data.handle()), "XGBoosterUpdateOneIter");
  try {
    b.finish("the trained model");
  } catch (const UserError& e) {
    // Booster trains only what the ensemble supports.
    LIFTX_UNREACHABLE("{}", e.message());
  }
  return b;
}

Booster Booster::from_ubj(std::string_view bytes, const std::string& origin) {
  Booster b;
  check(XGBoosterCreate(nullptr, 0, &b.handle_), "XGBoosterCreate");
  LIFTX_USER_CHECK(
      !XGBoosterLoadModelFromBuffer(b.handle_, bytes.data(), static_cast<bst_ulong>(bytes.size())),
      "{}: XGBoost cannot load the boosted model: {}", origin, last_error());
  b.finish(origin);
  return b;
}

void Booster::finish(const std::string& origin) {
  check(XGBoosterSetParam(handle_, "nthread", "1"), "XGBoosterSetParam(nthread, 1)");
  // From XGBoost's own serialisation, not the bytes it was loaded from: those may be an older
  // format XGBoost still reads.
  try {
    ensemble_ = TreeEnsemble::from_xgboost_ubj(to_ubj());
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", origin, e.message()));
  }
  // A cheap guard against an XGBoost whose model semantics changed (another version): a few rows
  // through both predictors, which must agree exactly. A fraction of a millisecond.
  const auto columns = static_cast<Eigen::Index>(ensemble_.features());
  if (columns == 0)
    return;
  Matrix probe(3, columns);
  probe.row(0).setZero();
  probe.row(1).setConstant(std::numeric_limits<double>::quiet_NaN());
  probe.row(2).setLinSpaced(columns, -2.0, 2.0);
  const std::vector<double> ours = ensemble_.margins(probe);
  const std::vector<double> theirs = predict_margin_xgboost(probe);
  for (size_t r = 0; r < ours.size(); ++r)
    LIFTX_INTERNAL_CHECK(std::memcmp(&ours[r], &theirs[r], sizeof(double)) == 0,
                         "{}: the compiled trees give margin {} for probe row {}, XGBoost {} "
                         "(XGBoost {})",
                         origin, ours[r], r, theirs[r], version());
}

std::string Booster::to_ubj() const {
  bst_ulong length = 0;
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "ubj"})", &length, &bytes),
        "XGBoosterSaveModelToBuffer");
  return std::string(bytes, length);
}

int Booster::features() const {
  bst_ulong count = 0;
  check(XGBoosterGetNumFeature(handle_, &count), "XGBoosterGetNumFeature");
  return static_cast<int>(count);
}

std::vector<double> Booster::predict_margin(const Matrix& rows) const {
  return ensemble_.margins(rows);
}

std::vector<double> Booster::predict_margin_reaching(const Matrix& rows,
                                                     const std::vector<double>& floors) const {
  return ensemble_.margins_reaching(rows, floors);
}

std::vector<double> Booster::predict_margin_xgboost(const Matrix& rows) const {
  if (rows.rows() == 0)
    return {};
  const std::vector<float> margin = predict(handle_, rows, 1, 1);
  return std::vector<double>(margin.begin(), margin.end());
}

Matrix Booster::contributions(const Matrix& rows) const {
  const auto width = static_cast<size_t>(rows.cols()) + 1;
  const std::vector<float> values = predict(handle_, rows, 2, width);
  Matrix out(rows.rows(), static_cast<Eigen::Index>(width));
  for (Eigen::Index r = 0; r < out.rows(); ++r)
    for (Eigen::Index c = 0; c < out.cols(); ++c)
      out(r, c) = values[static_cast<size_t>(r) * width + static_cast<size_t>(c)];
  return out;
}

// ---- base64 -------------------------------------------------------------------------------------

namespace {
constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t word = 0;
    for (size_t k = 0; k < 3; ++k)
      word = (word << 8) | (k < n ? static_cast<uint8_t>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k)
      out += k <= n ? kAlphabet[(word >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::string base64_decode(std::string_view text) {
  LIFTX_USER_CHECK(text.size() % 4 == 0, "base64 text of {} characters (not a multiple of 4)",
                   text.size());
  std::array<int, 256> value{};
  value.fill(-1);
  for (size_t i = 0; i < kAlphabet.size(); ++i)
    value[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int>(i);
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const size_t padding = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    uint32_t word = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char ch = text[i + k];
      const int v = k >= 4 - padding ? 0 : value[static_cast<uint8_t>(ch)];
      LIFTX_USER_CHECK(v >= 0, "invalid base64 character at offset {}", i + k);
      word = (word << 6) | static_cast<uint32_t>(v);
    }
    for (size_t k = 0; k < 3 - padding; ++k)
      out += static_cast<char>((word >> (16 - 8 * k)) & 0xff);
  }
  return out;
}

std::string version() {
  int major = 0, minor = 0, patch = 0;
  XGBoostVersion(&major, &minor, &patch);
  return fmt::format("{}.{}.{}", major, minor, patch);
}

} // namespace liftx::model::xgb
