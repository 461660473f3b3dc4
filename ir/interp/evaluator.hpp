#pragma once
/// The expression evaluator of the interpreter (internal to liftx_interp).
#include "ir/expr.hpp"
#include "ir/interp/interp.hpp"
#include "ir/interp/value.hpp"

#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace liftx::interp {

class Evaluator {
public:
  explicit Evaluator(const Sizes& sizes) : sizes_(sizes) {}

  /// Binds a (program) parameter for the rest of the evaluation.
  void bind(const ir::Expr& param, Value v);
  Value eval(const ir::Expr& e);
  /// Applies a function to argument values (one tuple argument spreads over k >= 2 parameters).
  Value apply(const ir::Fun& f, std::span<const Value> args);
  /// A size expression under the bound sizes.
  int64_t size_of(const arith::Expr& e);

  // One overload per function node; public only so that the dispatching visitor can reach them.
  Value apply_node(const ir::Lambda& n, std::span<const Value> args);
  Value apply_node(const ir::UserFun& n, std::span<const Value> args);
  Value apply_node(const ir::Map& n, std::span<const Value> args) { return map(n.f, args); }
  Value apply_node(const ir::MapSeq& n, std::span<const Value> args) { return map(n.f, args); }
  Value apply_node(const ir::MapGlb& n, std::span<const Value> args) { return map(n.f, args); }
  Value apply_node(const ir::MapWrg& n, std::span<const Value> args) { return map(n.f, args); }
  Value apply_node(const ir::MapLcl& n, std::span<const Value> args) { return map(n.f, args); }
  Value apply_node(const ir::Reduce& n, std::span<const Value> args) {
    return reduce(n.f, n.init, args);
  }
  Value apply_node(const ir::ReduceSeq& n, std::span<const Value> args) {
    return reduce(n.f, n.init, args);
  }
  Value apply_node(const ir::Iterate& n, std::span<const Value> args);
  Value apply_node(const ir::Zip& n, std::span<const Value> args);
  Value apply_node(const ir::Split& n, std::span<const Value> args);
  Value apply_node(const ir::Join& n, std::span<const Value> args);
  Value apply_node(const ir::Slide& n, std::span<const Value> args);
  Value apply_node(const ir::Pad& n, std::span<const Value> args);
  Value apply_node(const ir::At& n, std::span<const Value> args);
  Value apply_node(const ir::Get& n, std::span<const Value> args);
  Value apply_node(const ir::Transpose& n, std::span<const Value> args);
  Value apply_node(const ir::Id& n, std::span<const Value> args);
  Value apply_node(const ir::Generate& n, std::span<const Value> args);
  Value apply_node(const ir::ToGlobal& n, std::span<const Value> args) { return apply(n.f, args); }
  Value apply_node(const ir::ToLocal& n, std::span<const Value> args) { return apply(n.f, args); }
  Value apply_node(const ir::ToPrivate& n, std::span<const Value> args) { return apply(n.f, args); }

private:
  Value map(const ir::Fun& f, std::span<const Value> args);
  Value reduce(const ir::Fun& f, const ir::Expr& init, std::span<const Value> args);
  Value lookup(const ir::Param& p) const;
  Value eval_call(const ir::Call& call);

  const Sizes& sizes_;
  /// Bound parameters, innermost last (parameter ids are unique, so the scan finds the binding).
  std::vector<std::pair<uint64_t, Value>> env_;
  std::unordered_map<const arith::Node*, int64_t> size_cache_;
};

} // namespace liftx::interp
