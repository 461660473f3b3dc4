#include "ir/interp/evaluator.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <thread>

namespace liftx::interp {

namespace {

const ArrayRef& only_array(std::span<const Value> args, const char* primitive) {
  LIFTX_INTERNAL_CHECK(args.size() == 1 && args[0].is_array(),
                       "{} applied to {} arguments or to a non-array", primitive, args.size());
  return args[0].array();
}

/// One tuple argument passed to a function of k >= 2 parameters provides its components.
std::span<const Value> spread(std::span<const Value> args, size_t parameters) {
  if (parameters >= 2 && args.size() == 1 && args[0].is_tuple() &&
      args[0].tuple().items.size() == parameters)
    return args[0].tuple().items;
  return args;
}

/// Collects map/generate results: scalars into dense storage, anything else as values.
Value collect(std::vector<Value> results) {
  if (results.empty())
    return make_array(make_node<ValueStorage>(std::move(results)));
  bool all_scalar = true;
  const ir::ScalarKind kind =
      results[0].is_scalar() ? ir::kind_of(results[0].scalar()) : ir::ScalarKind::Float;
  for (const Value& r : results)
    if (!r.is_scalar() || ir::kind_of(r.scalar()) != kind) {
      all_scalar = false;
      break;
    }
  if (!all_scalar)
    return make_array(make_node<ValueStorage>(std::move(results)));
  std::vector<double> data;
  data.reserve(results.size());
  for (const Value& r : results)
    data.push_back(ir::to_double(r.scalar()));
  return make_array(make_node<ScalarStorage>(
      kind, std::vector<int64_t>{static_cast<int64_t>(data.size())}, std::move(data)));
}

/// The builtin add/mult user functions computed directly (the same arithmetic in the same kind as
/// their bodies `return x + y;` / `return x * y;`), skipping the general body evaluator.
std::optional<ir::Scalar> builtin_arithmetic(const ir::UserFunDef* def, const ir::Scalar& x,
                                             const ir::Scalar& y) {
  static const ir::UserFunDef* const add_float = ir::UserFunDef::builtin("add").get();
  static const ir::UserFunDef* const mult_float = ir::UserFunDef::builtin("mult").get();
  static const ir::UserFunDef* const add_double = ir::UserFunDef::builtin("add_double").get();
  static const ir::UserFunDef* const mult_double = ir::UserFunDef::builtin("mult_double").get();
  static const ir::UserFunDef* const add_int = ir::UserFunDef::builtin("add_int").get();
  static const ir::UserFunDef* const mult_int = ir::UserFunDef::builtin("mult_int").get();
  if (def == add_float || def == mult_float) {
    const float a = std::get<float>(x);
    const float b = std::get<float>(y);
    return def == add_float ? a + b : a * b;
  }
  if (def == add_double || def == mult_double) {
    const double a = std::get<double>(x);
    const double b = std::get<double>(y);
    return def == add_double ? a + b : a * b;
  }
  if (def == add_int || def == mult_int) {
    // 32-bit two's complement wrap-around, computed unsigned (no signed overflow).
    const auto a = static_cast<uint32_t>(std::get<int32_t>(x));
    const auto b = static_cast<uint32_t>(std::get<int32_t>(y));
    return static_cast<int32_t>(def == add_int ? a + b : a * b);
  }
  return std::nullopt;
}

/// Adds the closed calls under e (and under the functions it contains) to `closed`.
void collect_closed(const ir::Expr& e, std::unordered_set<const void*>& closed);
void collect_closed(const ir::Fun& f, std::unordered_set<const void*>& closed) {
  ir::for_each_child(
      f, [&](const ir::Fun& g) { collect_closed(g, closed); },
      [&](const ir::Expr& x) { collect_closed(x, closed); });
}
void collect_closed(const ir::Expr& e, std::unordered_set<const void*>& closed) {
  if (!e.as<ir::Call>())
    return;
  if (ir::free_params(e).empty()) {
    closed.insert(e.identity()); // its sub-calls are evaluated once with it
    return;
  }
  ir::for_each_child(
      e, [&](const ir::Fun& g) { collect_closed(g, closed); },
      [&](const ir::Expr& x) { collect_closed(x, closed); });
}

/// Restores a counter on scope exit (also when an exception leaves the scope).
struct NestingGuard {
  explicit NestingGuard(int& counter) : counter(counter) { ++counter; }
  ~NestingGuard() { --counter; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
  int& counter;
};

/// A copy of a dense array with its own storage node; other values are returned as they are.
Value private_copy(const Value& v) {
  if (!v.is_array())
    return v;
  const ArrayRef& a = v.array();
  const auto* storage = dynamic_cast<const ScalarStorage*>(a.node.get());
  if (!storage)
    return v;
  return ArrayRef{
      make_node<ScalarStorage>(storage->kind, storage->shape, storage->data, storage->tuple_width),
      a.prefix, a.prefix_length};
}

} // namespace

void Evaluator::prepare(const ir::Expr& body) {
  auto closed = std::make_shared<std::unordered_set<const void*>>();
  collect_closed(body, *closed);
  closed_ = std::move(closed);
}

void Evaluator::bind(const ir::Expr& param, Value v) {
  const auto* p = param.as<ir::Param>();
  LIFTX_INTERNAL_CHECK(p, "binding a non-parameter");
  env_.emplace_back(p->id, std::move(v));
}

const Value& Evaluator::lookup_ref(const ir::Param& p) const {
  for (auto it = env_.rbegin(); it != env_.rend(); ++it)
    if (it->first == p.id)
      return it->second;
  LIFTX_UNREACHABLE("parameter {} is not bound", p.name);
}

Value Evaluator::lookup(const ir::Param& p) const {
  return lookup_ref(p);
}

int64_t Evaluator::size_of(const arith::Expr& e) {
  if (auto c = e.as_constant())
    return *c;
  auto it = size_cache_.find(e.get());
  if (it != size_cache_.end())
    return it->second;
  const int64_t value = arith::evaluate(e, sizes_);
  size_cache_.emplace(e.get(), value);
  return value;
}

Value Evaluator::eval(const ir::Expr& e) {
  if (const auto* p = e.as<ir::Param>())
    return lookup(*p);
  if (const auto* l = e.as<ir::Literal>())
    return l->value;
  const auto* call = e.as<ir::Call>();
  LIFTX_INTERNAL_CHECK(call, "unknown expression node");
  try {
    if (closed_ && !closed_->empty() && closed_->contains(e.identity())) {
      auto it = memo_.find(e.identity());
      if (it != memo_.end())
        return it->second;
      Value v = eval_call(*call);
      memo_.emplace(e.identity(), v);
      return v;
    }
    return eval_call(*call);
  } catch (const UserError& error) {
    if (!error.loc().valid() && call->loc.valid())
      throw error.located(call->loc);
    throw;
  }
}

Value Evaluator::eval_call(const ir::Call& call) {
  // Chains of x[i][j]... index in one step, without materialising the intermediate rows.
  if (call.fun.as<ir::At>() && call.args.size() == 1) {
    std::array<int64_t, 16> indices{};
    int depth = 0;
    const ir::Call* current = &call;
    while (true) {
      indices[static_cast<size_t>(depth++)] = size_of(current->fun.as<ir::At>()->index);
      const auto* inner = current->args[0].as<ir::Call>();
      if (depth == static_cast<int>(indices.size()) || !inner || !inner->fun.as<ir::At>() ||
          inner->args.size() != 1)
        break;
      current = inner;
    }
    std::reverse(indices.begin(), indices.begin() + depth); // outermost access first
    if (const auto* p = current->args[0].as<ir::Param>())   // no copy of the bound array
      return index_path(lookup_ref(*p).array(), indices.data(), depth, /*from_program=*/true);
    const Value base = eval(current->args[0]);
    return index_path(base.array(), indices.data(), depth, /*from_program=*/true);
  }
  if (call.args.size() == 1) {
    const Value arg = eval(call.args[0]);
    return apply(call.fun, std::span<const Value>(&arg, 1));
  }
  if (call.args.size() <= 8) { // the common case, without a heap allocation
    std::array<Value, 8> args;
    for (size_t k = 0; k < call.args.size(); ++k)
      args[k] = eval(call.args[k]);
    return apply(call.fun, std::span<const Value>(args.data(), call.args.size()));
  }
  std::vector<Value> args;
  args.reserve(call.args.size());
  for (const ir::Expr& a : call.args)
    args.push_back(eval(a));
  return apply(call.fun, args);
}

Value Evaluator::apply(const ir::Fun& f, std::span<const Value> args) {
  return std::visit([&](const auto& node) { return apply_node(node, args); }, f.data().node);
}

Value Evaluator::apply_node(const ir::Lambda& n, std::span<const Value> args) {
  args = spread(args, n.params.size());
  LIFTX_INTERNAL_CHECK(args.size() == n.params.size(), "lambda of {} parameters applied to {}",
                       n.params.size(), args.size());
  const size_t mark = env_.size();
  for (size_t k = 0; k < args.size(); ++k)
    bind(n.params[k], args[k]);
  struct Unbind {
    std::vector<std::pair<uint64_t, Value>>& env;
    size_t mark;
    ~Unbind() { env.resize(mark); }
  } unbind{env_, mark};
  return eval(n.body);
}

Value Evaluator::apply_node(const ir::UserFun& n, std::span<const Value> args) {
  const ir::UserFunDef& def = *n.def;
  args = spread(args, def.params().size());
  LIFTX_INTERNAL_CHECK(args.size() == def.params().size(), "{} of {} parameters applied to {}",
                       def.name(), def.params().size(), args.size());
  if (args.size() == 2 && args[0].is_scalar() && args[1].is_scalar() &&
      ir::kind_of(args[0].scalar()) == def.params()[0].kind &&
      ir::kind_of(args[1].scalar()) == def.params()[1].kind)
    if (auto r = builtin_arithmetic(&def, args[0].scalar(), args[1].scalar()))
      return *r;
  std::array<ir::Scalar, 16> small;
  std::vector<ir::Scalar> large;
  std::span<ir::Scalar> scalars;
  if (args.size() <= small.size()) {
    scalars = std::span<ir::Scalar>(small.data(), args.size());
  } else {
    large.resize(args.size());
    scalars = large;
  }
  for (size_t k = 0; k < args.size(); ++k) {
    LIFTX_INTERNAL_CHECK(args[k].is_scalar(), "user function {} applied to a non-scalar",
                         def.name());
    const ir::Scalar& s = args[k].scalar();
    const ir::ScalarKind want = def.params()[k].kind;
    scalars[k] = ir::kind_of(s) == want ? s : ir::convert(s, want);
  }
  if (!def.returns_tuple())
    return def.evaluate(scalars);
  std::vector<ir::Scalar> results(def.results().size());
  def.evaluate(scalars, results);
  Tuple t;
  t.items.assign(results.begin(), results.end());
  return t;
}

const ZipView* Evaluator::spreadable_zip(const ir::Fun& f, const ArrayRef& a) {
  if (a.prefix_length != 0)
    return nullptr;
  const auto* zip = dynamic_cast<const ZipView*>(a.node.get());
  if (!zip)
    return nullptr;
  const size_t parameters = f.as<ir::Lambda>()    ? f.as<ir::Lambda>()->params.size()
                            : f.as<ir::UserFun>() ? f.as<ir::UserFun>()->def->params().size()
                                                  : 0;
  const size_t width = zip->sources.size();
  return parameters == width && width >= 2 && width <= kMaxSpread ? zip : nullptr;
}

Value Evaluator::apply_to_element(const ir::Fun& f, const ArrayRef& a, const ZipView* zip,
                                  int64_t i) {
  if (zip) {
    // Exactly the components spreading the zip's tuple would pass, without building it.
    std::array<Value, kMaxSpread> components;
    const size_t width = zip->sources.size();
    for (size_t k = 0; k < width; ++k)
      components[k] = element(zip->sources[k], i);
    return apply(f, std::span<const Value>(components.data(), width));
  }
  const Value x = element(a, i);
  return apply(f, std::span<const Value>(&x, 1));
}

Value Evaluator::map(const ir::Fun& f, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "map");
  const int64_t n = length(a);
  const int threads = static_cast<int>(std::min<int64_t>(threads_, n));
  if (threads > 1 && nesting_ == 0 && !worker_)
    return parallel_map(f, a, n, threads);
  NestingGuard nested(nesting_);
  const ZipView* zip = spreadable_zip(f, a);
  std::vector<Value> results;
  results.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    results.push_back(apply_to_element(f, a, zip, i));
  return collect(std::move(results));
}

Value Evaluator::parallel_map(const ir::Fun& f, const ArrayRef& a, int64_t n, int threads) {
  std::vector<Value> results(static_cast<size_t>(n));
  struct Failure {
    int64_t index = std::numeric_limits<int64_t>::max();
    std::exception_ptr error;
  };
  std::vector<Failure> failures(static_cast<size_t>(threads));
  // Each worker owns a copy of this evaluator (bindings, caches, memoised closed calls), so the
  // workers share only immutable values; each writes its own contiguous range of results.
  const ZipView* zip = spreadable_zip(f, a);
  auto work = [&](int t) {
    Evaluator worker(*this);
    worker.worker_ = true;
    worker.nesting_ = 1;
    // Private copies of memoised dense arrays: threads then never share their reference counts.
    for (auto& entry : worker.memo_)
      entry.second = private_copy(entry.second);
    const int64_t begin = n * t / threads;
    const int64_t end = n * (t + 1) / threads;
    int64_t i = begin;
    try {
      for (; i < end; ++i)
        results[static_cast<size_t>(i)] = worker.apply_to_element(f, a, zip, i);
    } catch (...) {
      failures[static_cast<size_t>(t)] = Failure{i, std::current_exception()};
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads - 1));
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (std::thread& thread : pool)
    thread.join();
  // The error of the lowest failing element is the one the sequential order meets first.
  const auto first =
      std::min_element(failures.begin(), failures.end(),
                       [](const Failure& x, const Failure& y) { return x.index < y.index; });
  if (first->error)
    std::rethrow_exception(first->error);
  return collect(std::move(results));
}

Value Evaluator::reduce(const ir::Fun& f, const ir::Expr& init, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "reduce");
  const int64_t n = length(a);
  NestingGuard nested(nesting_);
  std::array<Value, 2> pair{eval(init), Value()};
  for (int64_t i = 0; i < n; ++i) {
    pair[1] = element(a, i);
    pair[0] = apply(f, pair);
  }
  return collect({std::move(pair[0])});
}

Value Evaluator::apply_node(const ir::Iterate& n, std::span<const Value> args) {
  LIFTX_INTERNAL_CHECK(args.size() == 1, "iterate applied to {} arguments", args.size());
  const int64_t count = size_of(n.count);
  LIFTX_USER_CHECK(count >= 0, "iterate({}) with a negative count {}", n.count.to_string(), count);
  Value v = args[0];
  // Each round's result is compacted so views never chain across rounds.
  for (int64_t k = 0; k < count; ++k)
    v = compact(apply(n.f, std::span<const Value>(&v, 1)));
  return v;
}

Value Evaluator::apply_node(const ir::Zip&, std::span<const Value> args) {
  if (args.size() == 1 && args[0].is_tuple())
    args = args[0].tuple().items;
  LIFTX_INTERNAL_CHECK(args.size() >= 2, "zip of {} arrays", args.size());
  std::vector<ArrayRef> sources;
  for (const Value& a : args)
    sources.push_back(a.array());
  const int64_t n = length(sources[0]);
  for (const ArrayRef& s : sources)
    LIFTX_USER_CHECK(length(s) == n, "zip of arrays of different lengths {} and {}", n, length(s));
  return make_array(make_node<ZipView>(std::move(sources), n));
}

Value Evaluator::apply_node(const ir::Tuple&, std::span<const Value> args) {
  LIFTX_INTERNAL_CHECK(args.size() >= 2, "tuple of {} values", args.size());
  return Tuple{std::vector<Value>(args.begin(), args.end())};
}

Value Evaluator::apply_node(const ir::Split& n, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "split");
  const int64_t chunk = size_of(n.chunk);
  const int64_t len = length(a);
  LIFTX_USER_CHECK(chunk >= 1, "split({}) with a chunk size {} below 1", n.chunk.to_string(),
                   chunk);
  LIFTX_USER_CHECK(len % chunk == 0,
                   "split({}) of an array of length {}: {} is not a multiple of {}",
                   n.chunk.to_string(), len, len, chunk);
  return make_array(make_node<SplitView>(a, chunk));
}

Value Evaluator::apply_node(const ir::Join&, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "join");
  const int64_t outer = length(a);
  const int64_t inner = outer > 0 ? length(element(a, 0).array()) : 0;
  return make_array(make_node<JoinView>(a, outer, inner));
}

Value Evaluator::apply_node(const ir::Slide& n, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "slide");
  const int64_t size = size_of(n.size);
  const int64_t step = size_of(n.step);
  const int64_t len = length(a);
  const std::string call = fmt::format("slide({}, {})", n.size.to_string(), n.step.to_string());
  LIFTX_USER_CHECK(size >= 1 && step >= 1, "{} needs a size and step of at least 1, got {} and {}",
                   call, size, step);
  LIFTX_USER_CHECK(len >= size, "{} of an array of length {}: the window is longer than the array",
                   call, len);
  LIFTX_USER_CHECK((len - size) % step == 0,
                   "{} of an array of length {}: {} - {} = {} is not a multiple of {}", call, len,
                   len, size, len - size, step);
  return make_array(make_node<SlideView>(a, (len - size) / step + 1, size, step));
}

Value Evaluator::apply_node(const ir::SlideShifted& n, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "slideShifted");
  const int64_t size = size_of(n.size);
  const int64_t step = size_of(n.step);
  const int64_t len = length(a);
  const std::string call =
      fmt::format("slideShifted({}, {})", n.size.to_string(), n.step.to_string());
  LIFTX_USER_CHECK(size >= 1 && step >= 1, "{} needs a size and step of at least 1, got {} and {}",
                   call, size, step);
  LIFTX_USER_CHECK(len >= size, "{} of an array of length {}: the window is longer than the array",
                   call, len);
  // ceil((len - size) / step) + 1, without the sum that could overflow for a huge step.
  const int64_t windows = (len - size) / step + ((len - size) % step != 0 ? 1 : 0) + 1;
  return make_array(make_node<SlideShiftedView>(a, windows, size, step, len - size));
}

Value Evaluator::apply_node(const ir::JoinShifted& n, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "joinShifted");
  const int64_t total = size_of(n.length);
  const int64_t rows = length(a);
  const int64_t row = rows > 0 ? length(element(a, 0).array()) : 0;
  const int64_t margin = size_of(n.margin);
  const std::string call =
      fmt::format("joinShifted({}, {})", n.length.to_string(), n.margin.to_string());
  LIFTX_USER_CHECK(row >= 1 && margin >= 0 && total >= row && total - row >= margin,
                   "{} of rows of {}: the rows and the margin {} do not fit the length {}", call,
                   row, margin, total);
  const int64_t covering = total / row + (total % row != 0 ? 1 : 0); // without overflow
  LIFTX_USER_CHECK(covering == rows, "{} of {} rows of {}: {} rows cover the length {}", call, rows,
                   row, covering, total);
  LIFTX_USER_CHECK(total - (rows - 1) * row >= margin,
                   "{} of {} rows of {}: the last row adds {} elements, less than the margin", call,
                   rows, row, total - (rows - 1) * row);
  return make_array(make_node<JoinShiftedView>(a, rows, row, total));
}

Value Evaluator::apply_node(const ir::Pad& n, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "pad");
  const int64_t left = size_of(n.left);
  const int64_t right = size_of(n.right);
  const int64_t len = length(a);
  LIFTX_USER_CHECK(left >= 0 && right >= 0, "pad({}, {}) with a negative width", left, right);
  PadMode mode = PadMode::Clamp;
  switch (n.boundary.kind) {
  case ir::Boundary::Kind::Clamp:
    mode = PadMode::Clamp;
    break;
  case ir::Boundary::Kind::Mirror:
    mode = PadMode::Mirror;
    break;
  case ir::Boundary::Kind::Wrap:
    mode = PadMode::Wrap;
    break;
  case ir::Boundary::Kind::Constant:
    mode = PadMode::Constant;
    break;
  }
  LIFTX_USER_CHECK(mode == PadMode::Constant || len > 0 || left + right == 0,
                   "pad of an empty array needs a constant boundary");
  Value constant;
  if (mode == PadMode::Constant && len > 0)
    constant = constant_like(element(a, 0), n.boundary.value);
  else if (mode == PadMode::Constant)
    constant = n.boundary.value;
  return make_array(make_node<PadView>(a, left, right, mode, std::move(constant)));
}

Value Evaluator::apply_node(const ir::At& n, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "at");
  const int64_t i = size_of(n.index);
  return index_path(a, &i, 1, /*from_program=*/true);
}

Value Evaluator::apply_node(const ir::Get& n, std::span<const Value> args) {
  LIFTX_INTERNAL_CHECK(args.size() == 1 && args[0].is_tuple(), "get applied to a non-tuple");
  const auto& items = args[0].tuple().items;
  LIFTX_INTERNAL_CHECK(n.index >= 0 && static_cast<size_t>(n.index) < items.size(),
                       "get({}) of a tuple of {}", n.index, items.size());
  return items[static_cast<size_t>(n.index)];
}

Value Evaluator::apply_node(const ir::Transpose&, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "transpose");
  const int64_t outer = length(a);
  const int64_t inner = outer > 0 ? length(element(a, 0).array()) : 0;
  return make_array(make_node<TransposeView>(a, outer, inner));
}

Value Evaluator::apply_node(const ir::Id&, std::span<const Value> args) {
  LIFTX_INTERNAL_CHECK(args.size() == 1, "id applied to {} arguments", args.size());
  return args[0]; // values are immutable, so sharing is a copy
}

Value Evaluator::apply_node(const ir::Generate& n, std::span<const Value> args) {
  LIFTX_INTERNAL_CHECK(args.empty(), "array(...) applied to {} arguments", args.size());
  const int64_t len = size_of(n.length);
  LIFTX_USER_CHECK(len >= 0 && len <= std::numeric_limits<int32_t>::max(),
                   "array({}) with length {} outside [0, 2^31)", n.length.to_string(), len);
  NestingGuard nested(nesting_);
  std::vector<Value> results;
  results.reserve(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) {
    const std::array<Value, 2> index_and_length{ir::Scalar(static_cast<int32_t>(i)),
                                                ir::Scalar(static_cast<int32_t>(len))};
    results.push_back(apply(n.f, index_and_length));
  }
  return collect(std::move(results));
}

Value Evaluator::apply_node(const ir::AsVector& n, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "asVector");
  const int64_t len = length(a);
  LIFTX_USER_CHECK(len % n.width == 0,
                   "asVector({}) of an array of length {}: {} is not a multiple of {}", n.width,
                   len, len, n.width);
  return make_array(make_node<SplitView>(a, n.width));
}

Value Evaluator::apply_node(const ir::AsScalar&, std::span<const Value> args) {
  const ArrayRef& a = only_array(args, "asScalar");
  const int64_t outer = length(a);
  const int64_t inner = outer > 0 ? length(element(a, 0).array()) : 0;
  return make_array(make_node<JoinView>(a, outer, inner));
}

Value Evaluator::apply_node(const ir::Vectorize& n, std::span<const Value> args) {
  const ir::UserFunDef& def = *n.f.as<ir::UserFun>()->def;
  args = spread(args, def.params().size());
  LIFTX_INTERNAL_CHECK(args.size() == def.params().size(), "vectorize({}, {}) applied to {}",
                       n.width, def.name(), args.size());
  std::vector<Value> components(args.size());
  std::vector<Value> results;
  results.reserve(static_cast<size_t>(n.width));
  for (int64_t k = 0; k < n.width; ++k) {
    for (size_t i = 0; i < args.size(); ++i)
      components[i] = element(args[i].array(), k);
    results.push_back(apply(n.f, components));
  }
  return collect(std::move(results));
}

Value Evaluator::apply_node(const ir::MapSeqSlide& n, std::span<const Value> args) {
  // map(f) . slide(size, step): the registers of the generated code are an implementation detail.
  const Value windows = apply_node(ir::Slide{n.size, n.step}, args);
  return map(n.f, std::span<const Value>(&windows, 1));
}

} // namespace liftx::interp
