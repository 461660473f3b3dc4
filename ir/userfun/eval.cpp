// Host evaluation of a parsed user function body with OpenCL C semantics: float arithmetic in
// float, int arithmetic in 32-bit two's complement with wrap-around (computed without UB).
#include "ir/userfun/ast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

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

/// Runs a body on its frame. The parser types every node and makes each conversion explicit, so
/// a node's value is computed as its own C++ type (typed<T>) and wrapped in a Scalar only where
/// a statement stores it: no variant is built or inspected per operation.
class Evaluator {
public:
  Evaluator(const std::string& fun_name, std::span<Scalar> frame, std::span<Scalar> results)
      : fun_name_(fun_name), frame_(frame), results_(results) {}

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
      if (truth(*s.value))
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
    switch (n.type) {
    case ScalarKind::Bool:
      return typed<bool>(n);
    case ScalarKind::Int:
      return typed<int32_t>(n);
    case ScalarKind::Float:
      return typed<float>(n);
    case ScalarKind::Double:
      return typed<double>(n);
    }
    LIFTX_UNREACHABLE("bad scalar kind");
  }

  /// Whether a node of any kind is nonzero (NaN is true, as in C).
  bool truth(const Node& n) {
    switch (n.type) {
    case ScalarKind::Bool:
      return typed<bool>(n);
    case ScalarKind::Int:
      return typed<int32_t>(n) != 0;
    case ScalarKind::Float:
      return typed<float>(n) != 0;
    case ScalarKind::Double:
      return typed<double>(n) != 0;
    }
    LIFTX_UNREACHABLE("bad scalar kind");
  }

  /// The value of `n`, whose kind is T's.
  template <typename T>
  T typed(const Node& n) {
    switch (n.kind) {
    case Node::Kind::Literal:
      return std::get<T>(n.value);
    case Node::Kind::Variable:
      return std::get<T>(frame_[n.slot]);
    case Node::Kind::Convert:
      return std::get<T>(convert(eval(*n.operands[0]), n.type));
    case Node::Kind::Not:
      if constexpr (std::is_same_v<T, bool>)
        return !truth(*n.operands[0]);
      break;
    case Node::Kind::Negate:
      if constexpr (std::is_same_v<T, int32_t>)
        return wrap(0u - static_cast<uint32_t>(typed<int32_t>(*n.operands[0])));
      else if constexpr (!std::is_same_v<T, bool>)
        return -typed<T>(*n.operands[0]);
      break;
    case Node::Kind::Conditional:
      return truth(*n.operands[0]) ? typed<T>(*n.operands[1]) : typed<T>(*n.operands[2]);
    case Node::Kind::Binary:
      if constexpr (std::is_same_v<T, bool>)
        return logical_or_comparison(n);
      else {
        const T lhs = typed<T>(*n.operands[0]); // left to right: which error a body raises
        return arithmetic(n, lhs, typed<T>(*n.operands[1]));
      }
    case Node::Kind::Call:
      if constexpr (std::is_same_v<T, int32_t>)
        return int_call(n);
      else if constexpr (!std::is_same_v<T, bool>)
        return floating_call<T>(n);
      break;
    }
    LIFTX_UNREACHABLE("node of kind {} cannot give a {}", static_cast<int>(n.kind),
                      scalar_name(n.type));
  }

  bool logical_or_comparison(const Node& n) {
    const Node& lhs = *n.operands[0];
    const Node& rhs = *n.operands[1];
    if (n.binary == BinaryOp::And)
      return truth(lhs) && truth(rhs);
    if (n.binary == BinaryOp::Or)
      return truth(lhs) || truth(rhs);
    switch (lhs.type) { // both operands are of one kind
    case ScalarKind::Int: {
      const int32_t a = typed<int32_t>(lhs);
      return compare(n, a, typed<int32_t>(rhs));
    }
    case ScalarKind::Float: {
      const float a = typed<float>(lhs);
      return compare(n, a, typed<float>(rhs));
    }
    case ScalarKind::Double: {
      const double a = typed<double>(lhs);
      return compare(n, a, typed<double>(rhs));
    }
    case ScalarKind::Bool:
      break;
    }
    LIFTX_UNREACHABLE("comparison of bool operands (not promoted)");
  }

  template <typename T>
  static bool compare(const Node& n, T a, T b) {
    switch (n.binary) {
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
      break;
    }
    LIFTX_UNREACHABLE("bad comparison {}", binary_op_text(n.binary));
  }

  int32_t arithmetic(const Node& n, int32_t a, int32_t b) {
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
  static T arithmetic(const Node& n, T a, T b) {
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

  /// A builtin call's arguments (at most three: clamp), evaluated left to right first, as the
  /// tree-walking order always was.
  template <typename T>
  std::array<T, 3> call_arguments(const Node& n) {
    LIFTX_INTERNAL_CHECK(n.operands.size() <= 3, "builtin {} with {} arguments",
                         builtin_name(n.builtin), n.operands.size());
    std::array<T, 3> a{};
    for (size_t k = 0; k < n.operands.size(); ++k)
      a[k] = typed<T>(*n.operands[k]);
    return a;
  }

  /// min, max and clamp, alike for every kind; nullopt for the other builtins.
  template <typename T>
  static std::optional<T> ordering_call(Builtin b, const std::array<T, 3>& a) {
    switch (b) {
    case Builtin::Min:
      return opencl_min(a[0], a[1]);
    case Builtin::Max:
      return opencl_max(a[0], a[1]);
    case Builtin::Clamp:
      return opencl_min(opencl_max(a[0], a[1]), a[2]);
    default:
      return std::nullopt;
    }
  }

  int32_t int_call(const Node& n) {
    const std::array<int32_t, 3> a = call_arguments<int32_t>(n);
    if (const auto r = ordering_call(n.builtin, a))
      return *r;
    if (n.builtin == Builtin::Abs) // abs(INT_MIN) wraps to INT_MIN, as (int)abs(x) does in C
      return a[0] < 0 ? wrap(0u - static_cast<uint32_t>(a[0])) : a[0];
    LIFTX_UNREACHABLE("builtin {} on int", builtin_name(n.builtin));
  }

  // std:: overloads on float call the float functions (sqrtf, ...), so float stays float.
  template <typename T>
  T floating_call(const Node& n) {
    const std::array<T, 3> a = call_arguments<T>(n);
    if (const auto r = ordering_call(n.builtin, a))
      return *r;
    switch (n.builtin) {
    case Builtin::Sqrt:
      return T(std::sqrt(a[0]));
    case Builtin::Rsqrt:
      return T(T(1) / std::sqrt(a[0]));
    case Builtin::Fabs:
    case Builtin::Abs:
      return T(std::fabs(a[0]));
    case Builtin::Exp:
      return T(std::exp(a[0]));
    case Builtin::Log:
      return T(std::log(a[0]));
    case Builtin::Pow:
      return T(std::pow(a[0], a[1]));
    case Builtin::Sin:
      return T(std::sin(a[0]));
    case Builtin::Cos:
      return T(std::cos(a[0]));
    case Builtin::Fmin:
      return T(std::fmin(a[0], a[1]));
    case Builtin::Fmax:
      return T(std::fmax(a[0], a[1]));
    case Builtin::Floor:
      return T(std::floor(a[0]));
    case Builtin::Ceil:
      return T(std::ceil(a[0]));
    default:
      break;
    }
    LIFTX_UNREACHABLE("bad builtin {}", builtin_name(n.builtin));
  }

  const std::string& fun_name_;
  std::span<Scalar> frame_;
  std::span<Scalar> results_;
};

} // namespace

void evaluate_body(const std::string& fun_name, const UserFunBody& body,
                   std::span<const Scalar> args, std::span<Scalar> results) {
  // The interpreter calls this once per point and user function: a frame of the usual size
  // lives on the stack, uninitialised but for its slots (constructing all 32 would cost more
  // than a small body's run), not on the heap.
  constexpr size_t kInlineSlots = 32;
  static_assert(std::is_trivially_destructible_v<Scalar>);
  alignas(Scalar) std::byte inline_frame[kInlineSlots * sizeof(Scalar)];
  std::vector<Scalar> heap_frame;
  const size_t slots = static_cast<size_t>(body.slot_count);
  Scalar* frame_data = nullptr;
  if (slots <= kInlineSlots) {
    std::uninitialized_fill_n(reinterpret_cast<Scalar*>(inline_frame), slots, Scalar{false});
    frame_data = std::launder(reinterpret_cast<Scalar*>(inline_frame));
  } else {
    heap_frame.assign(slots, Scalar{false});
    frame_data = heap_frame.data();
  }
  const std::span<Scalar> frame(frame_data, slots);
  std::copy(args.begin(), args.end(), frame.begin());
  const bool returned = Evaluator(fun_name, frame, results).run(body.statements);
  LIFTX_INTERNAL_CHECK(returned, "userfun {}: fell off the end of the body", fun_name);
}

} // namespace liftx::ir::userfun_detail
