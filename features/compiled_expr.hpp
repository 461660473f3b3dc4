#pragma once
/// Fast repeated evaluation of arith expressions (features evaluate the same index expressions
/// for many threads and launches): an expression is flattened once into an array of nodes whose
/// variables are slots of a shared table, then evaluated from slot values without any lookup by
/// name. Semantics are those of arith::evaluate (exact rationals, C division and remainder).
///
/// A warp's lanes evaluate the same expression with different loop variables: evaluate_lanes
/// walks the nodes once over arrays of lanes instead of once per lane (the per-lane walk was a
/// third of ranking a whole variant space).
#include "ir/arith/expr.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace liftx::features {

/// Numbers the variables of every expression compiled against it.
class SlotTable {
public:
  /// The slot of a variable (created on first use).
  int slot(const arith::Expr& var);
  int size() const { return static_cast<int>(vars_.size()); }
  const std::vector<arith::Expr>& vars() const { return vars_; }

private:
  std::unordered_map<arith::Expr, int> slots_;
  std::vector<arith::Expr> vars_;
};

/// The buffers of a lane-batched evaluation, reused across calls so that it allocates nothing
/// once warmed up. The lanes of evaluate_all_lanes' results live here until the next call.
struct LaneScratch {
  std::vector<int64_t> rows;          ///< computed nodes' lanes: node k's from k * lanes
  std::vector<const int64_t*> row_of; ///< each node's lanes: in `rows` or in the values
  std::vector<uint8_t> uniform;       ///< per node: the same value in every lane
  /// Whose constants `rows` hold (CompiledExpr's id, 0 none) for how many lanes: evaluating
  /// the same expression again (the next launch of a kernel) need not fill them again.
  uint64_t constants_of = 0;
  size_t constants_lanes = 0;
};

class CompiledExpr {
public:
  CompiledExpr() = default;
  CompiledExpr(const arith::Expr& e, SlotTable& slots);
  /// Several expressions compiled together (for evaluate_all_lanes): a subexpression they share
  /// is one node, evaluated once. evaluate() and evaluate_lanes() take the first.
  CompiledExpr(const std::vector<arith::Expr>& roots, SlotTable& slots);

  /// The integer value with variables taken from `values` (indexed by slot). UserError on a
  /// division by zero, an inexact exact division or an int64 overflow.
  int64_t evaluate(const std::vector<int64_t>& values) const;
  /// The value for each of `lanes` lanes at once: slot s of lane l is `values[s * lanes + l]`,
  /// lane l's result goes to `out[l]`. Only lanes with `active[l] != 0` count. True when every
  /// active lane's value is exactly evaluate()'s; false (out unspecified) when any active lane
  /// would need more than int64 arithmetic or may fail (a rational constant or negative power,
  /// an overflow, a division by zero, even in a select branch the lane does not take): the
  /// caller then evaluates those lanes with evaluate(), which returns or throws as always.
  /// `uniform_slots` (indexed by slot; optional) flags the slots whose value is the same in every
  /// lane: what depends only on them is computed once, not per lane.
  bool evaluate_lanes(const int64_t* values, size_t lanes, const uint8_t* active, int64_t* out,
                      LaneScratch& scratch, const uint8_t* uniform_slots = nullptr) const;
  /// evaluate_lanes for every root at once: root r of lane l is `rows[r][l]` (rows resized here;
  /// they point into `scratch` or `values`, valid until either changes). False (rows
  /// unspecified) when any node would fail in any lane, active or not: the caller then
  /// evaluates each expression on its own.
  bool evaluate_all_lanes(const int64_t* values, size_t lanes, std::vector<const int64_t*>& rows,
                          LaneScratch& scratch, const uint8_t* uniform_slots) const;
  size_t roots() const { return roots_.size(); }
  bool is_constant() const { return nodes_.size() == 1 && nodes_[0].kind == arith::Kind::Cst; }
  /// Does the expression read a slot flagged in `slots` (indexed by slot; missing = unflagged)?
  bool uses_any(const std::vector<bool>& slots) const;
  const arith::Expr& source() const { return source_; }

private:
  struct Value {
    int64_t num;
    int64_t den;
  };
  struct FlatNode {
    arith::Kind kind;
    arith::CmpOp cmp = arith::CmpOp::Lt;
    int64_t num = 0; ///< Cst numerator / Pow exponent
    int64_t den = 1; ///< Cst denominator
    int slot = -1;   ///< Var
    int first = 0;   ///< operands: children_[first, first + count)
    int count = 0;
  };
  int flatten(const arith::Expr& e, SlotTable& slots, std::unordered_map<arith::Expr, int>& memo);
  /// Every node's value in every lane (at scratch.row_of[k]); per-lane failures flagged in
  /// `failed` (lanes values, zeroed here), failures of lane-independent nodes in
  /// `uniform_failed`.
  void compute_rows(const int64_t* values, size_t lanes, int64_t* failed, int64_t& uniform_failed,
                    LaneScratch& scratch, const uint8_t* uniform_slots) const;
  Value eval(int node, const std::vector<int64_t>& values) const;
  int64_t integer(int node, const std::vector<int64_t>& values) const;

  arith::Expr source_;
  std::vector<FlatNode> nodes_;
  std::vector<int> children_;
  int root_ = 0;
  std::vector<int> roots_; ///< the node of each expression compiled (root_ first)
  /// No rational constant and no negative power: every value of every node is an integer, so
  /// evaluate_lanes may use int64 arithmetic throughout.
  bool integer_only_ = true;
  /// Unique to each expression compiled (a copy shares it: the same nodes), for LaneScratch.
  uint64_t id_ = 0;
};

} // namespace liftx::features
