#include "exec/flops.hpp"

#include "ir/arith/expr.hpp"

#include <algorithm>
#include <variant>
#include <vector>

namespace liftx::exec {

namespace {

/// Walks a program the way the interpreter evaluates it, multiplying the cost of a function by
/// the number of times the primitive around it applies it. Every node kind has its own overload,
/// so that a new primitive fails to compile here instead of counting nothing unnoticed.
class FlopCounter {
public:
  explicit FlopCounter(const Sizes& sizes) : sizes_(sizes) {}

  double of(const ir::Expr& e) const {
    const ir::Call* call = e.as<ir::Call>();
    if (!call)
      return 0; // a parameter or a literal
    double total = 0;
    std::vector<ir::Type> arg_types;
    for (const ir::Expr& arg : call->args) {
      total += of(arg);
      arg_types.push_back(arg.type());
    }
    return total + applied(call->fun, arg_types);
  }

  /// One application of `f` to arguments of these types.
  double applied(const ir::Fun& f, const std::vector<ir::Type>& args) const {
    return std::visit([&](const auto& node) { return applied_node(node, args); }, f.data().node);
  }

private:
  double applied_node(const ir::Lambda& n, const std::vector<ir::Type>&) const {
    return of(n.body);
  }
  double applied_node(const ir::UserFun& n, const std::vector<ir::Type>&) const {
    return n.def->op_counts().floating_point;
  }
  double applied_node(const ir::Map& n, const std::vector<ir::Type>& args) const {
    return per_element(n.f, args);
  }
  double applied_node(const ir::MapSeq& n, const std::vector<ir::Type>& args) const {
    return per_element(n.f, args);
  }
  double applied_node(const ir::MapGlb& n, const std::vector<ir::Type>& args) const {
    return per_element(n.f, args);
  }
  double applied_node(const ir::MapWrg& n, const std::vector<ir::Type>& args) const {
    return per_element(n.f, args);
  }
  double applied_node(const ir::MapLcl& n, const std::vector<ir::Type>& args) const {
    return per_element(n.f, args);
  }
  double applied_node(const ir::Reduce& n, const std::vector<ir::Type>& args) const {
    return folded(n.f, n.init, args);
  }
  double applied_node(const ir::ReduceSeq& n, const std::vector<ir::Type>& args) const {
    return folded(n.f, n.init, args);
  }
  double applied_node(const ir::Iterate& n, const std::vector<ir::Type>& args) const {
    return static_cast<double>(evaluated(n.count)) * applied(n.f, args);
  }
  double applied_node(const ir::Generate& n, const std::vector<ir::Type>&) const {
    return static_cast<double>(evaluated(n.length)) *
           applied(n.f, {ir::Type::int_(), ir::Type::int_()});
  }
  double applied_node(const ir::MapSeqSlide& n, const std::vector<ir::Type>& args) const {
    const ir::ArrayType& array = array_argument(args);
    const int64_t windows =
        (evaluated(array.length) - evaluated(n.size) + evaluated(n.step)) / evaluated(n.step);
    const ir::Type window = ir::Type::array(array.element, n.size);
    return static_cast<double>(std::max<int64_t>(windows, 0)) * applied(n.f, {window});
  }
  double applied_node(const ir::Vectorize& n, const std::vector<ir::Type>& args) const {
    return n.width * applied(n.f, args); // the user function once per component
  }
  double applied_node(const ir::ToGlobal& n, const std::vector<ir::Type>& args) const {
    return applied(n.f, args);
  }
  double applied_node(const ir::ToLocal& n, const std::vector<ir::Type>& args) const {
    return applied(n.f, args);
  }
  double applied_node(const ir::ToLocalPadded& n, const std::vector<ir::Type>& args) const {
    return applied(n.f, args);
  }
  double applied_node(const ir::ToPrivate& n, const std::vector<ir::Type>& args) const {
    return applied(n.f, args);
  }
  // Data movement and views: no arithmetic.
  double applied_node(const ir::Zip&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::Tuple&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::Split&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::Join&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::Slide&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::SlideShifted&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::JoinShifted&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::Pad&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::At&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::Get&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::Transpose&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::Id&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::AsVector&, const std::vector<ir::Type>&) const { return 0; }
  double applied_node(const ir::AsScalar&, const std::vector<ir::Type>&) const { return 0; }

  /// A map: `f` once per element of its array argument.
  double per_element(const ir::Fun& f, const std::vector<ir::Type>& args) const {
    const ir::ArrayType& array = array_argument(args);
    return static_cast<double>(evaluated(array.length)) * applied(f, {array.element});
  }

  /// A reduction: its initial value, then `f` once per element, each taking the accumulator.
  double folded(const ir::Fun& f, const ir::Expr& init, const std::vector<ir::Type>& args) const {
    const ir::ArrayType& array = array_argument(args);
    return of(init) +
           static_cast<double>(evaluated(array.length)) * applied(f, {init.type(), array.element});
  }

  static const ir::ArrayType& array_argument(const std::vector<ir::Type>& args) {
    const ir::ArrayType* array = args.size() == 1 ? args[0].as<ir::ArrayType>() : nullptr;
    LIFTX_INTERNAL_CHECK(array, "count_flops: a map, reduction or slide without one array");
    return *array;
  }

  int64_t evaluated(const arith::Expr& length) const { return arith::evaluate(length, sizes_); }

  const Sizes& sizes_;
};

} // namespace

double count_flops(const ir::Program& program, const Sizes& sizes) {
  return FlopCounter(sizes).of(program.body);
}

} // namespace liftx::exec
