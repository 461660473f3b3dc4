#pragma once
/// How raw feature columns become the columns a model standardises. Counts and sizes span orders
/// of magnitude (work-items from 2^8 to 2^26), so distances and splits on raw values are ruled by
/// the largest inputs; logarithms put a doubling at the same distance everywhere. Sizes relative
/// to the data a program moves describe a launch (work-items per point, work-groups per point)
/// independently of the input size, which is what carries over between programs and inputs.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace liftx::model {

enum class Transform {
  raw,          ///< the features as computed
  log,          ///< log2(1 + x) of every column
  log_relative, ///< log, and launch sizes as log2 ratios to bytes_moved
};

std::string to_string(Transform transform);
/// "raw", "log" or "log_relative"; UserError otherwise.
Transform parse_transform(const std::string& text);

/// The columns `log_relative` expresses relative to bytes_moved.
const std::vector<std::string>& size_columns();

/// One value under `transform` (log and log_relative: log2(1 + x), x clamped at 0); the ratios
/// of log_relative are differences of such values.
inline double transformed_value(Transform transform, double x) {
  return transform == Transform::raw ? x : std::log2(1.0 + std::max(0.0, x));
}
/// The columns of `names` that log_relative takes relative to bytes_moved (others false), and
/// the index of bytes_moved; UserError when it needs bytes_moved and there is none.
std::vector<bool> relative_columns(Transform transform, const std::vector<std::string>& names,
                                   size_t& bytes_moved);

/// `raw` (samples x names.size()) transformed column by column; the same shape.
Eigen::MatrixXd apply_transform(Transform transform, const std::vector<std::string>& names,
                                const Eigen::MatrixXd& raw);

} // namespace liftx::model
