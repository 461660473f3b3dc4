#include "exec/program_binding.hpp"

#include "ir/host_iteration.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <set>

namespace liftx::exec {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos)
      return parts;
    start = end + 1;
  }
}

int64_t parse_integer(const std::string& text, const std::string& what, int64_t lo, int64_t hi) {
  int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, value);
  LIFTX_USER_CHECK(!text.empty() && ec == std::errc() && end == last, "{}: '{}' is not an integer",
                   what, text);
  LIFTX_USER_CHECK(value >= lo && value <= hi, "{}: {} is out of range [{}, {}]", what, value, lo,
                   hi);
  return value;
}

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

std::string replace_x(std::string text) {
  std::replace(text.begin(), text.end(), 'X', 'x');
  return text;
}
} // namespace

SizeOptions parse_size_options(const std::vector<std::string>& values) {
  SizeOptions sizes;
  constexpr int64_t kMaxSize = int64_t{1} << 40;
  for (const std::string& value : values) {
    for (const std::string& item : split_on(value, ',')) {
      size_t eq = item.find('=');
      if (eq == std::string::npos && item.find_first_of("xX") != std::string::npos) {
        LIFTX_USER_CHECK(sizes.ordered.empty(), "--size {}: sizes in order are given twice", item);
        for (const std::string& part : split_on(replace_x(item), 'x'))
          sizes.ordered.push_back(parse_integer(part, "--size", 1, kMaxSize));
        continue;
      }
      if (eq == std::string::npos) {
        LIFTX_USER_CHECK(!sizes.all, "--size {}: a size for every variable is given twice", item);
        sizes.all = parse_integer(item, "--size", 1, kMaxSize);
        continue;
      }
      std::string name = item.substr(0, eq);
      LIFTX_USER_CHECK(is_identifier(name), "--size {}: '{}' is not a size name", item, name);
      int64_t size =
          parse_integer(item.substr(eq + 1), fmt::format("--size {}", name), 1, kMaxSize);
      LIFTX_USER_CHECK(sizes.named.emplace(name, size).second, "--size: {} is given twice", name);
    }
  }
  return sizes;
}

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

namespace fs = std::filesystem;

std::vector<fs::path> lift_files_at(const std::string& path) {
  LIFTX_USER_CHECK(fs::exists(path), "{}: no such file or directory", path);
  if (!fs::is_directory(path))
    return {fs::path(path)};
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".lift")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  LIFTX_USER_CHECK(!files.empty(), "{}: no .lift files", path);
  return files;
}

} // namespace liftx::exec
