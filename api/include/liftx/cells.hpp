#pragma once
/// Grids of an application's own cell struct, reflected by Boost.Hana: a lattice Boltzmann node,
/// a shallow-water cell, a CFD state. Declare the struct with BOOST_HANA_DEFINE_STRUCT (or adapt
/// an existing one with BOOST_HANA_ADAPT_STRUCT), every member of one element type, and write the
/// stencil with one grid parameter per member, in member order (and, for a stencil that updates
/// the cells, a result holding one value per member):
///
///   struct Cell {
///     BOOST_HANA_DEFINE_STRUCT(Cell, (float, h), (float, hu), (float, hv));
///   };
///   // def step(h: [[float]N]M, hu: [[float]N]M, hv: [[float]N]M) = map2D(... tuple(...) ...)
///   std::vector<Cell> now(M * N), next(M * N);
///   liftx::run_cells<Cell>(kernel, now, next);
///
/// How the kernel stores the grids is the variant's choice (separate arrays, AoS or AoSoA blocks:
/// the `layout` clause, `--layouts`): the cells are split into one array per member here and
/// packed into the kernel's layout by Kernel::run, so the application's data structure never
/// changes with the layout the tuner picks.
#include <liftx/errors.hpp>
#include <liftx/runtime.hpp>

#include <boost/hana.hpp>

#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace liftx {

/// A struct Boost.Hana can reflect.
template <class Cell>
concept HanaCell = boost::hana::Struct<Cell>::value;

/// The members of `Cell`, in declaration order.
template <HanaCell Cell>
std::vector<std::string> cell_fields() {
  std::vector<std::string> names;
  boost::hana::for_each(boost::hana::accessors<Cell>(), [&](auto member) {
    names.emplace_back(boost::hana::to<const char*>(boost::hana::first(member)));
  });
  return names;
}

/// One array per member of `Cell` (struct of arrays): element i of array k is member k of
/// cells[i]. Every member must be a `T`.
template <HanaCell Cell, Element T = float>
std::vector<std::vector<T>> split_cells(std::span<const Cell> cells) {
  std::vector<std::vector<T>> fields;
  boost::hana::for_each(boost::hana::accessors<Cell>(), [&](auto member) {
    auto get = boost::hana::second(member);
    static_assert(std::is_same_v<std::decay_t<decltype(get(std::declval<const Cell&>()))>, T>,
                  "every member of the cell must have the grids' element type");
    std::vector<T>& field = fields.emplace_back(cells.size());
    for (size_t i = 0; i < cells.size(); ++i)
      field[i] = get(cells[i]);
  });
  return fields;
}

/// The reverse of split_cells: member k of cells[i] becomes fields[k][i]. UserError unless there
/// is one array per member, each as long as `cells`.
template <HanaCell Cell, Element T = float>
void merge_cells(const std::vector<std::vector<T>>& fields, std::span<Cell> cells) {
  const size_t members = boost::hana::length(boost::hana::accessors<Cell>());
  if (fields.size() != members)
    throw UserError("merge_cells: " + std::to_string(fields.size()) + " arrays for a cell of " +
                    std::to_string(members) + " members");
  for (const std::vector<T>& f : fields)
    if (f.size() != cells.size())
      throw UserError("merge_cells: an array of " + std::to_string(f.size()) + " elements for " +
                      std::to_string(cells.size()) + " cells");
  size_t k = 0;
  boost::hana::for_each(boost::hana::accessors<Cell>(), [&](auto member) {
    auto get = boost::hana::second(member);
    for (size_t i = 0; i < cells.size(); ++i)
      get(cells[i]) = fields[k][i];
    ++k;
  });
}

/// Runs `kernel` on the cells `in` (one program parameter per member, in member order) and
/// writes its result to the cells `out` (one output per member: a result holding a tuple of
/// them per point). `in` and `out` may be the same cells. UserError when the kernel's inputs or
/// outputs do not match the members, or the cells do not match the grids' length.
template <HanaCell Cell, Element T = float>
RunStats run_cells(const Kernel& kernel, std::span<const Cell> in, std::span<Cell> out) {
  const size_t members = boost::hana::length(boost::hana::accessors<Cell>());
  if (kernel.inputs() != members || kernel.outputs() != members)
    throw UserError("run_cells: " + kernel.program_name() + " takes " +
                    std::to_string(kernel.inputs()) + " grids and writes " +
                    std::to_string(kernel.outputs()) + ", the cell has " + std::to_string(members) +
                    " members");
  if (out.size() != kernel.output_size(0))
    throw UserError("run_cells: " + std::to_string(out.size()) + " output cells for a result of " +
                    std::to_string(kernel.output_size(0)) + " points");
  const std::vector<std::vector<T>> fields = split_cells<Cell, T>(in);
  std::vector<Input> inputs(fields.begin(), fields.end());
  std::vector<std::vector<T>> results(members);
  std::vector<Output> outputs(results.begin(), results.end());
  const RunStats stats = kernel.run(inputs, outputs);
  merge_cells<Cell, T>(results, out);
  return stats;
}
template <HanaCell Cell, Element T = float>
RunStats run_cells(const Kernel& kernel, const std::vector<Cell>& in, std::vector<Cell>& out) {
  return run_cells<Cell, T>(kernel, std::span<const Cell>(in), std::span<Cell>(out));
}

} // namespace liftx
