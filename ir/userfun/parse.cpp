// The body parser's entry points, its name tables (builtins, keywords, OpenCL C's reserved
// names) and its lexer; statements and expressions are parsed in parse_statements.cpp and
// parse_expressions.cpp.
#include "ir/userfun/parse_internal.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
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

constexpr BuiltinInfo builtin_table[] = {
    {Builtin::Sqrt, "sqrt", 1},   {Builtin::Rsqrt, "rsqrt", 1}, {Builtin::Fabs, "fabs", 1},
    {Builtin::Exp, "exp", 1},     {Builtin::Log, "log", 1},     {Builtin::Pow, "pow", 2},
    {Builtin::Sin, "sin", 1},     {Builtin::Cos, "cos", 1},     {Builtin::Fmin, "fmin", 2},
    {Builtin::Fmax, "fmax", 2},   {Builtin::Min, "min", 2},     {Builtin::Max, "max", 2},
    {Builtin::Clamp, "clamp", 3}, {Builtin::Floor, "floor", 1}, {Builtin::Ceil, "ceil", 1},
    {Builtin::Abs, "abs", 1},
};

} // namespace

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

namespace {

const BuiltinInfo& builtin_info(Builtin b) {
  for (const auto& info : builtin_table)
    if (info.builtin == b)
      return info;
  LIFTX_UNREACHABLE("bad Builtin");
}

} // namespace

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

namespace {

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

} // namespace

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

// ---------------------------------------------------------------------------------------------
// Parser: construction and the whole body

Parser::Parser(const std::string& fun_name, const std::vector<UserFunParam>& params,
               std::span<const ScalarKind> results, std::string_view text,
               const SourceLoc& body_loc)
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

std::unique_ptr<UserFunBody> Parser::parse() {
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
