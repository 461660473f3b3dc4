#include "features/compiled_expr.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <numeric>

namespace liftx::features {

namespace {

__extension__ typedef __int128 i128;

[[noreturn]] void overflow(const arith::Expr& e) {
  throw UserError(fmt::format("integer overflow while evaluating {}", e.to_string()));
}

/// Calls `f` with the standard comparison object of `cmp` (std::less<> for Lt, ...): one switch
/// for the scalar and the lane-batched evaluators.
template <class F>
decltype(auto) with_comparison(arith::CmpOp cmp, F&& f) {
  switch (cmp) {
  case arith::CmpOp::Lt:
    return f(std::less<>());
  case arith::CmpOp::Le:
    return f(std::less_equal<>());
  case arith::CmpOp::Gt:
    return f(std::greater<>());
  case arith::CmpOp::Ge:
    return f(std::greater_equal<>());
  case arith::CmpOp::Eq:
    return f(std::equal_to<>());
  case arith::CmpOp::Ne:
    break;
  }
  return f(std::not_equal_to<>());
}

} // namespace

int SlotTable::slot(const arith::Expr& var) {
  auto [it, inserted] = slots_.emplace(var, static_cast<int>(vars_.size()));
  if (inserted)
    vars_.push_back(var);
  return it->second;
}

CompiledExpr::CompiledExpr(const arith::Expr& e, SlotTable& slots)
    : CompiledExpr(std::vector<arith::Expr>{e}, slots) {}

CompiledExpr::CompiledExpr(const std::vector<arith::Expr>& roots, SlotTable& slots) {
  std::unordered_map<arith::Expr, int> memo;
  for (const arith::Expr& e : roots)
    roots_.push_back(flatten(e, slots, memo));
  if (!roots.empty()) {
    source_ = roots.front();
    root_ = roots_.front();
  }
  integer_only_ = std::none_of(nodes_.begin(), nodes_.end(), [](const FlatNode& n) {
    return (n.kind == arith::Kind::Cst && n.den != 1) || (n.kind == arith::Kind::Pow && n.num < 0);
  });
  static std::atomic<uint64_t> compiled{0};
  id_ = ++compiled;
}

int CompiledExpr::flatten(const arith::Expr& e, SlotTable& slots,
                          std::unordered_map<arith::Expr, int>& memo) {
  if (auto it = memo.find(e); it != memo.end())
    return it->second;
  const arith::Node& n = e.node();
  FlatNode flat{n.kind};
  switch (n.kind) {
  case arith::Kind::Cst:
    flat.num = n.value.num;
    flat.den = n.value.den;
    break;
  case arith::Kind::Var:
    flat.slot = slots.slot(e);
    break;
  default: {
    std::vector<int> operands;
    for (const arith::Expr& o : n.operands)
      operands.push_back(flatten(o, slots, memo));
    flat.first = static_cast<int>(children_.size());
    flat.count = static_cast<int>(operands.size());
    children_.insert(children_.end(), operands.begin(), operands.end());
    flat.num = n.exponent;
    flat.cmp = n.cmp;
  }
  }
  nodes_.push_back(flat);
  int id = static_cast<int>(nodes_.size()) - 1;
  memo.emplace(e, id);
  return id;
}

bool CompiledExpr::uses_any(const std::vector<bool>& slots) const {
  return std::any_of(nodes_.begin(), nodes_.end(), [&](const FlatNode& n) {
    return n.kind == arith::Kind::Var && static_cast<size_t>(n.slot) < slots.size() &&
           slots[static_cast<size_t>(n.slot)];
  });
}

int64_t CompiledExpr::evaluate(const std::vector<int64_t>& values) const {
  if (nodes_.empty())
    return 0;
  return integer(root_, values);
}

bool CompiledExpr::evaluate_lanes(const int64_t* values, size_t lanes, const uint8_t* active,
                                  int64_t* out, LaneScratch& scratch,
                                  const uint8_t* uniform_slots) const {
  if (nodes_.empty()) {
    std::fill(out, out + lanes, 0);
    return true;
  }
  if (!integer_only_)
    return false;
  int64_t uniform_failed = 0;
  compute_rows(values, lanes, out, uniform_failed, scratch, uniform_slots); // `out`: the flags
  for (size_t l = 0; l < lanes; ++l)
    if (active[l] && (out[l] || uniform_failed))
      return false;
  std::copy_n(scratch.row_of[static_cast<size_t>(root_)], lanes, out);
  return true;
}

bool CompiledExpr::evaluate_all_lanes(const int64_t* values, size_t lanes,
                                      std::vector<const int64_t*>& rows, LaneScratch& scratch,
                                      const uint8_t* uniform_slots) const {
  if (!integer_only_ || nodes_.empty())
    return false;
  // The failure flags after the nodes' rows (compute_rows sizes them for nodes_.size() + 1).
  int64_t uniform_failed = 0;
  scratch.rows.resize((nodes_.size() + 1) * lanes);
  int64_t* failed = scratch.rows.data() + nodes_.size() * lanes;
  compute_rows(values, lanes, failed, uniform_failed, scratch, uniform_slots);
  if (uniform_failed || std::any_of(failed, failed + lanes, [](int64_t f) { return f != 0; }))
    return false;
  rows.resize(roots_.size());
  for (size_t r = 0; r < roots_.size(); ++r)
    rows[r] = scratch.row_of[static_cast<size_t>(roots_[r])];
  return true;
}

namespace {

/// sum[l] += term[l] on lanes [begin, begin + count), marking the lanes that overflow.
inline void add_lane_block(int64_t* __restrict sum, const int64_t* __restrict term,
                           int64_t* __restrict failed, size_t begin, size_t count) {
  for (size_t l = begin; l < begin + count; ++l) {
    // Wrapping addition; it overflowed when the sum's sign differs from both operands'.
    const auto s =
        static_cast<int64_t>(static_cast<uint64_t>(sum[l]) + static_cast<uint64_t>(term[l]));
    failed[l] |= static_cast<int64_t>(static_cast<uint64_t>((sum[l] ^ s) & (term[l] ^ s)) >> 63);
    sum[l] = s;
  }
}

/// add_lane_block() on every lane: in blocks of a fixed count, which the compiler vectorises (the
/// rows never overlap: a node's row is not its operand's, and the flags have their own).
void add_lanes(int64_t* sum, const int64_t* term, int64_t* failed, size_t lanes) {
  constexpr size_t kBlock = 8;
  size_t l = 0;
  for (; l + kBlock <= lanes; l += kBlock)
    add_lane_block(sum, term, failed, l, kBlock);
  add_lane_block(sum, term, failed, l, lanes - l);
}

} // namespace

void CompiledExpr::compute_rows(const int64_t* values, size_t lanes, int64_t* failed_lanes,
                                int64_t& uniform_failed, LaneScratch& scratch,
                                const uint8_t* uniform_slots) const {
  // Nodes are stored children first (flatten appends a node after its operands), so one pass in
  // storage order evaluates every node for every lane, into row k of scratch.rows; a variable's
  // lanes are read where the values are, and a constant's row is kept from the last call when
  // that evaluated this expression for as many lanes. A node whose operands are the same in every
  // lane (sizes, work-group ids, constants) is computed for lane 0 and copied to the others. Unlike
  // evaluate(), both branches of a select are evaluated, so a failure only marks its lane.
  const size_t nodes = nodes_.size();
  if (scratch.rows.size() < nodes * lanes)
    scratch.rows.resize(nodes * lanes);
  scratch.row_of.resize(nodes);
  scratch.uniform.resize(nodes);
  const int64_t** row_of = scratch.row_of.data();
  uint8_t* uniform = scratch.uniform.data();
  std::fill(failed_lanes, failed_lanes + lanes, 0);
  uniform_failed = 0; // a failure of a uniform node: every lane's
  const bool constants_filled = scratch.constants_of == id_ && scratch.constants_lanes == lanes;
  scratch.constants_of = id_;
  scratch.constants_lanes = lanes;
  for (size_t k = 0; k < nodes; ++k) {
    const FlatNode& n = nodes_[k];
    int64_t* r = scratch.rows.data() + k * lanes;
    auto child = [&](int c) {
      return static_cast<size_t>(children_[static_cast<size_t>(n.first + c)]);
    };
    auto operand = [&](int c) { return row_of[child(c)]; };
    if (n.kind == arith::Kind::Cst) {
      uniform[k] = 1;
      row_of[k] = r;
      if (!constants_filled)
        std::fill(r, r + lanes, n.num);
      continue;
    }
    if (n.kind == arith::Kind::Var) {
      row_of[k] = values + static_cast<size_t>(n.slot) * lanes;
      uniform[k] = uniform_slots != nullptr && uniform_slots[n.slot] != 0;
      continue;
    }
    row_of[k] = r;
    bool same = true;
    for (int c = 0; c < n.count; ++c)
      same = same && uniform[child(c)] != 0;
    uniform[k] = same;
    const size_t m = same ? 1 : lanes; // lanes computed
    int64_t* failed = same ? &uniform_failed : failed_lanes;
    switch (n.kind) {
    case arith::Kind::Cst:
    case arith::Kind::Var:
      break;
    case arith::Kind::Sum: {
      std::copy_n(operand(0), m, r);
      for (int c = 1; c < n.count; ++c)
        add_lanes(r, operand(c), failed, m);
      break;
    }
    case arith::Kind::Prod: {
      std::copy_n(operand(0), m, r);
      for (int c = 1; c < n.count; ++c) {
        const int64_t* x = operand(c);
        for (size_t l = 0; l < m; ++l)
          failed[l] |= __builtin_mul_overflow(r[l], x[l], &r[l]);
      }
      break;
    }
    case arith::Kind::Pow: {
      const int64_t* base = operand(0);
      std::fill(r, r + m, 1);
      for (int64_t i = 0; i < n.num; ++i)
        for (size_t l = 0; l < m; ++l)
          failed[l] |= __builtin_mul_overflow(r[l], base[l], &r[l]);
      break;
    }
    case arith::Kind::IntDiv:
    case arith::Kind::Mod: {
      const int64_t *a = operand(0), *b = operand(1);
      const bool div = n.kind == arith::Kind::IntDiv;
      const FlatNode& divisor = nodes_[child(1)];
      if (divisor.kind == arith::Kind::Cst && divisor.num > 0 &&
          (divisor.num & (divisor.num - 1)) == 0) {
        // A constant power-of-two divisor (tile and vector widths): C's truncating division and
        // remainder by shifts, without a hardware division per lane.
        const int shift = __builtin_ctzll(static_cast<uint64_t>(divisor.num));
        const int64_t mask = divisor.num - 1;
        for (size_t l = 0; l < m; ++l) {
          const int64_t q = (a[l] + ((a[l] >> 63) & mask)) >> shift; // rounds towards zero
          r[l] = div ? q : a[l] - q * divisor.num;
        }
        break;
      }
      for (size_t l = 0; l < m; ++l) {
        // b == -1 is left to evaluate() (INT64_MIN / -1 overflows in hardware).
        if (b[l] == 0 || b[l] == -1) {
          failed[l] = 1;
          r[l] = 0;
        } else {
          r[l] = div ? a[l] / b[l] : a[l] % b[l];
        }
      }
      break;
    }
    case arith::Kind::Min:
    case arith::Kind::Max: {
      const int64_t *a = operand(0), *b = operand(1);
      if (n.kind == arith::Kind::Min)
        for (size_t l = 0; l < m; ++l)
          r[l] = a[l] <= b[l] ? a[l] : b[l];
      else
        for (size_t l = 0; l < m; ++l)
          r[l] = a[l] <= b[l] ? b[l] : a[l];
      break;
    }
    case arith::Kind::Select: {
      const int64_t *x = operand(0), *y = operand(1);
      const int64_t *then = operand(2), *other = operand(3);
      // The comparison chosen once, outside the lane loop.
      with_comparison(n.cmp, [&](auto holds) {
        for (size_t l = 0; l < m; ++l)
          r[l] = holds(x[l], y[l]) ? then[l] : other[l];
      });
      break;
    }
    }
    if (same)
      std::fill(r + 1, r + lanes, r[0]);
  }
}

int64_t CompiledExpr::integer(int node, const std::vector<int64_t>& values) const {
  Value v = eval(node, values);
  LIFTX_USER_CHECK(v.den == 1, "inexact exact division: {} is not an integer", source_.to_string());
  return v.num;
}

CompiledExpr::Value CompiledExpr::eval(int node, const std::vector<int64_t>& values) const {
  const FlatNode& n = nodes_[static_cast<size_t>(node)];
  auto normalise = [&](i128 num, i128 den) -> Value {
    if (den < 0)
      num = -num, den = -den;
    // 128-bit remainders and quotients are library calls: an integer needs no gcd, and a fraction
    // whose terms fit in 64 bits takes the hardware's division.
    if (den != 1) {
      constexpr i128 max64 = std::numeric_limits<int64_t>::max();
      if (num >= -max64 && num <= max64 && den <= max64) {
        const auto n = static_cast<int64_t>(num), d = static_cast<int64_t>(den);
        const int64_t g = std::gcd(n, d);
        return g > 1 ? Value{n / g, d / g} : Value{n, d};
      }
      i128 a = num < 0 ? -num : num, b = den;
      while (b != 0) {
        i128 t = a % b;
        a = b;
        b = t;
      }
      if (a > 1)
        num /= a, den /= a;
    }
    constexpr i128 lo = std::numeric_limits<int64_t>::min();
    constexpr i128 hi = std::numeric_limits<int64_t>::max();
    if (num < lo || num > hi || den > hi)
      overflow(source_);
    return {static_cast<int64_t>(num), static_cast<int64_t>(den)};
  };
  auto child = [&](int k) { return children_[static_cast<size_t>(n.first + k)]; };
  switch (n.kind) {
  case arith::Kind::Cst:
    return {n.num, n.den};
  case arith::Kind::Var:
    return {values[static_cast<size_t>(n.slot)], 1};
  case arith::Kind::Sum: {
    Value r{0, 1};
    for (int k = 0; k < n.count; ++k) {
      Value t = eval(child(k), values);
      if (r.den == 1 && t.den == 1) {
        int64_t s;
        if (__builtin_add_overflow(r.num, t.num, &s))
          overflow(source_);
        r.num = s;
      } else {
        r = normalise(i128(r.num) * t.den + i128(t.num) * r.den, i128(r.den) * t.den);
      }
    }
    return r;
  }
  case arith::Kind::Prod: {
    Value r{1, 1};
    for (int k = 0; k < n.count; ++k) {
      Value f = eval(child(k), values);
      if (r.den == 1 && f.den == 1) {
        int64_t p;
        if (__builtin_mul_overflow(r.num, f.num, &p))
          overflow(source_);
        r.num = p;
      } else {
        r = normalise(i128(r.num) * f.num, i128(r.den) * f.den);
      }
    }
    return r;
  }
  case arith::Kind::Pow: {
    Value base = eval(child(0), values);
    int64_t k = n.num;
    if (k < 0) {
      LIFTX_USER_CHECK(base.num != 0, "division by zero in {}", source_.to_string());
      base = normalise(base.den, base.num);
      k = -k;
    }
    Value r{1, 1};
    for (int64_t i = 0; i < k; ++i)
      r = normalise(i128(r.num) * base.num, i128(r.den) * base.den);
    return r;
  }
  case arith::Kind::IntDiv:
  case arith::Kind::Mod: {
    int64_t a = integer(child(0), values), b = integer(child(1), values);
    LIFTX_USER_CHECK(b != 0, "division by zero in {}", source_.to_string());
    if (b == -1) {
      if (n.kind == arith::Kind::Mod)
        return {0, 1};
      if (a == std::numeric_limits<int64_t>::min())
        overflow(source_);
      return {-a, 1};
    }
    return {n.kind == arith::Kind::IntDiv ? a / b : a % b, 1};
  }
  case arith::Kind::Min:
  case arith::Kind::Max: {
    Value a = eval(child(0), values), b = eval(child(1), values);
    bool a_less = i128(a.num) * b.den <= i128(b.num) * a.den;
    return (n.kind == arith::Kind::Min) == a_less ? a : b;
  }
  case arith::Kind::Select: {
    Value l = eval(child(0), values), r = eval(child(1), values);
    i128 x = i128(l.num) * r.den, y = i128(r.num) * l.den;
    const bool holds = with_comparison(n.cmp, [&](auto cmp) { return cmp(x, y); });
    return eval(child(holds ? 2 : 3), values);
  }
  }
  LIFTX_UNREACHABLE("unknown arith node kind");
}

} // namespace liftx::features
