#pragma once
/// How raw feature columns become the columns a model standardises. Counts and sizes span orders
/// of magnitude (work-items from 2^8 to 2^26), so distances and splits on raw values are ruled by
/// the largest inputs; logarithms put a doubling at the same distance everywhere. Sizes relative
/// to the data a program moves describe a launch (work-items per point, work-groups per point)
/// independently of the input size, which is what carries over between programs and inputs.
#include <Eigen/Dense>

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

/// `raw` (samples x names.size()) transformed column by column; the same shape.
Eigen::MatrixXd apply_transform(Transform transform, const std::vector<std::string>& names,
                                const Eigen::MatrixXd& raw);

} // namespace liftx::model
