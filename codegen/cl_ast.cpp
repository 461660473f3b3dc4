#include "codegen/cl_ast.hpp"

#include <fmt/format.h>

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

void for_each_text(Block& block, const std::function<void(std::string&)>& f) {
  for (Stmt& stmt : block.stmts) {
    if (auto* s = std::get_if<Line>(&stmt.node)) {
      f(s->text);
    } else if (auto* s = std::get_if<Scope>(&stmt.node)) {
      for_each_text(s->body, f);
    } else if (auto* s = std::get_if<If>(&stmt.node)) {
      f(s->condition);
      for_each_text(s->body, f);
    } else if (auto* s = std::get_if<For>(&stmt.node)) {
      f(s->init);
      f(s->condition);
      f(s->step);
      for_each_text(s->body, f);
    }
  }
}

} // namespace liftx::codegen::cl
