// `liftx codegen FILE [--program NAME] [--size ...] [--free-threads]`: prints the OpenCL kernel of
// a lowered program and its launch configuration (symbolic, and concrete when sizes are given).
#include "cli/app.hpp"
#include "cli/program_options.hpp"
#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"
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
    const interp::Sizes* bound = sizes ? &*sizes : nullptr;
    const std::string iterated =
        kernel.iterated_input >= 0
            ? program.params[size_t(kernel.iterated_input)].as<ir::Param>()->name
            : "";
    auto describe = [&](const codegen::Kernel& k) {
      std::string text = k.source;
      text += fmt::format("\n// launch: dims {}; global ({}); local ({})\n", k.launch.dims,
                          launch_text(k.launch.global, k.launch.dims, bound),
                          launch_text(k.launch.local, k.launch.dims, bound));
      if (kernel.total_launches() > 1) // a host iteration: its kernel, and the tail's
        text +=
            fmt::format("// launched {} (iterate over the whole grid): each launch reads "
                        "the previous one's output in place of parameter {}, two buffers "
                        "swapped\n",
                        k.launches == 1 ? "once" : fmt::format("{} times", k.launches), iterated);
      arith::Expr local_bytes = k.local_bytes();
      text += fmt::format("// local memory per work-group: {} bytes\n",
                          bound ? fmt::format("{}", arith::evaluate(local_bytes, *bound))
                                : local_bytes.to_string());
      text += fmt::format("// private memory per work-item: {} bytes (about {} registers)\n",
                          k.private_bytes, codegen::estimated_registers_per_work_item(k));
      for (const codegen::LoopRecord& loop : k.loops)
        text += fmt::format("// {} over {}: {}\n", loop.primitive, loop.trip_count.to_string(),
                            cl::loop_kind_name(loop.kind));
      return text;
    };
    std::string text = describe(kernel);
    if (kernel.tail)
      text +=
          fmt::format("\n// then the remainder: the kernel below, after the {} launch{} "
                      "above, on the same two buffers\n\n{}",
                      kernel.launches, kernel.launches == 1 ? "" : "es", describe(*kernel.tail));
    fmt::print("{}", text);
  });
}

} // namespace liftx::cli
