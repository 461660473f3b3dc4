#pragma once
/// The primitive registry: every primitive as written in .lift, with the facts about it that the
/// parser, the printer, error messages, the rewrite walker and the rules read instead of listing
/// primitives themselves. mapGlb0, mapGlb1, mapGlb2 are entries of their own (one node type,
/// MapGlb, and its dimension); the 2D/3D forms of ir/derived.hpp are entries of rank 2 or 3 that
/// name the node they nest. The table is in ir/primitives.cpp; the node types in ir/expr.hpp.
#include "ir/expr.hpp"

#include <algorithm>
#include <span>
#include <string_view>

namespace liftx::ir {

/// Where a loop's iterations run once lowered: Lift's OpenCL maps. None is what is not lowered
/// (map, reduce) or not a loop over threads.
enum class ParallelLevel : uint8_t { None, Seq, Global, Workgroup, Local };

/// How a primitive applies its function parameter.
enum class Pattern : uint8_t {
  Map,     ///< to every element: map, mapSeq, mapGlb/Wrg/Lcl d
  Reduce,  ///< folding the elements into the initial value: reduce, reduceSeq
  Iterate, ///< k times to the whole argument: iterate
  Window,  ///< to every sliding window: mapSeqSlide
  Other,   ///< otherwise: toGlobal/toLocal/toPrivate, array, vectorize, or no function
};

/// The FunNode alternative of node type N, a constant: `switch (p.kind) { case node_kind<Map>: }`.
template <class N>
inline constexpr size_t node_kind = []<class... Ns>(std::variant<Ns...>*) {
  constexpr bool same[] = {std::is_same_v<N, Ns>...};
  return static_cast<size_t>(std::find(std::begin(same), std::end(same), true) - std::begin(same));
}(static_cast<FunNode*>(nullptr));

/// Data argument counts that are not a number.
inline constexpr int kAtLeastTwo = -1; ///< zip
inline constexpr int kAtLeastOne = -2; ///< vectorize

struct Primitive {
  std::string_view name; ///< as written in .lift: "mapGlb0", "reduceSeq", "slide2D"
  size_t kind;           ///< the FunNode alternative it builds (node_kind<N>)
  ParallelLevel level;
  int dim;  ///< mapGlb/mapWrg/mapLcl: the thread dimension 0..2; else 0
  int rank; ///< derived forms: the array dimensions they work on (2 or 3); else 1
  /// The parameters, i.e. the arguments before the data, one letter each: f function, s size
  /// (vector widths too), i index, v initial value, b boundary, n tuple index.
  std::string_view params;
  int data;                   ///< number of data arguments, or kAtLeastTwo / kAtLeastOne
  std::string_view data_noun; ///< what a data argument is called in messages: "array", "tuple"
  Pattern pattern;
  /// Applying it computes values (a copy counts) rather than only rearranging them; what the
  /// code generator must lower (a user function computes too, but is not a primitive).
  bool computes;

  constexpr bool derived() const { return rank > 1; }
  /// A map whose iterations run on threads: mapGlb, mapWrg, mapLcl.
  constexpr bool parallel() const {
    return level == ParallelLevel::Global || level == ParallelLevel::Workgroup ||
           level == ParallelLevel::Local;
  }
  /// The RuleContext of a site inside its function lists it (maps, reductions, iterate,
  /// mapSeqSlide).
  constexpr bool loop() const { return pattern != Pattern::Other; }
  constexpr int size_params() const {
    return static_cast<int>(std::count(params.begin(), params.end(), 's'));
  }
};

/// Every primitive, the derived forms last.
std::span<const Primitive> primitives();
/// The entry named `name` as written in .lift; nullptr if it is not a primitive.
const Primitive* find_primitive(std::string_view name);
/// The entry of a function node (mapGlb1 for MapGlb{1, f}); nullptr for lambdas and user
/// functions.
const Primitive* primitive_of(const Fun& f);
/// The name of a parallel level's maps without their dimension: "mapGlb", "mapWrg", "mapLcl";
/// empty for None and Seq.
std::string_view map_family(ParallelLevel level);

} // namespace liftx::ir
