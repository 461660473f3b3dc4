#include "rewrite/program_kind.hpp"

#include "rewrite/product.hpp"
#include "rewrite/walk.hpp"

#include <algorithm>

namespace liftx::rewrite {

namespace {

/// The calls of the program (rewrite::sites: every call, inside lambda bodies too, and every
/// function passed to a primitive, applied to fresh parameters).
std::vector<ir::Call> calls_of(const ir::Program& program) {
  std::vector<ir::Call> out;
  for (const Site& site : sites(program))
    if (const auto* call = site.expr.as<ir::Call>())
      out.push_back(*call);
  return out;
}

/// A reduction along a dimension of the input: of an array whose length is not a constant (a
/// stencil's reductions over its window have a constant length).
bool reduces_along_input(const ir::Call& call) {
  if (!(call.fun.as<ir::Reduce>() || call.fun.as<ir::ReduceSeq>()) || call.args.empty())
    return false;
  const auto* array = call.args.back().type().as<ir::ArrayType>();
  return array && !array->length.is_constant();
}

/// Array dimensions around the element type, and the element type.
std::pair<int, ir::Type> strip_arrays(ir::Type type) {
  int dims = 0;
  while (const auto* array = type.as<ir::ArrayType>()) {
    type = array->element;
    ++dims;
  }
  return {dims, type};
}

} // namespace

const std::vector<ProgramKind>& program_kinds() {
  static const std::vector<ProgramKind> all{ProgramKind::time_steps,   ProgramKind::product,
                                            ProgramKind::reduction,    ProgramKind::layout,
                                            ProgramKind::multi_output, ProgramKind::stencil3d,
                                            ProgramKind::stencil2d};
  return all;
}

std::string_view kind_name(ProgramKind kind) {
  switch (kind) {
  case ProgramKind::time_steps:
    return "time_steps";
  case ProgramKind::product:
    return "product";
  case ProgramKind::reduction:
    return "reduction";
  case ProgramKind::layout:
    return "layout";
  case ProgramKind::multi_output:
    return "multi_output";
  case ProgramKind::stencil3d:
    return "stencil3d";
  case ProgramKind::stencil2d:
    return "stencil2d";
  }
  return "stencil2d";
}

std::optional<ProgramKind> parse_program_kind(std::string_view name) {
  for (ProgramKind kind : program_kinds())
    if (kind_name(kind) == name)
      return kind;
  return std::nullopt;
}

ProgramKind program_kind(const ir::Program& program) {
  const std::vector<ir::Call> calls = calls_of(program);
  if (std::any_of(calls.begin(), calls.end(),
                  [](const ir::Call& c) { return c.fun.as<ir::Iterate>() != nullptr; }))
    return ProgramKind::time_steps;
  if (std::holds_alternative<ProductGrid>(as_product_grid(program)))
    return ProgramKind::product;
  if (std::any_of(calls.begin(), calls.end(), reduces_along_input))
    return ProgramKind::reduction;
  if (!program.storage.empty())
    return ProgramKind::layout;
  const auto [dims, element] = strip_arrays(program.result_type());
  if (element.is_tuple())
    return ProgramKind::multi_output;
  return dims >= 3 ? ProgramKind::stencil3d : ProgramKind::stencil2d;
}

} // namespace liftx::rewrite
