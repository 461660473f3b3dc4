#pragma once
/// Loading a program and binding its sizes and inputs from command-line options; shared by the
/// subcommands that run programs.
#include "cli/options.hpp"
#include "ir/expr.hpp"
#include "ir/interp/interp.hpp"

#include <random>
#include <string>
#include <vector>

namespace liftx::cli {

/// The program named `name` in `module`, or its main (last) definition when `name` is empty.
const ir::Program& select_program(const ir::Module& module, const std::string& name,
                                  const std::string& file);

/// `step` iterated `steps` times (`--steps T`): `iterate(T, step, p)` over its first parameter p
/// of the step's result type; `step` itself when `steps` is 0. UserError when no parameter has
/// the result's type, or when the program already iterates.
ir::Program iterate_steps(const ir::Program& step, int64_t steps, const std::string& file);

/// Binds every size variable of `program` from `--size` values: named sizes must exist in the
/// program; a bare value applies to the rest; anything left unbound is an error.
Sizes bind_sizes(const ir::Program& program, const std::vector<std::string>& size_values);

/// One host array per parameter: from `--input NAME=FILE` where given, else random from `rng`.
struct BoundInput {
  interp::HostArray data;
  std::string origin; ///< "random" or the file name
};
std::vector<BoundInput> bind_inputs(const ir::Program& program, const Sizes& sizes,
                                    const std::vector<std::string>& input_values,
                                    std::mt19937_64& rng);

/// "M=48 N=64"
std::string format_sizes(const Sizes& sizes);

} // namespace liftx::cli
