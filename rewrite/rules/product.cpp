// Register blocking of product grids (rewrite/product.hpp): recognising
// map(r => map(c => reduce(f, init, map(g, zip(r, c)))[0], C), R) and building its lowered form
// with a block of outputs per work-item.
#include "rewrite/product.hpp"
#include "rewrite/rules/match.hpp"
#include "support/error.hpp"

namespace liftx::rewrite {

using namespace match;

namespace {

ir::Expr call1(const ir::Fun& f, ir::Expr x) {
  return ir::call(f, {std::move(x)});
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
    const ir::Type& sum_type = grid.init.type();
    // One output's step: c' = f(c, g((a, b))).
    auto output_step = [&](const ir::Expr& c, const ir::Expr& a, const ir::Expr& b) {
      ir::Expr pair = ir::call(ir::tuple(), {a, b});
      return ir::call(grid.op, {c, grid.element ? call1(*grid.element, pair) : pair});
    };
    // The block's step: every output of the block advanced with its row's and column's values.
    const ir::Type block_type =
        ir::Type::array(ir::Type::array(sum_type, arith::Expr(columns)), arith::Expr(rows));
    const ir::Type a_values = ir::Type::array(a_type, arith::Expr(rows));
    const ir::Type b_values = ir::Type::array(b_type, arith::Expr(columns));
    auto advance = [&](const ir::Expr& acc, const ir::Expr& as, const ir::Expr& bs) {
      ir::Expr acc_row = ir::param(element_of(block_type), "acc_row");
      ir::Expr a = ir::param(a_type, "a");
      ir::Expr c = ir::param(sum_type, "c");
      ir::Expr b = ir::param(b_type, "b");
      ir::Fun per_output = ir::lambda({c, b}, output_step(c, a, b));
      ir::Fun per_row = ir::lambda(
          {acc_row, a}, call1(ir::map_seq(per_output), ir::call(ir::zip(), {acc_row, bs})));
      return call1(ir::map_seq(per_row), ir::call(ir::zip(), {acc, as}));
    };
    ir::Expr acc = ir::param(block_type, "acc");
    ir::Expr x = ir::param(ir::Type::tuple({a_values, b_values}), "x");
    ir::Expr as = call1(ir::get(0), x), bs = call1(ir::get(1), x);
    const ir::Fun step = [&] {
      if (!blocking.private_copies)
        return ir::lambda({acc, x}, advance(acc, as, bs));
      ir::Expr pa = ir::param(a_values, "as"), pb = ir::param(b_values, "bs");
      const ir::Fun copy = ir::to_private(ir::map_seq(ir::id()));
      return ir::lambda({acc, x}, ir::call(ir::lambda({pa, pb}, advance(acc, pa, pb)),
                                           {call1(copy, as), call1(copy, bs)}));
    }();
    // The accumulator starts as init in every output of the block.
    auto constant_array = [](int64_t n, const ir::Expr& value) {
      ir::Expr i = ir::param(ir::Type::int_(), "i"), count = ir::param(ir::Type::int_(), "n");
      return ir::call(ir::generate(arith::Expr(n), ir::lambda({i, count}, value)), {});
    };
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

} // namespace liftx::rewrite
