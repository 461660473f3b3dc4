// `liftx codegen FILE [--program NAME] [--size ...] [--free-threads] [--pad-local] [--profile P]`:
// prints the OpenCL kernel of a lowered program and its launch configuration (symbolic, and
// concrete when sizes are given); --pad-local first pads its local arrays' rows against bank
// conflicts (space::choose_bank_padding) and says what it chose. A named --profile prints the
// kernel `liftx run` builds on such a device (a warp stream's rows in registers on NVIDIA's,
// interior tiles' code without boundary repairs on GPUs).
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"
#include "exec/program_binding.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "space/bank_padding.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace liftx::cli {
namespace cl = codegen::cl;

namespace {

std::string launch_text(const std::array<std::optional<arith::Expr>, 3>& sizes, int dims,
                        const Sizes* bound) {
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
    bool pad_local = false;
    std::string profile = "detect";
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("codegen", "Print the OpenCL kernel of a lowered program");
  cmd->add_option("file", options->file, ".lift source file")->required();
  cmd->add_option("--program", options->program, "definition to compile (default: the last one)");
  cmd->add_option("--size", options->sizes, "sizes, to print the concrete launch configuration");
  cmd->add_flag("--free-threads", options->free_threads,
                "a kernel valid for any global/local size (maps become loops)");
  cmd->add_flag("--pad-local", options->pad_local,
                "pad the rows of local arrays against bank conflicts, as the profile's banks and "
                "warps suggest (seed 004's Algorithm 2; needs --size)");
  add_profile_option(cmd, options->profile, "detect");
  cmd->callback([options] {
    ir::Module module = parse::parse_file(options->file);
    ir::Program program = exec::select_program(module, options->program, options->file);
    std::string padding_note;
    if (options->pad_local) {
      LIFTX_USER_CHECK(!options->sizes.empty(),
                       "--pad-local needs --size: bank conflicts depend on the launch");
      LIFTX_USER_CHECK(!options->free_threads,
                       "--pad-local works on the tied kernel: drop --free-threads");
      const target::DeviceProfile profile = runtime::named_profile(options->profile);
      const space::BankPadding padding = space::choose_bank_padding(
          program, exec::bind_sizes(program, options->sizes), {}, profile);
      padding_note =
          fmt::format("// bank padding for {} ({} banks, warps of {}): ", profile.device_name,
                      padding.banks, profile.warp_width);
      if (profile.type == target::DeviceType::cpu)
        padding_note += "a CPU has no banks: nothing padded\n";
      else if (padding.arrays.empty())
        padding_note += "no local array of two or more dimensions\n";
      else
        padding_note += fmt::format("{} local array{}\n", padding.arrays.size(),
                                    padding.arrays.size() == 1 ? "" : "s");
      for (size_t k = 0; k < padding.arrays.size(); ++k) {
        const space::LocalArrayPadding& a = padding.arrays[k];
        padding_note += fmt::format(
            "//   toLocal #{}: {}; worst degree {:g} -> {:g}, cost {:g} -> {:g}\n", k + 1,
            a.padding > 0 ? fmt::format("rows padded by {}", a.padding) : "left unpadded",
            a.degree_unpadded, a.degree_padded, a.cost_unpadded, a.cost_padded);
      }
      program = padding.program;
    }
    codegen::Options codegen_options;
    codegen_options.tie_threads_to_lengths = !options->free_threads;
    // Only a named profile: without one, printing a kernel needs no OpenCL device.
    if (options->profile != "detect") {
      const target::DeviceProfile profile = runtime::named_profile(options->profile);
      codegen_options.subgroup_rows = exec::subgroup_rows_on(profile);
      codegen_options.interior_tiles = exec::interior_tiles_on(profile);
    }
    codegen::Kernel kernel = codegen::generate(program, codegen_options);
    std::optional<Sizes> sizes;
    if (!options->sizes.empty())
      sizes = exec::bind_sizes(program, options->sizes);
    // Everything is formatted before anything is printed: sizes that do not fit the program
    // (an inexact division) print an error only, not half a kernel.
    const Sizes* bound = sizes ? &*sizes : nullptr;
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
      text += fmt::format("// private memory per work-item: {} bytes (about {} registers){}\n",
                          k.private_bytes, codegen::estimated_registers_per_work_item(k),
                          k.private_reused_bytes > 0
                              ? fmt::format("; {} bytes live at once (unrolled steps reuse "
                                            "their copies)",
                                            k.live_private_bytes())
                              : "");
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
    fmt::print("{}{}", padding_note.empty() ? "" : padding_note + "\n", text);
  });
}

} // namespace liftx::cli
