#pragma once
/// The expression evaluator of the interpreter (internal to liftx_interp).
#include "ir/expr.hpp"
#include "ir/interp/interp.hpp"
#include "ir/interp/value.hpp"

#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace liftx::interp {

/// Evaluates expressions under bound parameters. One evaluator per thread: the parallel map
/// copies it into each worker, so no state is shared mutably between threads.
class Evaluator {
public:
  /// `threads` > 1 evaluates the outermost map in parallel chunks (results are bit-identical to
  /// the sequential order, since every element is computed independently the same way).
  explicit Evaluator(const Sizes& sizes, int threads = 1) : sizes_(sizes), threads_(threads) {}

  /// Records the closed calls of `body` (calls without free parameters, e.g. a weight array
  /// built inside a per-point lambda), so each is evaluated once and then reused.
  void prepare(const ir::Expr& body);

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
  Value apply_node(const ir::Tuple& n, std::span<const Value> args);
  Value apply_node(const ir::Split& n, std::span<const Value> args);
  Value apply_node(const ir::Join& n, std::span<const Value> args);
  Value apply_node(const ir::Slide& n, std::span<const Value> args);
  Value apply_node(const ir::SlideShifted& n, std::span<const Value> args);
  Value apply_node(const ir::JoinShifted& n, std::span<const Value> args);
  Value apply_node(const ir::Pad& n, std::span<const Value> args);
  Value apply_node(const ir::At& n, std::span<const Value> args);
  Value apply_node(const ir::Get& n, std::span<const Value> args);
  Value apply_node(const ir::Transpose& n, std::span<const Value> args);
  Value apply_node(const ir::Id& n, std::span<const Value> args);
  Value apply_node(const ir::Generate& n, std::span<const Value> args);
  Value apply_node(const ir::ToGlobal& n, std::span<const Value> args) { return apply(n.f, args); }
  Value apply_node(const ir::ToLocal& n, std::span<const Value> args) { return apply(n.f, args); }
  Value apply_node(const ir::ToLocalPadded& n, std::span<const Value> args) {
    return apply(n.f, args);
  }
  Value apply_node(const ir::ToPrivate& n, std::span<const Value> args) { return apply(n.f, args); }
  // Vectors are arrays of their components here: asVector is a split, asScalar a join.
  Value apply_node(const ir::AsVector& n, std::span<const Value> args);
  Value apply_node(const ir::AsScalar& n, std::span<const Value> args);
  Value apply_node(const ir::Vectorize& n, std::span<const Value> args);
  Value apply_node(const ir::MapSeqSlide& n, std::span<const Value> args);

private:
  Value map(const ir::Fun& f, std::span<const Value> args);
  static constexpr size_t kMaxSpread = 8;
  /// The zip node of `a` when f takes one parameter per zipped array (2..kMaxSpread), else null.
  static const ZipView* spreadable_zip(const ir::Fun& f, const ArrayRef& a);
  /// Element i of `a` applied to f; with `zip` (spreadable_zip), the element's components are
  /// passed directly, exactly as spreading the zip's tuple would, without building it.
  Value apply_to_element(const ir::Fun& f, const ArrayRef& a, const ZipView* zip, int64_t i);
  Value parallel_map(const ir::Fun& f, const ArrayRef& a, int64_t n, int threads);
  const Value& lookup_ref(const ir::Param& p) const;
  Value reduce(const ir::Fun& f, const ir::Expr& init, std::span<const Value> args);
  Value lookup(const ir::Param& p) const;
  Value eval_call(const ir::Call& call);

  const Sizes& sizes_;
  /// Bound parameters, innermost last (parameter ids are unique, so the scan finds the binding).
  std::vector<std::pair<uint64_t, Value>> env_;
  std::unordered_map<const arith::Node*, int64_t> size_cache_;
  int threads_ = 1;
  /// Maps, reduces and generates being evaluated around the current point; only a map at depth
  /// 0 of the main evaluator runs in parallel.
  int nesting_ = 0;
  bool worker_ = false;
  /// Identities of closed calls (shared read-only by workers) and their values once evaluated.
  std::shared_ptr<const std::unordered_set<const void*>> closed_;
  std::unordered_map<const void*, Value> memo_;
};

} // namespace liftx::interp
