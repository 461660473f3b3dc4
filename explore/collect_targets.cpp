#include "explore/collect_targets.hpp"

#include "exec/program_binding.hpp"
#include "explore/explore.hpp"
#include "ir/parse/parser.hpp"
#include "support/error.hpp"

#include <utility>

namespace liftx::explore {

std::vector<CollectTarget> collect_targets(const std::vector<std::string>& files,
                                           const std::string& program_name,
                                           const std::vector<std::string>& size_sets,
                                           const std::string& check_size) {
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
      if (!check_size.empty()) {
        target.check_sizes = exec::bind_sizes(program, {check_size});
        for (const auto& [name, value] : target.check_sizes)
          LIFTX_USER_CHECK(value <= target.sizes.at(name),
                           "collect: --check-size {} is larger than the size {} of {}: a check "
                           "is made at sizes no larger than the run's",
                           exec::format_sizes(target.check_sizes), exec::format_sizes(target.sizes),
                           program.name);
        if (target.check_sizes == target.sizes)
          target.check_sizes.clear();
      }
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
    for (size_t f = 0; f < files.size(); ++f) {
      // A design size n means about n² input points whatever the program's dimensions: a 3D
      // grid or a product's three extents at n each would be n³ points (a 2048³ grid is 32 GiB,
      // a 2048³ product's reference interpretation takes hours). The extent per size variable
      // is the one explore picks by default (DeviceDefaults::extent); two variables keep n
      // itself, a power of two or not.
      const ir::Program& program = modules[f].main();
      const size_t variables = exec::bind_sizes(program, {"1"}).size();
      const int64_t extent = variables == 2 ? n : DeviceDefaults{n, 0}.extent(variables);
      sizes.push_back(exec::bind_sizes(program, {std::to_string(extent)}));
    }
  return sizes;
}

} // namespace liftx::explore
