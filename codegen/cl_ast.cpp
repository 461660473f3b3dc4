#include "codegen/cl_ast.hpp"

#include <fmt/format.h>

#include <type_traits>

namespace liftx::codegen::cl {

const char* loop_kind_name(LoopKind k) {
  switch (k) {
  case LoopKind::None:
    return "none";
  case LoopKind::Block:
    return "block";
  case LoopKind::If:
    return "if";
  case LoopKind::For:
    return "for";
  case LoopKind::Unrolled:
    return "unrolled";
  }
  return "?";
}

namespace {

void print_block(const Block& block, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  for (const Stmt& stmt : block.stmts) {
    std::visit(
        [&](const auto& s) {
          using S = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<S, Line>) {
            out += pad + s.text + "\n";
          } else if constexpr (std::is_same_v<S, Comment>) {
            out += pad + "// " + s.text + "\n";
          } else if constexpr (std::is_same_v<S, ArrayDecl>) {
            out += fmt::format("{}{} {}[{}];\n", pad, s.type, s.name, s.count);
          } else if constexpr (std::is_same_v<S, Scope>) {
            out += pad + "{\n";
            print_block(s.body, indent + 1, out);
            out += pad + "}\n";
          } else if constexpr (std::is_same_v<S, If>) {
            out += pad + "if (" + s.condition + ") {\n";
            print_block(s.body, indent + 1, out);
            out += pad + "}\n";
          } else if constexpr (std::is_same_v<S, For>) {
            out += pad + "for (" + s.init + "; " + s.condition + "; " + s.step + ") {\n";
            print_block(s.body, indent + 1, out);
            out += pad + "}\n";
          } else if constexpr (std::is_same_v<S, Barrier>) {
            std::string fence = s.local_fence && s.global_fence
                                    ? "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE"
                                : s.global_fence ? "CLK_GLOBAL_MEM_FENCE"
                                                 : "CLK_LOCAL_MEM_FENCE";
            out += pad + "barrier(" + fence + ");\n";
          }
        },
        stmt.node);
  }
}

void count(const Block& block, Census& c) {
  for (const Stmt& stmt : block.stmts) {
    if (const auto* s = std::get_if<Scope>(&stmt.node))
      count(s->body, c);
    if (const auto* s = std::get_if<If>(&stmt.node)) {
      ++c.ifs;
      count(s->body, c);
    }
    if (const auto* s = std::get_if<For>(&stmt.node)) {
      ++c.fors;
      count(s->body, c);
    }
    if (std::holds_alternative<Barrier>(stmt.node))
      ++c.barriers;
  }
}

} // namespace

std::string print(const Block& block, int indent) {
  std::string out;
  print_block(block, indent, out);
  return out;
}

Census census(const Block& block) {
  Census c;
  count(block, c);
  return c;
}

void for_each_text(const Block& block, const std::function<void(const std::string&)>& see) {
  for (const Stmt& stmt : block.stmts)
    std::visit(
        [&](const auto& node) {
          using T = std::decay_t<decltype(node)>;
          if constexpr (std::is_same_v<T, Line>) {
            see(node.text);
          } else if constexpr (std::is_same_v<T, Scope>) {
            for_each_text(node.body, see);
          } else if constexpr (std::is_same_v<T, If>) {
            see(node.condition);
            for_each_text(node.body, see);
          } else if constexpr (std::is_same_v<T, For>) {
            see(node.init);
            see(node.condition);
            see(node.step);
            for_each_text(node.body, see);
          }
        },
        stmt.node);
}

namespace {

std::string replaced(std::string text,
                     const std::vector<std::pair<std::string, std::string>>& replacements) {
  for (const auto& [from, to] : replacements)
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  return text;
}

} // namespace

Block with_text_replaced(const Block& block,
                         const std::vector<std::pair<std::string, std::string>>& replacements) {
  Block out;
  for (const Stmt& stmt : block.stmts)
    out.stmts.push_back(std::visit(
        [&](const auto& node) -> Stmt {
          using T = std::decay_t<decltype(node)>;
          if constexpr (std::is_same_v<T, Line>) {
            return {Line{replaced(node.text, replacements)}};
          } else if constexpr (std::is_same_v<T, Scope>) {
            return {Scope{with_text_replaced(node.body, replacements)}};
          } else if constexpr (std::is_same_v<T, If>) {
            return {If{replaced(node.condition, replacements),
                       with_text_replaced(node.body, replacements)}};
          } else if constexpr (std::is_same_v<T, For>) {
            return {For{replaced(node.init, replacements), replaced(node.condition, replacements),
                        replaced(node.step, replacements),
                        with_text_replaced(node.body, replacements)}};
          } else {
            return {node};
          }
        },
        stmt.node));
  return out;
}

} // namespace liftx::codegen::cl
