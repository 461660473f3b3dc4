// The body parser's expressions: C's precedence levels, unary operators and casts, literals,
// variables and calls of builtins, each typed and with C's implicit conversions made explicit.
#include "ir/userfun/parse_internal.hpp"

#include <limits>

namespace liftx::ir::userfun_detail {

ScalarKind Parser::arithmetic_kind(ScalarKind a, ScalarKind b) {
  // C usual arithmetic conversions for our kinds: bool promotes to int, then the wider wins.
  return std::max({ScalarKind::Int, a, b});
}

NodePtr Parser::make(Node::Kind kind, ScalarKind type, const SourceLoc& loc) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  n->type = type;
  n->loc = loc;
  return n;
}

NodePtr Parser::convert_to(NodePtr e, ScalarKind to) {
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

NodePtr Parser::variable_node(const Symbol& s, const SourceLoc& loc) {
  auto n = make(Node::Kind::Variable, s.kind, loc);
  n->slot = s.slot;
  n->name = s.name;
  return n;
}

NodePtr Parser::binary(BinaryOp op, NodePtr lhs, NodePtr rhs, const SourceLoc& loc) {
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

NodePtr Parser::expression() {
  return conditional();
}

NodePtr Parser::conditional() {
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

// One precedence level of left-associative binary operators.
// Each operator of a chain nests the tree one level deeper (`a + b + c` is `(a + b) + c`), and
// the evaluator, the printer and the destructor recurse on that depth. A float sum prints flat
// (a 7x7x7 box's 343 weighted points compile), so chains have a bound of their own, far above
// any stencil's, on the tree's height: operators chained plus the nesting around them.
template <typename Next>
NodePtr Parser::left_assoc(std::initializer_list<Level> levels, Next next) {
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

NodePtr Parser::logical_or() {
  return left_assoc({{"||", BinaryOp::Or}}, &Parser::logical_and);
}
NodePtr Parser::logical_and() {
  return left_assoc({{"&&", BinaryOp::And}}, &Parser::equality);
}
NodePtr Parser::equality() {
  return left_assoc({{"==", BinaryOp::Eq}, {"!=", BinaryOp::Ne}}, &Parser::relational);
}
NodePtr Parser::relational() {
  return left_assoc(
      {{"<", BinaryOp::Lt}, {"<=", BinaryOp::Le}, {">", BinaryOp::Gt}, {">=", BinaryOp::Ge}},
      &Parser::additive);
}
NodePtr Parser::additive() {
  return left_assoc({{"+", BinaryOp::Add}, {"-", BinaryOp::Sub}}, &Parser::multiplicative);
}
NodePtr Parser::multiplicative() {
  return left_assoc({{"*", BinaryOp::Mul}, {"/", BinaryOp::Div}, {"%", BinaryOp::Rem}},
                    &Parser::unary);
}

NodePtr Parser::unary() {
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
      operand->value = negate(operand->value);
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

NodePtr Parser::primary() {
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
std::vector<NodePtr> Parser::call_arguments(std::string_view name) {
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

void Parser::check_arity(const Token& name, size_t count, size_t arity) {
  if (count != arity)
    fail(name.loc, fmt::format("'{}' takes {} argument{}, not {}", name.text, arity,
                               arity == 1 ? "" : "s", count));
}

/// The forms the OpenCL C printing gives int arithmetic and float-to-int conversions
/// (print.cpp), read back as the operations they print: liftx_add(a, b) is a + b on int.
NodePtr Parser::defined_int_operation(const Token& name) {
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

NodePtr Parser::call(const Token& name) {
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

} // namespace liftx::ir::userfun_detail
