/// Recursive-descent parser for the syntax `to_string` prints.
///
///   sum     := product (('+' | '-') product)*
///   product := unary (('*' | '/' | '%' | '/^') unary)*
///   unary   := '-' unary | primary
///   primary := INT | NAME | ('min' | 'max') '(' sum ',' sum ')'
///            | '(' sum [CMP sum '?' sum ':' sum] ')'
#include "ir/arith/simplify_internal.hpp"

#include <cctype>
#include <limits>

namespace liftx::arith {

namespace {

class Parser {
public:
  Parser(std::string_view text, const std::map<std::string, Range, std::less<>>& ranges)
      : text_(text), ranges_(ranges) {}

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
      if (accept("+"))
        e = e + product();
      else if (accept("-"))
        e = e - product();
      else
        return e;
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
          e = exact_div(e, unary());
        else if (accept("/"))
          e = e / unary();
        else if (accept("%"))
          e = e % unary();
        else
          return e;
      } catch (const UserError& err) {
        if (err.loc().valid())
          throw;
        fail_at(err.message(), at); // e.g. a division by the constant 0
      }
    }
  }

  Expr unary() {
    if (accept("-"))
      return -unary();
    return primary();
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
  size_t pos_ = 0;
};

} // namespace

Expr parse(std::string_view text, const std::map<std::string, Range, std::less<>>& ranges) {
  Parser parser(text, ranges);
  return parser.parse_all();
}

} // namespace liftx::arith
