#include "model/tree_ensemble.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace liftx::model {

namespace {

constexpr uint32_t kLinkedNodeBytes = 16;

using nlohmann::json;

// Far beyond any model liftx trains (46 features, 127 nodes a tree), small enough that
// feature * kBlockRows and node indices fit 32 bits.
constexpr int64_t kMaxFeatures = 1 << 20;
constexpr int64_t kMaxNodesPerTree = 1 << 24;
constexpr int64_t kMaxTrees = 1 << 20;

[[noreturn]] void malformed(const std::string& what) {
  throw UserError(fmt::format("XGBoost model: {}", what));
}

const json& member(const json& object, const char* key, const std::string& where) {
  if (!object.is_object())
    malformed(fmt::format("{} is not an object", where));
  const auto it = object.find(key);
  if (it == object.end())
    malformed(fmt::format("{} has no \"{}\"", where, key));
  return *it;
}

const json& array_member(const json& object, const char* key, const std::string& where) {
  const json& value = member(object, key, where);
  if (!value.is_array())
    malformed(fmt::format("{}.{} is not an array", where, key));
  return value;
}

std::string string_member(const json& object, const char* key, const std::string& where) {
  const json& value = member(object, key, where);
  if (!value.is_string())
    malformed(fmt::format("{}.{} is not a string", where, key));
  return value.get<std::string>();
}

/// XGBoost stores its parameters as strings ("46").
int64_t integer_parameter(const json& object, const char* key, const std::string& where) {
  const std::string text = string_member(object, key, where);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    malformed(fmt::format("{}.{} is \"{}\", not an integer", where, key, text));
  return value;
}

/// XGBoost writes floats as the shortest decimal that reads back as the same float, and reads
/// them with a correctly rounded float parser: from_chars<float> gives the same value (a parse
/// through double could round twice).
float float_parameter(const json& object, const char* key, const std::string& where) {
  const std::string text = string_member(object, key, where);
  float value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    malformed(fmt::format("{}.{} is \"{}\", not a number", where, key, text));
  return value;
}

int64_t integer_element(const json& array, size_t i, const char* name, const std::string& where) {
  const json& value = array[i];
  if (value.is_boolean()) // default_left: booleans in some XGBoost versions, 0/1 in others
    return value.get<bool>() ? 1 : 0;
  if (!value.is_number_integer())
    malformed(fmt::format("{}: {}[{}] is not an integer", where, name, i));
  if (value.is_number_unsigned())
    return static_cast<int64_t>(std::min<uint64_t>(value.get<uint64_t>(), INT64_MAX));
  return value.get<int64_t>();
}

/// The value as XGBoost holds it: float32 (exact from UBJSON, where floats are stored as bits).
float float_element(const json& array, size_t i, const char* name, const std::string& where) {
  const json& value = array[i];
  if (!value.is_number())
    malformed(fmt::format("{}: {}[{}] is not a number", where, name, i));
  return static_cast<float>(value.get<double>());
}

/// Objectives whose base score XGBoost uses as the margin unchanged (ProbToMargin is the
/// identity): the two that Booster trains.
bool margin_is_base_score(const std::string& objective) {
  return objective == "reg:squarederror" || objective == "rank:pairwise";
}

/// Refuses objectives whose base score is not the margin.
void check_objective(const json& learner) {
  const json& objective = member(learner, "objective", "learner");
  const std::string objective_name = string_member(objective, "name", "learner.objective");
  if (!margin_is_base_score(objective_name))
    malformed(fmt::format("objective {} is not supported (reg:squarederror or rank:pairwise)",
                          objective_name));
}

struct LearnerParameters {
  int64_t features;
  float base_score;
};

/// learner.learner_model_param: the feature count and base score of a model with one output.
LearnerParameters read_learner_parameters(const json& learner) {
  const json& parameters = member(learner, "learner_model_param", "learner");
  const std::string parameters_name = "learner.learner_model_param";
  LearnerParameters out;
  out.features = integer_parameter(parameters, "num_feature", parameters_name);
  if (out.features < 0 || out.features > kMaxFeatures)
    malformed(fmt::format("{} features", out.features));
  out.base_score = float_parameter(parameters, "base_score", parameters_name);
  const int64_t classes = integer_parameter(parameters, "num_class", parameters_name);
  const int64_t targets = parameters.contains("num_target")
                              ? integer_parameter(parameters, "num_target", parameters_name)
                              : 1;
  if (classes > 1 || targets != 1)
    malformed(fmt::format("{} classes and {} targets (one output is supported)", classes, targets));
  return out;
}

/// A gbtree's "trees" and "tree_info" (each tree's output group), checked against its declared
/// tree count.
struct GbtreeTrees {
  const json& trees;
  const json& tree_info;
};

GbtreeTrees gbtree_trees(const json& learner) {
  const json& booster = member(learner, "gradient_booster", "learner");
  // dart weighs its trees and gblinear has none: only gbtree sums its trees as they are.
  const std::string booster_name = string_member(booster, "name", "learner.gradient_booster");
  if (booster_name != "gbtree")
    malformed(fmt::format("booster {} is not supported (gbtree)", booster_name));
  const json& gbtree = member(booster, "model", "learner.gradient_booster");
  const std::string gbtree_name = "learner.gradient_booster.model";
  const json& trees = array_member(gbtree, "trees", gbtree_name);
  const json& tree_info = array_member(gbtree, "tree_info", gbtree_name);
  const int64_t declared_trees = integer_parameter(
      member(gbtree, "gbtree_model_param", gbtree_name), "num_trees", gbtree_name);
  if (declared_trees != static_cast<int64_t>(trees.size()) || tree_info.size() != trees.size() ||
      trees.size() > static_cast<size_t>(kMaxTrees))
    malformed(fmt::format("{} trees declared, {} stored, {} in tree_info", declared_trees,
                          trees.size(), tree_info.size()));
  return GbtreeTrees{trees, tree_info};
}

/// Refuses tree t of another output group than 0.
void check_output_group(const GbtreeTrees& gbtree, size_t t, const std::string& where) {
  if (integer_element(gbtree.tree_info, t, "tree_info", "learner.gradient_booster.model") != 0)
    malformed(fmt::format("{} belongs to output group {} (one output is supported)", where,
                          gbtree.tree_info[t].dump()));
}

/// One tree's node arrays, all of its declared node count.
struct TreeArrays {
  const json& left;
  const json& right;
  const json& split_index;
  const json& condition;
  const json& default_left;
  size_t nodes;
};

TreeArrays tree_arrays(const json& tree, const std::string& where) {
  const json& left = array_member(tree, "left_children", where);
  const json& right = array_member(tree, "right_children", where);
  const json& split_index = array_member(tree, "split_indices", where);
  const json& condition = array_member(tree, "split_conditions", where);
  const json& default_left = array_member(tree, "default_left", where);
  const int64_t declared_nodes =
      integer_parameter(member(tree, "tree_param", where), "num_nodes", where + ".tree_param");
  const size_t nodes = left.size();
  if (declared_nodes != static_cast<int64_t>(nodes) || right.size() != nodes ||
      split_index.size() != nodes || condition.size() != nodes || default_left.size() != nodes ||
      nodes == 0 || nodes > static_cast<size_t>(kMaxNodesPerTree))
    malformed(fmt::format("{} declares {} nodes; its arrays hold {} left children, {} right "
                          "children, {} split indices, {} conditions, {} default directions",
                          where, declared_nodes, nodes, right.size(), split_index.size(),
                          condition.size(), default_left.size()));
  if (tree.contains("split_type")) {
    const json& split_type = array_member(tree, "split_type", where);
    for (size_t i = 0; i < split_type.size(); ++i)
      if (integer_element(split_type, i, "split_type", where) != 0)
        malformed(fmt::format("{}: node {} splits on categories (not supported)", where, i));
  }
  return TreeArrays{left, right, split_index, condition, default_left, nodes};
}

/// A node of a tree renumbered breadth first (its index: its position in WalkedTree::nodes).
struct WalkedNode {
  bool leaf;
  float value;         ///< leaf: its value
  int64_t feature;     ///< split: the feature it tests
  float threshold;     ///< split: go right when value >= threshold
  uint32_t left_child; ///< split: the new index of its left child (the right one follows)
  bool missing_left;   ///< split: a missing value goes left
};

struct WalkedTree {
  std::vector<WalkedNode> nodes;
  uint32_t depth = 0;
};

/// Breadth first from the root, renumbering so that children are adjacent; a node reached
/// twice means a cycle or a shared subtree. Unreachable (deleted) nodes are left out.
WalkedTree walk_tree(const TreeArrays& tree, int64_t features, const std::string& where) {
  WalkedTree out;
  const size_t nodes = tree.nodes;
  std::vector<int64_t> renumbered(nodes, -1);
  std::vector<size_t> order{0}; // original index of each new node
  std::vector<uint32_t> depth{0};
  renumbered[0] = 0;
  for (size_t next = 0; next < order.size(); ++next) {
    const size_t original = order[next];
    const auto self = static_cast<uint32_t>(next);
    const int64_t l = integer_element(tree.left, original, "left_children", where);
    const int64_t r = integer_element(tree.right, original, "right_children", where);
    if (l == -1) {
      if (r != -1)
        malformed(
            fmt::format("{}: node {} has a right child ({}) but no left", where, original, r));
      out.nodes.push_back({true, float_element(tree.condition, original, "split_conditions", where),
                           0, 0, 0, false});
      continue;
    }
    if (l < 0 || l >= static_cast<int64_t>(nodes) || r < 0 || r >= static_cast<int64_t>(nodes))
      malformed(fmt::format("{}: node {} has children {} and {}, outside its {} nodes", where,
                            original, l, r, nodes));
    // XGBoost's predictor takes the right child to be left + 1 (so do its trees, which
    // allocate children in pairs): refuse any other tree rather than guess which it means.
    if (r != l + 1)
      malformed(
          fmt::format("{}: node {} has children {} and {}, not adjacent", where, original, l, r));
    if (renumbered[static_cast<size_t>(l)] != -1 || renumbered[static_cast<size_t>(r)] != -1)
      malformed(fmt::format("{}: node {} or {} is reached twice (a cycle)", where, l, r));
    const int64_t feature = integer_element(tree.split_index, original, "split_indices", where);
    if (feature < 0 || feature >= features)
      malformed(fmt::format("{}: node {} splits on feature {} of {}", where, original, feature,
                            features));
    float threshold = float_element(tree.condition, original, "split_conditions", where);
    // XGBoost sends every present value right at a NaN threshold (value < NaN is false); so
    // does -inf, which keeps NaN thresholds for leaves.
    if (std::isnan(threshold))
      threshold = -std::numeric_limits<float>::infinity();
    const auto left_child = static_cast<uint32_t>(order.size());
    renumbered[static_cast<size_t>(l)] = left_child;
    renumbered[static_cast<size_t>(r)] = left_child + 1;
    order.push_back(static_cast<size_t>(l));
    order.push_back(static_cast<size_t>(r));
    depth.push_back(depth[self] + 1);
    depth.push_back(depth[self] + 1);
    out.depth = std::max(out.depth, depth[self] + 1);
    const bool missing_left = integer_element(tree.default_left, original, "default_left", where);
    out.nodes.push_back({false, 0, feature, threshold, left_child, missing_left});
  }
  return out;
}

} // namespace

TreeEnsemble TreeEnsemble::from_xgboost_ubj(std::string_view bytes) {
  json model;
  try {
    model = json::from_ubjson(bytes);
  } catch (const json::exception& e) {
    malformed(fmt::format("not Universal Binary JSON: {}", e.what()));
  }
  return from_xgboost_json(model);
}

TreeEnsemble TreeEnsemble::from_xgboost_json(const json& model) {
  const json& learner = member(model, "learner", "the model");
  check_objective(learner);
  const LearnerParameters parameters = read_learner_parameters(learner);
  TreeEnsemble out;
  out.features_ = static_cast<int>(parameters.features);
  out.base_score_ = parameters.base_score;
  const GbtreeTrees gbtree = gbtree_trees(learner);

  for (size_t t = 0; t < gbtree.trees.size(); ++t) {
    const std::string where = fmt::format("tree {}", t);
    check_output_group(gbtree, t, where);
    const WalkedTree tree =
        walk_tree(tree_arrays(gbtree.trees[t], where), parameters.features, where);
    const auto first = static_cast<uint32_t>(out.linked_nodes_.size());
    for (size_t self = 0; self < tree.nodes.size(); ++self) {
      const WalkedNode& node = tree.nodes[self];
      // A leaf's left child is itself.
      if (node.leaf)
        out.linked_nodes_.push_back({0, std::numeric_limits<float>::quiet_NaN(),
                                     static_cast<uint32_t>(self) * kLinkedNodeBytes, 0});
      else
        out.linked_nodes_.push_back({static_cast<uint32_t>(node.feature) * kBlockRows,
                                     node.threshold, node.left_child * kLinkedNodeBytes,
                                     node.missing_left ? 0u : 1u});
      out.leaf_values_.push_back(node.leaf ? node.value : 0);
    }
    out.trees_.push_back({first, first, tree.depth});
  }
  LIFTX_INTERNAL_CHECK(out.linked_nodes_.size() < std::numeric_limits<uint32_t>::max() / 16,
                       "{} nodes in the ensemble", out.linked_nodes_.size());
  // Complete trees only where they stay small: a sparse tree (a deep chain) would grow 2^depth.
  size_t complete_nodes = 0;
  bool shallow = true;
  for (const Tree& tree : out.trees_) {
    shallow = shallow && tree.depth <= kMaxCompleteDepth;
    complete_nodes += size_t{1} << std::min(tree.depth, kMaxCompleteDepth);
  }
  if (shallow && complete_nodes <= 4 * out.linked_nodes_.size() + (1 << 20))
    out.make_complete();
  out.make_bounds();
  return out;
}

void TreeEnsemble::make_bounds() {
  bounded_ = true;
  complete_highest_below_.assign(complete_nodes_.size(), 0.0f);
  highest_rest_.assign(trees_.size() + 1, 0.0);
  magnitude_rest_.assign(trees_.size() + 1, 0.0);
  for (size_t t = trees_.size(); t-- > 0;) {
    const Tree& tree = trees_[t];
    double highest = -std::numeric_limits<double>::infinity(), magnitude = 0;
    auto leaf = [&](float value) {
      highest = std::max(highest, double{value});
      magnitude = std::max(magnitude, std::abs(double{value}));
    };
    if (complete_) {
      const float* leaves = leaf_values_.data() + tree.first_leaf;
      for (size_t k = 0; k < (size_t{1} << tree.depth); ++k)
        leaf(leaves[k]);
      // Bottom-up: node i's children are 2i + 1 and 2i + 2, the bottom row the leaves.
      const size_t internal = (size_t{1} << tree.depth) - 1;
      float* below = complete_highest_below_.data() + tree.first_node;
      auto child = [&](size_t c) { return c < internal ? below[c] : leaves[c - internal]; };
      for (size_t n = internal; n-- > 0;)
        below[n] = std::max(child(2 * n + 1), child(2 * n + 2));
    } else {
      // A tree's nodes are contiguous from its root; a leaf is its own left child.
      const size_t end = t + 1 < trees_.size() ? trees_[t + 1].first_node : linked_nodes_.size();
      for (size_t n = tree.first_node; n < end; ++n)
        if (linked_nodes_[n].left == (n - tree.first_node) * kLinkedNodeBytes)
          leaf(leaf_values_[n]);
    }
    bounded_ = bounded_ && std::isfinite(highest) && std::isfinite(magnitude);
    highest_rest_[t] = highest_rest_[t + 1] + highest;
    magnitude_rest_[t] = magnitude_rest_[t + 1] + magnitude;
  }
}

void TreeEnsemble::block_highest_rest(const RowRanges& ranges, std::vector<double>& rest) const {
  rest.resize(trees_.size() + 1);
  rest[trees_.size()] = 0;
  const float* low = ranges.block_low.data();
  const float* high = ranges.block_high.data();
  for (size_t t = trees_.size(); t-- > 0;) {
    const Tree& tree = trees_[t];
    const CompleteNode* nodes = complete_nodes_.data() + tree.first_node;
    const float* below = complete_highest_below_.data() + tree.first_node;
    const float* leaves = leaf_values_.data() + tree.first_leaf;
    const uint32_t internal = (1u << tree.depth) - 1;
    auto highest_below = [&](uint32_t node) {
      return node < internal ? below[node] : leaves[node - internal];
    };
    // The largest leaf some value of the block's box [low, high] reaches (a NaN threshold sends
    // every value left, as in the walk): depth first, the branch with the larger leaves first,
    // skipping branches whose leaves cannot beat the best found.
    float highest = -std::numeric_limits<float>::infinity();
    uint32_t pending[kMaxCompleteDepth + 1];
    uint32_t count = 0;
    uint32_t node = 0;
    for (;;) {
      while (node < internal && highest_below(node) > highest) {
        const CompleteNode& n = nodes[node];
        const uint32_t feature = n.value_offset / kBlockRows;
        const uint32_t left = 2 * node + 1, right = left + 1;
        if (!(high[feature] >= n.threshold)) {
          node = left;
        } else if (low[feature] >= n.threshold) {
          node = right;
        } else {
          const bool right_first = highest_below(right) > highest_below(left);
          pending[count++] = right_first ? left : right;
          node = right_first ? right : left;
        }
      }
      if (node >= internal)
        highest = std::max(highest, leaves[node - internal]);
      if (count == 0)
        break;
      node = pending[--count];
    }
    rest[t] = rest[t + 1] + double{highest};
  }
}

double TreeEnsemble::highest_margin() const {
  if (!bounded_)
    return std::numeric_limits<double>::infinity();
  // As may_reach, from no tree added: each float partial sum rounds by at most 2^-24 of its
  // magnitude, counted four times over.
  const double magnitude = std::abs(double{base_score_}) + magnitude_rest_[0];
  return double{base_score_} + highest_rest_[0] +
         static_cast<double>(trees_.size() + 1) * std::ldexp(magnitude, -22);
}

bool TreeEnsemble::may_reach(float margin, size_t added, double highest_rest, double floor) const {
  // The float sums still to come round each partial sum by at most 2^-24 of its magnitude, which
  // stays below |margin| + magnitude_rest_; counted four times over.
  const double magnitude = std::abs(double{margin}) + magnitude_rest_[added];
  const double rounding =
      static_cast<double>(trees_.size() - added + 1) * std::ldexp(magnitude, -22);
  return double{margin} + highest_rest + rounding >= floor;
}

void TreeEnsemble::make_complete() {
  std::vector<CompleteNode> nodes;
  std::vector<uint8_t> default_right;
  std::vector<float> leaves;
  for (Tree& tree : trees_) {
    const uint32_t internal = (1u << tree.depth) - 1;
    const auto first_node = static_cast<uint32_t>(nodes.size());
    const auto first_leaf = static_cast<uint32_t>(leaves.size());
    // Until overwritten: nodes that send every row left, to the copies of a leaf above the bottom.
    nodes.resize(nodes.size() + internal, {0, std::numeric_limits<float>::quiet_NaN()});
    default_right.resize(nodes.size(), 0);
    leaves.resize(leaves.size() + internal + 1, 0.0f);
    // (linked node's byte offset, complete slot, level), depth first.
    std::vector<std::array<uint32_t, 3>> pending{{0, 0, 0}};
    while (!pending.empty()) {
      const auto [offset, slot, level] = pending.back();
      pending.pop_back();
      const LinkedNode& node = linked_nodes_[tree.first_node + offset / kLinkedNodeBytes];
      if (node.left == offset) { // a leaf: fill the bottom slots below it
        const uint32_t below = tree.depth - level;
        const uint32_t first_bottom = ((slot + 1) << below) - 1 - internal;
        std::fill_n(leaves.begin() + first_leaf + first_bottom, 1u << below,
                    leaf_values_[tree.first_node + offset / kLinkedNodeBytes]);
        continue;
      }
      nodes[first_node + slot] = {node.value_offset, node.threshold};
      default_right[first_node + slot] = static_cast<uint8_t>(node.default_right);
      pending.push_back({node.left, 2 * slot + 1, level + 1});
      pending.push_back({node.left + kLinkedNodeBytes, 2 * slot + 2, level + 1});
    }
    tree.first_node = first_node;
    tree.first_leaf = first_leaf;
  }
  complete_ = true;
  complete_nodes_ = std::move(nodes);
  complete_default_right_ = std::move(default_right);
  leaf_values_ = std::move(leaves);
  linked_nodes_.clear();
  linked_nodes_.shrink_to_fit();
}

// Both kernels: every row of a group walks exactly the tree's depth (leaves send rows to
// themselves or their copies); the rows' walks are independent, so they overlap in the pipeline.
// value >= threshold is !(value < threshold), XGBoost's "right", except for NaN, which XGBoost
// treats as missing: it takes the default direction.

namespace {

/// Descends from `node` at `level` while the rows' range of each node's feature [low, high]
/// lies on one side of its threshold, so that every row takes the same branch; `range_of(node)`
/// is where the node's feature's range is stored. A node that only copies a leaf downwards
/// (NaN threshold) leads to that leaf either way.
template <typename Node, typename RangeOf>
void descend_shared(const Node* nodes, uint32_t depth, const float* low, const float* high,
                    RangeOf range_of, size_t& node, uint32_t& level) {
  for (; level < depth; ++level) {
    const Node& n = nodes[node];
    const size_t range = range_of(n);
    if (!(high[range] >= n.threshold))
      node = 2 * node + 1;
    else if (low[range] >= n.threshold)
      node = 2 * node + 2;
    else
      return;
  }
}

} // namespace

template <bool has_missing>
void TreeEnsemble::add_complete_trees(size_t first, size_t last, uint32_t live_groups,
                                      const float* block_values, const RowRanges& ranges,
                                      float* block_margins) const {
  for (size_t t = first; t < last; ++t) {
    const Tree& tree = trees_[t];
    const CompleteNode* nodes = complete_nodes_.data() + tree.first_node;
    const uint8_t* default_right = complete_default_right_.data() + tree.first_node;
    const float* leaves = leaf_values_.data() + tree.first_leaf;
    const size_t internal = (size_t{1} << tree.depth) - 1;
    // The levels where every row takes the same branch are walked once: for the whole block,
    // then for each group of lanes. Not with missing values, whose direction is the node's own.
    size_t block_node = 0;
    uint32_t block_level = 0;
    if constexpr (!has_missing) {
      descend_shared(
          nodes, tree.depth, ranges.block_low.data(), ranges.block_high.data(),
          [](const CompleteNode& n) { return n.value_offset / kBlockRows; }, block_node,
          block_level);
      if (block_level == tree.depth) {
        const float leaf = leaves[block_node - internal];
        for (uint32_t row = 0; row < kBlockRows; ++row)
          block_margins[row] += leaf;
        continue;
      }
    }
    for (uint32_t group = 0; group < kBlockRows; group += kLanes) {
      if (!((live_groups >> (group / kLanes)) & 1))
        continue;
      size_t shared = block_node;
      uint32_t level = block_level;
      if constexpr (!has_missing)
        descend_shared(
            nodes, tree.depth, ranges.group_low.data(), ranges.group_high.data(),
            [column = group / kLanes](const CompleteNode& n) {
              return n.value_offset / kLanes + column; // feature * groups + column
            },
            shared, level);
      size_t at[kLanes];
      std::fill_n(at, kLanes, shared);
      const float* values = block_values + group;
      for (; level < tree.depth; ++level) {
#pragma GCC unroll 16
        for (uint32_t lane = 0; lane < kLanes; ++lane) {
          const CompleteNode& node = nodes[at[lane]];
          const float value = values[size_t{node.value_offset} + lane];
          size_t right = value >= node.threshold;
          if constexpr (has_missing)
            right |= default_right[at[lane]] & static_cast<size_t>(std::isnan(value));
          at[lane] = 2 * at[lane] + 1 + right;
        }
      }
#pragma GCC unroll 16
      for (uint32_t lane = 0; lane < kLanes; ++lane)
        block_margins[group + lane] += leaves[at[lane] - internal];
    }
  }
}

template <bool has_missing>
void TreeEnsemble::add_linked_trees(size_t first, size_t last, uint32_t live_groups,
                                    const float* block_values, float* block_margins) const {
  for (size_t t = first; t < last; ++t) {
    const Tree& tree = trees_[t];
    const auto* nodes = reinterpret_cast<const char*>(linked_nodes_.data() + tree.first_node);
    const float* leaves = leaf_values_.data() + tree.first_leaf;
    for (uint32_t group = 0; group < kBlockRows; group += kLanes) {
      if (!((live_groups >> (group / kLanes)) & 1))
        continue;
      size_t at[kLanes] = {}; // byte offsets: a child is one add away
      const float* values = block_values + group;
      for (uint32_t level = 0; level < tree.depth; ++level) {
#pragma GCC unroll 16
        for (uint32_t lane = 0; lane < kLanes; ++lane) {
          const auto& node = *reinterpret_cast<const LinkedNode*>(nodes + at[lane]);
          const float value = values[size_t{node.value_offset} + lane];
          size_t right = value >= node.threshold;
          if constexpr (has_missing)
            right |= node.default_right & static_cast<uint32_t>(std::isnan(value));
          at[lane] = size_t{node.left} + right * kLinkedNodeBytes;
        }
      }
#pragma GCC unroll 16
      for (uint32_t lane = 0; lane < kLanes; ++lane)
        block_margins[group + lane] += leaves[at[lane] / kLinkedNodeBytes];
    }
  }
}

int TreeEnsemble::depth() const {
  uint32_t deepest = 0;
  for (const Tree& tree : trees_)
    deepest = std::max(deepest, tree.depth);
  return static_cast<int>(deepest);
}

void TreeEnsemble::add_trees(size_t first, size_t last, uint32_t live_groups, bool has_missing,
                             const float* block_values, const RowRanges& ranges,
                             float* block_margins) const {
  if (complete_ && has_missing)
    add_complete_trees<true>(first, last, live_groups, block_values, ranges, block_margins);
  else if (complete_)
    add_complete_trees<false>(first, last, live_groups, block_values, ranges, block_margins);
  else if (has_missing)
    add_linked_trees<true>(first, last, live_groups, block_values, block_margins);
  else
    add_linked_trees<false>(first, last, live_groups, block_values, block_margins);
}

std::vector<double> TreeEnsemble::margins(const Matrix& rows) const {
  return margins_from(rows, nullptr);
}

std::vector<double> TreeEnsemble::margins_reaching(const Matrix& rows,
                                                   const std::vector<double>& floors) const {
  LIFTX_INTERNAL_CHECK(floors.size() == static_cast<size_t>(rows.rows()), "{} floors for {} rows",
                       floors.size(), rows.rows());
  return margins_from(rows, floors.data());
}

std::vector<double> TreeEnsemble::margins_from(const Matrix& rows, const double* floors) const {
  LIFTX_INTERNAL_CHECK(rows.cols() == features_, "{} feature columns for an ensemble of {}",
                       rows.cols(), features_);
  const auto count = static_cast<size_t>(rows.rows());
  std::vector<double> out(count);
  // Column-major block: the values of feature f are block[f * kBlockRows + r]. Rows past the end
  // of the matrix stay 0; their margins are dropped.
  std::vector<float> block(static_cast<size_t>(features_) * kBlockRows, 0.0f);
  std::array<float, kBlockRows> block_margins{};
  std::vector<double> block_rest;
  RowRanges ranges;
  if (complete_) {
    ranges.group_low.resize(static_cast<size_t>(features_) * (kBlockRows / kLanes));
    ranges.group_high.resize(ranges.group_low.size());
    ranges.block_low.resize(static_cast<size_t>(features_));
    ranges.block_high.resize(ranges.block_low.size());
  }
  for (size_t begin = 0; begin < count; begin += kBlockRows) {
    const size_t size = std::min<size_t>(kBlockRows, count - begin);
    bool has_missing = false;
    for (int f = 0; f < features_; ++f) {
      float* column = block.data() + static_cast<size_t>(f) * kBlockRows;
      const double* source = rows.col(f).data() + begin;
      for (size_t r = 0; r < size; ++r) {
        column[r] = static_cast<float>(source[r]); // as XGBoost's DMatrix stores it
        has_missing |= std::isnan(column[r]);
      }
      if (!complete_)
        continue;
      // Over the rows of the matrix only: rows past its end hold an earlier block's values
      // (NaN too), and their margins are dropped whichever way they go.
      float* block_low = &ranges.block_low[static_cast<size_t>(f)];
      float* block_high = &ranges.block_high[static_cast<size_t>(f)];
      *block_low = std::numeric_limits<float>::infinity();
      *block_high = -std::numeric_limits<float>::infinity();
      for (uint32_t group = 0; group < kBlockRows; group += kLanes) {
        const size_t range = static_cast<size_t>(f) * (kBlockRows / kLanes) + group / kLanes;
        const size_t end = std::min<size_t>(group + kLanes, size);
        if (end <= group) {
          ranges.group_low[range] = ranges.group_high[range] = 0;
          continue;
        }
        const auto [low, high] = std::minmax_element(column + group, column + end);
        ranges.group_low[range] = *low;
        ranges.group_high[range] = *high;
        *block_low = std::min(*block_low, *low);
        *block_high = std::max(*block_high, *high);
      }
    }
    block_margins.fill(base_score_);
    if (!floors || !bounded_) {
      add_trees(0, trees_.size(), kAllGroups, has_missing, block.data(), ranges,
                block_margins.data());
      for (size_t r = 0; r < size; ++r)
        out[begin + r] = block_margins[r];
      continue;
    }
    // The same sums in the same order, for the groups of lanes with a row that may still reach
    // its floor by the most the trees still to come can add to a row of this block: checked
    // before the first tree and every kTreesPerCheck trees after it.
    const double* rest = highest_rest_.data();
    if (complete_ && !has_missing &&
        std::any_of(floors + begin, floors + begin + size,
                    [](double f) { return std::isfinite(f); })) {
      block_highest_rest(ranges, block_rest);
      rest = block_rest.data();
    }
    uint32_t live = 0;
    for (size_t first = 0;; first += kTreesPerCheck) {
      live = 0;
      for (size_t r = 0; r < size; ++r)
        if (may_reach(block_margins[r], first, rest[first], floors[begin + r]))
          live |= 1u << (r / kLanes);
      if (live == 0)
        break;
      const size_t last = std::min(first + kTreesPerCheck, trees_.size());
      add_trees(first, last, live, has_missing, block.data(), ranges, block_margins.data());
      if (last == trees_.size())
        break;
    }
    for (size_t r = 0; r < size; ++r)
      out[begin + r] = (live >> (r / kLanes)) & 1 ? double{block_margins[r]}
                                                  : -std::numeric_limits<double>::infinity();
  }
  return out;
}

} // namespace liftx::model
