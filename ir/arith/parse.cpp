/// Recursive-descent parser for the syntax `to_string` prints.
///
///   sum     := product (('+' | '-') product)*
///   product := unary (('*' | '/' | '%' | '/^') unary)*
///   unary   := '-' unary | primary
///   primary := INT | NAME | ('min' | 'max') '(' sum ',' sum ')'
///            | '(' sum [CMP sum '?' sum ':' sum] ')'
#include "ir/arith/simplify_internal.hpp"
#include "support/error.hpp"

#include <cctype>
#include <limits>

namespace liftx::arith {

namespace {

/// Nested parentheses, min/max and unary '-' beyond this are refused: the parser and every later
/// pass recurse over the tree, and no index expression is this deep (the `.lift` parser's limit).
constexpr int kMaxNesting = 200;

class Parser {
public:
  Parser(std::string_view text, const std::map<std::string, Range, std::less<>>& ranges,
         bool user_written)
      : text_(text), ranges_(ranges), user_written_(user_written) {}

  Expr parse_all() {
    Expr e = sum();
    skip_space();
    if (pos_ < text_.size())
      fail(fmt::format("unexpected '{}' after expression", text_[pos_]));
    return e;
  }

private:
  [[noreturn]] void fail(const std::string& message) const { fail_at(message, pos_); }
  [[noreturn]] void fail_at(const std::string& message, size_t pos) const {
    throw UserError(message, SourceLoc{"", 1, static_cast<int>(pos) + 1});
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool peek(std::string_view token) {
    skip_space();
    return text_.substr(pos_, token.size()) == token;
  }
  bool accept(std::string_view token) {
    if (!peek(token))
      return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!accept(token)) {
      if (pos_ >= text_.size())
        fail(fmt::format("expected '{}' but the input ended", token));
      fail(fmt::format("expected '{}' but found '{}'", token, text_[pos_]));
    }
  }

  Expr sum() {
    Expr e = product();
    for (;;) {
      size_t at = (skip_space(), pos_);
      try {
        if (accept("+"))
          e = e + product();
        else if (accept("-"))
          e = e - product();
        else
          return e;
      } catch (const UserError& err) {
        if (err.loc().valid())
          throw;
        fail_at(err.message(), at); // e.g. an overflow of constant folding
      }
    }
  }

  Expr product() {
    Expr e = unary();
    for (;;) {
      size_t at = (skip_space(), pos_);
      try {
        if (accept("*"))
          e = e * unary();
        else if (accept("/^"))
          e = exact_quotient_of(e, unary());
        else if (accept("/"))
          e = e / nonzero_divisor(unary());
        else if (accept("%"))
          e = e % nonzero_divisor(unary());
        else
          return e;
      } catch (const UserError& err) {
        if (err.loc().valid())
          throw;
        fail_at(err.message(), at); // e.g. a division by the constant 0
      }
    }
  }

  /// The simplifier keeps `x / 0` as a node (it may sit in a branch never taken, and printed
  /// expressions must parse back); written by the user, it is a mistake.
  const Expr& nonzero_divisor(const Expr& divisor) const {
    LIFTX_USER_CHECK(!(user_written_ && divisor.is_constant() && divisor.as_constant() == 0),
                     "division by zero");
    return divisor;
  }

  /// `a /^ b` promises that b divides a: between constants a user's promise is checked here
  /// (printed expressions carry rational constants such as `1 /^ 2` as terms of sums).
  Expr exact_quotient_of(const Expr& a, const Expr& b) const {
    Expr q = exact_div(a, b);
    LIFTX_USER_CHECK(!(user_written_ && a.is_constant() && b.is_constant() && !q.as_constant()),
                     "exact division {} /^ {} is not exact", a.to_string(), b.to_string());
    return q;
  }

  Expr unary() {
    if (++nesting_ > kMaxNesting)
      fail(fmt::format("expression too deeply nested (more than {} levels)", kMaxNesting));
    Expr e = accept("-") ? -unary() : primary();
    --nesting_;
    return e;
  }

  Expr primary() {
    skip_space();
    if (pos_ >= text_.size())
      fail("expected an expression but the input ended");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)))
      return integer();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      std::string name = identifier();
      if ((name == "min" || name == "max") && peek("(")) {
        expect("(");
        Expr a = sum();
        expect(",");
        Expr b = sum();
        expect(")");
        return name == "min" ? min(a, b) : max(a, b);
      }
      auto it = ranges_.find(name);
      try {
        return var(name, it == ranges_.end() ? Range{} : it->second);
      } catch (const UserError& err) {
        fail_at(err.message(), start);
      }
    }
    if (accept("(")) {
      Expr lhs = sum();
      if (auto op = comparison()) {
        Expr rhs = sum();
        expect("?");
        Expr then = sum();
        expect(":");
        Expr otherwise = sum();
        expect(")");
        return select(*op, lhs, rhs, then, otherwise);
      }
      expect(")");
      return lhs;
    }
    fail(fmt::format("unexpected '{}'", c));
  }

  std::optional<CmpOp> comparison() {
    if (accept("<="))
      return CmpOp::Le;
    if (accept(">="))
      return CmpOp::Ge;
    if (accept("=="))
      return CmpOp::Eq;
    if (accept("!="))
      return CmpOp::Ne;
    if (accept("<"))
      return CmpOp::Lt;
    if (accept(">"))
      return CmpOp::Gt;
    return std::nullopt;
  }

  Expr integer() {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        fail_at("integer literal does not fit in 64 bits", start);
      value = value * 10 + digit;
      ++pos_;
    }
    return Expr(value);
  }

  std::string identifier() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string_view text_;
  const std::map<std::string, Range, std::less<>>& ranges_;
  bool user_written_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

} // namespace

Expr parse(std::string_view text, const std::map<std::string, Range, std::less<>>& ranges) {
  return Parser(text, ranges, false).parse_all();
}

Expr parse_user_expression(std::string_view text,
                           const std::map<std::string, Range, std::less<>>& ranges) {
  return Parser(text, ranges, true).parse_all();
}

} // namespace liftx::arith
