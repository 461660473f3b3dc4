#pragma once
/// Choosing a program of a module and binding its sizes and inputs from the text a user gives
/// (`--program`, `--steps`, `--size`, `--input` on the command line): every front end that runs a
/// program from a file binds it the same way, with the same messages.
#include "ir/arith/expr.hpp"
#include "ir/expr.hpp"
#include "ir/interp/interp.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace liftx::exec {

/// "a,,b" -> {"a", "", "b"}: every part, empty ones included (the caller refuses them).
std::vector<std::string> split_on(const std::string& text, char separator);

/// A decimal integer in [lo, hi]; UserError naming `what` otherwise.
int64_t parse_integer(const std::string& text, const std::string& what, int64_t lo, int64_t hi);

/// A C identifier: what a size or parameter may be named.
bool is_identifier(const std::string& s);

/// `--size` values (repeatable, comma separated): `M=48,N=64` (named), a bare `64` that sets every
/// size variable, or `48x64` (the program's sizes in the order of their names, as `adapt` writes
/// shapes). Returns the explicit bindings, the default for unnamed sizes and the ordered ones.
struct SizeOptions {
  std::map<std::string, int64_t, std::less<>> named;
  std::optional<int64_t> all;
  std::vector<int64_t> ordered;
};
SizeOptions parse_size_options(const std::vector<std::string>& values);

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

/// The .lift file `path`, or the .lift files of the directory `path` (sorted); UserError when
/// there is no such file or directory, or the directory holds none.
std::vector<std::filesystem::path> lift_files_at(const std::string& path);

} // namespace liftx::exec
