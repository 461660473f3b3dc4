#include "ir/host_iteration.hpp"

namespace liftx::ir {

std::optional<HostIteration> host_iteration(const Program& program) {
  const auto* call_node = program.body.as<Call>();
  if (!call_node || call_node->args.size() != 1)
    return std::nullopt;
  const auto* iteration = call_node->fun.as<Iterate>();
  if (!iteration)
    return std::nullopt;
  std::optional<int64_t> count = iteration->count.as_constant();
  if (!count || *count < 1)
    return std::nullopt;
  const auto* iterated = call_node->args[0].as<Param>();
  if (!iterated)
    return std::nullopt;
  size_t input = program.params.size();
  for (size_t i = 0; i < program.params.size(); ++i)
    if (program.params[i].as<Param>()->id == iterated->id)
      input = i;
  if (input == program.params.size())
    return std::nullopt;

  HostIteration h{*count, input, program};
  const Fun& f = iteration->f;
  if (const auto* l = f.as<Lambda>(); l && l->params.size() == 1) {
    h.step.params[input] = l->params[0];
    h.step.body = l->body;
  } else {
    // An eta-reduced step (`iterate(T, map2D(g), p)`): applied to a parameter of its own.
    Expr x = param(program.params[input].type(), iterated->name);
    h.step.params[input] = x;
    h.step.body = call(f, {x}, program.loc);
  }
  return h;
}

Program iterate_step(const Program& step, int64_t count, size_t input) {
  Program iterated = step;
  const Expr& x = step.params.at(input);
  Expr p = param(x.type(), x.as<Param>()->name);
  iterated.params[input] = p;
  iterated.body = call(iterate(arith::Expr(count), lambda({x}, step.body)), {p}, step.loc);
  return iterated;
}

} // namespace liftx::ir
