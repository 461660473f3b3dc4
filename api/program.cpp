// Programs: .lift input, printing and identity.
#include "liftx/program.hpp"

#include "ir/parse/parser.hpp"
#include "runtime/cache_dir.hpp"

#include <fmt/format.h>

namespace liftx {

namespace {

Program select(const ir::Module& module, const std::string& name, const std::string& file) {
  if (name.empty())
    return module.main();
  if (const ir::Program* p = module.find(name))
    return *p;
  std::string known;
  for (const ir::Program& p : module.programs)
    known += (known.empty() ? "" : ", ") + p.name;
  throw UserError(fmt::format("{} has no definition '{}' (it defines: {})", file, name,
                              known.empty() ? std::string("nothing") : known));
}

} // namespace

Program load_program(const std::string& path, const std::string& name) {
  return select(parse::parse_file(path), name, path);
}

Program parse_program(std::string_view source, const std::string& name, const std::string& file) {
  return select(parse::parse_module(source, file), name, file);
}

std::string print_program(const Program& program) {
  return ir::print(dsl::module({program}));
}

std::string program_identity(const Program& program) {
  return runtime::content_hash(print_program(program));
}

} // namespace liftx
