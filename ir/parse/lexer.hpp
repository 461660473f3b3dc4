#pragma once
/// Tokens of the .lift language (docs/language.md). Internal to liftx_parse.
#include "support/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace liftx::parse {

enum class TokenKind : uint8_t {
  Ident,       ///< names and keywords (`def`, `userfun`, `true`, scalar names)
  Int,         ///< `42`
  Float,       ///< `1.5f` (text with the suffix)
  Double,      ///< `1.5`
  UserfunBody, ///< the raw text between `{` and its matching `}` (whitespace trimmed)
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Equals,
  Arrow, ///< =>
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  ExactDiv, ///< /^
  Less,
  LessEq,
  Greater,
  GreaterEq,
  EqEq,
  NotEq,
  Question,
  End,
};

struct Token {
  TokenKind kind;
  std::string text;   ///< spelling; for UserfunBody the body text
  SourceLoc loc;      ///< first character; for UserfunBody the body's first non-blank character
  SourceLoc open_loc; ///< UserfunBody only: the `{`
};

/// Splits `source` into tokens, ending with one End token. Skips whitespace, `// ...` and
/// `/* ... */` comments. A `{` starts a user function body: everything up to the matching `}`
/// (braces balanced, ignoring braces in comments, strings and character literals) becomes one
/// UserfunBody token. Throws a located UserError for a character that starts no token, a malformed
/// number or an unterminated comment or body.
std::vector<Token> tokenize(std::string_view source, const std::string& file);

/// The token as quoted in diagnostics: `'foo'`, `')'`, `'1.5f'`, `end of input`.
std::string describe(const Token& token);

} // namespace liftx::parse
