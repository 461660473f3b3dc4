// Lexer, recursive-descent parser and type checker for user function bodies (a C subset).
#include "ir/userfun/ast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_set>

namespace liftx::ir::userfun_detail {

const char* binary_op_text(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Rem:
    return "%";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Or:
    return "||";
  }
  LIFTX_UNREACHABLE("bad BinaryOp");
}

namespace {

struct BuiltinInfo {
  Builtin builtin;
  const char* name;
  int arity;
};

constexpr BuiltinInfo builtin_table[] = {
    {Builtin::Sqrt, "sqrt", 1},   {Builtin::Rsqrt, "rsqrt", 1}, {Builtin::Fabs, "fabs", 1},
    {Builtin::Exp, "exp", 1},     {Builtin::Log, "log", 1},     {Builtin::Pow, "pow", 2},
    {Builtin::Sin, "sin", 1},     {Builtin::Cos, "cos", 1},     {Builtin::Fmin, "fmin", 2},
    {Builtin::Fmax, "fmax", 2},   {Builtin::Min, "min", 2},     {Builtin::Max, "max", 2},
    {Builtin::Clamp, "clamp", 3}, {Builtin::Floor, "floor", 1}, {Builtin::Ceil, "ceil", 1},
    {Builtin::Abs, "abs", 1},
};

const BuiltinInfo* find_builtin(std::string_view name) {
  for (const auto& info : builtin_table)
    if (name == info.name)
      return &info;
  return nullptr;
}

/// The int operation an OpenCL C helper of the generated code stands for (see print.cpp).
std::optional<BinaryOp> int_helper_op(std::string_view name) {
  static constexpr std::pair<std::string_view, BinaryOp> helpers[] = {{"liftx_add", BinaryOp::Add},
                                                                      {"liftx_sub", BinaryOp::Sub},
                                                                      {"liftx_mul", BinaryOp::Mul},
                                                                      {"liftx_div", BinaryOp::Div},
                                                                      {"liftx_rem", BinaryOp::Rem}};
  for (const auto& [helper, op] : helpers)
    if (name == helper)
      return op;
  return std::nullopt;
}

const BuiltinInfo& builtin_info(Builtin b) {
  for (const auto& info : builtin_table)
    if (info.builtin == b)
      return info;
  LIFTX_UNREACHABLE("bad Builtin");
}

std::optional<ScalarKind> type_keyword(std::string_view word) {
  if (word == "bool")
    return ScalarKind::Bool;
  if (word == "int")
    return ScalarKind::Int;
  if (word == "float")
    return ScalarKind::Float;
  if (word == "double")
    return ScalarKind::Double;
  return std::nullopt;
}

bool is_keyword(std::string_view word) {
  return type_keyword(word) || word == "if" || word == "else" || word == "return" ||
         word == "true" || word == "false";
}

// C keywords outside the subset: a dedicated message beats "unknown identifier".
bool is_unsupported_c_keyword(std::string_view word) {
  static constexpr std::string_view words[] = {
      "for",  "while",  "do",     "switch",   "case",   "default", "break",    "continue",
      "goto", "const",  "static", "unsigned", "signed", "long",    "short",    "char",
      "void", "struct", "union",  "enum",     "sizeof", "typedef", "volatile", "half"};
  return std::find(std::begin(words), std::end(words), word) != std::end(words);
}

// Names OpenCL C reserves (types, qualifiers and its built-in functions, OpenCL C 1.2 chapter 6):
// a user function, definition or variable with one of these names would not compile, or would
// be renamed by the compiler, once generated.
bool is_opencl_reserved(std::string_view word) {
  // clang-format off
  static constexpr std::string_view words[] = {
      // types and qualifiers
      "kernel", "__kernel", "global", "__global", "local", "__local", "private", "__private",
      "constant", "__constant", "restrict", "inline", "half", "size_t", "ptrdiff_t", "intptr_t",
      "uintptr_t", "uchar", "ushort", "uint", "ulong", "image1d_t", "image2d_t", "image3d_t",
      "sampler_t", "event_t", "read_only", "write_only", "read_write", "__read_only",
      "__write_only", "__read_write", "complex", "imaginary",
      // work-items and synchronisation
      "barrier", "mem_fence", "read_mem_fence", "write_mem_fence", "prefetch", "printf",
      "async_work_group_copy", "async_work_group_strided_copy", "wait_group_events",
      // math
      "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atanh", "atanpi",
      "atan2pi", "cbrt", "ceil", "copysign", "cos", "cosh", "cospi", "erfc", "erf", "exp", "exp2",
      "exp10", "expm1", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "fract", "frexp",
      "hypot", "ilogb", "ldexp", "lgamma", "lgamma_r", "log", "log2", "log10", "log1p", "logb",
      "mad", "maxmag", "minmag", "modf", "nan", "nextafter", "pow", "pown", "powr", "remainder",
      "remquo", "rint", "rootn", "round", "rsqrt", "sin", "sincos", "sinh", "sinpi", "sqrt", "tan",
      "tanh", "tanpi", "tgamma", "trunc",
      // integer and common
      "abs", "abs_diff", "add_sat", "hadd", "rhadd", "clamp", "clz", "ctz", "mad_hi", "mad_sat",
      "max", "min", "mul_hi", "rotate", "sub_sat", "upsample", "popcount", "mad24", "mul24",
      "degrees", "mix", "radians", "step", "smoothstep", "sign",
      // geometric
      "cross", "dot", "distance", "length", "normalize",
      // relational
      "isequal", "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal",
      "islessgreater", "isfinite", "isinf", "isnan", "isnormal", "isordered", "isunordered",
      "signbit", "any", "all", "bitselect", "select", "shuffle", "shuffle2",
      // C keywords and OpenCL C 2.0 types outside the subset's own lists
      "auto", "extern", "register", "main", "pipe", "generic", "__generic", "queue_t",
      "ndrange_t", "clk_event_t", "reserve_id_t", "image1d_array_t", "image1d_buffer_t",
      "image2d_array_t", "image2d_depth_t", "image2d_array_depth_t", "kernel_exec",
      // macros every OpenCL C compiler defines: as a name, each is replaced by its value
      "MAXFLOAT", "HUGE_VALF", "HUGE_VAL", "INFINITY", "NAN", "NULL", "CHAR_BIT", "FP_FAST_FMA",
      "FP_FAST_FMAF", "FP_FAST_FMA_HALF", "FP_ILOGB0", "FP_ILOGBNAN", "CHAR_MAX", "CHAR_MIN",
      "INT_MAX", "INT_MIN", "LONG_MAX", "LONG_MIN", "SCHAR_MAX", "SCHAR_MIN", "SHRT_MAX",
      "SHRT_MIN", "UCHAR_MAX", "USHRT_MAX", "UINT_MAX", "ULONG_MAX", "M_E", "M_LOG2E",
      "M_LOG10E", "M_LN2", "M_LN10", "M_PI", "M_PI_2", "M_PI_4", "M_1_PI", "M_2_PI",
      "M_2_SQRTPI", "M_SQRT2", "M_SQRT1_2"};
  // clang-format on
  // A set: the code generator asks for every name it makes.
  static const std::unordered_set<std::string_view> reserved(std::begin(words), std::end(words));
  if (reserved.contains(word))
    return true;
  // The float forms of the M_ constants (M_PI_F, M_E_H) are macros too.
  for (std::string_view suffix : {"_F", "_H"})
    if (word.size() > suffix.size() && word.ends_with(suffix) &&
        is_opencl_reserved(word.substr(0, word.size() - suffix.size())) && word.starts_with("M_"))
      return true;
  // C reserves names starting with two underscores or an underscore and a capital letter; the
  // compilers' and extensions' macros use them, and CL_/CLK_/FLT_/DBL_/HALF_/cl_ name constants
  // and extensions (cl_khr_fp64 is a macro).
  if (word.starts_with("__") ||
      (word.size() > 1 && word[0] == '_' && std::isupper(static_cast<unsigned char>(word[1]))))
    return true;
  for (std::string_view macro_prefix :
       {"CL_", "CLK_", "FLT_", "DBL_", "HALF_", "cl_", "memory_order_", "memory_scope_"})
    if (word.starts_with(macro_prefix))
      return true;
  // Families of built-ins: native_exp, half_sqrt, convert_int_rte, as_float4, vload4,
  // vstore_half2, atomic_add, work_group_*, sub_group_*. Only names of the families, so that a
  // variable such as `half_width` or `as_ratio` stays free.
  auto starts_with = [&](std::string_view prefix) { return word.starts_with(prefix); };
  for (std::string_view prefix : {"native_", "half_"}) {
    if (!starts_with(prefix))
      continue;
    static constexpr std::string_view fast_math[] = {"cos",   "divide", "exp",   "exp2", "exp10",
                                                     "log",   "log2",   "log10", "powr", "recip",
                                                     "rsqrt", "sin",    "sqrt",  "tan"};
    const std::string_view rest = word.substr(prefix.size());
    if (std::find(std::begin(fast_math), std::end(fast_math), rest) != std::end(fast_math))
      return true;
  }
  for (std::string_view prefix : {"convert_", "as_"}) {
    if (!starts_with(prefix))
      continue;
    const std::string_view rest = word.substr(prefix.size());
    for (std::string_view type : {"char", "uchar", "short", "ushort", "int", "uint", "long",
                                  "ulong", "float", "double", "half"})
      if (rest.starts_with(type))
        return true;
  }
  for (std::string_view prefix :
       {"get_global_", "get_local_", "get_group_", "get_num_groups", "get_work_dim", "get_image_",
        "vload", "vstore", "atomic_", "atom_", "fast_distance", "fast_length", "fast_normalize",
        "work_group_", "sub_group_", "read_image", "write_image",
        "liftx_"}) // the generated code's own names: its int helpers, counters, probes
    if (starts_with(prefix))
      return true;
  // Vector types: float2, int16, ...
  for (std::string_view base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                "float", "double", "half", "bool"}) {
    if (word.size() > base.size() && word.substr(0, base.size()) == base) {
      std::string_view digits = word.substr(base.size());
      if (digits == "2" || digits == "3" || digits == "4" || digits == "8" || digits == "16")
        return true;
    }
  }
  return false;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// ---------------------------------------------------------------------------------------------
// Lexer

enum class TokenKind { Identifier, Number, Punct, End };

struct Token {
  TokenKind kind;
  std::string text;
  SourceLoc loc;
  Scalar number{};                // Number: its value and kind
  bool int_min_magnitude = false; ///< the literal 2147483648, which only `-` may precede
};

class Lexer {
public:
  Lexer(const std::string& fun_name, std::string_view text, const SourceLoc& body_loc)
      : fun_name_(fun_name), text_(text), file_(body_loc.file),
        line_(body_loc.valid() ? body_loc.line : 1),
        col_(body_loc.valid() ? std::max(body_loc.col, 1) : 1) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    for (;;) {
      skip_space_and_comments();
      if (at_end()) {
        tokens.push_back({TokenKind::End, "end of body", here()});
        return tokens;
      }
      tokens.push_back(next_token());
    }
  }

private:
  [[noreturn]] void fail(const SourceLoc& loc, const std::string& message) const {
    throw UserError(fmt::format("userfun {}: {}", fun_name_, message), loc);
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  SourceLoc here() const { return {file_, line_, col_}; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skip_space_and_comments() {
    while (!at_end()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        advance();
      } else if (peek() == '/' && peek(1) == '/') {
        while (!at_end() && peek() != '\n')
          advance();
      } else if (peek() == '/' && peek(1) == '*') {
        const SourceLoc start = here();
        advance();
        advance();
        while (!at_end() && !(peek() == '*' && peek(1) == '/'))
          advance();
        if (at_end())
          fail(start, "unterminated comment");
        advance();
        advance();
      } else {
        return;
      }
    }
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  Token next_token() {
    const SourceLoc loc = here();
    const size_t start = pos_;
    const char c = peek();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')
        advance();
      return {TokenKind::Identifier, std::string(text_.substr(start, pos_ - start)), loc};
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1))))
      return number(loc);
    static constexpr std::string_view two_char[] = {"==", "!=", "<=", ">=", "&&",
                                                    "||", "+=", "-=", "*=", "/="};
    for (std::string_view op : two_char) {
      if (text_.substr(pos_, 2) == op) {
        advance();
        advance();
        return {TokenKind::Punct, std::string(op), loc};
      }
    }
    if (std::string_view("+-*/%<>=!?:;,(){}").find(c) != std::string_view::npos) {
      advance();
      return {TokenKind::Punct, std::string(1, c), loc};
    }
    if (std::isprint(static_cast<unsigned char>(c)))
      fail(loc, fmt::format("unexpected character '{}'", c));
    fail(loc, fmt::format("unexpected byte 0x{:02x}", static_cast<unsigned char>(c)));
  }

  Token number(const SourceLoc& loc) {
    const size_t start = pos_;
    bool floating = false;
    while (is_digit(peek()))
      advance();
    if (peek() == '.') {
      floating = true;
      advance();
      while (is_digit(peek()))
        advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      floating = true;
      advance();
      if (peek() == '+' || peek() == '-')
        advance();
      if (!is_digit(peek()))
        fail(loc, "malformed exponent in number literal");
      while (is_digit(peek()))
        advance();
    }
    const std::string digits(text_.substr(start, pos_ - start));
    bool float_suffix = false;
    if (peek() == 'f' || peek() == 'F') {
      float_suffix = true;
      advance();
    }
    if (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '.') {
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '.')
        advance();
      fail(loc, fmt::format("malformed number literal '{}'", text_.substr(start, pos_ - start)));
    }
    const std::string text(text_.substr(start, pos_ - start));
    if (float_suffix && !floating)
      fail(loc, fmt::format("malformed number literal '{}' (write '{}.0f')", text, digits));
    Token token{TokenKind::Number, text, loc};
    if (!floating) {
      // Digits only, so strtoll cannot fail except by overflow; a leading 0 is not octal here
      // because C's octal surprise has no place in numeric kernels.
      errno = 0;
      const long long v = std::strtoll(digits.c_str(), nullptr, 10);
      // 2147483648 is legal only right after a unary minus (INT_MIN); the parser checks.
      if (errno == ERANGE || v > static_cast<long long>(INT32_MAX) + 1)
        fail(loc, fmt::format("integer literal {} does not fit in int", text));
      token.int_min_magnitude = v == static_cast<long long>(INT32_MAX) + 1;
      token.number = token.int_min_magnitude ? INT32_MIN : static_cast<int32_t>(v);
    } else if (float_suffix) {
      // strtof rounds the decimal text directly to float (no double rounding via double).
      const float v = std::strtof(digits.c_str(), nullptr);
      if (std::isinf(v))
        fail(loc, fmt::format("float literal {} is out of range", text));
      token.number = v;
    } else {
      const double v = std::strtod(digits.c_str(), nullptr);
      if (std::isinf(v))
        fail(loc, fmt::format("double literal {} is out of range", text));
      token.number = v;
    }
    return token;
  }

  const std::string& fun_name_;
  std::string_view text_;
  std::string file_;
  int line_;
  int col_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Parser and type checker

std::string describe(const Token& t) {
  switch (t.kind) {
  case TokenKind::End:
    return "end of body";
  case TokenKind::Number:
    return fmt::format("number {}", t.text);
  case TokenKind::Identifier:
  case TokenKind::Punct:
    return fmt::format("'{}'", t.text);
  }
  return t.text;
}

// Negation with C's wrap-around made explicit: int negation overflows for INT_MIN only.
Scalar negate_value(const Scalar& v) {
  switch (kind_of(v)) {
  case ScalarKind::Int:
    return static_cast<int32_t>(0u - static_cast<uint32_t>(std::get<int32_t>(v)));
  case ScalarKind::Float:
    return -std::get<float>(v);
  case ScalarKind::Double:
    return -std::get<double>(v);
  case ScalarKind::Bool:
    break;
  }
  LIFTX_UNREACHABLE("negating a bool literal (not promoted)");
}

class Parser {
public:
  Parser(const std::string& fun_name, const std::vector<UserFunParam>& params,
         std::span<const ScalarKind> results, std::string_view text, const SourceLoc& body_loc)
      : fun_name_(fun_name), results_(results) {
    tokens_ = Lexer(fun_name, text, body_loc).run();
    scopes_.emplace_back();
    // Parameters have no location of their own: report them against the file only, so that a
    // caller can relocate the error with UserError::located.
    const SourceLoc params_loc{body_loc.file};
    for (const auto& p : params)
      declare(p.name, p.kind, params_loc, true);
    body_ = std::make_unique<UserFunBody>();
  }

  std::unique_ptr<UserFunBody> parse() {
    bool returns = false;
    while (peek().kind != TokenKind::End) {
      if (accept(";"))
        continue;
      auto stmt = statement(true, returns);
      body_->statements.push_back(std::move(stmt));
    }
    if (!returns)
      fail(peek().loc, "not every path returns a value");
    body_->slot_count = static_cast<int>(slot_kinds_.size());
    return std::move(body_);
  }

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

  // ---- statements

  // `returns` becomes true once the statement (or an earlier one) returns on every path.
  StmtPtr statement(bool allow_declaration, bool& returns) {
    const DepthGuard guard(*this);
    const Token& first = peek();
    auto stmt = std::make_unique<Stmt>();
    stmt->loc = first.loc;
    if (is("{")) {
      take();
      stmt->kind = Stmt::Kind::Block;
      scopes_.emplace_back();
      bool block_returns = false;
      while (!is("}")) {
        if (peek().kind == TokenKind::End)
          fail(peek().loc, fmt::format("expected '}}' to close the block opened at {}:{}",
                                       first.loc.line, first.loc.col));
        if (accept(";"))
          continue;
        stmt->body.push_back(statement(true, block_returns));
      }
      take();
      for (const std::string& name : scopes_.back())
        visible_.erase(name);
      scopes_.pop_back();
      if (block_returns)
        returns = true;
      return stmt;
    }
    if (is("if")) {
      take();
      stmt->kind = Stmt::Kind::If;
      expect("(", "after 'if'");
      stmt->value = expression();
      expect(")", "after the if condition");
      const std::vector<bool> before = assigned_;
      bool then_returns = false;
      stmt->body.push_back(sub_statement(then_returns));
      if (then_returns)
        mark_unreachable();
      const std::vector<bool> after_then = assigned_;
      bool else_returns = false;
      assigned_ = before;
      if (accept("else")) {
        stmt->body.push_back(sub_statement(else_returns));
        if (else_returns)
          mark_unreachable();
      }
      for (size_t i = 0; i < assigned_.size(); ++i)
        assigned_[i] = assigned_[i] && after_then[i];
      if (then_returns && else_returns)
        returns = true;
      return stmt;
    }
    if (is("return")) {
      take();
      stmt->kind = Stmt::Kind::Return;
      if (is(";"))
        fail(peek().loc, "'return' needs a value");
      if (results_.size() == 1) {
        if (is("{"))
          fail(peek().loc, fmt::format("the result is one {}: return a value, not a braced list",
                                       scalar_name(results_[0])));
        stmt->returned.push_back(convert_to(expression(), results_[0]));
      } else {
        // A tuple result: `return {a, b};`, one value per component, each converted to its kind.
        const Token open = peek();
        if (!accept("{"))
          fail(open.loc, fmt::format("the result is a tuple of {}: write return {{a, b, ...}};",
                                     results_.size()));
        while (true) {
          if (stmt->returned.size() == results_.size())
            fail(peek().loc, fmt::format("the result has {} components, this return has more",
                                         results_.size()));
          stmt->returned.push_back(convert_to(expression(), results_[stmt->returned.size()]));
          if (!accept(","))
            break;
        }
        expect("}", "after the returned values");
        if (stmt->returned.size() != results_.size())
          fail(open.loc, fmt::format("the result has {} components, this return has {}",
                                     results_.size(), stmt->returned.size()));
      }
      expect(";", "after the returned value");
      returns = true;
      mark_unreachable();
      return stmt;
    }
    if (first.kind == TokenKind::Identifier) {
      if (auto kind = type_keyword(first.text)) {
        if (!allow_declaration)
          fail(first.loc, "a declaration cannot be the body of 'if' or 'else' (add braces)");
        take();
        const Token& name = peek();
        if (name.kind != TokenKind::Identifier)
          fail(name.loc, fmt::format("expected a variable name after '{}', found {}", first.text,
                                     describe(name)));
        take();
        stmt->kind = Stmt::Kind::Declare;
        stmt->type = *kind;
        stmt->name = name.text;
        if (accept("="))
          stmt->value = convert_to(expression(), *kind);
        // Declared after the initialiser: `float x = x;` must not see itself.
        stmt->slot = declare(name.text, *kind, name.loc, false);
        if (stmt->value)
          assigned_[stmt->slot] = true;
        expect(";", fmt::format("after the declaration of '{}'", name.text));
        return stmt;
      }
      if (is_unsupported_c_keyword(first.text))
        fail(first.loc,
             fmt::format("'{}' is not part of the C subset of user functions", first.text));
      static constexpr std::string_view assign_ops[] = {"=", "+=", "-=", "*=", "/="};
      for (std::string_view op : assign_ops) {
        if (!is(op, 1))
          continue;
        return assignment(std::move(stmt), op);
      }
    }
    fail(first.loc, fmt::format("expected a statement, found {}", describe(first)));
  }

  StmtPtr sub_statement(bool& returns) {
    if (is(";")) { // `if (c) ;`: an empty block
      auto empty = std::make_unique<Stmt>();
      empty->kind = Stmt::Kind::Block;
      empty->loc = take().loc;
      return empty;
    }
    return statement(false, returns);
  }

  StmtPtr assignment(StmtPtr stmt, std::string_view op) {
    const Token& name = take();
    const Token& op_token = take();
    const Symbol* target = lookup(name.text);
    if (!target)
      fail(name.loc, fmt::format("assignment to undeclared variable '{}'", name.text));
    const Symbol symbol = *target; // scopes_ may not change, but keep a copy for clarity
    auto value = expression();
    stmt->kind = Stmt::Kind::Assign;
    stmt->slot = symbol.slot;
    stmt->name = symbol.name;
    if (op != "=") {
      if (!assigned_[symbol.slot])
        fail(name.loc, fmt::format("'{}' is used before it is assigned", symbol.name));
      static constexpr BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                                         BinaryOp::Div};
      const BinaryOp bop = ops[std::string_view("+-*/").find(op[0])];
      value = binary(bop, variable_node(symbol, name.loc), std::move(value), op_token.loc);
    }
    stmt->value = convert_to(std::move(value), symbol.kind);
    assigned_[symbol.slot] = true;
    expect(";", "after the assignment");
    return stmt;
  }

  // ---- expressions

  static ScalarKind arithmetic_kind(ScalarKind a, ScalarKind b) {
    // C usual arithmetic conversions for our kinds: bool promotes to int, then the wider wins.
    return std::max({ScalarKind::Int, a, b});
  }

  NodePtr make(Node::Kind kind, ScalarKind type, const SourceLoc& loc) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->type = type;
    n->loc = loc;
    return n;
  }

  NodePtr convert_to(NodePtr e, ScalarKind to) {
    if (e->type == to)
      return e;
    if (e->kind == Node::Kind::Literal) { // fold: `x * 2` becomes `x * 2.0f`
      e->value = convert(e->value, to);
      e->type = to;
      return e;
    }
    auto n = make(Node::Kind::Convert, to, e->loc);
    n->implicit = true;
    n->operands.push_back(std::move(e));
    return n;
  }

  NodePtr variable_node(const Symbol& s, const SourceLoc& loc) {
    auto n = make(Node::Kind::Variable, s.kind, loc);
    n->slot = s.slot;
    n->name = s.name;
    return n;
  }

  NodePtr binary(BinaryOp op, NodePtr lhs, NodePtr rhs, const SourceLoc& loc) {
    if (op == BinaryOp::And || op == BinaryOp::Or) {
      auto n = make(Node::Kind::Binary, ScalarKind::Bool, loc); // operands tested against 0
      n->binary = op;
      n->operands.push_back(std::move(lhs));
      n->operands.push_back(std::move(rhs));
      return n;
    }
    const ScalarKind common = arithmetic_kind(lhs->type, rhs->type);
    if (op == BinaryOp::Rem && common != ScalarKind::Int)
      fail(loc, fmt::format("'%' needs integer operands, not {} and {}", scalar_name(lhs->type),
                            scalar_name(rhs->type)));
    const bool comparison = op >= BinaryOp::Lt && op <= BinaryOp::Ne;
    auto n = make(Node::Kind::Binary, comparison ? ScalarKind::Bool : common, loc);
    n->binary = op;
    n->operands.push_back(convert_to(std::move(lhs), common));
    n->operands.push_back(convert_to(std::move(rhs), common));
    return n;
  }

  NodePtr expression() { return conditional(); }

  NodePtr conditional() {
    auto cond = logical_or();
    if (!is("?"))
      return cond;
    const DepthGuard guard(*this); // `a ? b : c ? d : ...` recurses here once per `?`
    const SourceLoc loc = take().loc;
    auto then_value = expression();
    expect(":", "in the conditional expression");
    auto else_value = conditional();
    ScalarKind type = then_value->type == ScalarKind::Bool && else_value->type == ScalarKind::Bool
                          ? ScalarKind::Bool
                          : arithmetic_kind(then_value->type, else_value->type);
    auto n = make(Node::Kind::Conditional, type, loc);
    n->operands.push_back(std::move(cond));
    n->operands.push_back(convert_to(std::move(then_value), type));
    n->operands.push_back(convert_to(std::move(else_value), type));
    return n;
  }

  struct Level {
    std::string_view token;
    BinaryOp op;
  };

  // One precedence level of left-associative binary operators.
  // Each operator of a chain nests the tree one level deeper (`a + b + c` is `(a + b) + c`), and
  // the evaluator, the printer and the destructor recurse on that depth. A float sum prints flat
  // (a 7x7x7 box's 343 weighted points compile), so chains have a bound of their own, far above
  // any stencil's, on the tree's height: operators chained plus the nesting around them.
  template <typename Next>
  NodePtr left_assoc(std::initializer_list<Level> levels, Next next) {
    auto lhs = (this->*next)();
    const int chained_before = chained_;
    struct Restore {
      Parser& parser;
      int chained;
      ~Restore() { parser.chained_ = chained; }
    } restore{*this, chained_before};
    for (;;) {
      const Level* found = nullptr;
      for (const auto& l : levels)
        if (is(l.token))
          found = &l;
      if (!found)
        return lhs;
      const SourceLoc loc = take().loc;
      if (++chained_ + depth_ > kMaxExpressionHeight)
        throw NestingTooDeep(fmt::format("userfun {}: an expression more than {} levels deep "
                                         "(each operator of a chain nests one); split it with "
                                         "local variables",
                                         fun_name_, kMaxExpressionHeight),
                             loc);
      auto rhs = (this->*next)();
      lhs = binary(found->op, std::move(lhs), std::move(rhs), loc);
    }
  }

  NodePtr logical_or() { return left_assoc({{"||", BinaryOp::Or}}, &Parser::logical_and); }
  NodePtr logical_and() { return left_assoc({{"&&", BinaryOp::And}}, &Parser::equality); }
  NodePtr equality() {
    return left_assoc({{"==", BinaryOp::Eq}, {"!=", BinaryOp::Ne}}, &Parser::relational);
  }
  NodePtr relational() {
    return left_assoc(
        {{"<", BinaryOp::Lt}, {"<=", BinaryOp::Le}, {">", BinaryOp::Gt}, {">=", BinaryOp::Ge}},
        &Parser::additive);
  }
  NodePtr additive() {
    return left_assoc({{"+", BinaryOp::Add}, {"-", BinaryOp::Sub}}, &Parser::multiplicative);
  }
  NodePtr multiplicative() {
    return left_assoc({{"*", BinaryOp::Mul}, {"/", BinaryOp::Div}, {"%", BinaryOp::Rem}},
                      &Parser::unary);
  }

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

  NodePtr unary() {
    const DepthGuard guard(*this);
    const SourceLoc loc = peek().loc;
    if (accept("-")) {
      if (peek().kind == TokenKind::Number && peek().int_min_magnitude) {
        auto n = make(Node::Kind::Literal, ScalarKind::Int, loc);
        n->value = take().number;
        return n;
      }
      auto operand = unary();
      const ScalarKind type = arithmetic_kind(operand->type, ScalarKind::Int);
      operand = convert_to(std::move(operand), type);
      if (operand->kind == Node::Kind::Literal) { // `-1` is a literal for printing and folding
        operand->value = negate_value(operand->value);
        operand->loc = loc;
        return operand;
      }
      auto n = make(Node::Kind::Negate, type, loc);
      n->operands.push_back(std::move(operand));
      return n;
    }
    if (accept("+")) {
      auto operand = unary();
      const ScalarKind type = arithmetic_kind(operand->type, ScalarKind::Int);
      return convert_to(std::move(operand), type);
    }
    if (accept("!")) {
      auto n = make(Node::Kind::Not, ScalarKind::Bool, loc);
      n->operands.push_back(unary());
      return n;
    }
    if (is("(") && peek(1).kind == TokenKind::Identifier && type_keyword(peek(1).text)) {
      take();
      const ScalarKind to = *type_keyword(take().text);
      expect(")", "after the type of the cast");
      auto operand = unary();
      if (operand->type == to)
        return operand; // a no-op; also keeps `(int)abs(i)` idempotent
      auto n = make(Node::Kind::Convert, to, loc);
      n->operands.push_back(std::move(operand));
      return n;
    }
    return primary();
  }

  NodePtr primary() {
    const Token& t = peek();
    if (t.kind == TokenKind::Number) {
      if (t.int_min_magnitude)
        fail(t.loc, fmt::format("integer literal {} does not fit in int", t.text));
      take();
      auto n = make(Node::Kind::Literal, kind_of(t.number), t.loc);
      n->value = t.number;
      return n;
    }
    if (accept("(")) {
      auto e = expression();
      expect(")", "to close the parenthesis");
      return e;
    }
    if (t.kind == TokenKind::Identifier) {
      take();
      if (t.text == "true" || t.text == "false") {
        auto n = make(Node::Kind::Literal, ScalarKind::Bool, t.loc);
        n->value = t.text == "true";
        return n;
      }
      // The OpenCL C float constants, so that literal_text of inf/nan reads back.
      if (t.text == "INFINITY" || t.text == "NAN") {
        auto n = make(Node::Kind::Literal, ScalarKind::Float, t.loc);
        n->value = t.text == "NAN" ? std::numeric_limits<float>::quiet_NaN()
                                   : std::numeric_limits<float>::infinity();
        return n;
      }
      if (is("("))
        return call(t);
      if (const Symbol* s = lookup(t.text)) {
        if (!assigned_[s->slot])
          fail(t.loc, fmt::format("'{}' is used before it is assigned", t.text));
        return variable_node(*s, t.loc);
      }
      if (is_keyword(t.text) || is_unsupported_c_keyword(t.text))
        fail(t.loc, fmt::format("expected an expression, found keyword '{}'", t.text));
      fail(t.loc, fmt::format("unknown identifier '{}'", t.text));
    }
    fail(t.loc, fmt::format("expected an expression, found {}", describe(t)));
  }

  /// The arguments of a call, after its opening parenthesis, through the closing one.
  std::vector<NodePtr> call_arguments(std::string_view name) {
    take(); // (
    std::vector<NodePtr> args;
    if (!is(")")) {
      do {
        args.push_back(expression());
      } while (accept(","));
    }
    expect(")", fmt::format("after the arguments of '{}'", name));
    return args;
  }

  void check_arity(const Token& name, size_t count, size_t arity) {
    if (count != arity)
      fail(name.loc, fmt::format("'{}' takes {} argument{}, not {}", name.text, arity,
                                 arity == 1 ? "" : "s", count));
  }

  /// The forms the OpenCL C printing gives int arithmetic and float-to-int conversions
  /// (print.cpp), read back as the operations they print: liftx_add(a, b) is a + b on int.
  NodePtr defined_int_operation(const Token& name) {
    if (name.text == "convert_int_sat") {
      std::vector<NodePtr> args = call_arguments(name.text);
      check_arity(name, args.size(), 1);
      if (args[0]->type != ScalarKind::Float && args[0]->type != ScalarKind::Double)
        return convert_to(std::move(args[0]), ScalarKind::Int);
      auto n = make(Node::Kind::Convert, ScalarKind::Int, name.loc);
      n->operands.push_back(std::move(args[0]));
      return n;
    }
    std::optional<BinaryOp> op = int_helper_op(name.text);
    std::vector<NodePtr> args = call_arguments(name.text);
    if (!op) { // liftx_neg
      check_arity(name, args.size(), 1);
      auto n = make(Node::Kind::Negate, ScalarKind::Int, name.loc);
      n->operands.push_back(convert_to(std::move(args[0]), ScalarKind::Int));
      return n;
    }
    check_arity(name, args.size(), 2);
    auto n = make(Node::Kind::Binary, ScalarKind::Int, name.loc);
    n->binary = *op;
    for (auto& a : args)
      n->operands.push_back(convert_to(std::move(a), ScalarKind::Int));
    return n;
  }

  NodePtr call(const Token& name) {
    if (name.text == "convert_int_sat" || name.text == "liftx_neg" || int_helper_op(name.text))
      return defined_int_operation(name);
    const BuiltinInfo* info = find_builtin(name.text);
    if (!info) {
      if (lookup(name.text))
        fail(name.loc, fmt::format("'{}' is not a function", name.text));
      fail(name.loc, fmt::format("unknown function '{}' (builtins: sqrt, rsqrt, fabs, exp, log, "
                                 "pow, sin, cos, fmin, fmax, min, max, clamp, floor, ceil, abs)",
                                 name.text));
    }
    std::vector<NodePtr> args = call_arguments(info->name);
    check_arity(name, args.size(), static_cast<size_t>(info->arity));
    ScalarKind kind = ScalarKind::Int;
    for (const auto& a : args)
      kind = arithmetic_kind(kind, a->type);
    // Min/max/clamp/abs also exist for int; the others are floating only (int arguments are
    // converted to float, which OpenCL C would otherwise reject as ambiguous).
    const bool integer_ok = info->builtin == Builtin::Min || info->builtin == Builtin::Max ||
                            info->builtin == Builtin::Clamp || info->builtin == Builtin::Abs;
    if (!integer_ok)
      kind = std::max(kind, ScalarKind::Float);
    auto n = make(Node::Kind::Call, kind, name.loc);
    n->builtin = info->builtin;
    for (auto& a : args)
      n->operands.push_back(convert_to(std::move(a), kind));
    return n;
  }

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

} // namespace

const char* builtin_name(Builtin b) {
  return builtin_info(b).name;
}

std::unique_ptr<UserFunBody> parse_body(const std::string& fun_name,
                                        const std::vector<UserFunParam>& params,
                                        std::span<const ScalarKind> results, std::string_view text,
                                        const SourceLoc& body_loc) {
  if (is_keyword(fun_name) || is_unsupported_c_keyword(fun_name) || is_opencl_reserved(fun_name) ||
      find_builtin(fun_name))
    // No line: the .lift parser locates the error at the declaration.
    throw UserError(fmt::format("userfun name '{}' is reserved in C or OpenCL C", fun_name),
                    SourceLoc{body_loc.file, 0, 0});
  LIFTX_INTERNAL_CHECK(!results.empty(), "userfun {} without a result type", fun_name);
  return Parser(fun_name, params, results, text, body_loc).parse();
}

} // namespace liftx::ir::userfun_detail

namespace liftx::ir {
bool is_reserved_in_opencl(std::string_view name) {
  return userfun_detail::is_opencl_reserved(name) || userfun_detail::is_keyword(name) ||
         userfun_detail::is_unsupported_c_keyword(name) || userfun_detail::find_builtin(name);
}
} // namespace liftx::ir
