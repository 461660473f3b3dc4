#include "ir/host_iteration.hpp"

namespace liftx::ir {

namespace {

/// `iterate(T, f, arg)` with T a constant >= 1: the iterate node, T and the argument.
struct IterateCall {
  const Iterate* iteration = nullptr;
  int64_t count = 0;
  const Expr* arg = nullptr;
};

std::optional<IterateCall> as_iterate_call(const Expr& e) {
  const auto* call_node = e.as<Call>();
  if (!call_node || call_node->args.size() != 1)
    return std::nullopt;
  const auto* iteration = call_node->fun.as<Iterate>();
  if (!iteration)
    return std::nullopt;
  std::optional<int64_t> count = iteration->count.as_constant();
  if (!count || *count < 1)
    return std::nullopt;
  return IterateCall{iteration, *count, &call_node->args[0]};
}

/// The step program of `f` iterated over parameter `input` of `program`.
Program step_program(const Program& program, size_t input, const Fun& f) {
  Program step = program;
  if (const auto* l = f.as<Lambda>(); l && l->params.size() == 1) {
    step.params[input] = l->params[0];
    step.body = l->body;
  } else {
    // An eta-reduced step (`iterate(T, map2D(g), p)`): applied to a parameter of its own.
    const Expr& p = program.params[input];
    Expr x = param(p.type(), p.as<Param>()->name);
    step.params[input] = x;
    step.body = call(f, {x}, program.loc);
  }
  return step;
}

Expr iterate_call(const Program& step, int64_t count, size_t input, Expr arg) {
  return call(iterate(arith::Expr(count), lambda({step.params.at(input)}, step.body)),
              {std::move(arg)}, step.loc);
}

} // namespace

std::optional<HostIteration> host_iteration(const Program& program) {
  std::optional<IterateCall> outer = as_iterate_call(program.body);
  if (!outer)
    return std::nullopt;
  std::optional<IterateCall> inner = as_iterate_call(*outer->arg);
  const IterateCall& first = inner ? *inner : *outer;
  const auto* iterated = first.arg->as<Param>();
  if (!iterated)
    return std::nullopt;
  size_t input = program.params.size();
  for (size_t i = 0; i < program.params.size(); ++i)
    if (program.params[i].as<Param>()->id == iterated->id)
      input = i;
  if (input == program.params.size())
    return std::nullopt;

  HostIteration h{first.count, input, step_program(program, input, first.iteration->f)};
  if (inner) {
    h.tail_count = outer->count;
    h.tail = step_program(program, input, outer->iteration->f);
  }
  return h;
}

Program iterate_step(const Program& step, int64_t count, size_t input) {
  Program iterated = step;
  const Expr& x = step.params.at(input);
  Expr p = param(x.type(), x.as<Param>()->name);
  iterated.params[input] = p;
  iterated.body = iterate_call(step, count, input, p);
  return iterated;
}

Program iterate_steps(const Program& step, int64_t count, const Program& tail, int64_t tail_count,
                      size_t input) {
  Program iterated = iterate_step(step, count, input);
  iterated.body = iterate_call(tail, tail_count, input, iterated.body);
  return iterated;
}

} // namespace liftx::ir
