#include "model/transform.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace liftx::model {

std::string to_string(Transform transform) {
  switch (transform) {
  case Transform::raw:
    return "raw";
  case Transform::log:
    return "log";
  case Transform::log_relative:
    return "log_relative";
  }
  return "raw";
}

Transform parse_transform(const std::string& text) {
  for (Transform t : {Transform::raw, Transform::log, Transform::log_relative})
    if (to_string(t) == text)
      return t;
  throw UserError(fmt::format("unknown feature transform '{}' (raw, log or log_relative)", text));
}

const std::vector<std::string>& size_columns() {
  static const std::vector<std::string> columns{"global_size_0", "global_size_1",
                                                "global_size_2", "work_items",
                                                "work_groups",   "working_set_bytes"};
  return columns;
}

std::vector<bool> relative_columns(Transform transform, const std::vector<std::string>& names,
                                   size_t& bytes_moved) {
  std::vector<bool> relative(names.size(), false);
  bytes_moved = 0;
  if (transform != Transform::log_relative)
    return relative;
  auto bytes = std::find(names.begin(), names.end(), "bytes_moved");
  LIFTX_USER_CHECK(bytes != names.end(),
                   "the log_relative transform needs the bytes_moved feature");
  bytes_moved = static_cast<size_t>(bytes - names.begin());
  for (size_t c = 0; c < names.size(); ++c)
    relative[c] =
        std::find(size_columns().begin(), size_columns().end(), names[c]) != size_columns().end();
  return relative;
}

Eigen::MatrixXd apply_transform(Transform transform, const std::vector<std::string>& names,
                                const Eigen::MatrixXd& raw) {
  LIFTX_INTERNAL_CHECK(static_cast<size_t>(raw.cols()) == names.size(),
                       "{} feature columns for {} names", raw.cols(), names.size());
  if (transform == Transform::raw)
    return raw;
  // Features are counts, sizes and fractions: never negative, but clamp so that a log is defined.
  Eigen::MatrixXd out =
      raw.unaryExpr([](double x) { return transformed_value(Transform::log, x); });
  size_t bytes_moved = 0;
  const std::vector<bool> relative = relative_columns(transform, names, bytes_moved);
  if (transform == Transform::log_relative) {
    const Eigen::VectorXd reference = out.col(static_cast<Eigen::Index>(bytes_moved));
    for (size_t c = 0; c < names.size(); ++c)
      if (relative[c])
        out.col(static_cast<Eigen::Index>(c)) -= reference;
  }
  return out;
}

} // namespace liftx::model
