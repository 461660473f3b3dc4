#include "explore/collect_targets.hpp"

#include "exec/program_binding.hpp"
#include "ir/parse/parser.hpp"

#include <utility>

namespace liftx::explore {

std::vector<CollectTarget> collect_targets(const std::vector<std::string>& files,
                                           const std::string& program_name,
                                           const std::vector<std::string>& size_sets) {
  std::vector<CollectTarget> targets;
  std::vector<std::pair<std::string, ir::Module>> modules;
  for (const std::string& file : files)
    modules.emplace_back(file, parse::parse_file(file));
  for (const std::string& size_set : size_sets) {
    for (const auto& [file, module] : modules) {
      const ir::Program& program = exec::select_program(module, program_name, file);
      CollectTarget target;
      target.file = file;
      target.program = program.name;
      target.sizes = exec::bind_sizes(program, {size_set});
      targets.push_back(std::move(target));
    }
  }
  return targets;
}

std::vector<Sizes> sizes_per_file(const std::vector<std::string>& files,
                                  const CalibrationDesign& design) {
  std::vector<ir::Module> modules;
  std::vector<Sizes> sizes;
  for (const std::string& file : files)
    modules.push_back(parse::parse_file(file));
  for (int64_t n : design.sizes)
    for (size_t f = 0; f < files.size(); ++f)
      sizes.push_back(exec::bind_sizes(modules[f].main(), {std::to_string(n)}));
  return sizes;
}

} // namespace liftx::explore
