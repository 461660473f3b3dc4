// Host evaluation of a parsed user function body with OpenCL C semantics: float arithmetic in
// float, int arithmetic in 32-bit two's complement with wrap-around (computed without UB).
#include "ir/userfun/ast.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace liftx::ir::userfun_detail {
namespace {

int32_t wrap(uint32_t v) {
  return static_cast<int32_t>(v);
} // modular since C++20

template <typename T>
T opencl_min(T x, T y) {
  return y < x ? y : x;
}
template <typename T>
T opencl_max(T x, T y) {
  return x < y ? y : x;
}

bool truthy(const Scalar& s) {
  return std::visit([](auto v) { return v != 0; }, s); // NaN is true, as in C
}

class Evaluator {
public:
  Evaluator(const std::string& fun_name, std::vector<Scalar> frame, std::span<Scalar> results)
      : fun_name_(fun_name), frame_(std::move(frame)), results_(results) {}

  // Whether the statements returned (the values are in `results`), false when they fall through.
  bool run(const std::vector<StmtPtr>& statements) {
    for (const auto& s : statements)
      if (run(*s))
        return true;
    return false;
  }

private:
  bool run(const Stmt& s) {
    switch (s.kind) {
    case Stmt::Kind::Declare:
      // The parser rejects reads before assignment; zero keeps the frame deterministic anyway.
      frame_[s.slot] = s.value ? eval(*s.value) : convert(Scalar{0}, s.type);
      return false;
    case Stmt::Kind::Assign:
      frame_[s.slot] = eval(*s.value);
      return false;
    case Stmt::Kind::Return:
      LIFTX_INTERNAL_CHECK(s.returned.size() == results_.size(),
                           "userfun {}: {} returned values for {} results", fun_name_,
                           s.returned.size(), results_.size());
      for (size_t k = 0; k < s.returned.size(); ++k)
        results_[k] = eval(*s.returned[k]);
      return true;
    case Stmt::Kind::Block:
      return run(s.body);
    case Stmt::Kind::If:
      if (truthy(eval(*s.value)))
        return run(*s.body[0]);
      if (s.body.size() > 1)
        return run(*s.body[1]);
      return false;
    }
    LIFTX_UNREACHABLE("bad statement kind");
  }

  [[noreturn]] void division_by_zero(const Node& n) const {
    throw UserError(fmt::format("userfun {}: integer division by zero", fun_name_), n.loc);
  }

  Scalar eval(const Node& n) {
    switch (n.kind) {
    case Node::Kind::Literal:
      return n.value;
    case Node::Kind::Variable:
      return frame_[n.slot];
    case Node::Kind::Convert:
      return convert(eval(*n.operands[0]), n.type);
    case Node::Kind::Not:
      return !truthy(eval(*n.operands[0]));
    case Node::Kind::Negate:
      return negate(eval(*n.operands[0]));
    case Node::Kind::Conditional:
      return truthy(eval(*n.operands[0])) ? eval(*n.operands[1]) : eval(*n.operands[2]);
    case Node::Kind::Binary:
      return binary(n);
    case Node::Kind::Call:
      return call(n);
    }
    LIFTX_UNREACHABLE("bad node kind");
  }

  Scalar binary(const Node& n) {
    if (n.binary == BinaryOp::And)
      return truthy(eval(*n.operands[0])) && truthy(eval(*n.operands[1]));
    if (n.binary == BinaryOp::Or)
      return truthy(eval(*n.operands[0])) || truthy(eval(*n.operands[1]));
    const Scalar lhs = eval(*n.operands[0]);
    const Scalar rhs = eval(*n.operands[1]);
    switch (kind_of(lhs)) {
    case ScalarKind::Int:
      return int_binary(n, std::get<int32_t>(lhs), std::get<int32_t>(rhs));
    case ScalarKind::Float:
      return floating_binary(n, std::get<float>(lhs), std::get<float>(rhs));
    case ScalarKind::Double:
      return floating_binary(n, std::get<double>(lhs), std::get<double>(rhs));
    case ScalarKind::Bool:
      break;
    }
    LIFTX_UNREACHABLE("binary operator on bool operands (not promoted)");
  }

  template <typename T>
  static std::optional<bool> compare(BinaryOp op, T a, T b) {
    switch (op) {
    case BinaryOp::Lt:
      return a < b;
    case BinaryOp::Le:
      return a <= b;
    case BinaryOp::Gt:
      return a > b;
    case BinaryOp::Ge:
      return a >= b;
    case BinaryOp::Eq:
      return a == b;
    case BinaryOp::Ne:
      return a != b;
    default:
      return std::nullopt;
    }
  }

  Scalar int_binary(const Node& n, int32_t a, int32_t b) {
    if (auto c = compare(n.binary, a, b))
      return *c;
    const uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
    switch (n.binary) {
    case BinaryOp::Add:
      return wrap(ua + ub);
    case BinaryOp::Sub:
      return wrap(ua - ub);
    case BinaryOp::Mul:
      return wrap(ua * ub);
    case BinaryOp::Div:
      if (b == 0)
        division_by_zero(n);
      // INT_MIN / -1 overflows; we define it as the wrapped result INT_MIN.
      if (b == -1)
        return wrap(0u - ua);
      return a / b;
    case BinaryOp::Rem:
      if (b == 0)
        division_by_zero(n);
      if (b == -1)
        return 0;
      return a % b;
    default:
      break;
    }
    LIFTX_UNREACHABLE("bad int operator {}", binary_op_text(n.binary));
  }

  template <typename T>
  Scalar floating_binary(const Node& n, T a, T b) {
    if (auto c = compare(n.binary, a, b))
      return *c;
    switch (n.binary) {
    case BinaryOp::Add:
      return T(a + b);
    case BinaryOp::Sub:
      return T(a - b);
    case BinaryOp::Mul:
      return T(a * b);
    case BinaryOp::Div:
      return T(a / b);
    default:
      break;
    }
    LIFTX_UNREACHABLE("bad floating operator {}", binary_op_text(n.binary));
  }

  Scalar call(const Node& n) {
    std::vector<Scalar> args;
    args.reserve(n.operands.size());
    for (const auto& a : n.operands)
      args.push_back(eval(*a));
    switch (n.type) {
    case ScalarKind::Int:
      return int_call(n.builtin, args);
    case ScalarKind::Float:
      return floating_call<float>(n.builtin, args);
    case ScalarKind::Double:
      return floating_call<double>(n.builtin, args);
    case ScalarKind::Bool:
      break;
    }
    LIFTX_UNREACHABLE("builtin call of kind bool");
  }

  static Scalar int_call(Builtin b, const std::vector<Scalar>& args) {
    auto arg = [&](size_t i) { return std::get<int32_t>(args[i]); };
    switch (b) {
    case Builtin::Min:
      return opencl_min(arg(0), arg(1));
    case Builtin::Max:
      return opencl_max(arg(0), arg(1));
    case Builtin::Clamp:
      return opencl_min(opencl_max(arg(0), arg(1)), arg(2));
    case Builtin::Abs: // abs(INT_MIN) wraps to INT_MIN, as (int)abs(x) does in OpenCL C
      return arg(0) < 0 ? wrap(0u - static_cast<uint32_t>(arg(0))) : arg(0);
    default:
      break;
    }
    LIFTX_UNREACHABLE("builtin {} on int", builtin_name(b));
  }

  // std:: overloads on float call the float functions (sqrtf, ...), so float stays float.
  template <typename T>
  static Scalar floating_call(Builtin b, const std::vector<Scalar>& args) {
    auto arg = [&](size_t i) { return std::get<T>(args[i]); };
    switch (b) {
    case Builtin::Sqrt:
      return T(std::sqrt(arg(0)));
    case Builtin::Rsqrt:
      return T(T(1) / std::sqrt(arg(0)));
    case Builtin::Fabs:
    case Builtin::Abs:
      return T(std::fabs(arg(0)));
    case Builtin::Exp:
      return T(std::exp(arg(0)));
    case Builtin::Log:
      return T(std::log(arg(0)));
    case Builtin::Pow:
      return T(std::pow(arg(0), arg(1)));
    case Builtin::Sin:
      return T(std::sin(arg(0)));
    case Builtin::Cos:
      return T(std::cos(arg(0)));
    case Builtin::Fmin:
      return T(std::fmin(arg(0), arg(1)));
    case Builtin::Fmax:
      return T(std::fmax(arg(0), arg(1)));
    case Builtin::Min:
      return opencl_min(arg(0), arg(1));
    case Builtin::Max:
      return opencl_max(arg(0), arg(1));
    case Builtin::Clamp:
      return opencl_min(opencl_max(arg(0), arg(1)), arg(2));
    case Builtin::Floor:
      return T(std::floor(arg(0)));
    case Builtin::Ceil:
      return T(std::ceil(arg(0)));
    }
    LIFTX_UNREACHABLE("bad builtin");
  }

  const std::string& fun_name_;
  std::vector<Scalar> frame_;
  std::span<Scalar> results_;
};

} // namespace

void evaluate_body(const std::string& fun_name, const UserFunBody& body,
                   std::span<const Scalar> args, std::span<Scalar> results) {
  std::vector<Scalar> frame(static_cast<size_t>(body.slot_count), Scalar{false});
  std::copy(args.begin(), args.end(), frame.begin());
  const bool returned = Evaluator(fun_name, std::move(frame), results).run(body.statements);
  LIFTX_INTERNAL_CHECK(returned, "userfun {}: fell off the end of the body", fun_name);
}

} // namespace liftx::ir::userfun_detail
