#include "ir/parse/parser.hpp"

#include "ir/parse/elaborate.hpp"
#include "ir/parse/syntax.hpp"
#include "support/error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace liftx::parse {
namespace {

/// What is accepted must print to text that parses again (`liftx check --print`, variant files).
/// Shorthands expand when elaborated (pad2D into two nested pads, slide3D into several
/// primitives), so a definition within the nesting limits as written can exceed them once
/// printed: it is refused here, at its `def`, instead of printed to text that cannot be read back.
void check_printed_nesting(const ir::Module& module) {
  for (const ir::Program& program : module.programs) {
    try {
      parse_syntax(ir::print(program), "<printed>");
    } catch (const UserError& e) {
      if (e.message().find("too deeply nested") == std::string::npos)
        LIFTX_UNREACHABLE("the printed definition '{}' does not parse: {}", program.name, e.what());
      throw UserError(fmt::format("definition '{}' nests too deeply once its shorthands are "
                                  "expanded (map2D, slide2D, pad2D, ... into nested primitives) "
                                  "and its sizes simplified: {}",
                                  program.name, e.message()),
                      program.loc);
    }
  }
}

} // namespace

ir::Module parse_module(std::string_view source, std::string file) {
  ModuleSyntax syntax = parse_syntax(source, file);
  ir::Module module = elaborate(syntax);
  check_printed_nesting(module);
  return module;
}

ir::Module parse_file(const std::string& path) {
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  LIFTX_USER_CHECK(file, "cannot read {}: {}", path, std::strerror(errno));
  // A bound on what is read: `/dev/zero` or a huge file is refused instead of exhausting memory.
  // The parser, the checker and the printers hold a few hundred bytes per source byte (a 60 MB
  // file reached std::bad_alloc); 4 MiB is a thousand times the largest stencil written so far.
  constexpr size_t kMaxSourceBytes = size_t{4} << 20;
  std::string text;
  char buffer[65536];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text.append(buffer, n);
    LIFTX_USER_CHECK(text.size() <= kMaxSourceBytes, "{}: larger than {} MiB; not a .lift source",
                     path, kMaxSourceBytes >> 20);
  }
  LIFTX_USER_CHECK(!std::ferror(file.get()), "cannot read {}: {}", path, std::strerror(errno));
  return parse_module(text, path);
}

} // namespace liftx::parse
