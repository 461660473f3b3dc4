// `liftx eval FILE --size N=64,M=48 [--seed S] [--input NAME=FILE]... [--output FILE]`: runs a
// program with the reference interpreter and prints a summary of the result.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "exec/program_binding.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>

namespace liftx::cli {

void add_eval_command(CLI::App& app) {
  struct Options {
    std::string file;
    std::string program;
    std::vector<std::string> sizes;
    std::vector<std::string> inputs;
    std::string output;
    uint64_t seed = 1;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("eval", "Evaluate a .lift program with the reference interpreter");
  cmd->add_option("file", options->file, ".lift source file")->required();
  cmd->add_option("--program", options->program, "definition to run (default: the last one)");
  cmd->add_option("--size", options->sizes, "sizes: N=64,M=48, or 64 for every size")->required();
  cmd->add_option("--input", options->inputs, "NAME=FILE: float32 binary input for a parameter");
  cmd->add_option("-o,--output", options->output,
                  "write the result as float32 binary (a tuple result: one file per component, "
                  "FILE.0.ext, FILE.1.ext, ...)");
  cmd->add_option("--seed", options->seed, "seed of the random inputs (default 1)");
  add_max_memory_option(cmd);
  cmd->callback([options] {
    ir::Module module = parse::parse_file(options->file);
    const ir::Program& program = exec::select_program(module, options->program, options->file);
    Sizes sizes = exec::bind_sizes(program, options->sizes);
    if (!options->output.empty()) {
      // Refused before the interpretation, which may take long: never written over an input.
      std::vector<std::filesystem::path> read{options->file};
      for (const std::string& input : options->inputs)
        read.emplace_back(input.substr(input.find('=') + 1));
      for (const std::string& path : interp::component_paths(
               options->output, interp::result_components(program.result_type())))
        refuse_overwriting_input(path, read, "--output");
    }
    std::mt19937_64 rng(options->seed);
    std::vector<exec::BoundInput> inputs = exec::bind_inputs(program, sizes, options->inputs, rng);
    std::vector<interp::HostArray> arrays;
    for (const exec::BoundInput& input : inputs)
      arrays.push_back(input.data);

    auto start = std::chrono::steady_clock::now();
    interp::HostArray result = interp::evaluate(program, arrays, sizes);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<std::string> written;
    if (!options->output.empty())
      written = interp::write_result(options->output, result, program.result_type());

    interp::Summary summary = interp::summarize(result);
    fmt::print("program   {} ({})\n", program.name, options->file);
    fmt::print("sizes     {}\n", exec::format_sizes(sizes));
    for (size_t i = 0; i < program.params.size(); ++i) {
      const ir::Expr& p = program.params[i];
      fmt::print("input     {}: {} [{}] {}\n", p.as<ir::Param>()->name, p.type().to_string(),
                 fmt::join(inputs[i].data.shape, " x "),
                 inputs[i].origin == "random" ? fmt::format("random (seed {})", options->seed)
                                              : inputs[i].origin);
    }
    fmt::print("result    {} [{}]\n", program.result_type().to_string(),
               fmt::join(summary.shape, " x "));
    fmt::print("checksum  {:.9g}\n", summary.checksum);
    fmt::print("min/max   {:.9g} / {:.9g}\n", summary.min, summary.max);
    fmt::print("mean      {:.9g}\n", summary.mean);
    fmt::print("time      {:.3f} ms (reference interpreter)\n", seconds * 1e3);
    if (!written.empty())
      fmt::print("output    {}\n", fmt::join(written, " "));
  });
}

} // namespace liftx::cli
