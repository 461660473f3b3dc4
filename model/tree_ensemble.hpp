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
  void add_complete_trees(const float* block_values, const RowRanges& ranges,
                          float* block_margins) const;
  template <bool has_missing>
  void add_linked_trees(const float* block_values, float* block_margins) const;
  void make_complete();

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
};

} // namespace liftx::model
