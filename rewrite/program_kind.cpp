#include "rewrite/program_kind.hpp"

#include "rewrite/product.hpp"

#include <functional>

namespace liftx::rewrite {

namespace {

/// Whether a function node satisfying `wanted` occurs anywhere in `body`.
bool contains_fun(const ir::Expr& body, const std::function<bool(const ir::Fun&)>& wanted) {
  bool found = false;
  std::function<void(const ir::Fun&)> on_fun;
  std::function<void(const ir::Expr&)> on_expr;
  on_fun = [&](const ir::Fun& f) {
    if (found)
      return;
    if (wanted(f)) {
      found = true;
      return;
    }
    ir::for_each_child(f, on_fun, on_expr);
  };
  on_expr = [&](const ir::Expr& e) {
    if (!found)
      ir::for_each_child(e, on_fun, on_expr);
  };
  on_expr(body);
  return found;
}

/// Whether `body` reduces an array whose length is not a constant: a reduction along a dimension of
/// the input (a stencil's reductions over its window have a constant length).
bool reduces_along_input(const ir::Expr& body) {
  bool found = false;
  std::function<void(const ir::Fun&)> on_fun;
  std::function<void(const ir::Expr&)> on_expr;
  on_fun = [&](const ir::Fun& f) {
    if (!found)
      ir::for_each_child(f, on_fun, on_expr);
  };
  on_expr = [&](const ir::Expr& e) {
    if (found)
      return;
    if (const auto* call = e.as<ir::Call>())
      if ((call->fun.as<ir::Reduce>() || call->fun.as<ir::ReduceSeq>()) && !call->args.empty())
        if (const auto* array = call->args.back().type().as<ir::ArrayType>())
          if (!array->length.is_constant()) {
            found = true;
            return;
          }
    ir::for_each_child(e, on_fun, on_expr);
  };
  on_expr(body);
  return found;
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
  if (contains_fun(program.body, [](const ir::Fun& f) { return f.as<ir::Iterate>() != nullptr; }))
    return ProgramKind::time_steps;
  if (std::holds_alternative<ProductGrid>(as_product_grid(program)))
    return ProgramKind::product;
  if (reduces_along_input(program.body))
    return ProgramKind::reduction;
  if (!program.storage.empty())
    return ProgramKind::layout;
  const auto [dims, element] = strip_arrays(program.result_type());
  if (element.is_tuple())
    return ProgramKind::multi_output;
  return dims >= 3 ? ProgramKind::stencil3d : ProgramKind::stencil2d;
}

} // namespace liftx::rewrite
