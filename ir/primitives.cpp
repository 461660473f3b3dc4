// The primitive table (see ir/primitives.hpp).
#include "ir/primitives.hpp"

#include <array>

namespace liftx::ir {
namespace {

using L = ParallelLevel;
using P = Pattern;

// clang-format off
constexpr Primitive kPrimitives[] = {
  // name, node, level, dim, rank, params, data arguments, data noun, pattern, computes
  {"map",         node_kind<Map>,         L::None,      0, 1, "f",   1,           "array",    P::Map,     false},
  {"mapSeq",      node_kind<MapSeq>,      L::Seq,       0, 1, "f",   1,           "array",    P::Map,     true},
  {"mapGlb0",     node_kind<MapGlb>,      L::Global,    0, 1, "f",   1,           "array",    P::Map,     true},
  {"mapGlb1",     node_kind<MapGlb>,      L::Global,    1, 1, "f",   1,           "array",    P::Map,     true},
  {"mapGlb2",     node_kind<MapGlb>,      L::Global,    2, 1, "f",   1,           "array",    P::Map,     true},
  {"mapWrg0",     node_kind<MapWrg>,      L::Workgroup, 0, 1, "f",   1,           "array",    P::Map,     true},
  {"mapWrg1",     node_kind<MapWrg>,      L::Workgroup, 1, 1, "f",   1,           "array",    P::Map,     true},
  {"mapWrg2",     node_kind<MapWrg>,      L::Workgroup, 2, 1, "f",   1,           "array",    P::Map,     true},
  {"mapLcl0",     node_kind<MapLcl>,      L::Local,     0, 1, "f",   1,           "array",    P::Map,     true},
  {"mapLcl1",     node_kind<MapLcl>,      L::Local,     1, 1, "f",   1,           "array",    P::Map,     true},
  {"mapLcl2",     node_kind<MapLcl>,      L::Local,     2, 1, "f",   1,           "array",    P::Map,     true},
  {"reduce",      node_kind<Reduce>,      L::None,      0, 1, "fv",  1,           "array",    P::Reduce,  true},
  {"reduceSeq",   node_kind<ReduceSeq>,   L::Seq,       0, 1, "fv",  1,           "array",    P::Reduce,  true},
  {"iterate",     node_kind<Iterate>,     L::None,      0, 1, "sf",  1,           "argument", P::Iterate, true},
  {"zip",         node_kind<Zip>,         L::None,      0, 1, "",    kAtLeastTwo, "array",    P::Other,   false},
  {"tuple",       node_kind<Tuple>,       L::None,      0, 1, "",    kAtLeastTwo, "argument", P::Other,   false},
  {"split",       node_kind<Split>,       L::None,      0, 1, "s",   1,           "array",    P::Other,   false},
  {"join",        node_kind<Join>,        L::None,      0, 1, "",    1,           "array",    P::Other,   false},
  {"slide",       node_kind<Slide>,       L::None,      0, 1, "ss",  1,           "array",    P::Other,   false},
  {"pad",         node_kind<Pad>,         L::None,      0, 1, "ssb", 1,           "array",    P::Other,   false},
  {"at",          node_kind<At>,          L::None,      0, 1, "i",   1,           "array",    P::Other,   false},
  {"get",         node_kind<Get>,         L::None,      0, 1, "n",   1,           "tuple",    P::Other,   false},
  {"transpose",   node_kind<Transpose>,   L::None,      0, 1, "",    1,           "array",    P::Other,   false},
  {"id",          node_kind<Id>,          L::None,      0, 1, "",    1,           "argument", P::Other,   true},
  {"array",       node_kind<Generate>,    L::None,      0, 1, "sf",  0,           "argument", P::Other,   false},
  {"toGlobal",    node_kind<ToGlobal>,    L::None,      0, 1, "f",   1,           "argument", P::Other,   false},
  {"toLocal",     node_kind<ToLocal>,     L::None,      0, 1, "f",   1,           "argument", P::Other,   false},
  {"toLocalPadded", node_kind<ToLocalPadded>, L::None, 0, 1, "sf", 1,         "argument", P::Other,   false},
  {"toPrivate",   node_kind<ToPrivate>,   L::None,      0, 1, "f",   1,           "argument", P::Other,   false},
  {"asVector",    node_kind<AsVector>,    L::None,      0, 1, "s",   1,           "array",    P::Other,   false},
  {"asScalar",    node_kind<AsScalar>,    L::None,      0, 1, "",    1,           "array",    P::Other,   false},
  {"vectorize",   node_kind<Vectorize>,   L::None,      0, 1, "sf",  kAtLeastOne, "argument", P::Other,   true},
  {"mapSeqSlide", node_kind<MapSeqSlide>, L::Seq,       0, 1, "fss", 1,           "array",    P::Window,  true},
  {"slideShifted", node_kind<SlideShifted>, L::None,    0, 1, "ss",  1,           "array",    P::Other,   false},
  {"joinShifted", node_kind<JoinShifted>, L::None,      0, 1, "ss",  1,           "array",    P::Other,   false},
  // derived forms (ir/derived.hpp), by the node they nest
  {"map2D",       node_kind<Map>,         L::None,      0, 2, "f",   1,           "array",    P::Map,     false},
  {"map3D",       node_kind<Map>,         L::None,      0, 3, "f",   1,           "array",    P::Map,     false},
  {"slide2D",     node_kind<Slide>,       L::None,      0, 2, "ss",  1,           "array",    P::Other,   false},
  {"slide3D",     node_kind<Slide>,       L::None,      0, 3, "ss",  1,           "array",    P::Other,   false},
  {"pad2D",       node_kind<Pad>,         L::None,      0, 2, "ssb", 1,           "array",    P::Other,   false},
  {"pad3D",       node_kind<Pad>,         L::None,      0, 3, "ssb", 1,           "array",    P::Other,   false},
  {"zip2D",       node_kind<Zip>,         L::None,      0, 2, "",    kAtLeastTwo, "array",    P::Other,   false},
  {"zip3D",       node_kind<Zip>,         L::None,      0, 3, "",    kAtLeastTwo, "array",    P::Other,   false},
};
// clang-format on

constexpr size_t kKinds = std::variant_size_v<FunNode>;

/// Entries by node kind and dimension; null for lambdas and user functions.
using KindTable = std::array<std::array<const Primitive*, 3>, kKinds>;

constexpr KindTable by_kind() {
  KindTable table{};
  for (const Primitive& p : kPrimitives)
    if (!p.derived())
      table[p.kind][static_cast<size_t>(p.dim)] = &p;
  return table;
}
constexpr KindTable kByKind = by_kind();

// Every node but Lambda and UserFun is a primitive.
static_assert([] {
  for (size_t k = 0; k < kKinds; ++k)
    if ((kByKind[k][0] != nullptr) == (k == node_kind<Lambda> || k == node_kind<UserFun>))
      return false;
  return true;
}());

} // namespace

std::span<const Primitive> primitives() {
  return kPrimitives;
}

const Primitive* find_primitive(std::string_view name) {
  for (const Primitive& p : kPrimitives)
    if (p.name == name)
      return &p;
  return nullptr;
}

const Primitive* primitive_of(const Fun& f) {
  int dim = std::visit(
      [](const auto& n) {
        if constexpr (requires { n.dim; })
          return n.dim;
        else
          return 0;
      },
      f.data().node);
  return kByKind[f.data().node.index()][static_cast<size_t>(dim)];
}

std::string_view map_family(ParallelLevel level) {
  switch (level) {
  case ParallelLevel::Global:
    return "mapGlb";
  case ParallelLevel::Workgroup:
    return "mapWrg";
  case ParallelLevel::Local:
    return "mapLcl";
  case ParallelLevel::None:
  case ParallelLevel::Seq:
    break;
  }
  return "";
}

} // namespace liftx::ir
