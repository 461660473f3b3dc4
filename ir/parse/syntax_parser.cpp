/// Recursive-descent parser from tokens to the syntax tree (grammar in docs/language.md).
#include "ir/parse/lexer.hpp"
#include "ir/parse/syntax.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace liftx::parse {

bool is_keyword(std::string_view name) {
  return name == "def" || name == "userfun" || name == "true" || name == "false" ||
         scalar_kind_named(name).has_value();
}

std::optional<ir::ScalarKind> scalar_kind_named(std::string_view name) {
  if (name == "bool")
    return ir::ScalarKind::Bool;
  if (name == "int")
    return ir::ScalarKind::Int;
  if (name == "float")
    return ir::ScalarKind::Float;
  if (name == "double")
    return ir::ScalarKind::Double;
  return std::nullopt;
}

namespace {

/// Limits that keep recursion (parser, elaboration, destruction) far from the stack's end.
constexpr int kMaxNesting = 200;   ///< nested parentheses, lambdas, arguments, types, unary '-'
constexpr int kMaxTreeDepth = 500; ///< syntax tree depth, e.g. long chains `x[1][1]...`

/// Appends `child` to `parent`'s operands, keeping the tree depth bounded.
void attach(Syntax& parent, SyntaxPtr child) {
  parent.depth = std::max(parent.depth, child->depth + 1);
  if (parent.depth > kMaxTreeDepth)
    throw UserError(
        fmt::format("expression too deeply nested (more than {} levels)", kMaxTreeDepth),
        parent.loc);
  parent.operands.push_back(std::move(child));
}

std::unique_ptr<Syntax> make_node(Syntax::Kind kind, SourceLoc loc, std::string text = {}) {
  auto node = std::make_unique<Syntax>();
  node->kind = kind;
  node->loc = std::move(loc);
  node->text = std::move(text);
  return node;
}

class Parser {
public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  ModuleSyntax module() {
    ModuleSyntax m;
    while (peek().kind != TokenKind::End) {
      const Token& t = peek();
      if (t.kind == TokenKind::Ident && t.text == "userfun") {
        m.items.emplace_back(userfun());
      } else if (t.kind == TokenKind::Ident && t.text == "def") {
        m.items.emplace_back(def());
      } else {
        throw error(fmt::format("expected 'def' or 'userfun', got {}", describe(t)), t);
      }
    }
    return m;
  }

private:
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1); // the last token is End
    return tokens_[i];
  }
  bool at(TokenKind kind, size_t ahead = 0) const { return peek(ahead).kind == kind; }
  const Token& take() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size())
      ++pos_;
    return t;
  }
  /// An error at `at`; a user function body is reported at its `{`.
  static UserError error(const std::string& message, const Token& at) {
    return UserError(message, at.kind == TokenKind::UserfunBody ? at.open_loc : at.loc);
  }
  /// Takes a token of `kind` or fails with "expected WHAT, got TOKEN".
  const Token& expect(TokenKind kind, std::string_view what) {
    if (!at(kind))
      throw error(fmt::format("expected {}, got {}", what, describe(peek())), peek());
    return take();
  }
  /// A name being introduced (parameter, user function, definition): not a keyword.
  NameLoc new_name(std::string_view what) {
    const Token& t = peek();
    if (t.kind != TokenKind::Ident)
      throw error(fmt::format("expected {}, got {}", what, describe(t)), t);
    if (is_keyword(t.text))
      throw error(fmt::format("'{}' is a keyword and cannot be used as {}", t.text, what), t);
    take();
    return NameLoc{t.text, t.loc};
  }

  ir::ScalarKind scalar_type(std::string_view context) {
    const Token& t = peek();
    std::optional<ir::ScalarKind> kind;
    if (t.kind == TokenKind::Ident)
      kind = scalar_kind_named(t.text);
    if (!kind)
      throw error(fmt::format("expected a scalar type (bool, int, float or double) {}, got {}",
                              context, describe(t)),
                  t);
    take();
    return *kind;
  }

  // userfun NAME(a: float, ...): float { body }
  UserfunSyntax userfun() {
    take(); // 'userfun'
    UserfunSyntax u;
    u.name = new_name("a user function name");
    expect(TokenKind::LParen, fmt::format("'(' after 'userfun {}'", u.name.name));
    if (!at(TokenKind::RParen)) {
      for (;;) {
        NameLoc p = new_name("a parameter name");
        if (!at(TokenKind::Colon))
          throw error(
              fmt::format("parameter '{}' of userfun '{}' needs a type: expected ':', got {}",
                          p.name, u.name.name, describe(peek())),
              peek());
        take();
        ir::ScalarKind kind = scalar_type(fmt::format("for parameter '{}'", p.name));
        u.params.push_back(UserfunParamSyntax{p.name, p.loc, kind});
        if (!at(TokenKind::Comma))
          break;
        take();
      }
    }
    expect(TokenKind::RParen, "')' after parameters");
    expect(TokenKind::Colon, fmt::format("':' and the result type of userfun '{}'", u.name.name));
    if (at(TokenKind::LParen)) {
      // A tuple result: (float, int, ...), two or more scalar kinds.
      const Token open = take();
      for (;;) {
        u.result.push_back(scalar_type(fmt::format("as component {} of the result of userfun '{}'",
                                                   u.result.size() + 1, u.name.name)));
        if (!at(TokenKind::Comma))
          break;
        take();
      }
      expect(TokenKind::RParen, "')' after the result's component types");
      if (u.result.size() < 2)
        throw error(fmt::format("the result of userfun '{}' is a tuple of one: write the scalar "
                                "type without parentheses",
                                u.name.name),
                    open);
    } else {
      u.result.push_back(scalar_type(fmt::format("as the result of userfun '{}'", u.name.name)));
    }
    const Token& body = expect(TokenKind::UserfunBody,
                               fmt::format("'{{' and the body of userfun '{}'", u.name.name));
    u.body = body.text;
    u.body_loc = body.loc;
    return u;
  }

  // def NAME(p: T, ...) = expr
  DefSyntax def() {
    DefSyntax d;
    d.loc = take().loc; // 'def'
    d.name = new_name("a definition name");
    expect(TokenKind::LParen, fmt::format("'(' after 'def {}'", d.name.name));
    if (!at(TokenKind::RParen)) {
      for (;;) {
        NameLoc p = new_name("a parameter name");
        if (!at(TokenKind::Colon))
          throw UserError(fmt::format("parameter '{}' of '{}' needs a type (e.g. '{}: [float]N')",
                                      p.name, d.name.name, p.name),
                          p.loc);
        take();
        d.params.push_back(DefParamSyntax{std::move(p), type()});
        if (!at(TokenKind::Comma))
          break;
        take();
      }
    }
    expect(TokenKind::RParen, "')' after parameters");
    if (at(TokenKind::Ident) && peek().text == "layout") {
      take();
      for (;;) {
        d.layouts.push_back(layout_group());
        if (!at(TokenKind::Comma))
          break;
        take();
      }
    }
    expect(TokenKind::Equals, fmt::format("'=' after the parameters of '{}'", d.name.name));
    d.body = expr();
    return d;
  }

  // aos(NAME, NAME, ...) | aosoa(INT, NAME, NAME, ...)
  LayoutSyntax layout_group() {
    LayoutSyntax g;
    const Token& t = peek();
    if (t.kind != TokenKind::Ident || (t.text != "aos" && t.text != "aosoa"))
      throw error(
          fmt::format("expected a layout ('aos(a, b)' or 'aosoa(32, a, b)'), got {}", describe(t)),
          t);
    take();
    g.layout = NameLoc{t.text, t.loc};
    expect(TokenKind::LParen, fmt::format("'(' after '{}'", t.text));
    if (g.layout.name == "aosoa") {
      if (!at(TokenKind::Int))
        throw error(
            fmt::format("expected the elements per block of 'aosoa', got {}", describe(peek())),
            peek());
      g.block = int_literal(take())->int_value;
      expect(TokenKind::Comma, "',' after the block size");
    }
    for (;;) {
      const Token& name = peek();
      if (name.kind != TokenKind::Ident)
        throw error(fmt::format("expected a parameter name in '{}(...)', got {}", g.layout.name,
                                describe(name)),
                    name);
      take();
      g.fields.push_back(NameLoc{name.text, name.loc});
      if (!at(TokenKind::Comma))
        break;
      take();
    }
    expect(TokenKind::RParen, fmt::format("')' after the grids of '{}'", g.layout.name));
    return g;
  }

  /// Counts one level of recursive descent for the lifetime of the guard.
  class NestingGuard {
  public:
    NestingGuard(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting)
        throw error(fmt::format("too deeply nested (more than {} levels)", kMaxNesting),
                    parser_.peek());
    }
    ~NestingGuard() { --parser_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

  private:
    Parser& parser_;
  };

  TypeSyntax type() {
    NestingGuard guard(*this);
    const Token& t = peek();
    TypeSyntax ty;
    ty.loc = t.loc;
    if (t.kind == TokenKind::Ident && scalar_kind_named(t.text)) {
      ty.kind = TypeSyntax::Kind::Scalar;
      ty.scalar = *scalar_kind_named(take().text);
      return ty;
    }
    if (t.kind == TokenKind::LParen) {
      take();
      ty.kind = TypeSyntax::Kind::Tuple;
      ty.elements.push_back(type());
      while (at(TokenKind::Comma)) {
        take();
        ty.elements.push_back(type());
      }
      if (ty.elements.size() < 2 && at(TokenKind::RParen))
        throw error("a tuple type needs at least 2 components", peek());
      expect(TokenKind::RParen, "')' after the tuple components");
      return ty;
    }
    if (t.kind == TokenKind::LBracket) {
      take();
      ty.kind = TypeSyntax::Kind::Array;
      ty.elements.push_back(type());
      expect(TokenKind::RBracket, "']' after the array element type");
      ty.length = array_length();
      return ty;
    }
    throw error(fmt::format("expected a type (bool, int, float, double, a tuple '(T, U)' or an "
                            "array '[T]N'), got {}",
                            describe(t)),
                t);
  }

  // size := INT | IDENT | '(' arith ')'
  SyntaxPtr array_length() {
    const Token& t = peek();
    if (t.kind == TokenKind::Int)
      return int_literal(take());
    if (t.kind == TokenKind::Ident && !is_keyword(t.text)) {
      take();
      return make_node(Syntax::Kind::Name, t.loc, t.text);
    }
    if (t.kind == TokenKind::LParen) {
      take();
      SyntaxPtr e = arith();
      expect(TokenKind::RParen, "')' after the array length");
      return e;
    }
    throw error(fmt::format("expected an array length after ']' (an integer, a size variable or "
                            "'(expression)'), got {}",
                            describe(t)),
                t);
  }

  /// True when the tokens at the current position start a lambda: `x =>` or `(a, b) =>`.
  bool lambda_ahead() const {
    if (at(TokenKind::Ident) && at(TokenKind::Arrow, 1))
      return true;
    if (!at(TokenKind::LParen))
      return false;
    size_t i = 1;
    if (!at(TokenKind::RParen, i)) {
      for (;;) {
        if (!at(TokenKind::Ident, i))
          return false;
        ++i;
        if (!at(TokenKind::Comma, i))
          break;
        ++i;
      }
    }
    return at(TokenKind::RParen, i) && at(TokenKind::Arrow, i + 1);
  }

  SyntaxPtr expr() {
    NestingGuard guard(*this);
    if (lambda_ahead())
      return lambda();
    return arith();
  }

  SyntaxPtr lambda() {
    auto node = make_node(Syntax::Kind::Lambda, peek().loc);
    if (at(TokenKind::Ident)) {
      node->params.push_back(new_name("a parameter name"));
    } else {
      take(); // '('
      while (!at(TokenKind::RParen)) {
        node->params.push_back(new_name("a parameter name"));
        if (at(TokenKind::Comma))
          take();
      }
      take(); // ')'
    }
    take(); // '=>'
    attach(*node, expr());
    return node;
  }

  static std::optional<std::string_view> comparison(TokenKind k) {
    switch (k) {
    case TokenKind::Less:
      return "<";
    case TokenKind::LessEq:
      return "<=";
    case TokenKind::Greater:
      return ">";
    case TokenKind::GreaterEq:
      return ">=";
    case TokenKind::EqEq:
      return "==";
    case TokenKind::NotEq:
      return "!=";
    default:
      return std::nullopt;
    }
  }

  // arith := additive [CMP additive '?' expr ':' expr]   (the select of size expressions)
  SyntaxPtr arith() {
    SyntaxPtr lhs = additive();
    auto op = comparison(peek().kind);
    if (!op)
      return lhs;
    auto node = make_node(Syntax::Kind::Select, lhs->loc, std::string(*op));
    take();
    attach(*node, std::move(lhs));
    attach(*node, additive());
    expect(TokenKind::Question, fmt::format("'?' after the comparison '{}'", *op));
    attach(*node, expr());
    expect(TokenKind::Colon, "':' in the conditional expression");
    attach(*node, expr());
    return node;
  }

  // A chain of operators of one precedence is one node, however long: the tree stays shallow
  // for sums and products of many terms (printed sizes can have hundreds after multiplying out).
  template <typename IsOperator, typename Operand>
  SyntaxPtr chain(IsOperator is_operator, Operand operand) {
    SyntaxPtr first = operand();
    if (!is_operator(peek().kind))
      return first;
    auto node = make_node(Syntax::Kind::Binary, peek().loc, peek().text);
    attach(*node, std::move(first));
    while (is_operator(peek().kind)) {
      const Token& op = take();
      node->ops.push_back(NameLoc{op.text, op.loc});
      attach(*node, operand());
    }
    return node;
  }

  SyntaxPtr additive() {
    return chain([](TokenKind k) { return k == TokenKind::Plus || k == TokenKind::Minus; },
                 [this] { return multiplicative(); });
  }

  SyntaxPtr multiplicative() {
    return chain(
        [](TokenKind k) {
          return k == TokenKind::Star || k == TokenKind::Slash || k == TokenKind::Percent ||
                 k == TokenKind::ExactDiv;
        },
        [this] { return unary(); });
  }

  SyntaxPtr unary() {
    if (at(TokenKind::Minus)) {
      NestingGuard guard(*this);
      auto node = make_node(Syntax::Kind::Negate, take().loc);
      attach(*node, unary());
      return node;
    }
    return postfix();
  }

  SyntaxPtr postfix() {
    SyntaxPtr e = primary();
    for (;;) {
      if (at(TokenKind::LParen)) {
        take();
        auto call = make_node(Syntax::Kind::Apply, e->loc);
        attach(*call, std::move(e));
        if (!at(TokenKind::RParen)) {
          for (;;) {
            attach(*call, expr());
            if (!at(TokenKind::Comma))
              break;
            take();
          }
        }
        expect(TokenKind::RParen, "')' after arguments");
        e = std::move(call);
      } else if (at(TokenKind::LBracket)) {
        auto index = make_node(Syntax::Kind::Index, take().loc);
        attach(*index, std::move(e));
        attach(*index, arith());
        expect(TokenKind::RBracket, "']' after the index");
        e = std::move(index);
      } else {
        return e;
      }
    }
  }

  SyntaxPtr int_literal(const Token& t) {
    auto node = make_node(Syntax::Kind::IntLit, t.loc, t.text);
    int64_t value = 0;
    for (char c : t.text) {
      int digit = c - '0';
      if (value > (INT64_MAX - digit) / 10)
        throw error(fmt::format("integer literal {} is too large", t.text), t);
      value = value * 10 + digit;
    }
    node->int_value = value;
    return node;
  }

  SyntaxPtr real_literal(const Token& t) {
    bool is_float = t.kind == TokenKind::Float;
    std::string digits = is_float ? t.text.substr(0, t.text.size() - 1) : t.text;
    auto node =
        make_node(is_float ? Syntax::Kind::FloatLit : Syntax::Kind::DoubleLit, t.loc, t.text);
    errno = 0;
    if (is_float) {
      node->float_value = std::strtof(digits.c_str(), nullptr);
      node->real_value = node->float_value;
    } else {
      node->real_value = std::strtod(digits.c_str(), nullptr);
    }
    if (errno == ERANGE && std::isinf(node->real_value))
      throw error(
          fmt::format("literal {} is out of range for {}", t.text, is_float ? "float" : "double"),
          t);
    return node;
  }

  SyntaxPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
    case TokenKind::Int:
      return int_literal(take());
    case TokenKind::Float:
    case TokenKind::Double:
      return real_literal(take());
    case TokenKind::Ident: {
      take();
      if (t.text == "true" || t.text == "false") {
        auto node = make_node(Syntax::Kind::BoolLit, t.loc, t.text);
        node->bool_value = t.text == "true";
        return node;
      }
      if (is_keyword(t.text))
        throw error(fmt::format("expected an expression, got the keyword '{}'", t.text), t);
      return make_node(Syntax::Kind::Name, t.loc, t.text);
    }
    case TokenKind::LParen: {
      take();
      SyntaxPtr e = expr();
      expect(TokenKind::RParen, "')'");
      return e;
    }
    default:
      throw error(fmt::format("expected an expression, got {}", describe(t)), t);
    }
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

} // namespace

ModuleSyntax parse_syntax(std::string_view source, const std::string& file) {
  return Parser(tokenize(source, file)).module();
}

} // namespace liftx::parse
