#pragma once
/// A small OpenCL C statement AST. The generator builds it, analyses can inspect it (loop kinds,
/// barriers), passes rewrite it (scalarise.hpp), and `print` turns it into text. Expressions stay
/// text: they come from arith::to_c and user-function calls and need no structure here.
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace liftx::codegen::cl {

struct Stmt;

struct Block {
  std::vector<Stmt> stmts;
};

/// How a map or reduction became code, decided from its iteration range (Lift's rule); the same
/// classification later feeds the features.
enum class LoopKind : uint8_t {
  None,     ///< no iteration can happen: nothing emitted
  Block,    ///< exactly one iteration per thread: a plain block
  If,       ///< zero or one iteration: an `if`
  For,      ///< a `for` loop
  Unrolled, ///< a constant trip count, unrolled (private memory needs constant indices)
};
const char* loop_kind_name(LoopKind k);

/// One line: a declaration, an assignment, ...; `text` carries its own semicolon.
struct Line {
  std::string text;
};
struct Comment {
  std::string text;
};
/// A private array of constant size, `float priv_3[4];` (a node of its own so that passes find
/// the kernel's private arrays without parsing lines).
struct ArrayDecl {
  std::string type; ///< the element type, "float"
  std::string name;
  int64_t count = 0;
};
struct Scope {
  Block body;
};
struct If {
  std::string condition;
  Block body;
};
struct For {
  std::string init;      ///< "int i = get_global_id(0)"
  std::string condition; ///< "i < N"
  std::string step;      ///< "i += get_global_size(0)"
  Block body;
};
struct Barrier {
  bool local_fence = true;
  bool global_fence = false;
};

struct Stmt {
  std::variant<Line, Comment, ArrayDecl, Scope, If, For, Barrier> node;
};

/// Prints a block's statements, each line indented by `indent` levels of two spaces.
std::string print(const Block& block, int indent);

/// Counts over a statement tree (used by golden tests and, later, by features).
struct Census {
  int fors = 0;
  int ifs = 0;
  int barriers = 0;
};
Census census(const Block& block);

/// Calls `f` on every text of code in `block`, nested blocks included: lines, if conditions and
/// for headers. Declarations and comments are not code.
void for_each_text(Block& block, const std::function<void(std::string&)>& f);

/// Whether `c` can be part of an OpenCL C identifier (or a number).
inline bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

} // namespace liftx::codegen::cl
