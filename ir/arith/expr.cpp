/// Interning, hashing, structural order, checked rationals and the leaf constructors.
#include "ir/arith/simplify_internal.hpp"

#include <array>
#include <atomic>
#include <limits>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace liftx::arith {
namespace detail {

// ---- checked rationals -------------------------------------------------------------------------

void throw_overflow() {
  throw UserError("integer overflow in constant folding");
}

namespace {
constexpr i128 kMax = std::numeric_limits<int64_t>::max();
constexpr i128 kMin = std::numeric_limits<int64_t>::min();

i128 gcd128(i128 a, i128 b) {
  if (a < 0)
    a = -a;
  if (b < 0)
    b = -b;
  // Operands of int64 magnitude (nearly all): 64-bit remainders, not the library's 128-bit ones.
  constexpr i128 kU64Max = std::numeric_limits<uint64_t>::max();
  if (a <= kU64Max && b <= kU64Max)
    return std::gcd(static_cast<uint64_t>(a), static_cast<uint64_t>(b));
  while (b != 0) {
    i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Products of two int64 values fit in i128; of two i128 values they might not, so callers only
// multiply int64-sized operands.
} // namespace

Rational make_rational(i128 num, i128 den) {
  LIFTX_INTERNAL_CHECK(den != 0, "rational with zero denominator");
  if (den < 0) {
    num = -num;
    den = -den;
  }
  if (den == 1) { // an integer: already in lowest terms
    if (num > kMax || num < kMin)
      throw_overflow();
    return Rational{static_cast<int64_t>(num), 1};
  }
  i128 g = gcd128(num, den);
  if (g > 1) {
    num /= g;
    den /= g;
  }
  if (num > kMax || num < kMin || den > kMax)
    throw_overflow();
  return Rational{static_cast<int64_t>(num), static_cast<int64_t>(den)};
}

Rational add(Rational a, Rational b) {
  if (a.den == 1 && b.den == 1)
    return make_rational(i128{a.num} + b.num, 1);
  // a.num*b.den fits i128; the sum of two such values fits as well.
  i128 g = gcd128(a.den, b.den);
  i128 num = i128{a.num} * (b.den / g) + i128{b.num} * (a.den / g);
  i128 den = i128{a.den} * (b.den / g);
  return make_rational(num, den);
}
Rational negate(Rational a) {
  return make_rational(-i128{a.num}, a.den);
}
Rational sub(Rational a, Rational b) {
  return add(a, negate(b));
}
Rational mul(Rational a, Rational b) {
  if (a.den == 1 && b.den == 1) { // integers (nearly all products): no gcds, no 128-bit divisions
    int64_t product = 0;
    if (__builtin_mul_overflow(a.num, b.num, &product))
      throw_overflow();
    return Rational{product, 1};
  }
  // cross-reduce first so that exact results that fit in int64 never overflow
  i128 g1 = gcd128(a.num, b.den), g2 = gcd128(b.num, a.den);
  if (g1 == 0)
    g1 = 1;
  if (g2 == 0)
    g2 = 1;
  i128 num = (i128{a.num} / g1) * (i128{b.num} / g2);
  i128 den = (i128{a.den} / g2) * (i128{b.den} / g1);
  return make_rational(num, den);
}
Rational quotient(Rational a, Rational b) {
  LIFTX_INTERNAL_CHECK(b.num != 0, "rational division by zero");
  return mul(a, make_rational(b.den, b.num));
}
int compare(Rational a, Rational b) {
  i128 l = i128{a.num} * b.den, r = i128{b.num} * a.den;
  return l < r ? -1 : (l > r ? 1 : 0);
}
int64_t floor_of(Rational r) {
  int64_t q = r.num / r.den;
  if (r.num % r.den != 0 && r.num < 0)
    --q;
  return q;
}
int64_t ceil_of(Rational r) {
  int64_t q = r.num / r.den;
  if (r.num % r.den != 0 && r.num > 0)
    ++q;
  return q;
}
int64_t gcd64(int64_t a, int64_t b) {
  i128 g = gcd128(a, b);
  if (g > kMax)
    throw_overflow(); // gcd(INT64_MIN, 0)
  return static_cast<int64_t>(g);
}

// ---- interning ---------------------------------------------------------------------------------

namespace {
size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

size_t hash_node(const Node& n) {
  size_t h = std::hash<int>()(static_cast<int>(n.kind));
  h = mix(h, std::hash<int64_t>()(n.value.num));
  h = mix(h, std::hash<int64_t>()(n.value.den));
  h = mix(h, std::hash<std::string>()(n.name));
  if (n.kind == Kind::Var) {
    h = mix(h, n.range.start ? n.range.start->hash() : 17);
    h = mix(h, n.range.stop ? n.range.stop->hash() : 31);
    h = mix(h, n.range.step.hash());
  }
  for (const Expr& o : n.operands)
    h = mix(h, o.hash());
  h = mix(h, std::hash<int64_t>()(n.exponent));
  h = mix(h, static_cast<size_t>(n.cmp));
  return h;
}

bool same_node(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.hash != b.hash || !(a.value == b.value) || a.name != b.name ||
      a.exponent != b.exponent || a.cmp != b.cmp || a.operands != b.operands)
    return false;
  return a.kind != Kind::Var || a.range == b.range;
}

struct NodeHash {
  size_t operator()(const Node* n) const { return n->hash; }
};
struct NodeEq {
  bool operator()(const Node* a, const Node* b) const { return same_node(*a, *b); }
};

struct Table {
  std::mutex mutex;
  std::unordered_set<const Node*, NodeHash, NodeEq> nodes;
};

// Never destroyed: nodes live for the whole program and stay reachable for leak checkers.
Table& table() {
  static Table* t = new Table;
  return *t;
}

// The constant 1 is made first, by hand, because every node's Range::step points at it.
const Node* one_node() {
  static const Node* one = [] {
    auto* n = new Node{
        Kind::Cst, Rational{1, 1},
        {},        Range{std::nullopt, std::nullopt, Expr(static_cast<const Node*>(nullptr))},
        {},        0,
        CmpOp::Lt, 0};
    n->range.step = Expr(n);
    n->hash = hash_node(*n);
    Table& t = table();
    std::lock_guard lock(t.mutex);
    t.nodes.insert(n);
    return n;
  }();
  return one;
}

const Node* zero_node() {
  static const Node* zero = make_cst(Rational{0, 1}).get();
  return zero;
}
} // namespace

Node blank_node(Kind kind) {
  return Node{kind, Rational{0, 1}, {}, Range{std::nullopt, std::nullopt, Expr(one_node())}, {},
              0,    CmpOp::Lt,      0};
}

Expr intern(Node n) {
  n.hash = hash_node(n);
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.nodes.find(&n);
  if (it != t.nodes.end())
    return Expr(*it);
  auto* stored = new Node(std::move(n));
  t.nodes.insert(stored);
  return Expr(stored);
}

namespace {
/// Integers kSmallLowest .. kSmallLowest + kSmallIntegers - 1, interned on first use. Code
/// generation makes the same small constants millions of times (indices, unrolled iterations,
/// offsets); each find in the table would build a node, hash it and take the table's lock.
constexpr int64_t kSmallLowest = -4096;
constexpr int64_t kSmallIntegers = int64_t(1) << 16;
std::array<std::atomic<const Node*>, kSmallIntegers>& small_integers() {
  static auto* cache = new std::array<std::atomic<const Node*>, kSmallIntegers>{};
  return *cache;
}
} // namespace

Expr make_cst(Rational r) {
  if (r.num == 1 && r.den == 1)
    return Expr(one_node());
  const bool small = r.den == 1 && r.num >= kSmallLowest && r.num < kSmallLowest + kSmallIntegers;
  std::atomic<const Node*>* slot =
      small ? &small_integers()[size_t(r.num - kSmallLowest)] : nullptr;
  // Threads that both miss intern the same node: either store leaves the slot right.
  if (slot)
    if (const Node* cached = slot->load(std::memory_order_acquire))
      return Expr(cached);
  Node n = blank_node(Kind::Cst);
  n.value = r;
  Expr made = intern(std::move(n));
  if (slot)
    slot->store(made.get(), std::memory_order_release);
  return made;
}

namespace {
struct OperandPair {
  MemoOp op;
  const Node* a;
  const Node* b;
  bool operator==(const OperandPair&) const = default;
};
struct OperandPairHash {
  size_t operator()(const OperandPair& p) const {
    size_t h = std::hash<const Node*>()(p.a);
    h ^= std::hash<const Node*>()(p.b) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h ^ static_cast<size_t>(p.op);
  }
};
struct BinaryMemo {
  std::mutex mutex;
  std::unordered_map<OperandPair, const Node*, OperandPairHash> results;
};
BinaryMemo& binary_memo() {
  static BinaryMemo* memo = new BinaryMemo;
  return *memo;
}
} // namespace

Expr memoized(MemoOp op, const Expr& a, const Expr& b, Expr (*compute)(const Expr&, const Expr&)) {
  const OperandPair key{op, a.get(), b.get()};
  BinaryMemo& memo = binary_memo();
  {
    std::lock_guard lock(memo.mutex);
    if (auto it = memo.results.find(key); it != memo.results.end())
      return Expr(it->second);
  }
  Expr result = compute(a, b); // not under the lock: it recurses into memoized operators
  std::lock_guard lock(memo.mutex);
  memo.results.emplace(key, result.get());
  return result;
}

Expr make_binary(Kind kind, const Expr& a, const Expr& b) {
  Node n = blank_node(kind);
  n.operands = {a, b};
  return intern(std::move(n));
}

Expr make_pow(const Expr& base, int64_t exponent) {
  LIFTX_INTERNAL_CHECK(exponent != 0 && exponent != 1, "raw Pow with exponent {}", exponent);
  Node n = blank_node(Kind::Pow);
  n.operands = {base};
  n.exponent = exponent;
  return intern(std::move(n));
}

// ---- structural order --------------------------------------------------------------------------

namespace {
int kind_rank(Kind k) {
  switch (k) {
  case Kind::Cst:
    return 0;
  case Kind::Var:
    return 1;
  case Kind::Pow:
    return 2;
  case Kind::Prod:
    return 3;
  case Kind::Sum:
    return 4;
  case Kind::IntDiv:
    return 5;
  case Kind::Mod:
    return 6;
  case Kind::Min:
    return 7;
  case Kind::Max:
    return 8;
  case Kind::Select:
    return 9;
  }
  return 10;
}

int compare_opt(const std::optional<Expr>& a, const std::optional<Expr>& b) {
  if (!a || !b)
    return (a ? 1 : 0) - (b ? 1 : 0);
  return compare_expr(*a, *b);
}

int compare_lists(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (int c = compare_expr(a[i], b[i]))
      return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

const Expr& factor_base(const Expr& f) {
  return f.node().kind == Kind::Pow ? f.node().operands[0] : f;
}
int64_t factor_exponent(const Expr& f) {
  return f.node().kind == Kind::Pow ? f.node().exponent : 1;
}
int compare_factor(const Expr& f, const Expr& g) {
  if (int c = compare_expr(factor_base(f), factor_base(g)))
    return c;
  int64_t x = factor_exponent(f), y = factor_exponent(g);
  return x < y ? -1 : (x > y ? 1 : 0);
}
} // namespace

int compare_expr(const Expr& a, const Expr& b) {
  if (a == b)
    return 0;
  const Node& x = a.node();
  const Node& y = b.node();
  if (x.kind != y.kind)
    return kind_rank(x.kind) < kind_rank(y.kind) ? -1 : 1;
  switch (x.kind) {
  case Kind::Cst:
    return compare(x.value, y.value);
  case Kind::Var:
    if (int c = x.name.compare(y.name))
      return c < 0 ? -1 : 1;
    if (int c = compare_opt(x.range.start, y.range.start))
      return c;
    if (int c = compare_opt(x.range.stop, y.range.stop))
      return c;
    return compare_expr(x.range.step, y.range.step);
  case Kind::Pow:
    if (int c = compare_expr(x.operands[0], y.operands[0]))
      return c;
    return x.exponent < y.exponent ? -1 : (x.exponent > y.exponent ? 1 : 0);
  case Kind::Select:
    if (x.cmp != y.cmp)
      return x.cmp < y.cmp ? -1 : 1;
    return compare_lists(x.operands, y.operands);
  default:
    return compare_lists(x.operands, y.operands);
  }
}

int compare_keys(const Expr& a, const Expr& b) {
  if (a == b)
    return 0;
  auto factors = [](const Expr& k) {
    return k.node().kind == Kind::Prod ? k.node().operands : std::vector<Expr>{k};
  };
  std::vector<Expr> fa = factors(a), fb = factors(b);
  for (size_t i = 0; i < fa.size() && i < fb.size(); ++i)
    if (int c = compare_factor(fa[i], fb[i]))
      return c;
  return fa.size() < fb.size() ? -1 : (fa.size() > fb.size() ? 1 : 0);
}

bool occurs(const Expr& needle, const Expr& e) {
  if (e == needle)
    return true;
  for (const Expr& o : e.node().operands)
    if (occurs(needle, o))
      return true;
  return false;
}

} // namespace detail

// ---- public handle and leaf constructors
// ---------------------------------------------------------

Expr::Expr() : node_(detail::zero_node()) {}
Expr::Expr(int64_t c) : node_(detail::make_cst(Rational{c, 1}).get()) {}

size_t Expr::hash() const {
  return node_->hash;
}
bool Expr::is_constant() const {
  return node_->kind == Kind::Cst;
}
Expr cst(int64_t c) {
  return Expr(c);
}

Expr rational(int64_t num, int64_t den) {
  LIFTX_USER_CHECK(den != 0, "rational constant {}/0 has a zero denominator", num);
  return detail::make_cst(detail::make_rational(num, den));
}

Expr var(std::string name, Range range) {
  LIFTX_USER_CHECK(!name.empty(), "a variable needs a name");
  Node n = detail::blank_node(Kind::Var);
  n.name = std::move(name);
  n.range = std::move(range);
  return detail::intern(std::move(n));
}

Expr size_var(std::string name) {
  return var(std::move(name), Range{Expr(1), std::nullopt});
}

Expr range_var(std::string name, Expr start, Expr stop, Expr step) {
  return var(std::move(name), Range{std::move(start), std::move(stop), std::move(step)});
}

} // namespace liftx::arith
