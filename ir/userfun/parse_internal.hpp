#pragma once
/// The body parser's shared pieces: the name queries, the tokens and the Parser class, whose
/// members parse.cpp (construction, the lexer), parse_statements.cpp and parse_expressions.cpp
/// define. Internal to ir/userfun: nothing outside the folder includes it.
#include "ir/userfun/ast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::ir::userfun_detail {

struct BuiltinInfo {
  Builtin builtin;
  const char* name;
  int arity;
};

const BuiltinInfo* find_builtin(std::string_view name);
/// The int operation an OpenCL C helper of the generated code stands for (see print.cpp).
std::optional<BinaryOp> int_helper_op(std::string_view name);
std::optional<ScalarKind> type_keyword(std::string_view word);
bool is_keyword(std::string_view word);
bool is_unsupported_c_keyword(std::string_view word);
bool is_opencl_reserved(std::string_view word);
bool is_identifier(std::string_view s);

enum class TokenKind { Identifier, Number, Punct, End };

struct Token {
  TokenKind kind;
  std::string text;
  SourceLoc loc;
  Scalar number{};                // Number: its value and kind
  bool int_min_magnitude = false; ///< the literal 2147483648, which only `-` may precede
};

std::string describe(const Token& t);

class Parser {
public:
  Parser(const std::string& fun_name, const std::vector<UserFunParam>& params,
         std::span<const ScalarKind> results, std::string_view text, const SourceLoc& body_loc);

  std::unique_ptr<UserFunBody> parse();

private:
  struct Symbol {
    std::string name;
    int slot;
    ScalarKind kind;
  };

  [[noreturn]] void fail(const SourceLoc& loc, const std::string& message) const {
    throw UserError(fmt::format("userfun {}: {}", fun_name_, message), loc);
  }

  // ---- tokens
  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  bool is(std::string_view punct_or_word, size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind != TokenKind::Number && t.kind != TokenKind::End && t.text == punct_or_word;
  }
  const Token& take() {
    const Token& t = tokens_[pos_];
    if (t.kind != TokenKind::End)
      ++pos_;
    return t;
  }
  bool accept(std::string_view text) {
    if (!is(text))
      return false;
    take();
    return true;
  }
  const Token& expect(std::string_view text, std::string_view context) {
    if (!is(text))
      fail(peek().loc, fmt::format("expected '{}' {}, found {}", text, context, describe(peek())));
    return take();
  }

  // ---- names
  const Symbol* lookup(std::string_view name) const {
    const auto it = visible_.find(name);
    return it == visible_.end() ? nullptr : &it->second;
  }
  int declare(const std::string& name, ScalarKind kind, const SourceLoc& loc, bool is_param) {
    const char* what = is_param ? "parameter" : "variable";
    if (!is_identifier(name))
      fail(loc, fmt::format("bad {} name '{}'", what, name));
    if (is_keyword(name) || is_unsupported_c_keyword(name))
      fail(loc, fmt::format("{} name '{}' is a keyword", what, name));
    if (find_builtin(name))
      fail(loc, fmt::format("{} name '{}' is the name of a builtin function", what, name));
    if (is_opencl_reserved(name))
      fail(loc, fmt::format("{} name '{}' is reserved in OpenCL C", what, name));
    // Shadowing is legal C, but in numeric kernels it is nearly always a mistake.
    if (lookup(name))
      fail(loc, fmt::format("'{}' is already declared", name));
    const int slot = static_cast<int>(slot_kinds_.size());
    slot_kinds_.push_back(kind);
    assigned_.push_back(is_param);
    scopes_.back().push_back(name);
    visible_.emplace(name, Symbol{name, slot, kind});
    return slot;
  }
  // After a return nothing is reachable, so every variable counts as assigned there.
  void mark_unreachable() { std::fill(assigned_.begin(), assigned_.end(), true); }

  // ---- statements (parse_statements.cpp)
  StmtPtr statement(bool allow_declaration, bool& returns);
  StmtPtr sub_statement(bool& returns);
  StmtPtr assignment(StmtPtr stmt, std::string_view op);

  // ---- expressions (parse_expressions.cpp)
  struct Level {
    std::string_view token;
    BinaryOp op;
  };
  static ScalarKind arithmetic_kind(ScalarKind a, ScalarKind b);
  NodePtr make(Node::Kind kind, ScalarKind type, const SourceLoc& loc);
  NodePtr convert_to(NodePtr e, ScalarKind to);
  NodePtr variable_node(const Symbol& s, const SourceLoc& loc);
  NodePtr binary(BinaryOp op, NodePtr lhs, NodePtr rhs, const SourceLoc& loc);
  NodePtr expression();
  NodePtr conditional();
  template <typename Next>
  NodePtr left_assoc(std::initializer_list<Level> levels, Next next);
  NodePtr logical_or();
  NodePtr logical_and();
  NodePtr equality();
  NodePtr relational();
  NodePtr additive();
  NodePtr multiplicative();
  NodePtr unary();
  NodePtr primary();
  std::vector<NodePtr> call_arguments(std::string_view name);
  void check_arity(const Token& name, size_t count, size_t arity);
  NodePtr defined_int_operation(const Token& name);
  NodePtr call(const Token& name);

  // Bounds recursion (parser, evaluator and printer alike) on pathological nesting.
  class DepthGuard {
  public:
    explicit DepthGuard(Parser& p) : parser_(p) {
      if (++parser_.depth_ > max_depth)
        throw NestingTooDeep(
            fmt::format("userfun {}: nesting deeper than {} levels", parser_.fun_name_, max_depth),
            parser_.peek().loc);
    }
    ~DepthGuard() { --parser_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

  private:
    static constexpr int max_depth = 256;
    Parser& parser_;
  };

  const std::string& fun_name_;
  std::span<const ScalarKind> results_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  // No name shadows another, so a name maps to at most one visible symbol; a map keeps
  // declaring and looking up logarithmic in bodies of many declarations (a scan was quadratic).
  std::vector<std::vector<std::string>> scopes_; ///< the names each open scope declared
  std::map<std::string, Symbol, std::less<>> visible_;
  std::vector<ScalarKind> slot_kinds_;
  std::vector<bool> assigned_; ///< definitely assigned at the current point, per slot
  std::unique_ptr<UserFunBody> body_;
  int depth_ = 0;
  int chained_ = 0; ///< operators chained in the expression being parsed, around this point
  /// The tallest expression tree: its recursive evaluation, printing and destruction stay well
  /// inside a thread's stack (also under the sanitizers, whose frames are larger).
  static constexpr int kMaxExpressionHeight = 2048;
};

} // namespace liftx::ir::userfun_detail
