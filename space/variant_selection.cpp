#include "space/variant_selection.hpp"

#include "rewrite/lowering.hpp"
#include "rewrite/product.hpp"
#include "rewrite/reduction.hpp"
#include "rewrite/temporal.hpp"
#include "support/csv.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <fstream>

namespace liftx::space {

namespace {

/// Writes `text` to `path` (a UserError when it cannot).
void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path);
  LIFTX_USER_CHECK(f, "cannot write {}", path.string());
  f << text;
}

} // namespace

SelectedVariants select_variants(VariantStream& stream, const VariantSelection& selection,
                                 const std::function<void(const Variant&)>& on_match,
                                 const std::function<void(int64_t walked)>& on_progress) {
  SelectedVariants selected;
  int64_t walked = 0;
  auto walk = [&] {
    if (++walked % kSelectionProgressInterval == 0 && on_progress)
      on_progress(walked);
  };
  if (selection.sample > 0) {
    selected.variants = sample(stream, selection.sample, selection.seed, [&](const Variant& v) {
      walk();
      const bool kept = matches(v, selection.filters);
      selected.matching += kept;
      return kept;
    });
    return selected;
  }
  Variant v;
  while ((selection.limit <= 0 || selected.matching < selection.limit) && stream.next(v)) {
    walk();
    if (!matches(v, selection.filters))
      continue;
    ++selected.matching;
    if (on_match)
      on_match(v);
    if (selection.hold_matches)
      selected.variants.push_back(v);
  }
  return selected;
}

void write_variant_files(const std::filesystem::path& folder,
                         const std::vector<ir::UserFunPtr>& userfuns,
                         const std::vector<Variant>& variants, const Sizes& sizes) {
  std::filesystem::create_directories(folder);
  for (const Variant& v : variants) {
    const std::string stem = fmt::format("{}-{}", v.index, v.strategy);
    write_file(folder / (stem + ".lift"), ir::print(ir::Module{userfuns, {v.program}}));
    write_file(folder / (stem + ".json"), sidecar_json(v, sizes));
  }
}

std::string variant_csv_row(const Variant& v) {
  return fmt::format(
      "{},{},{},{},{},{},{}", v.index, v.strategy, csv_quote(nlohmann::json(v.parameters).dump()),
      v.launch.dims, launch_sizes_text(v.launch.global, v.launch.dims),
      launch_sizes_text(v.launch.local, v.launch.dims), v.launch.tied ? "true" : "false");
}

nlohmann::json variant_json_row(const Variant& v, const Sizes& sizes) {
  nlohmann::json row = nlohmann::json::parse(sidecar_json(v, sizes));
  row.erase("sizes");
  row["index"] = v.index;
  return row;
}

nlohmann::json counts_json(const SpaceCounts& counts) {
  nlohmann::json per_strategy = nlohmann::json::object(), rejections = nlohmann::json::object();
  for (const auto& [k, n] : counts.per_strategy)
    per_strategy[k] = n;
  for (const auto& [k, n] : counts.rejections)
    rejections[k] = n;
  return {{"variants", counts.variants},
          {"distinct_sources", counts.distinct_sources},
          {"lowered_programs", counts.lowered_programs},
          {"high_level_programs", counts.high_level_programs},
          {"per_strategy", per_strategy},
          {"rejections", rejections}};
}

std::string lowering_steps(const std::string& name) {
  std::string steps = name == rewrite::kTemporalStrategy        ? rewrite::kTemporalSteps
                      : name == rewrite::kTemporalStrategy3D    ? rewrite::kTemporalSteps3D
                      : name == rewrite::kReductionStrategy     ? rewrite::kReductionSteps
                      : name == rewrite::kRegisterBlockStrategy ? rewrite::kRegisterBlockSteps
                      : name == rewrite::kLocalTilesStrategy    ? rewrite::kLocalTilesSteps
                                                                : "";
  for (const rewrite::LoweringStrategy& strategy : rewrite::lowering_strategies())
    if (strategy.name == name)
      steps = rewrite::describe(strategy);
  return steps;
}

} // namespace liftx::space
