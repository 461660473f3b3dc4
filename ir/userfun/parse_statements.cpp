// The body parser's statements: blocks, if/else, returns, declarations and assignments, with
// the definite-assignment and every-path-returns checks.
#include "ir/userfun/parse_internal.hpp"

namespace liftx::ir::userfun_detail {

// `returns` becomes true once the statement (or an earlier one) returns on every path.
StmtPtr Parser::statement(bool allow_declaration, bool& returns) {
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
          fail(peek().loc,
               fmt::format("the result has {} components, this return has more", results_.size()));
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

StmtPtr Parser::sub_statement(bool& returns) {
  if (is(";")) { // `if (c) ;`: an empty block
    auto empty = std::make_unique<Stmt>();
    empty->kind = Stmt::Kind::Block;
    empty->loc = take().loc;
    return empty;
  }
  return statement(false, returns);
}

StmtPtr Parser::assignment(StmtPtr stmt, std::string_view op) {
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
    static constexpr BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div};
    const BinaryOp bop = ops[std::string_view("+-*/").find(op[0])];
    value = binary(bop, variable_node(symbol, name.loc), std::move(value), op_token.loc);
  }
  stmt->value = convert_to(std::move(value), symbol.kind);
  assigned_[symbol.slot] = true;
  expect(";", "after the assignment");
  return stmt;
}

} // namespace liftx::ir::userfun_detail
