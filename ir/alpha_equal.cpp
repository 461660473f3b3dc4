// Equality modulo renaming of bound parameters.
#include "ir/expr.hpp"

#include "ir/fields.hpp"

#include <bit>
#include <string>
#include <unordered_map>

namespace liftx::ir {
namespace {

/// Literals and constant boundaries compare by kind and bit pattern, matching their hash.
bool same_scalar(const Scalar& a, const Scalar& b) {
  if (a.index() != b.index())
    return false;
  return std::visit(
      [&](auto x) {
        using V = decltype(x);
        V y = std::get<V>(b);
        if constexpr (std::is_same_v<V, float>)
          return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y);
        else if constexpr (std::is_same_v<V, double>)
          return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
        else
          return x == y;
      },
      a);
}

bool same_boundary(const Boundary& a, const Boundary& b) {
  if (a.kind != b.kind)
    return false;
  return a.kind != Boundary::Kind::Constant || same_scalar(a.value, b.value);
}

/// The body text with whitespace runs collapsed to one space and the ends trimmed.
std::string normalized_body(const std::string& text) {
  std::string out;
  bool pending_space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      pending_space = !out.empty();
    } else {
      if (pending_space)
        out += ' ';
      pending_space = false;
      out += c;
    }
  }
  return out;
}

/// same_userfun, but bodies that differ only in layout (a DSL one-liner and the same function
/// written over several lines of a .lift file) are equal too.
bool equivalent_userfuns(const UserFunDef& a, const UserFunDef& b) {
  if (same_userfun(a, b))
    return true;
  if (a.name() != b.name() || a.results() != b.results() || a.params().size() != b.params().size())
    return false;
  for (size_t i = 0; i < a.params().size(); ++i)
    if (a.params()[i].name != b.params()[i].name || a.params()[i].kind != b.params()[i].kind)
      return false;
  return normalized_body(a.body_text()) == normalized_body(b.body_text());
}

/// Matches bound parameters of `a` to those of `b` by position.
class AlphaEq {
public:
  bool expr(const Expr& a, const Expr& b) {
    if (a.hash() != b.hash())
      return false; // alpha-equal terms have equal hashes
    if (a.same_as(b) && renamed_ == 0)
      return true;
    if (a.type() != b.type())
      return false;
    if (const auto* pa = a.as<Param>()) {
      const auto* pb = b.as<Param>();
      if (!pb)
        return false;
      if (auto it = a_to_b_.find(pa->id); it != a_to_b_.end())
        return it->second == pb->id;
      return !b_to_a_.count(pb->id) && pa->id == pb->id; // both free: same parameter
    }
    if (const auto* la = a.as<Literal>()) {
      const auto* lb = b.as<Literal>();
      return lb && same_scalar(la->value, lb->value);
    }
    const auto* ca = a.as<Call>();
    const auto* cb = b.as<Call>();
    if (!ca || !cb || ca->args.size() != cb->args.size() || !fun(ca->fun, cb->fun))
      return false;
    for (size_t i = 0; i < ca->args.size(); ++i)
      if (!expr(ca->args[i], cb->args[i]))
        return false;
    return true;
  }

  bool fun(const Fun& a, const Fun& b) {
    if (a.hash() != b.hash())
      return false;
    if (a.same_as(b) && renamed_ == 0)
      return true;
    if (a.data().node.index() != b.data().node.index())
      return false;
    return std::visit(
        [&](const auto& na) {
          using N = std::decay_t<decltype(na)>;
          const N& nb = *b.as<N>();
          if constexpr (std::is_same_v<N, Lambda>)
            return lambda(na, nb);
          else
            return all_fields(na, nb, [this](const auto& x, const auto& y) { return same(x, y); });
        },
        a.data().node);
  }

  /// Lambdas with parameters of the same types, and bodies equal once the parameters are bound.
  bool lambda(const Lambda& a, const Lambda& b) {
    if (a.params.size() != b.params.size())
      return false;
    for (size_t i = 0; i < a.params.size(); ++i)
      if (a.params[i].type() != b.params[i].type())
        return false;
    Scope scope(*this, a.params, b.params);
    return expr(a.body, b.body);
  }

  /// Binds `as[i]` to `bs[i]` for the lifetime of the scope (restoring shadowed entries).
  class Scope {
  public:
    Scope(AlphaEq& eq, const std::vector<Expr>& as, const std::vector<Expr>& bs) : eq_(eq) {
      for (size_t i = 0; i < as.size(); ++i) {
        uint64_t a = as[i].as<Param>()->id;
        uint64_t b = bs[i].as<Param>()->id;
        saved_.push_back(Saved{a, b, lookup(eq_.a_to_b_, a), lookup(eq_.b_to_a_, b)});
        set(a, b);
      }
    }
    ~Scope() {
      for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
        unset(it->a);
        unset_b(it->b);
        if (it->old_b)
          set(it->a, *it->old_b);
        if (it->old_a)
          set(*it->old_a, it->b);
      }
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

  private:
    struct Saved {
      uint64_t a, b;
      std::optional<uint64_t> old_b, old_a;
    };
    static std::optional<uint64_t> lookup(const std::unordered_map<uint64_t, uint64_t>& m,
                                          uint64_t k) {
      auto it = m.find(k);
      return it == m.end() ? std::nullopt : std::optional<uint64_t>(it->second);
    }
    void set(uint64_t a, uint64_t b) {
      unset(a);
      unset_b(b);
      eq_.a_to_b_[a] = b;
      eq_.b_to_a_[b] = a;
      if (a != b)
        ++eq_.renamed_;
    }
    void unset(uint64_t a) {
      auto it = eq_.a_to_b_.find(a);
      if (it == eq_.a_to_b_.end())
        return;
      if (it->first != it->second)
        --eq_.renamed_;
      eq_.b_to_a_.erase(it->second);
      eq_.a_to_b_.erase(it);
    }
    void unset_b(uint64_t b) {
      auto it = eq_.b_to_a_.find(b);
      if (it != eq_.b_to_a_.end())
        unset(it->second);
    }
    AlphaEq& eq_;
    std::vector<Saved> saved_;
  };

private:
  // Fields of ir/fields.hpp, by type.
  bool same(int x, int y) { return x == y; }
  bool same(const arith::Expr& x, const arith::Expr& y) { return x == y; }
  bool same(const Boundary& x, const Boundary& y) { return same_boundary(x, y); }
  bool same(const UserFunPtr& x, const UserFunPtr& y) { return equivalent_userfuns(*x, *y); }
  bool same(const Fun& x, const Fun& y) { return fun(x, y); }
  bool same(const Expr& x, const Expr& y) { return expr(x, y); }

  std::unordered_map<uint64_t, uint64_t> a_to_b_;
  std::unordered_map<uint64_t, uint64_t> b_to_a_;
  int renamed_ = 0; ///< bindings with a != b; identical subtrees are equal only when 0
};

} // namespace

bool alpha_equal(const Expr& a, const Expr& b) {
  return AlphaEq().expr(a, b);
}
bool alpha_equal(const Fun& a, const Fun& b) {
  return AlphaEq().fun(a, b);
}

bool alpha_equal(const Program& a, const Program& b) {
  if (a.params.size() != b.params.size() || a.storage != b.storage)
    return false;
  for (size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].type() != b.params[i].type())
      return false;
  AlphaEq eq;
  AlphaEq::Scope scope(eq, a.params, b.params);
  return eq.expr(a.body, b.body);
}

} // namespace liftx::ir
