#include "ir/interp/value.hpp"

#include <algorithm>

namespace liftx::interp {

const ir::Scalar& Value::scalar() const {
  const auto* s = std::get_if<ir::Scalar>(&v);
  LIFTX_INTERNAL_CHECK(s, "interpreter value is not a scalar");
  return *s;
}
const Tuple& Value::tuple() const {
  const auto* t = std::get_if<Tuple>(&v);
  LIFTX_INTERNAL_CHECK(t, "interpreter value is not a tuple");
  return *t;
}
const ArrayRef& Value::array() const {
  const auto* a = std::get_if<ArrayRef>(&v);
  LIFTX_INTERNAL_CHECK(a, "interpreter value is not an array");
  return *a;
}

ArrayNode::ArrayNode(std::vector<int64_t> shape_) : shape(std::move(shape_)) {
  LIFTX_INTERNAL_CHECK(!shape.empty() && shape.size() <= static_cast<size_t>(kMaxNodeRank),
                       "array node of rank {}", shape.size());
}

int64_t length(const ArrayRef& a) {
  return a.node->shape[static_cast<size_t>(a.prefix_length)];
}

Value element(const ArrayRef& a, int64_t i) {
  return index_path(a, &i, 1);
}

Resolved Resolved::of_made(Value v) {
  Resolved r;
  r.kind = Kind::Made;
  r.made = std::make_unique<Value>(std::move(v));
  return r;
}

namespace {

[[noreturn]] __attribute__((noinline, cold)) void out_of_bounds(int64_t index, int64_t length,
                                                                bool from_program) {
  LIFTX_USER_CHECK(!from_program, "index {} is out of bounds of an array of length {}", index,
                   length);
  LIFTX_UNREACHABLE("index {} out of bounds of an array level of length {}", index, length);
}

/// Checks indices[0..count) against the levels of `node` from `first_level` on.
inline void check_bounds(const ArrayNode& node, int first_level, const int64_t* indices, int count,
                         bool from_program) {
  const int64_t* lengths = node.shape.data() + first_level;
  for (int k = 0; k < count; ++k)
    if (static_cast<uint64_t>(indices[k]) >= static_cast<uint64_t>(lengths[k])) [[unlikely]]
      out_of_bounds(indices[k], lengths[k], from_program);
}

} // namespace

namespace {

template <class Reference>
Resolved resolve_from(const Reference& a, const int64_t* indices, int n, bool from_program) {
  const ArrayNode& node = *a.node;
  const int missing = node.rank() - a.prefix_length;
  const int taken = std::min(missing, n);
  check_bounds(node, a.prefix_length, indices, taken, from_program);
  if (taken < missing) {
    ArrayCursor deeper{&node, a.prefix, a.prefix_length + taken};
    std::copy(indices, indices + taken, deeper.prefix.begin() + a.prefix_length);
    return Resolved::of_array(deeper);
  }
  int64_t full[kMaxNodeRank];
  std::copy(a.prefix.begin(), a.prefix.begin() + a.prefix_length, full);
  std::copy(indices, indices + taken, full + a.prefix_length);
  if (taken == n)
    return node.leaf(full); // built in place in the caller's result: no move of a Resolved
  const Resolved leaf = node.leaf(full);
  switch (leaf.kind) {
  case Resolved::Kind::Array:
    return resolve(leaf.array, indices + taken, n - taken, from_program);
  case Resolved::Kind::Stored:
    return resolve(leaf.stored->array(), indices + taken, n - taken, from_program);
  case Resolved::Kind::Made:
    // The made value owns what it points to, so the rest is resolved owning too.
    return Resolved::of_made(
        index_path(leaf.made->array(), indices + taken, n - taken, from_program));
  case Resolved::Kind::Scalar:
    break;
  }
  LIFTX_UNREACHABLE("indexing into a scalar");
}

} // namespace

Resolved resolve(const ArrayCursor& a, const int64_t* indices, int n, bool from_program) {
  return resolve_from(a, indices, n, from_program);
}
Resolved resolve(const ArrayRef& a, const int64_t* indices, int n, bool from_program) {
  return resolve_from(a, indices, n, from_program);
}

Value to_value(Resolved r) {
  switch (r.kind) {
  case Resolved::Kind::Scalar:
    return r.scalar;
  case Resolved::Kind::Array:
    return ArrayRef{r.array.node->shared_from_this(), r.array.prefix, r.array.prefix_length};
  case Resolved::Kind::Stored:
    return *r.stored;
  case Resolved::Kind::Made:
    return std::move(*r.made);
  }
  LIFTX_UNREACHABLE("bad resolution kind");
}

Value index_path(const ArrayRef& a, const int64_t* indices, int n, bool from_program) {
  const int missing = a.node->rank() - a.prefix_length;
  if (n < missing) { // stays inside this node: share it without resolving
    check_bounds(*a.node, a.prefix_length, indices, n, from_program);
    ArrayRef deeper{a.node, a.prefix, a.prefix_length + n};
    std::copy(indices, indices + n, deeper.prefix.begin() + a.prefix_length);
    return deeper;
  }
  return to_value(resolve(a, indices, n, from_program));
}

Value make_array(std::shared_ptr<const ArrayNode> node) {
  return ArrayRef{std::move(node), {}, 0};
}

ir::Scalar make_scalar(ir::ScalarKind kind, double value) {
  switch (kind) {
  case ir::ScalarKind::Bool:
    return value != 0.0;
  case ir::ScalarKind::Int:
    return static_cast<int32_t>(value);
  case ir::ScalarKind::Float:
    return static_cast<float>(value);
  case ir::ScalarKind::Double:
    return value;
  }
  LIFTX_UNREACHABLE("bad scalar kind");
}

// ---- storage ------------------------------------------------------------------------------------

ScalarStorage::ScalarStorage(ir::ScalarKind kind_, std::vector<int64_t> shape_,
                             std::vector<double> data_, int tuple_width_)
    : ArrayNode(std::move(shape_)), kind(kind_), data(std::move(data_)), tuple_width(tuple_width_) {
  strides.assign(shape.size(), 1);
  for (size_t d = shape.size() - 1; d > 0; --d)
    strides[d - 1] = strides[d] * shape[d];
  const int64_t leaves = strides[0] * shape[0];
  LIFTX_INTERNAL_CHECK(static_cast<int64_t>(data.size()) == leaves * std::max(tuple_width, 1),
                       "storage of {} values for {} leaves", data.size(), leaves);
}

Resolved ScalarStorage::leaf(const int64_t* indices) const {
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    offset += indices[d] * strides[d];
  if (tuple_width == 0)
    return Resolved::of_scalar(make_scalar(kind, data[static_cast<size_t>(offset)]));
  Tuple t;
  t.items.reserve(static_cast<size_t>(tuple_width));
  for (int c = 0; c < tuple_width; ++c)
    t.items.emplace_back(make_scalar(kind, data[static_cast<size_t>(offset * tuple_width + c)]));
  return Resolved::of_made(std::move(t));
}

ValueStorage::ValueStorage(std::vector<Value> items_)
    : ArrayNode({static_cast<int64_t>(items_.size())}), items(std::move(items_)) {}

// ---- views --------------------------------------------------------------------------------------

SplitView::SplitView(ArrayRef source_, int64_t chunk_)
    : ArrayNode({length(source_) / chunk_, chunk_}), source(std::move(source_)), chunk(chunk_) {}
Resolved SplitView::leaf(const int64_t* indices) const {
  const int64_t i = indices[0] * chunk + indices[1];
  return resolve(source, &i, 1);
}

JoinView::JoinView(ArrayRef source_, int64_t outer, int64_t inner_)
    : ArrayNode({outer * inner_}), source(std::move(source_)), inner(inner_) {}
Resolved JoinView::leaf(const int64_t* indices) const {
  const int64_t path[2] = {indices[0] / inner, indices[0] % inner};
  return resolve(source, path, 2);
}

SlideView::SlideView(ArrayRef source_, int64_t windows, int64_t size, int64_t step_)
    : ArrayNode({windows, size}), source(std::move(source_)), step(step_) {}
Resolved SlideView::leaf(const int64_t* indices) const {
  const int64_t i = indices[0] * step + indices[1];
  return resolve(source, &i, 1);
}

SlideShiftedView::SlideShiftedView(ArrayRef source_, int64_t windows, int64_t size, int64_t step_,
                                   int64_t last_)
    : ArrayNode({windows, size}), source(std::move(source_)), step(step_), last(last_) {}
Resolved SlideShiftedView::leaf(const int64_t* indices) const {
  const int64_t i = std::min(indices[0] * step, last) + indices[1];
  return resolve(source, &i, 1);
}

JoinShiftedView::JoinShiftedView(ArrayRef source_, int64_t rows_, int64_t row_, int64_t length)
    : ArrayNode({length}), source(std::move(source_)), rows(rows_), row(row_) {}
Resolved JoinShiftedView::leaf(const int64_t* indices) const {
  const int64_t i = std::min(indices[0] / row, rows - 1);
  const int64_t start = std::min(i * row, shape[0] - row);
  const int64_t path[2] = {i, indices[0] - start};
  return resolve(source, path, 2);
}

int64_t pad_source_index(PadMode mode, int64_t i, int64_t left, int64_t n) {
  const int64_t j = i - left;
  switch (mode) {
  case PadMode::Clamp:
    return std::min(std::max(j, int64_t{0}), n - 1);
  case PadMode::Mirror: {
    int64_t m = j < 0 ? -1 - j : j;
    m %= 2 * n;
    return m >= n ? 2 * n - 1 - m : m;
  }
  case PadMode::Wrap:
    return ((j % n) + n) % n;
  case PadMode::Constant:
    return j >= 0 && j < n ? j : -1;
  }
  LIFTX_UNREACHABLE("bad pad mode");
}

PadView::PadView(ArrayRef source_, int64_t left_, int64_t right, PadMode mode_, Value constant_)
    : ArrayNode({left_ + length(source_) + right}), source(std::move(source_)), left(left_),
      source_length(length(source)), mode(mode_), constant(std::move(constant_)) {}
Resolved PadView::leaf(const int64_t* indices) const {
  const int64_t j = pad_source_index(mode, indices[0], left, source_length);
  if (j < 0)
    return Resolved::of_stored(constant);
  return resolve(source, &j, 1);
}

TransposeView::TransposeView(ArrayRef source_, int64_t outer, int64_t inner)
    : ArrayNode({inner, outer}), source(std::move(source_)) {}
Resolved TransposeView::leaf(const int64_t* indices) const {
  const int64_t path[2] = {indices[1], indices[0]};
  return resolve(source, path, 2);
}

ZipView::ZipView(std::vector<ArrayRef> sources_, int64_t n)
    : ArrayNode({n}), sources(std::move(sources_)) {}
Resolved ZipView::leaf(const int64_t* indices) const {
  Tuple t;
  t.items.reserve(sources.size());
  for (const ArrayRef& s : sources)
    t.items.push_back(element(s, indices[0]));
  return Resolved::of_made(std::move(t));
}

ConstantView::ConstantView(int64_t n, Value element_)
    : ArrayNode({n}), element(std::move(element_)) {}

Value constant_like(const Value& sample, const ir::Scalar& v) {
  if (sample.is_scalar())
    return ir::convert(v, ir::kind_of(sample.scalar()));
  if (sample.is_tuple()) {
    Tuple t;
    for (const Value& item : sample.tuple().items)
      t.items.push_back(constant_like(item, v));
    return t;
  }
  const ArrayRef& a = sample.array();
  const int64_t n = length(a);
  LIFTX_INTERNAL_CHECK(n > 0, "constant padding of arrays of empty arrays");
  return make_array(make_node<ConstantView>(n, constant_like(element(a, 0), v)));
}

// ---- compaction ---------------------------------------------------------------------------------

namespace {

void fill_leaves(const Value& v, std::vector<double>& out) {
  if (v.is_scalar()) {
    out.push_back(ir::to_double(v.scalar()));
  } else if (v.is_tuple()) {
    for (const Value& item : v.tuple().items)
      fill_leaves(item, out);
  } else {
    const ArrayRef& a = v.array();
    const int64_t n = length(a);
    for (int64_t i = 0; i < n; ++i)
      fill_leaves(element(a, i), out);
  }
}

} // namespace

Value compact(const Value& v) {
  if (!v.is_array())
    return v;
  const ArrayRef& a = v.array();
  if (a.prefix_length == 0 && dynamic_cast<const ScalarStorage*>(a.node.get()))
    return v;
  // Probe the shape along element 0 (arrays are regular) and the kind of the leaves.
  std::vector<int64_t> shape;
  Value probe = v;
  while (probe.is_array()) {
    const int64_t n = length(probe.array());
    if (n == 0)
      return v;
    shape.push_back(n);
    probe = element(probe.array(), 0);
  }
  if (shape.size() > static_cast<size_t>(kMaxNodeRank))
    return v;
  int tuple_width = 0;
  ir::ScalarKind kind;
  if (probe.is_scalar()) {
    kind = ir::kind_of(probe.scalar());
  } else {
    const auto& items = probe.tuple().items;
    if (items.empty() || !items[0].is_scalar())
      return v;
    kind = ir::kind_of(items[0].scalar());
    for (const Value& item : items)
      if (!item.is_scalar() || ir::kind_of(item.scalar()) != kind)
        return v;
    tuple_width = static_cast<int>(items.size());
  }
  std::vector<double> data;
  int64_t leaves = 1;
  for (int64_t n : shape)
    leaves *= n;
  data.reserve(static_cast<size_t>(leaves * std::max(tuple_width, 1)));
  fill_leaves(v, data);
  return make_array(make_node<ScalarStorage>(kind, std::move(shape), std::move(data), tuple_width));
}

} // namespace liftx::interp
