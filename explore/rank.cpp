#include "explore/rank.hpp"

#include "codegen/kernel.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace liftx::explore {

FeatureCache::FeatureCache(runtime::DeviceProfile profile) : profile_(std::move(profile)) {}
FeatureCache::~FeatureCache() = default;

features::Features FeatureCache::compute(const ir::Program& program,
                                         const rewrite::Variant& variant,
                                         const rewrite::Sizes& sizes) {
  auto it = models_.find(variant.kernel_index);
  if (it == models_.end()) {
    it = models_
             .emplace(variant.kernel_index,
                      std::make_unique<features::KernelModel>(
                          codegen::generate(program, codegen::Options{variant.launch.tied})))
             .first;
    ++generated_;
    if (models_.size() > 64) { // drop the oldest kernel (not the one just made)
      auto oldest = models_.begin();
      if (oldest == it)
        ++oldest;
      models_.erase(oldest);
    }
  }
  interp::Sizes bound(sizes.begin(), sizes.end());
  return it->second->compute(variant.launch, bound, profile_);
}

std::vector<std::string> feature_names() {
  std::vector<std::string> names;
  for (const features::Column& c : features::columns())
    names.push_back(c.name);
  for (const features::DerivedColumn& c : features::derived_columns())
    names.push_back(c.name);
  return names;
}

std::vector<double> feature_values(const features::Features& f,
                                   const runtime::DeviceProfile::Throughput& device) {
  std::vector<double> values;
  values.reserve(features::columns().size() + features::derived_columns().size());
  for (const features::Column& c : features::columns())
    values.push_back(c.value(f));
  for (double v : features::derived_values(f, device))
    values.push_back(v);
  return values;
}

nlohmann::json feature_json(const features::Features& f) {
  nlohmann::json j = nlohmann::json::object();
  for (const features::Column& c : features::columns())
    j[c.name] = c.value(f);
  return j;
}

std::vector<RankedVariant> rank(const ir::Program& program, const model::Model& model,
                                const RankOptions& options) {
  const std::string profile_name = options.profile.empty() ? model.profile : options.profile;
  LIFTX_USER_CHECK(!profile_name.empty(), "no device profile: the model names none");
  const std::vector<int> columns = model.feature_indices(feature_names());
  rewrite::SpaceOptions space;
  space.sizes = options.sizes;
  const runtime::DeviceProfile profile =
      options.device ? *options.device : runtime::named_profile(profile_name);
  space.device = profile.limits();
  rewrite::VariantStream stream(program, space);
  FeatureCache cache(profile);
  const runtime::DeviceProfile::Throughput throughput = profile.throughput();

  std::vector<RankedVariant> ranked;
  std::vector<std::shared_ptr<const ir::Program>> programs; // by kernel index
  std::vector<double> rows;                                 // model columns, row after row
  // The sample, when one is asked for, is drawn first; the loop then walks it like the stream.
  std::vector<rewrite::Variant> sampled;
  if (options.sample > 0)
    sampled = rewrite::sample(stream, options.sample, options.sample_seed);
  size_t next_sampled = 0;
  auto next = [&](rewrite::Variant& out) {
    if (options.sample <= 0)
      return stream.next(out);
    if (next_sampled == sampled.size())
      return false;
    out = std::move(sampled[next_sampled++]);
    return true;
  };
  rewrite::Variant v;
  while (
      (options.max_variants == 0 || static_cast<int64_t>(ranked.size()) < options.max_variants) &&
      next(v)) {
    const std::vector<double> values =
        feature_values(cache.compute(v.program, v, options.sizes), throughput);
    for (int c : columns)
      rows.push_back(values[size_t(c)]);
    const auto k = static_cast<size_t>(v.kernel_index);
    if (k >= programs.size())
      programs.resize(k + 1);
    if (!programs[k])
      programs[k] = std::make_shared<const ir::Program>(v.program);
    v.kernel_source.clear();
    v.program = ir::Program{"", {}, ir::literal(0.0f), {}};
    ranked.push_back({std::move(v), programs[k], 0, {}, 0});
    v = rewrite::Variant{};
  }
  LIFTX_USER_CHECK(!ranked.empty(), "program {} has no variant for these sizes and profile {}",
                   program.name, profile_name);
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> x(
      rows.data(), static_cast<Eigen::Index>(ranked.size()),
      static_cast<Eigen::Index>(columns.size()));
  const model::Vector predicted = model.predict(x);
  for (size_t r = 0; r < ranked.size(); ++r) {
    ranked[r].predicted = predicted[static_cast<Eigen::Index>(r)];
    ranked[r].columns.assign(rows.begin() + ptrdiff_t(r * columns.size()),
                             rows.begin() + ptrdiff_t((r + 1) * columns.size()));
  }
  // Stream position of each row, before sorting, to find its features again.
  std::vector<size_t> order(ranked.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranked[a].predicted > ranked[b].predicted; });
  for (size_t i = 0; i < order.size() && i < options.explain_top; ++i)
    ranked[order[i]].reasons =
        model.explain(x.row(static_cast<Eigen::Index>(order[i])), options.reasons);
  std::vector<RankedVariant> sorted;
  sorted.reserve(ranked.size());
  for (size_t i : order)
    sorted.push_back(std::move(ranked[i]));
  ranked = std::move(sorted);
  for (size_t r = 0; r < ranked.size(); ++r)
    ranked[r].rank = static_cast<int>(r + 1);
  return ranked;
}

nlohmann::json launch_json(const codegen::Launch& launch) {
  std::vector<int64_t> global, local;
  for (int d = 0; d < launch.dims; ++d) {
    global.push_back(launch.global[size_t(d)]);
    if (launch.local_given())
      local.push_back(launch.local[size_t(d)]);
  }
  return {{"dims", launch.dims}, {"global", global}, {"local", local}, {"tied", launch.tied}};
}

std::string describe_parameters(const rewrite::Variant& v) {
  std::string out = v.strategy;
  for (const auto& [name, value] : v.parameters)
    out += fmt::format(" {}={}", name, value);
  return out;
}

std::string describe_reasons(const std::vector<model::Explanation>& reasons) {
  std::string out;
  for (const model::Explanation& e : reasons)
    out += fmt::format("{}{} {:.3g}", out.empty() ? "" : ", ", e.feature, e.value);
  return out;
}

} // namespace liftx::explore
