#pragma once
/// Choosing the variants of a space a report lists (`liftx variants`): those the `--where` filters
/// keep, up to a limit or as a fixed-seed uniform sample, and writing them out as .lift files
/// with their launch sidecars, for `liftx run FILE --launch SIDECAR`.
#include "ir/expr.hpp"
#include "space/space.hpp"
#include "space/variant_filter.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace liftx::space {

struct VariantSelection {
  std::vector<VariantFilter> filters; ///< all must hold (empty: every variant)
  /// Stop after this many matching variants (0 = the whole space); not with `sample`.
  int64_t limit = 0;
  /// A uniform sample of this many matching variants (0 = no sample: every match, in order).
  int64_t sample = 0;
  uint64_t seed = 1;
  /// Without a sample: also hold the matching variants in the result (to write them out); a
  /// whole space of them would not fit in memory, so only when asked.
  bool hold_matches = false;
};

struct SelectedVariants {
  /// The sample, or (with hold_matches) every match, in stream order.
  std::vector<Variant> variants;
  int64_t matching = 0; ///< the variants the filters kept (up to the limit)
};

/// How often select_variants reports progress: every this many variants walked.
inline constexpr int64_t kSelectionProgressInterval = 4096;

/// Walks `stream` and selects the variants of `selection`. Without a sample, `on_match` sees each
/// match as it is found (a sample is known only once the space is walked); `on_progress` is called
/// every kSelectionProgressInterval variants walked with the number walked so far.
SelectedVariants select_variants(VariantStream& stream, const VariantSelection& selection,
                                 const std::function<void(const Variant&)>& on_match,
                                 const std::function<void(int64_t walked)>& on_progress);

/// Writes each variant as `folder`/<index>-<strategy>.lift (a module of `userfuns` and its
/// lowered program) and a .json sidecar (sidecar_json at `sizes`); creates `folder`. UserError
/// when a file cannot be written.
void write_variant_files(const std::filesystem::path& folder,
                         const std::vector<ir::UserFunPtr>& userfuns,
                         const std::vector<Variant>& variants, const Sizes& sizes);

/// A listed variant's CSV columns (those of `liftx db --csv`) and one variant's row, without a
/// line end.
inline constexpr const char* kVariantCsvHeader = "index,strategy,parameters,dims,global,local,tied";
std::string variant_csv_row(const Variant& v);
/// A listed variant as JSON: its sidecar (sidecar_json) without the sizes, which a document holds
/// once, and with its index.
nlohmann::json variant_json_row(const Variant& v, const Sizes& sizes);
/// The counters of a space as `liftx variants --format json` reports them.
nlohmann::json counts_json(const SpaceCounts& counts);

/// The rewrite steps that lower the variants of strategy `name` (the same data lower() runs);
/// "" for a strategy without a description.
std::string lowering_steps(const std::string& name);

} // namespace liftx::space
