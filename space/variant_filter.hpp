#pragma once
/// `--where KEY=V1|V2|...`: keeping the variants of a space whose strategy, launch or parameters
/// take one of the listed values (`liftx variants` and `liftx collect`, so that a collection can
/// sample the part of a space a user cares about, e.g. the 2.5D register windows of a 3D stencil).
#include "space/space.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace liftx::space {

/// One filter: KEY is `strategy`, `tied` (true/false), `local` or `global` (32x8, 128x2x1), or a
/// strategy parameter (tile_x, tile_y, vector, split, ...; the value `none` = absent).
struct VariantFilter {
  std::string key;
  std::vector<std::string> values;
};

/// A launch's global or local sizes as `--where` compares them: "128x2x1" (its `dims` sizes).
std::string launch_sizes_text(const std::array<int64_t, 3>& sizes, int dims);

/// Parses KEY=V1|V2|...; a UserError naming `option` when the text is not of that form.
VariantFilter parse_variant_filter(const std::string& text, const std::string& option = "--where");

/// Does `variant` satisfy every filter (an empty list keeps everything)?
bool matches(const Variant& variant, const std::vector<VariantFilter>& filters);
/// The same test on a variant's parts, for callers that walk a space without building Variants.
bool matches(const std::string& strategy, const std::map<std::string, int64_t>& parameters,
             const Launch& launch, const std::vector<VariantFilter>& filters);

/// The filters as `--where` texts, in order, joined by spaces ("" for none): a stored plan's
/// name for its selection.
std::string describe(const std::vector<VariantFilter>& filters);

} // namespace liftx::space
