// OpenCL C printing and operation counting of parsed user function bodies.
#include "ir/userfun/ast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <optional>

namespace liftx::ir::userfun_detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Printing. Every binary or conditional operand that is itself an operator expression is
// parenthesised, so the printed text never depends on C's precedence table (only on left-to-right
// grouping within + -, * /, && and ||: left_operand).

enum Precedence { Compound = 1, Unary = 8, Primary = 9 };

struct Printed {
  std::string text;
  int precedence;
};

std::string operand(const Printed& p, int needed) {
  return p.precedence >= needed ? p.text : fmt::format("({})", p.text);
}

/// A prefix operator (`-`, `!`, a cast) applied to `operand`. A unary operand needs no
/// parentheses in C: `-(-x)` would cost the parser two nesting levels per operator where the
/// source spent one, so a chain of them could print deeper than it was parsed.
std::string prefixed(std::string_view op, const Printed& p) {
  // `- -x`, not the decrement `--x`.
  const char* space = op == "-" && p.text.starts_with('-') ? " " : "";
  return fmt::format("{}{}{}", op, space, operand(p, Unary));
}

/// The OpenCL C helper that performs an int operation, or nullptr for the others.
const char* int_helper_name(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "liftx_add";
  case BinaryOp::Sub:
    return "liftx_sub";
  case BinaryOp::Mul:
    return "liftx_mul";
  case BinaryOp::Div:
    return "liftx_div";
  case BinaryOp::Rem:
    return "liftx_rem";
  default:
    return nullptr;
  }
}

Printed print(const Node& n);

/// Operators that C groups left to right at one precedence level.
int left_chain_group(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return 1;
  case BinaryOp::Mul:
  case BinaryOp::Div:
    return 2;
  case BinaryOp::And:
    return 3;
  case BinaryOp::Or:
    return 4;
  default:
    return 0;
  }
}

/// The left operand of a printed binary operator. `a + b - c` is `(a + b) - c` in every C
/// compiler, so a left chain of one group prints flat: a long sum (a stencil's weighted points)
/// would otherwise nest one parenthesis per term, past what OpenCL compilers accept.
std::string left_operand(const Node& n) {
  const Node& left = *n.operands[0];
  const bool printed_as_operator = left.kind == Node::Kind::Binary &&
                                   !(left.type == ScalarKind::Int && int_helper_name(left.binary));
  if (printed_as_operator && left_chain_group(n.binary) != 0 &&
      left_chain_group(left.binary) == left_chain_group(n.binary))
    return print(left).text;
  return operand(print(left), Unary);
}

Printed print(const Node& n) {
  switch (n.kind) {
  case Node::Kind::Literal: {
    // In C, `-2147483648` negates a long; spell INT_MIN the way <limits.h> does.
    if (n.value == Scalar{INT32_MIN})
      return {"(-2147483647 - 1)", Primary};
    std::string text = literal_text(n.value);
    // `-1`, `(double)INFINITY`: not primary, so `(double)INFINITY.x` cannot happen.
    const bool primary = text[0] != '-' && text[0] != '(';
    return {std::move(text), primary ? Primary : Unary};
  }
  case Node::Kind::Variable:
    return {n.name, Primary};
  case Node::Kind::Negate:
    if (n.type == ScalarKind::Int)
      return {fmt::format("liftx_neg({})", print(*n.operands[0]).text), Primary};
    return {prefixed("-", print(*n.operands[0])), Unary};
  case Node::Kind::Not:
    return {prefixed("!", print(*n.operands[0])), Unary};
  case Node::Kind::Convert: {
    const ScalarKind from = n.operands[0]->type;
    // C leaves a float outside the int range undefined; the interpreter saturates (NaN is 0),
    // which is OpenCL's convert_int_sat.
    if (n.type == ScalarKind::Int && (from == ScalarKind::Float || from == ScalarKind::Double))
      return {fmt::format("convert_int_sat({})", print(*n.operands[0]).text), Primary};
    return {prefixed(fmt::format("({})", scalar_name(n.type)), print(*n.operands[0])), Unary};
  }
  case Node::Kind::Binary:
    // int + - * / % go through helpers that define what C leaves undefined as the interpreter
    // does: wrapping, INT_MIN / -1 (UserFunDef::opencl_int_helpers).
    if (n.type == ScalarKind::Int && int_helper_name(n.binary))
      return {fmt::format("{}({}, {})", int_helper_name(n.binary), print(*n.operands[0]).text,
                          print(*n.operands[1]).text),
              Primary};
    return {fmt::format("{} {} {}", left_operand(n), binary_op_text(n.binary),
                        operand(print(*n.operands[1]), Unary)),
            Compound};
  case Node::Kind::Conditional:
    return {fmt::format("{} ? {} : {}", operand(print(*n.operands[0]), Unary),
                        operand(print(*n.operands[1]), Unary),
                        operand(print(*n.operands[2]), Unary)),
            Compound};
  case Node::Kind::Call: {
    std::vector<std::string> args;
    for (const auto& a : n.operands)
      args.push_back(print(*a).text);
    const bool floating = n.type != ScalarKind::Int;
    if (n.builtin == Builtin::Abs) {
      // OpenCL C has abs only for integers and it returns unsigned: cast back to int, so that
      // later comparisons stay signed.
      if (floating)
        return {fmt::format("fabs({})", args[0]), Primary};
      return {fmt::format("(int)abs({})", args[0]), Unary};
    }
    return {fmt::format("{}({})", builtin_name(n.builtin), fmt::join(args, ", ")), Primary};
  }
  }
  LIFTX_UNREACHABLE("bad node kind");
}

void print_statement(const Stmt& s, int depth, std::string_view tuple_type, std::string& out);

void print_indent(int depth, std::string& out) {
  out.append(static_cast<size_t>(2 * depth), ' ');
}

// The statements of a branch or block, one level deeper than its braces.
void print_block_contents(const Stmt& s, int depth, std::string_view tuple_type, std::string& out) {
  if (s.kind != Stmt::Kind::Block)
    return print_statement(s, depth, tuple_type, out);
  for (const auto& inner : s.body)
    print_statement(*inner, depth, tuple_type, out);
}

void print_statement(const Stmt& s, int depth, std::string_view tuple_type, std::string& out) {
  print_indent(depth, out);
  switch (s.kind) {
  case Stmt::Kind::Declare:
    if (s.value)
      out += fmt::format("{} {} = {};\n", scalar_name(s.type), s.name, print(*s.value).text);
    else
      out += fmt::format("{} {};\n", scalar_name(s.type), s.name);
    return;
  case Stmt::Kind::Assign:
    out += fmt::format("{} = {};\n", s.name, print(*s.value).text);
    return;
  case Stmt::Kind::Return: {
    if (s.returned.size() == 1) {
      out += fmt::format("return {};\n", print(*s.returned[0]).text);
      return;
    }
    std::vector<std::string> values;
    for (const auto& v : s.returned)
      values.push_back(print(*v).text);
    // OpenCL C (C99) has compound literals; the source form is the braced list alone.
    out += fmt::format("return {}{{{}}};\n",
                       tuple_type.empty() ? std::string() : fmt::format("({})", tuple_type),
                       fmt::join(values, ", "));
    return;
  }
  case Stmt::Kind::Block:
    out += "{\n";
    print_block_contents(s, depth + 1, tuple_type, out);
    print_indent(depth, out);
    out += "}\n";
    return;
  case Stmt::Kind::If: {
    // Branches always get braces; `else if` chains stay flat.
    const Stmt* current = &s;
    for (;;) {
      out += fmt::format("if ({}) {{\n", print(*current->value).text);
      print_block_contents(*current->body[0], depth + 1, tuple_type, out);
      print_indent(depth, out);
      if (current->body.size() < 2)
        break;
      const Stmt& otherwise = *current->body[1];
      if (otherwise.kind == Stmt::Kind::If) {
        out += "} else ";
        current = &otherwise;
        continue;
      }
      out += "} else {\n";
      print_block_contents(otherwise, depth + 1, tuple_type, out);
      print_indent(depth, out);
      break;
    }
    out += "}\n";
    return;
  }
  }
  LIFTX_UNREACHABLE("bad statement kind");
}

// ---------------------------------------------------------------------------------------------
// Operation counts. Expressions have no side effects, so counting is structural; branches take
// the component-wise maximum (an upper bound for every counter over the paths).

OpCounts max_counts(const OpCounts& a, const OpCounts& b) {
  return {std::max(a.add, b.add),         std::max(a.mul, b.mul),
          std::max(a.div, b.div),         std::max(a.compare, b.compare),
          std::max(a.special, b.special), std::max(a.floating_point, b.floating_point)};
}

OpCounts operator+(const OpCounts& a, const OpCounts& b) {
  return {a.add + b.add,         a.mul + b.mul,         a.div + b.div,
          a.compare + b.compare, a.special + b.special, a.floating_point + b.floating_point};
}

bool is_floating(ScalarKind kind) {
  return kind == ScalarKind::Float || kind == ScalarKind::Double;
}

/// Whether an arithmetic node computes in floating point: its operands' kind (a binary
/// operation's operands share one; a builtin's are converted to its kind), else its own.
bool computes_in_floating_point(const Node& n) {
  return is_floating(n.operands.empty() ? n.type : n.operands[0]->type);
}

OpCounts count(const Node& n) {
  OpCounts own;
  switch (n.kind) {
  case Node::Kind::Literal:
  case Node::Kind::Variable:
    return own;
  case Node::Kind::Negate:
  case Node::Kind::Convert:
    break;
  case Node::Kind::Not:
    own.compare = 1;
    break;
  case Node::Kind::Call:
    own.special = 1;
    own.floating_point = computes_in_floating_point(n) ? 1 : 0;
    break;
  case Node::Kind::Conditional:
    return count(*n.operands[0]) + max_counts(count(*n.operands[1]), count(*n.operands[2]));
  case Node::Kind::Binary:
    switch (n.binary) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
      own.add = 1;
      break;
    case BinaryOp::Mul:
      own.mul = 1;
      break;
    case BinaryOp::Div:
    case BinaryOp::Rem:
      own.div = 1;
      break;
    default:
      own.compare = 1;
      break;
    }
    if (own.compare == 0)
      own.floating_point = computes_in_floating_point(n) ? 1 : 0;
    break;
  }
  for (const auto& o : n.operands)
    own = own + count(*o);
  return own;
}

// Counts along the paths through statements: the maximum over paths still running
// (`falling`, nullopt when none) and over paths that have returned (`returned`).
struct PathCounts {
  std::optional<OpCounts> falling;
  std::optional<OpCounts> returned;
};

std::optional<OpCounts> max_optional(const std::optional<OpCounts>& a,
                                     const std::optional<OpCounts>& b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return max_counts(*a, *b);
}

PathCounts count(const Stmt& s, PathCounts in) {
  if (!in.falling)
    return in; // unreachable code costs nothing
  switch (s.kind) {
  case Stmt::Kind::Declare:
    if (s.value)
      in.falling = *in.falling + count(*s.value);
    return in;
  case Stmt::Kind::Assign:
    in.falling = *in.falling + count(*s.value);
    return in;
  case Stmt::Kind::Return: {
    OpCounts values = *in.falling;
    for (const auto& v : s.returned)
      values = values + count(*v);
    in.returned = max_optional(in.returned, values);
    in.falling.reset();
    return in;
  }
  case Stmt::Kind::Block:
    for (const auto& inner : s.body)
      in = count(*inner, in);
    return in;
  case Stmt::Kind::If: {
    const OpCounts after_cond = *in.falling + count(*s.value);
    const PathCounts then_paths = count(*s.body[0], {after_cond, std::nullopt});
    const PathCounts else_paths = s.body.size() > 1 ? count(*s.body[1], {after_cond, std::nullopt})
                                                    : PathCounts{after_cond, std::nullopt};
    return {max_optional(then_paths.falling, else_paths.falling),
            max_optional(in.returned, max_optional(then_paths.returned, else_paths.returned))};
  }
  }
  LIFTX_UNREACHABLE("bad statement kind");
}

} // namespace

std::string print_body(const UserFunBody& body, std::string_view tuple_type) {
  std::string out;
  for (const auto& s : body.statements)
    print_statement(*s, 1, tuple_type, out);
  return out;
}

OpCounts count_body(const UserFunBody& body) {
  PathCounts paths{OpCounts{}, std::nullopt};
  for (const auto& s : body.statements)
    paths = count(*s, paths);
  LIFTX_INTERNAL_CHECK(paths.returned.has_value(), "user function body never returns");
  return *paths.returned;
}

} // namespace liftx::ir::userfun_detail
