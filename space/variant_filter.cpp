#include "space/variant_filter.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace liftx::space {

std::string launch_sizes_text(const std::array<int64_t, 3>& sizes, int dims) {
  std::string s;
  for (int d = 0; d < dims; ++d)
    s += fmt::format("{}{}", d ? "x" : "", sizes[static_cast<size_t>(d)]);
  return s;
}

namespace {

std::string value_of(const std::string& strategy, const std::map<std::string, int64_t>& parameters,
                     const Launch& launch, const std::string& key) {
  if (key == "strategy")
    return strategy;
  if (key == "tied")
    return launch.tied ? "true" : "false";
  if (key == "local")
    return launch_sizes_text(launch.local, launch.dims);
  if (key == "global")
    return launch_sizes_text(launch.global, launch.dims);
  auto it = parameters.find(key);
  return it == parameters.end() ? "none" : std::to_string(it->second);
}

} // namespace

VariantFilter parse_variant_filter(const std::string& text, const std::string& option) {
  const size_t eq = text.find('=');
  LIFTX_USER_CHECK(eq != std::string::npos && eq != 0 && eq + 1 != text.size(),
                   "{} {}: expected KEY=VALUE[|VALUE...], e.g. "
                   "strategy=window or tile_y=4|8",
                   option, text);
  VariantFilter f{text.substr(0, eq), {}};
  for (size_t start = eq + 1; start <= text.size();) {
    size_t bar = text.find('|', start);
    if (bar == std::string::npos)
      bar = text.size();
    LIFTX_USER_CHECK(bar != start, "{} {}: an empty value", option, text);
    f.values.push_back(text.substr(start, bar - start));
    start = bar + 1;
  }
  return f;
}

bool matches(const std::string& strategy, const std::map<std::string, int64_t>& parameters,
             const Launch& launch, const std::vector<VariantFilter>& filters) {
  return std::all_of(filters.begin(), filters.end(), [&](const VariantFilter& f) {
    const std::string actual = value_of(strategy, parameters, launch, f.key);
    return std::find(f.values.begin(), f.values.end(), actual) != f.values.end();
  });
}

bool matches(const Variant& variant, const std::vector<VariantFilter>& filters) {
  return matches(variant.strategy, variant.parameters, variant.launch, filters);
}

std::string describe(const std::vector<VariantFilter>& filters) {
  std::string text;
  for (const VariantFilter& f : filters) {
    std::string values;
    for (const std::string& v : f.values)
      values += (values.empty() ? "" : "|") + v;
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", f.key, values);
  }
  return text;
}

} // namespace liftx::space
