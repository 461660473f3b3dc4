#pragma once
/// Our own compiled copy of an XGBoost tree ensemble, for prediction: the margins it gives are
/// bit-for-bit XGBoost's (1.7's CPU predictor), several times faster, and without a DMatrix per
/// call (ranking a variant space predicts millions of rows, 4,096 at a time).
///
/// What it reproduces of XGBoost: every feature is converted to float; a node sends a row LEFT
/// when `value < split_condition` (float comparison) and missing values (NaN) to the node's
/// default child; a row's margin is accumulated in float, starting from the base score and adding
/// tree 0, tree 1, ... in order. Unlike XGBoost, which refuses infinite feature values (doubles
/// beyond float's range become infinite), it compares them like any other value.
///
/// Built from XGBoost's model as JSON (nlohmann's parse of XGBoosterSaveModelToBuffer's "ubj",
/// whose float32 values are exact, or "json" output). Only what Booster trains is accepted:
/// gbtree, objectives whose base score is already a margin (reg:squarederror, rank:pairwise), one
/// output, numerical splits. Everything in the JSON is validated (child and split indices, node
/// counts, cycles): a malformed or unsupported model is a UserError, never an out-of-bounds read.
///
/// Rows of a variant space come in runs that share most features (one kernel's launches): where
/// the values of a block's (or a group's) rows of a node's feature all lie on one side of its
/// threshold, the level is walked once for them all. The margins are the same either way.
///
/// Ranking keeps only rows above a floor (the worst row kept so far): margins_reaching() stops a
/// group of rows once the largest leaves the remaining trees can give them (within the block's
/// feature ranges) cannot lift any of them to its floor.
///
/// Immutable once built; margins() may be called from many threads at once.
#include "model/model.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace liftx::model {

class TreeEnsemble {
public:
  /// No trees, no features: margins() gives the base score 0 for every row.
  TreeEnsemble() = default;

  /// From XGBoost's model document (the object with "learner" and "version").
  static TreeEnsemble from_xgboost_json(const nlohmann::json& model);
  /// From XGBoost's model as Universal Binary JSON (XGBoosterSaveModelToBuffer, "ubj").
  static TreeEnsemble from_xgboost_ubj(std::string_view bytes);

  /// One margin per row of `rows` (rows x features()), exactly as XGBoost predicts it (a float,
  /// widened to double).
  std::vector<double> margins(const Matrix& rows) const;

  /// margins() for the rows that may reach their floor (`floors`, one per row): a group of kLanes
  /// rows whose margins are all certainly below their floors, by the largest leaves the trees not
  /// yet added can give a row of its block, stops early and its margins are -infinity. Every row
  /// whose margin is at least its floor gets margins()'s value, bit for bit. Ranking keeps a few
  /// thousand of millions of rows: the rest need not be finished.
  std::vector<double> margins_reaching(const Matrix& rows, const std::vector<double>& floors) const;

  /// No row's margin exceeds this (the base score plus every tree's largest leaf, and the float
  /// rounding of their sum); infinity when a leaf is not finite.
  double highest_margin() const;

  int features() const { return features_; }
  size_t trees() const { return trees_.size(); }
  float base_score() const { return base_score_; }
  /// The deepest tree's depth (edges from root to leaf).
  int depth() const;

private:
  /// Rows traversed together: each tree stays in L1 while a block of rows walks it, and the
  /// rows' independent walks overlap in the pipeline.
  static constexpr uint32_t kBlockRows = 64;
  /// Rows of a block that walk a tree side by side, their nodes in registers.
  static constexpr uint32_t kLanes = 8;
  static constexpr uint32_t kAllGroups = (1u << (kBlockRows / kLanes)) - 1;
  static_assert(kBlockRows / kLanes <= 32, "a group's bit in a 32-bit mask");
  /// Trees added between two checks of whether a block's rows may still reach their floors.
  static constexpr size_t kTreesPerCheck = 16;
  /// Trees up to this depth are stored complete (2^depth - 1 nodes, 12 KiB at most).
  static constexpr uint32_t kMaxCompleteDepth = 10;

  /// Every row walks exactly its tree's depth, without testing for leaves: a leaf above the
  /// bottom sends every row left, to itself (linked layout) or to copies of itself (complete
  /// layout), through nodes whose threshold is NaN and whose missing values go left.
  ///
  /// Complete layout (every tree of the ensemble at most kMaxCompleteDepth deep): node i's
  /// children are 2i + 1 and 2i + 2, so a step loads no child index.
  struct CompleteNode {
    uint32_t value_offset; ///< split feature * kBlockRows: where its values start in a block
    float threshold;       ///< go right when value >= threshold (NaN: never)
  };
  /// Linked layout (deeper trees): children are adjacent, left and left + 1; a leaf's left child
  /// is itself.
  struct LinkedNode {
    uint32_t value_offset;
    float threshold;
    uint32_t left;          ///< byte offset of the left child within the tree
    uint32_t default_right; ///< 1: a missing value goes right
  };
  static_assert(sizeof(LinkedNode) == 16);
  struct Tree {
    uint32_t first_node; ///< index of its root in the layout's nodes
    uint32_t first_leaf; ///< complete: index of its first bottom leaf in leaf_values_
    uint32_t depth;      ///< the longest root-to-leaf path, in edges
  };

  /// The smallest and largest value of each feature over the rows of a block (block_low[feature])
  /// and over each group of kLanes of them (group_low[feature * (kBlockRows / kLanes) + group]);
  /// likewise the highs. Complete layout only.
  struct RowRanges {
    std::vector<float> block_low, block_high, group_low, group_high;
  };
  template <bool has_missing>
  void add_complete_trees(size_t first, size_t last, uint32_t live_groups,
                          const float* block_values, const RowRanges& ranges,
                          float* block_margins) const;
  template <bool has_missing>
  void add_linked_trees(size_t first, size_t last, uint32_t live_groups, const float* block_values,
                        float* block_margins) const;
  void make_complete();
  void make_bounds();
  /// Margins, the blocks whose rows all fall short of `floors` (when given) left unfinished.
  std::vector<double> margins_from(const Matrix& rows, const double* floors) const;
  /// Adds trees [first, last) to the margins of a block's groups of lanes whose bit is set in
  /// `live_groups` (group g: rows g * kLanes, ...).
  void add_trees(size_t first, size_t last, uint32_t live_groups, bool has_missing,
                 const float* block_values, const RowRanges& ranges, float* block_margins) const;
  /// Whether a row whose margin after `added` trees is `margin` may still end at `floor` or above,
  /// when the trees still to come add at most `highest_rest`.
  bool may_reach(float margin, size_t added, double highest_rest, double floor) const;
  /// highest_rest_ for the rows of one block (complete layout, no missing values): per tree
  /// count t, the sum over trees t, t + 1, ... of the largest leaf a row within the block's
  /// feature ranges can reach.
  void block_highest_rest(const RowRanges& ranges, std::vector<double>& rest) const;

  int features_ = 0;
  float base_score_ = 0;
  std::vector<Tree> trees_;
  bool complete_ = false;
  std::vector<CompleteNode> complete_nodes_;
  std::vector<uint8_t>
      complete_default_right_; ///< per complete node: 1, a missing value goes right
  std::vector<LinkedNode> linked_nodes_;
  /// Complete: 2^depth per tree, the bottom row. Linked: per node (0 for internal nodes).
  std::vector<float> leaf_values_;
  /// Per tree count t (trees_.size() + 1 entries): the sum of the largest leaf, and of the largest
  /// leaf magnitude, of trees t, t + 1, ...: the most those trees can add to a margin.
  std::vector<double> highest_rest_, magnitude_rest_;
  /// Every leaf finite, so that the bounds above hold (margins_reaching finishes every row
  /// otherwise).
  bool bounded_ = false;
  /// Complete layout, per internal node: the largest leaf below it.
  std::vector<float> complete_highest_below_;
};

} // namespace liftx::model
