// Register blocking and local-memory tiles of product grids (rewrite/product.hpp): recognising
// map(r => map(c => reduce(f, init, map(g, zip(r, c)))[0], C), R) and building its lowered forms
// with a block of outputs per work-item, alone or in a work-group sharing tiles in local memory.
#include "rewrite/product.hpp"
#include "rewrite/rules/match.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace liftx::rewrite {

using namespace match;

namespace {

ir::Expr call1(const ir::Fun& f, ir::Expr x) {
  return ir::call(f, {std::move(x)});
}

/// An array of n copies of `value` (a generated array: nothing read).
ir::Expr constant_array(int64_t n, const ir::Expr& value) {
  ir::Expr i = ir::param(ir::Type::int_(), "i"), count = ir::param(ir::Type::int_(), "n");
  return ir::call(ir::generate(arith::Expr(n), ir::lambda({i, count}, value)), {});
}

/// A block of rows x columns accumulators: [[sum]columns]rows.
ir::Type block_type_of(const ProductGrid& grid, int64_t rows, int64_t columns) {
  return ir::Type::array(ir::Type::array(grid.init.type(), arith::Expr(columns)),
                         arith::Expr(rows));
}

/// The block's step: every output of `acc` advanced with its row's value in `as` and its
/// column's in `bs` (one step of each output's reduction: c' = f(c, g((a, b)))).
ir::Expr advance_block(const ProductGrid& grid, const ir::Expr& acc, const ir::Expr& as,
                       const ir::Expr& bs) {
  const ir::Type& a_type = element_of(grid.row.type());
  const ir::Type& b_type = element_of(grid.column.type());
  ir::Expr acc_row = ir::param(element_of(acc.type()), "acc_row");
  ir::Expr a = ir::param(a_type, "a");
  ir::Expr c = ir::param(grid.init.type(), "c");
  ir::Expr b = ir::param(b_type, "b");
  ir::Expr pair = ir::call(ir::tuple(), {a, b});
  ir::Fun per_output =
      ir::lambda({c, b}, ir::call(grid.op, {c, grid.element ? call1(*grid.element, pair) : pair}));
  ir::Fun per_row =
      ir::lambda({acc_row, a}, call1(ir::map_seq(per_output), ir::call(ir::zip(), {acc_row, bs})));
  return call1(ir::map_seq(per_row), ir::call(ir::zip(), {acc, as}));
}

/// `values` (an array of scalars) copied to private memory as vectors of `width`:
/// join(toPrivate(mapSeq(v => asScalar(mapSeq(id, asVector(w, v)))))(split(n, values))). The outer
/// map allocates the private scalars, which the inner one writes as vectors through asScalar
/// (vectorise-copy inside to-private); the generator keeps a vector read in one access whole.
ir::Expr vectors_to_private(const ir::Expr& values, int64_t width) {
  const ir::Expr whole = split_of(length_of(values.type()), values);
  const ir::Fun copy = lambda1(element_of(whole.type()), "values", [&](const ir::Expr& v) {
    return call1(ir::as_scalar(),
                 call1(ir::map_seq(ir::id()), call1(ir::as_vector(static_cast<int>(width)), v)));
  });
  return join_of(call1(ir::to_private(ir::map_seq(copy)), whole));
}

} // namespace

std::variant<ProductGrid, std::string> as_product_grid(const ir::Program& program) {
  auto outer = as_unary_call_of<ir::Map>(program.body);
  if (!outer)
    return std::string("the program is not a map over rows");
  const auto* per_row = outer->fun->f.as<ir::Lambda>();
  if (!per_row || per_row->params.size() != 1)
    return std::string("the mapped function is not a lambda of one row");
  auto inner = as_unary_call_of<ir::Map>(per_row->body);
  if (!inner)
    return std::string("a row's outputs are not a map over columns");
  const auto* per_column = inner->fun->f.as<ir::Lambda>();
  if (!per_column || per_column->params.size() != 1)
    return std::string("the inner mapped function is not a lambda of one column");
  const ir::Expr& row = per_row->params[0];
  const ir::Expr& column = per_column->params[0];
  if (uses_param(ir::free_params(inner->arg()), row))
    return std::string("the columns depend on the row");
  auto first = as_unary_call_of<ir::At>(per_column->body);
  if (!first || !(first->fun->index == arith::Expr(0)))
    return std::string("an output is not the result of one reduction");
  auto reduction = as_unary_call_of<ir::Reduce>(first->arg());
  if (!reduction)
    return std::string("an output is not the result of one reduction");
  ir::Expr data = reduction->arg();
  std::optional<ir::Fun> element;
  if (auto g = as_unary_call_of<ir::Map>(data)) {
    element = g->fun->f;
    data = g->arg();
  }
  auto pairs = as_call_of<ir::Zip>(data);
  if (!pairs || pairs->call->args.size() != 2 || !same_param(pairs->arg(0), row) ||
      !same_param(pairs->arg(1), column))
    return std::string("a reduction is not over zip(row, column)");
  if (!reduction->fun->init.type().is_scalar())
    return std::string("the reduction's initial value is not a scalar");
  // The blocked form advances each output with f and g alone: they may not read r or c.
  auto uses_row_or_column = [&](const std::vector<ir::Expr>& free) {
    return uses_param(free, row) || uses_param(free, column);
  };
  if (uses_row_or_column(ir::free_params(reduction->fun->f)) ||
      uses_row_or_column(ir::free_params(reduction->fun->init)) ||
      (element && uses_row_or_column(ir::free_params(*element))))
    return std::string("the reduction's functions read the row or the column");
  return ProductGrid{
      row, column, outer->arg(), inner->arg(), element, reduction->fun->f, reduction->fun->init};
}

std::variant<ir::Program, std::string> build_register_blocked(const ir::Program& program,
                                                              const RegisterBlocking& blocking) {
  auto recognised = as_product_grid(program);
  if (auto* why = std::get_if<std::string>(&recognised))
    return *why;
  const ProductGrid& grid = std::get<ProductGrid>(recognised);
  const int64_t rows = blocking.rows, columns = blocking.columns;
  if (rows < 1 || columns < 1 || blocking.unroll < 1)
    return std::string("a block needs at least one row, one column and one step");
  if (blocking.vector_width > 1 && (!blocking.private_copies || columns % blocking.vector_width))
    return fmt::format("vector reads of {} columns need private copies and a multiple of {} "
                       "columns",
                       blocking.vector_width, blocking.vector_width);
  if (auto no = refuse_indivisible(length_of(grid.rows.type()), rows, "a row block of"))
    return no->why;
  if (auto no = refuse_indivisible(length_of(grid.columns.type()), columns, "a column block of"))
    return no->why;
  if (auto no =
          refuse_indivisible(length_of(grid.row.type()), blocking.unroll, "a chunk of steps of"))
    return no->why;

  try {
    const ir::Type& a_type = element_of(grid.row.type());
    const ir::Type& b_type = element_of(grid.column.type());
    const ir::Type block_type = block_type_of(grid, rows, columns);
    const ir::Type a_values = ir::Type::array(a_type, arith::Expr(rows));
    const ir::Type b_values = ir::Type::array(b_type, arith::Expr(columns));
    auto advance = [&](const ir::Expr& acc, const ir::Expr& as, const ir::Expr& bs) {
      return advance_block(grid, acc, as, bs);
    };
    ir::Expr acc = ir::param(block_type, "acc");
    ir::Expr x = ir::param(ir::Type::tuple({a_values, b_values}), "x");
    ir::Expr as = call1(ir::get(0), x), bs = call1(ir::get(1), x);
    const ir::Fun step = [&] {
      if (!blocking.private_copies)
        return ir::lambda({acc, x}, advance(acc, as, bs));
      ir::Expr pa = ir::param(a_values, "as"), pb = ir::param(b_values, "bs");
      const ir::Fun copy = ir::to_private(ir::map_seq(ir::id()));
      // A block's columns at a step are consecutive where C = transpose(B) of a row-major B.
      const ir::Expr b_copy = blocking.vector_width > 1
                                  ? vectors_to_private(bs, blocking.vector_width)
                                  : call1(copy, bs);
      return ir::lambda({acc, x}, ir::call(ir::lambda({pa, pb}, advance(acc, pa, pb)),
                                           {call1(copy, as), b_copy}));
    }();
    // The accumulator starts as init in every output of the block.
    const ir::Expr start = constant_array(rows, constant_array(columns, grid.init));

    auto per_column_block = [&](const ir::Expr& row_block) {
      return lambda1(
          element_of(split_of(columns, grid.columns).type()), "columns",
          [&](const ir::Expr& column_block) {
            ir::Expr steps =
                ir::call(ir::zip(), {transpose_of(row_block), transpose_of(column_block)});
            if (blocking.unroll == 1)
              return join_of(call1(ir::reduce_seq(step, start), steps));
            // Chunks of `unroll` steps: the inner reduction, of a constant length,
            // is unrolled.
            ir::Expr outer_acc = ir::param(block_type, "outer");
            ir::Expr chunk = ir::param(
                ir::Type::array(element_of(steps.type()), arith::Expr(blocking.unroll)), "chunk");
            const ir::Fun chunk_step = ir::lambda(
                {outer_acc, chunk}, join_of(call1(ir::reduce_seq(step, outer_acc), chunk)));
            return join_of(
                call1(ir::reduce_seq(chunk_step, start), split_of(blocking.unroll, steps)));
          });
    };
    const ir::Fun per_row_block = lambda1(
        element_of(split_of(rows, grid.rows).type()), "rows", [&](const ir::Expr& row_block) {
          ir::Expr blocks =
              call1(ir::map_glb(0, per_column_block(row_block)), split_of(columns, grid.columns));
          return call1(ir::map(ir::join()), transpose_of(blocks));
        });
    ir::Program lowered = program;
    lowered.body = join_of(call1(ir::map_glb(1, per_row_block), split_of(rows, grid.rows)));
    return lowered;
  } catch (const UserError& e) {
    return std::string(e.what());
  }
}

std::variant<ir::Program, std::string> build_local_tiled(const ir::Program& program,
                                                         const LocalTiling& tiling) {
  auto recognised = as_product_grid(program);
  if (auto* why = std::get_if<std::string>(&recognised))
    return *why;
  const ProductGrid& grid = std::get<ProductGrid>(recognised);
  const int64_t ly = tiling.threads_y, lx = tiling.threads_x;
  const int64_t rows = tiling.rows, columns = tiling.columns, chunk = tiling.chunk;
  if (ly < 1 || lx < 1 || rows < 1 || columns < 1 || chunk < 1)
    return std::string("a tile needs at least one work-item, output and step along each side");
  if (tiling.padding < 0)
    return std::string("a tile's rows cannot be padded by a negative count");
  // A block's values at a step are consecutive in local memory when the tile is stored step by
  // step and the work-item's outputs are contiguous.
  const int64_t width = tiling.vector_width;
  if ((tiling.rows_stored_by_step && !tiling.rows_copied_along_steps) ||
      (tiling.columns_stored_by_step && !tiling.columns_copied_along_steps))
    return std::string("a tile copied step by step is stored so already");
  auto stored_by_step = [](bool along_steps, bool transposing) {
    return !along_steps || transposing;
  };
  const bool rows_by_step =
      stored_by_step(tiling.rows_copied_along_steps, tiling.rows_stored_by_step);
  const bool columns_by_step =
      stored_by_step(tiling.columns_copied_along_steps, tiling.columns_stored_by_step);
  // Interleaved with vector reads, a work-item's outputs are every lanes-th group of `width`
  // (CLBlast's STRN with VWN): each group lies consecutive at a step, and neighbouring
  // work-items read neighbouring vectors (distinct banks). An operand whose block is not a
  // multiple of the width is interleaved element by element.
  auto group_of = [&](int64_t per_item) {
    return tiling.interleaved && width > 1 && per_item % width == 0 ? width : int64_t{1};
  };
  const int64_t row_group = group_of(rows), column_group = group_of(columns);
  auto vector_reads = [&](bool by_step, int64_t per_item) {
    return width > 1 && by_step && per_item % width == 0;
  };
  const bool vector_rows = vector_reads(rows_by_step, rows);
  const bool vector_columns = vector_reads(columns_by_step, columns);
  if (width > 1 && !vector_rows && !vector_columns)
    return fmt::format("neither operand's block is {} consecutive elements of local memory at a "
                       "step",
                       width);
  const int64_t tile_rows = ly * rows, tile_columns = lx * columns;
  if (auto no = refuse_indivisible(length_of(grid.rows.type()), tile_rows, "a row tile of"))
    return no->why;
  if (auto no =
          refuse_indivisible(length_of(grid.columns.type()), tile_columns, "a column tile of"))
    return no->why;
  if (auto no = refuse_indivisible(length_of(grid.row.type()), chunk, "a chunk of steps of"))
    return no->why;

  try {
    const ir::Type block_type = block_type_of(grid, rows, columns);
    // A work-item's block of accumulators, held per work-item: written by the mapLcls in private
    // memory, so each keeps only its own.
    const ir::Expr start = call1(
        ir::to_private(ir::map_lcl(1, ir::map_lcl(0, ir::map_seq(ir::map_seq(ir::id()))))),
        constant_array(
            ly, constant_array(lx, constant_array(rows, constant_array(columns, grid.init)))));
    const ir::Type accumulators = start.type();

    // Copies a chunk's values ([steps][tile]) to local memory, in the order the copy reads
    // memory in; returns them as [tile][steps].
    auto staged = [&](const ir::Expr& values, bool along_steps, bool by_step) {
      const ir::Fun lanes = ir::map_lcl(1, ir::map_lcl(0, ir::id()));
      const ir::Fun copy = tiling.padding > 0
                               ? ir::to_local_padded(arith::Expr(tiling.padding), lanes)
                               : ir::to_local(lanes);
      if (along_steps && by_step) {
        // A transposing copy: the outer map, over the steps, on the fastest lanes (mapLcl0), so
        // that neighbouring work-items read neighbouring steps; written as mapped,
        // [steps][tile].
        const ir::Fun steps_first = ir::map_lcl(0, ir::map_lcl(1, ir::id()));
        const ir::Fun store = tiling.padding > 0
                                  ? ir::to_local_padded(arith::Expr(tiling.padding), steps_first)
                                  : ir::to_local(steps_first);
        return transpose_of(call1(store, values));
      }
      return along_steps ? call1(copy, transpose_of(values)) : transpose_of(call1(copy, values));
    };
    auto tile_values = [&](const ir::Expr& row_tile, const ir::Expr& column_tile) {
      ir::Expr steps = ir::call(ir::zip(), {transpose_of(row_tile), transpose_of(column_tile)});
      ir::Expr chunks = split_of(chunk, steps);
      ir::Expr acc = ir::param(accumulators, "acc");
      ir::Expr values = ir::param(element_of(chunks.type()), "chunk");
      ir::Expr row_values =
          staged(call1(ir::map(ir::get(0)), values), tiling.rows_copied_along_steps, rows_by_step);
      ir::Expr column_values = staged(call1(ir::map(ir::get(1)), values),
                                      tiling.columns_copied_along_steps, columns_by_step);
      // Bound once: the copies run before any work-item's block reads them.
      ir::Expr tile_a = ir::param(row_values.type(), "tile_rows");
      ir::Expr tile_b = ir::param(column_values.type(), "tile_columns");
      // Work-item (y, x): rows y * rows .., columns x * columns .. of the tile; interleaved,
      // rows y, y + ly, .. and columns x, x + lx, ..
      // Interleaved by groups of g: groups y, y + ly, .. of g rows each.
      auto blocks_of = [&](int64_t per_item, int64_t lanes, int64_t group, const ir::Expr& tile) {
        if (!tiling.interleaved)
          return split_of(per_item, tile);
        if (group == 1)
          return transpose_of(split_of(lanes, tile));
        ir::Expr groups = transpose_of(split_of(lanes, split_of(group, tile))); // [lanes][n][g]
        return call1(ir::map(ir::join()), groups);
      };
      ir::Expr row_blocks = blocks_of(rows, ly, row_group, tile_a);          // [ly][rows][chunk]
      ir::Expr column_blocks = blocks_of(columns, lx, column_group, tile_b); // [lx][columns][chunk]
      ir::Expr acc_row = ir::param(element_of(accumulators), "acc_row");
      ir::Expr a_block = ir::param(element_of(row_blocks.type()), "a_block");
      ir::Expr block = ir::param(block_type, "block");
      ir::Expr b_block = ir::param(element_of(column_blocks.type()), "b_block");
      // The block's steps over the chunk: a reduction of a constant length (unrolled).
      ir::Expr block_acc = ir::param(block_type, "block_acc");
      ir::Expr x = ir::param(
          ir::Type::tuple({ir::Type::array(element_of(grid.row.type()), arith::Expr(rows)),
                           ir::Type::array(element_of(grid.column.type()), arith::Expr(columns))}),
          "x");
      // Vector reads: the block's values at a step copied to private memory as vectors.
      auto read = [&](const ir::Expr& values, bool as_vectors) {
        return as_vectors ? vectors_to_private(values, width) : values;
      };
      // The step's values bound once (a lambda applied to them), so that each is read once per
      // step, not once per output that uses it.
      ir::Expr as = read(call1(ir::get(0), x), vector_rows);
      ir::Expr bs = read(call1(ir::get(1), x), vector_columns);
      ir::Expr pa = ir::param(as.type(), "as"), pb = ir::param(bs.type(), "bs");
      const ir::Fun step =
          width == 1
              ? ir::lambda({block_acc, x}, advance_block(grid, block_acc, as, bs))
              : ir::lambda({block_acc, x},
                           ir::call(ir::lambda({pa, pb}, advance_block(grid, block_acc, pa, pb)),
                                    {as, bs}));
      ir::Expr block_steps = ir::call(ir::zip(), {transpose_of(a_block), transpose_of(b_block)});
      ir::Fun per_block =
          ir::lambda({block, b_block}, join_of(call1(ir::reduce_seq(step, block), block_steps)));
      ir::Fun per_row =
          ir::lambda({acc_row, a_block}, call1(ir::map_lcl(0, per_block),
                                               ir::call(ir::zip(), {acc_row, column_blocks})));
      ir::Expr advanced = call1(ir::map_lcl(1, per_row), ir::call(ir::zip(), {acc, row_blocks}));
      ir::Expr with_tiles =
          ir::call(ir::lambda({tile_a, tile_b}, advanced), {row_values, column_values});
      const ir::Fun chunk_step = ir::lambda({acc, values}, with_tiles);
      ir::Expr sums = join_of(call1(ir::reduce_seq(chunk_step, start), chunks));
      // Each work-item writes its block: [ly][lx][rows][columns] -> [ly * rows][lx * columns],
      // output (y * rows + i, x * columns + j), or interleaved (i * ly + y, j * lx + x).
      ir::Expr written = call1(
          ir::to_global(ir::map_lcl(1, ir::map_lcl(0, ir::map_seq(ir::map_seq(ir::id()))))), sums);
      ir::Expr by_rows = call1(ir::map(ir::transpose()), written); // [ly][rows][lx][columns]
      if (!tiling.interleaved)
        return call1(ir::map(ir::join()), join_of(by_rows));
      if (row_group == 1 && column_group == 1) {
        ir::Expr lanes_last = call1(ir::map(ir::transpose()), join_of(transpose_of(by_rows)));
        return call1(ir::map(ir::join()), lanes_last); // [rows * ly][columns][lx], joined
      }
      // Groups of g: output (i / g * lanes + lane) * g + i % g along each side, that is each
      // lane's [n * g] split into groups, the lanes moved inside the groups' index, joined.
      // Maps of layout primitives only, which the generator inverts to write the outputs.
      auto map_n = [](int depth, ir::Fun f) {
        for (int d = 0; d < depth; ++d)
          f = ir::map(std::move(f));
        return f;
      };
      ir::Expr columns_placed = call1(map_n(3, ir::split(arith::Expr(column_group))), by_rows);
      columns_placed = call1(map_n(2, ir::transpose()), columns_placed); // [ly][rows][n][lx][g]
      columns_placed = call1(map_n(2, ir::join()), call1(map_n(2, ir::join()), columns_placed));
      ir::Expr rows_placed = transpose_of(call1(ir::map(ir::split(arith::Expr(row_group))),
                                                columns_placed)); // [m][ly][g][lx * columns]
      return join_of(join_of(rows_placed));                       // [ly * rows][lx * columns]
    };
    auto per_column_tile = [&](const ir::Expr& row_tile) {
      return lambda1(
          element_of(split_of(tile_columns, grid.columns).type()), "columns",
          [&](const ir::Expr& column_tile) { return tile_values(row_tile, column_tile); });
    };
    const ir::Fun per_row_tile = lambda1(
        element_of(split_of(tile_rows, grid.rows).type()), "rows", [&](const ir::Expr& row_tile) {
          ir::Expr tiles = call1(ir::map_wrg(0, per_column_tile(row_tile)),
                                 split_of(tile_columns, grid.columns));
          return call1(ir::map(ir::join()), transpose_of(tiles));
        });
    ir::Program lowered = program;
    lowered.body = join_of(call1(ir::map_wrg(1, per_row_tile), split_of(tile_rows, grid.rows)));
    return lowered;
  } catch (const UserError& e) {
    return std::string(e.what());
  }
}

} // namespace liftx::rewrite
