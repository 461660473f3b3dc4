#include "ir/parse/lexer.hpp"

#include <cctype>
#include <cstdint>

namespace liftx::parse {
namespace {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

class Lexer {
public:
  Lexer(std::string_view source, const std::string& file) : src_(source), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    for (;;) {
      skip_blanks_and_comments();
      if (at_end()) {
        tokens.push_back(Token{TokenKind::End, "", here(), {}});
        return tokens;
      }
      tokens.push_back(next_token());
    }
  }

private:
  bool at_end() const { return pos_ >= src_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0';
  }
  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }
  void advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void advance(size_t n) {
    for (size_t i = 0; i < n; ++i)
      advance();
  }

  /// Skips a `//` or `/*` comment starting at the current position, if any.
  bool skip_comment() {
    if (peek() == '/' && peek(1) == '/') {
      while (!at_end() && peek() != '\n')
        advance();
      return true;
    }
    if (peek() == '/' && peek(1) == '*') {
      SourceLoc start = here();
      advance(2);
      while (!(peek() == '*' && peek(1) == '/')) {
        if (at_end())
          throw UserError("unterminated comment: missing '*/'", start);
        advance();
      }
      advance(2);
      return true;
    }
    return false;
  }

  void skip_blanks_and_comments() {
    while (!at_end()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        advance();
      } else if (!skip_comment()) {
        return;
      }
    }
  }

  Token make(TokenKind kind, size_t length) {
    Token t{kind, std::string(src_.substr(pos_, length)), here(), {}};
    advance(length);
    return t;
  }

  Token next_token() {
    char c = peek();
    if (is_ident_start(c)) {
      size_t n = 1;
      while (is_ident_char(peek(n)))
        ++n;
      return make(TokenKind::Ident, n);
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1))))
      return number();
    switch (c) {
    case '(':
      return make(TokenKind::LParen, 1);
    case ')':
      return make(TokenKind::RParen, 1);
    case '[':
      return make(TokenKind::LBracket, 1);
    case ']':
      return make(TokenKind::RBracket, 1);
    case ',':
      return make(TokenKind::Comma, 1);
    case ':':
      return make(TokenKind::Colon, 1);
    case '+':
      return make(TokenKind::Plus, 1);
    case '-':
      return make(TokenKind::Minus, 1);
    case '*':
      return make(TokenKind::Star, 1);
    case '%':
      return make(TokenKind::Percent, 1);
    case '?':
      return make(TokenKind::Question, 1);
    case '/':
      return peek(1) == '^' ? make(TokenKind::ExactDiv, 2) : make(TokenKind::Slash, 1);
    case '<':
      return peek(1) == '=' ? make(TokenKind::LessEq, 2) : make(TokenKind::Less, 1);
    case '>':
      return peek(1) == '=' ? make(TokenKind::GreaterEq, 2) : make(TokenKind::Greater, 1);
    case '=':
      if (peek(1) == '>')
        return make(TokenKind::Arrow, 2);
      if (peek(1) == '=')
        return make(TokenKind::EqEq, 2);
      return make(TokenKind::Equals, 1);
    case '!':
      if (peek(1) == '=')
        return make(TokenKind::NotEq, 2);
      break;
    case '{':
      return userfun_body();
    default:
      break;
    }
    if (std::isprint(static_cast<unsigned char>(c)))
      throw UserError(fmt::format("unexpected character '{}'", c), here());
    throw UserError(fmt::format("unexpected byte 0x{:02x}", static_cast<unsigned char>(c)), here());
  }

  /// INT, or FLOAT/DOUBLE: digits with '.' and/or an exponent; the suffix 'f' makes it a float.
  Token number() {
    SourceLoc start = here();
    size_t n = 0;
    bool is_real = false;
    while (is_digit(peek(n)))
      ++n;
    if (peek(n) == '.') {
      is_real = true;
      ++n;
      while (is_digit(peek(n)))
        ++n;
    }
    if (peek(n) == 'e' || peek(n) == 'E') {
      size_t exp = n + 1;
      if (peek(exp) == '+' || peek(exp) == '-')
        ++exp;
      if (!is_digit(peek(exp)))
        throw UserError(
            fmt::format("malformed number '{}': exponent without digits", src_.substr(pos_, exp)),
            start);
      while (is_digit(peek(exp)))
        ++exp;
      n = exp;
      is_real = true;
    }
    TokenKind kind = is_real ? TokenKind::Double : TokenKind::Int;
    if (peek(n) == 'f' || peek(n) == 'F') {
      if (!is_real)
        throw UserError(fmt::format("malformed number '{}': a float literal needs a '.' or an "
                                    "exponent, e.g. '{}.0f'",
                                    src_.substr(pos_, n + 1), src_.substr(pos_, n)),
                        start);
      kind = TokenKind::Float;
      ++n;
    }
    if (is_ident_char(peek(n)) || peek(n) == '.') {
      size_t end = n;
      while (is_ident_char(peek(end)) || peek(end) == '.')
        ++end;
      throw UserError(fmt::format("malformed number '{}'", src_.substr(pos_, end)), start);
    }
    return make(kind, n);
  }

  /// Skips a string or character literal of the C body starting at the current quote.
  void skip_quoted(const SourceLoc& body_open) {
    char quote = peek();
    SourceLoc start = here();
    advance();
    while (peek() != quote) {
      if (at_end() || peek() == '\n')
        throw UserError(quote == '"' ? "unterminated string literal"
                                     : "unterminated character literal",
                        at_end() ? body_open : start);
      if (peek() == '\\' && pos_ + 1 < src_.size())
        advance();
      advance();
    }
    advance();
  }

  Token userfun_body() {
    SourceLoc open = here();
    advance(); // '{'
    size_t begin = pos_;
    int depth = 1;
    for (;;) {
      if (at_end())
        throw UserError("unterminated userfun body: missing '}'", open);
      char c = peek();
      if (c == '/' && (peek(1) == '/' || peek(1) == '*')) {
        skip_comment();
      } else if (c == '"' || c == '\'') {
        skip_quoted(open);
      } else if (c == '{') {
        ++depth;
        advance();
      } else if (c == '}') {
        if (--depth == 0)
          break;
        advance();
      } else {
        advance();
      }
    }
    size_t end = pos_;
    advance(); // '}'
    // Trim blanks so that printing `{ body }` and parsing again gives the same body text.
    size_t first = begin;
    while (first < end && std::isspace(static_cast<unsigned char>(src_[first])))
      ++first;
    size_t last = end;
    while (last > first && std::isspace(static_cast<unsigned char>(src_[last - 1])))
      --last;
    SourceLoc body_loc = open;
    for (size_t i = begin - 1; i < first; ++i) { // from the '{' to the body's first character
      if (src_[i] == '\n') {
        ++body_loc.line;
        body_loc.col = 1;
      } else {
        ++body_loc.col;
      }
    }
    return Token{TokenKind::UserfunBody, std::string(src_.substr(first, last - first)), body_loc,
                 open};
  }

  std::string_view src_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

} // namespace

std::vector<Token> tokenize(std::string_view source, const std::string& file) {
  return Lexer(source, file).run();
}

std::string describe(const Token& token) {
  switch (token.kind) {
  case TokenKind::End:
    return "end of input";
  case TokenKind::UserfunBody:
    return "'{'";
  default:
    return fmt::format("'{}'", token.text);
  }
}

} // namespace liftx::parse
