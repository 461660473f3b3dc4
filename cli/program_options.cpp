#include "cli/program_options.hpp"

#include "ir/host_iteration.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace liftx::cli {

namespace {

std::string param_name(const ir::Expr& p) {
  return p.as<ir::Param>()->name;
}

std::string list_sizes(const std::vector<arith::Expr>& vars) {
  std::vector<std::string> names;
  for (const arith::Expr& v : vars)
    names.push_back(v.node().name);
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

} // namespace

const ir::Program& select_program(const ir::Module& module, const std::string& name,
                                  const std::string& file) {
  if (name.empty())
    return module.main();
  if (const ir::Program* p = module.find(name))
    return *p;
  std::vector<std::string> names;
  for (const ir::Program& p : module.programs)
    names.push_back(p.name);
  throw UserError(
      fmt::format("{}: no definition named '{}' (the file defines {})", file, name,
                  names.empty() ? "nothing" : fmt::format("{}", fmt::join(names, ", "))));
}

ir::Program iterate_steps(const ir::Program& step, int64_t steps, const std::string& file) {
  if (steps == 0)
    return step;
  LIFTX_USER_CHECK(steps >= 1, "--steps must be at least 1 (got {})", steps);
  LIFTX_USER_CHECK(!ir::host_iteration(step),
                   "{}: {} already iterates its steps; drop --steps or give a step function", file,
                   step.name);
  for (size_t i = 0; i < step.params.size(); ++i)
    if (step.params[i].type() == step.result_type())
      return ir::iterate_step(step, steps, i);
  throw UserError(fmt::format("{}: --steps needs a step function: {}'s result ({}) has the type of "
                              "none of its parameters",
                              file, step.name, step.result_type().to_string()));
}

Sizes bind_sizes(const ir::Program& program, const std::vector<std::string>& size_values) {
  SizeOptions options = parse_size_options(size_values);
  std::vector<arith::Expr> vars = program.size_vars();
  std::set<std::string, std::less<>> known;
  for (const arith::Expr& v : vars)
    known.insert(v.node().name);
  Sizes sizes;
  if (!options.ordered.empty()) {
    LIFTX_USER_CHECK(options.ordered.size() == vars.size() && !options.all && options.named.empty(),
                     "--size {}: {} has {} size{} ({}): give one per size in that "
                     "order alone, name them (M=48,N=64), or give one value for all",
                     fmt::join(options.ordered, "x"), program.name, vars.size(),
                     vars.size() == 1 ? "" : "s", list_sizes(vars));
    for (size_t i = 0; i < vars.size(); ++i)
      sizes[vars[i].node().name] = options.ordered[i];
  }
  for (const auto& [name, value] : options.named) {
    LIFTX_USER_CHECK(known.contains(name), "--size {}: {} has no size named {} (its sizes: {})",
                     name, program.name, name, list_sizes(vars));
    sizes[name] = value;
  }
  std::vector<std::string> missing;
  for (const std::string& name : known) {
    if (sizes.contains(name))
      continue;
    if (options.all)
      sizes[name] = *options.all;
    else
      missing.push_back(name);
  }
  LIFTX_USER_CHECK(missing.empty(),
                   "missing --size for {} (give NAME=VALUE, or a bare value for all)",
                   fmt::join(missing, ", "));
  interp::check_sizes(program, sizes);
  return sizes;
}

std::vector<BoundInput> bind_inputs(const ir::Program& program, const Sizes& sizes,
                                    const std::vector<std::string>& input_values,
                                    std::mt19937_64& rng) {
  std::map<std::string, std::string, std::less<>> files;
  for (const std::string& value : input_values) {
    size_t eq = value.find('=');
    LIFTX_USER_CHECK(eq != std::string::npos && eq != 0 && eq + 1 != value.size(),
                     "--input {}: expected NAME=FILE", value);
    std::string name = value.substr(0, eq);
    bool is_param = false;
    for (const ir::Expr& p : program.params)
      is_param |= param_name(p) == name;
    LIFTX_USER_CHECK(is_param, "--input {}: {} has no parameter named {}", value, program.name,
                     name);
    LIFTX_USER_CHECK(files.emplace(name, value.substr(eq + 1)).second, "--input: {} is given twice",
                     name);
  }
  interp::check_host_memory(program, sizes);
  std::vector<BoundInput> inputs;
  for (const ir::Expr& p : program.params) {
    auto file = files.find(param_name(p));
    if (file != files.end())
      inputs.push_back({interp::read_input(file->second, p.type(), sizes), file->second});
    else
      inputs.push_back({interp::random_input(p.type(), sizes, rng), "random"});
  }
  return inputs;
}

std::string format_sizes(const Sizes& sizes) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : sizes)
    parts.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(parts, " "));
}

} // namespace liftx::cli
