#pragma once
/// Private to liftx_userfun: the typed syntax tree of a user function body. The parser
/// (parse.cpp) builds it already type-checked: every implicit C conversion is an explicit
/// Convert node, so the evaluator and printer never have to reason about types again.
#include "ir/userfun/scalar.hpp"
#include "ir/userfun/userfun.hpp"
#include "support/error.hpp"

#include <memory>
#include <string>
#include <vector>

namespace liftx::ir::userfun_detail {

enum class BinaryOp { Add, Sub, Mul, Div, Rem, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
enum class Builtin {
  Sqrt,
  Rsqrt,
  Fabs,
  Exp,
  Log,
  Pow,
  Sin,
  Cos,
  Fmin,
  Fmax,
  Min,
  Max,
  Clamp,
  Floor,
  Ceil,
  Abs
};

const char* binary_op_text(BinaryOp op);
const char* builtin_name(Builtin b);

struct Node {
  enum class Kind { Literal, Variable, Negate, Not, Binary, Conditional, Convert, Call };
  Kind kind;
  ScalarKind type; ///< the value's kind
  SourceLoc loc;
  Scalar value{};        ///< Literal
  int slot = -1;         ///< Variable: index into the frame (parameters first)
  std::string name;      ///< Variable: its name, for printing
  BinaryOp binary{};     ///< Binary
  Builtin builtin{};     ///< Call
  bool implicit = false; ///< Convert: inserted by the C conversion rules, not written
  /// Negate/Not/Convert: [operand]; Binary: [lhs, rhs] (both of one kind except And/Or);
  /// Conditional: [cond, then, else]; Call: the arguments, converted to the builtin's kind.
  std::vector<std::unique_ptr<Node>> operands;
};
using NodePtr = std::unique_ptr<Node>;

struct Stmt {
  enum class Kind { Declare, Assign, If, Block, Return };
  Kind kind;
  SourceLoc loc;
  int slot = -1;     ///< Declare, Assign
  std::string name;  ///< Declare, Assign
  ScalarKind type{}; ///< Declare
  NodePtr value;     ///< Declare (may be null), Assign (compound forms desugared), If cond
  /// Return: one value per result component (one for a scalar result, k for `return {a, b};`).
  std::vector<NodePtr> returned;
  std::vector<std::unique_ptr<Stmt>> body; ///< Block: its statements; If: [then] or [then, else]
};
using StmtPtr = std::unique_ptr<Stmt>;

} // namespace liftx::ir::userfun_detail

namespace liftx::ir {

struct UserFunBody {
  std::vector<userfun_detail::StmtPtr> statements;
  int slot_count = 0; ///< parameters and every local
};

namespace userfun_detail {
/// The parser's refusal of a body nested deeper than its limit.
class NestingTooDeep : public UserError {
public:
  using UserError::UserError;
};

/// Lexes, parses and type-checks a body (parse.cpp).
std::unique_ptr<UserFunBody> parse_body(const std::string& fun_name,
                                        const std::vector<UserFunParam>& params,
                                        std::span<const ScalarKind> results, std::string_view text,
                                        const SourceLoc& body_loc);
/// Runs the body (eval.cpp), writing one value per result component into `results`.
void evaluate_body(const std::string& fun_name, const UserFunBody& body,
                   std::span<const Scalar> args, std::span<Scalar> results);
/// The statements as OpenCL C, each line indented (print.cpp). A tuple result returns the
/// compound literal `(tuple_type){a, b}`; with an empty `tuple_type`, the source form `{a, b}`.
std::string print_body(const UserFunBody& body, std::string_view tuple_type = {});
OpCounts count_body(const UserFunBody& body);
} // namespace userfun_detail

} // namespace liftx::ir
