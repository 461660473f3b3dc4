// The private-array scalarisation pass over the kernel AST (scalarise.hpp says what it does).
#include "codegen/scalarise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace liftx::codegen::cl {

namespace {

/// One use `name[k]` of an array in a text: where it starts, its length, and k's digits.
struct Use {
  size_t at;
  size_t length;
  std::string index;
};

/// The uses of `name` (as a whole identifier) in `text`, or nullopt when one is not `name[k]`
/// with k a decimal literal.
std::optional<std::vector<Use>> constant_uses(const std::string& text, const std::string& name) {
  std::vector<Use> uses;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const size_t end = at + name.size();
    if ((at > 0 && is_identifier_char(text[at - 1])) ||
        (end < text.size() && is_identifier_char(text[end])))
      continue; // part of a longer identifier
    if (end == text.size() || text[end] != '[')
      return std::nullopt;
    const size_t close = text.find(']', end);
    if (close == std::string::npos || close == end + 1 ||
        !std::all_of(text.begin() + long(end) + 1, text.begin() + long(close),
                     [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    uses.push_back({at, close + 1 - at, text.substr(end + 1, close - end - 1)});
  }
  return uses;
}

void collect_declarations(Block& block, std::vector<Stmt*>& out) {
  for (Stmt& stmt : block.stmts) {
    if (std::holds_alternative<ArrayDecl>(stmt.node))
      out.push_back(&stmt);
    else if (auto* s = std::get_if<Scope>(&stmt.node))
      collect_declarations(s->body, out);
    else if (auto* s = std::get_if<If>(&stmt.node))
      collect_declarations(s->body, out);
    else if (auto* s = std::get_if<For>(&stmt.node))
      collect_declarations(s->body, out);
  }
}

} // namespace

std::vector<std::string> scalarise_private_arrays(Block& body) {
  std::vector<Stmt*> declarations;
  collect_declarations(body, declarations);
  if (declarations.empty())
    return {};
  // Which texts name which arrays, found in one pass: an array's uses are looked for only in
  // the texts that name it, not in the whole kernel once per array.
  std::vector<std::string> names;
  names.reserve(declarations.size()); // the views below point into it
  for (Stmt* stmt : declarations)
    names.push_back(std::get<ArrayDecl>(stmt->node).name);
  std::unordered_map<std::string_view, std::vector<size_t>> naming;
  for (const std::string& name : names)
    naming.emplace(name, std::vector<size_t>{});
  std::vector<std::string*> texts;
  for_each_text(body, [&](std::string& text) { texts.push_back(&text); });
  auto index_names = [&](size_t t) {
    const std::string_view text = *texts[t];
    for (size_t at = 0; at < text.size();) {
      if (!is_identifier_char(text[at])) {
        ++at;
        continue;
      }
      const size_t start = at;
      while (at < text.size() && is_identifier_char(text[at]))
        ++at;
      const auto named = naming.find(text.substr(start, at - start));
      if (named != naming.end() && (named->second.empty() || named->second.back() != t))
        named->second.push_back(t);
    }
  };
  for (size_t t = 0; t < texts.size(); ++t)
    index_names(t);
  std::vector<std::string> scalarised;
  for (Stmt* stmt : declarations) {
    const ArrayDecl decl = std::get<ArrayDecl>(stmt->node);
    // A copy: a rewritten text is indexed again (a scalar's name may be another array's).
    const std::vector<size_t> uses_in = naming.at(decl.name);
    const bool constant = std::all_of(uses_in.begin(), uses_in.end(), [&](size_t t) {
      return constant_uses(*texts[t], decl.name).has_value();
    });
    if (!constant)
      continue;
    for (size_t t : uses_in) {
      std::string& text = *texts[t];
      const std::vector<Use> uses = *constant_uses(text, decl.name);
      if (uses.empty())
        continue;
      std::string rebuilt;
      size_t copied = 0;
      for (const Use& use : uses) {
        rebuilt.append(text, copied, use.at - copied);
        rebuilt += decl.name + "_" + use.index;
        copied = use.at + use.length;
      }
      rebuilt.append(text, copied, std::string::npos);
      text = std::move(rebuilt);
      index_names(t);
    }
    std::string line = fmt::format("{} {}_0", decl.type, decl.name);
    for (int64_t k = 1; k < decl.count; ++k)
      line += fmt::format(", {}_{}", decl.name, k);
    stmt->node = Line{line + ";"};
    // The declaration is a text now, as the scalars' other uses are.
    texts.push_back(&std::get<Line>(stmt->node).text);
    index_names(texts.size() - 1);
    scalarised.push_back(decl.name);
  }
  return scalarised;
}

} // namespace liftx::codegen::cl
