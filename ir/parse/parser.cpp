#include "ir/parse/parser.hpp"

#include "ir/parse/elaborate.hpp"
#include "ir/parse/syntax.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace liftx::parse {

ir::Module parse_module(std::string_view source, std::string file) {
  ModuleSyntax syntax = parse_syntax(source, file);
  return elaborate(syntax);
}

ir::Module parse_file(const std::string& path) {
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file)
    throw UserError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  // A bound on what is read: `/dev/zero` or a huge file is refused instead of exhausting memory.
  constexpr size_t kMaxSourceBytes = size_t{64} << 20;
  std::string text;
  char buffer[65536];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text.append(buffer, n);
    if (text.size() > kMaxSourceBytes)
      throw UserError(
          fmt::format("{}: larger than {} MiB; not a .lift source", path, kMaxSourceBytes >> 20));
  }
  if (std::ferror(file.get()))
    throw UserError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  return parse_module(text, path);
}

} // namespace liftx::parse
