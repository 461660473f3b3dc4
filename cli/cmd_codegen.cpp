// `liftx codegen FILE [--program NAME] [--size ...] [--free-threads]`: prints the OpenCL kernel of
// a lowered program and its launch configuration (symbolic, and concrete when sizes are given).
#include "cli/app.hpp"
#include "cli/program_options.hpp"
#include "codegen/kernel.hpp"
#include "ir/parse/parser.hpp"

#include <fmt/format.h>

namespace liftx::cli {
namespace cl = codegen::cl;

namespace {

std::string launch_text(const std::array<std::optional<arith::Expr>, 3>& sizes, int dims,
                        const interp::Sizes* bound) {
  std::string text;
  for (int d = 0; d < dims; ++d) {
    std::string part = "any";
    if (sizes[d]) {
      part = sizes[d]->to_string();
      if (bound)
        part = fmt::format("{}", arith::evaluate(*sizes[d], *bound));
    }
    text += (d ? ", " : "") + part;
  }
  return text;
}

} // namespace

void add_codegen_command(CLI::App& app) {
  struct Options {
    std::string file;
    std::string program;
    std::vector<std::string> sizes;
    bool free_threads = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("codegen", "Print the OpenCL kernel of a lowered program");
  cmd->add_option("file", options->file, ".lift source file")->required();
  cmd->add_option("--program", options->program, "definition to compile (default: the last one)");
  cmd->add_option("--size", options->sizes, "sizes, to print the concrete launch configuration");
  cmd->add_flag("--free-threads", options->free_threads,
                "a kernel valid for any global/local size (maps become loops)");
  cmd->callback([options] {
    ir::Module module = parse::parse_file(options->file);
    const ir::Program& program = select_program(module, options->program, options->file);
    codegen::Options codegen_options;
    codegen_options.tie_threads_to_lengths = !options->free_threads;
    codegen::Kernel kernel = codegen::generate(program, codegen_options);
    std::optional<interp::Sizes> sizes;
    if (!options->sizes.empty())
      sizes = bind_sizes(program, options->sizes);
    // Everything is formatted before anything is printed: sizes that do not fit the program
    // (an inexact division) print an error only, not half a kernel.
    std::string text = kernel.source;
    text += fmt::format(
        "\n// launch: dims {}; global ({}); local ({})\n", kernel.launch.dims,
        launch_text(kernel.launch.global, kernel.launch.dims, sizes ? &*sizes : nullptr),
        launch_text(kernel.launch.local, kernel.launch.dims, sizes ? &*sizes : nullptr));
    if (kernel.launches > 1)
      text += fmt::format("// launched {} times (iterate over the whole grid): each launch reads "
                          "the previous one's output in place of parameter {}, two buffers "
                          "swapped\n",
                          kernel.launches,
                          program.params[size_t(kernel.iterated_input)].as<ir::Param>()->name);
    arith::Expr local_bytes = kernel.local_bytes();
    text += fmt::format("// local memory per work-group: {} bytes\n",
                        sizes ? fmt::format("{}", arith::evaluate(local_bytes, *sizes))
                              : local_bytes.to_string());
    for (const codegen::LoopRecord& loop : kernel.loops)
      text += fmt::format("// {} over {}: {}\n", loop.primitive, loop.trip_count.to_string(),
                          cl::loop_kind_name(loop.kind));
    fmt::print("{}", text);
  });
}

} // namespace liftx::cli
