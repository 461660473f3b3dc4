#pragma once
/// The fields of every function node, in declaration order, and the folds over them. The
/// structural hash, equality modulo renaming, the printer and rebuilding with new children treat
/// a field by its type (a Fun or an Expr is a child; sizes, ints and boundaries are parameters)
/// instead of listing node types, so a new node needs only its line here. Used by ir/ and
/// rewrite/; not an installed header.
#include "ir/expr.hpp"

#include <functional>
#include <tuple>
#include <utility>

namespace liftx::ir {

// clang-format off
inline auto fields(const Lambda& n) { return std::tie(n.params, n.body); }
inline auto fields(const UserFun& n) { return std::tie(n.def); }
inline auto fields(const Map& n) { return std::tie(n.f); }
inline auto fields(const MapSeq& n) { return std::tie(n.f); }
inline auto fields(const MapGlb& n) { return std::tie(n.dim, n.f); }
inline auto fields(const MapWrg& n) { return std::tie(n.dim, n.f); }
inline auto fields(const MapLcl& n) { return std::tie(n.dim, n.f); }
inline auto fields(const Reduce& n) { return std::tie(n.f, n.init); }
inline auto fields(const ReduceSeq& n) { return std::tie(n.f, n.init); }
inline auto fields(const Iterate& n) { return std::tie(n.count, n.f); }
inline auto fields(const Zip&) { return std::tuple<>(); }
inline auto fields(const Tuple&) { return std::tuple<>(); }
inline auto fields(const Split& n) { return std::tie(n.chunk); }
inline auto fields(const Join&) { return std::tuple<>(); }
inline auto fields(const Slide& n) { return std::tie(n.size, n.step); }
inline auto fields(const SlideShifted& n) { return std::tie(n.size, n.step); }
inline auto fields(const JoinShifted& n) { return std::tie(n.length, n.margin); }
inline auto fields(const Pad& n) { return std::tie(n.left, n.right, n.boundary); }
inline auto fields(const At& n) { return std::tie(n.index); }
inline auto fields(const Get& n) { return std::tie(n.index); }
inline auto fields(const Transpose&) { return std::tuple<>(); }
inline auto fields(const Id&) { return std::tuple<>(); }
inline auto fields(const Generate& n) { return std::tie(n.length, n.f); }
inline auto fields(const ToGlobal& n) { return std::tie(n.f); }
inline auto fields(const ToLocal& n) { return std::tie(n.f); }
inline auto fields(const ToLocalPadded& n) { return std::tie(n.padding, n.f); }
inline auto fields(const ToPrivate& n) { return std::tie(n.f); }
inline auto fields(const AsVector& n) { return std::tie(n.width); }
inline auto fields(const AsScalar&) { return std::tuple<>(); }
inline auto fields(const Vectorize& n) { return std::tie(n.width, n.f); }
inline auto fields(const MapSeqSlide& n) { return std::tie(n.f, n.size, n.step, n.unroll); }
// clang-format on

namespace detail {
/// Converts to anything: an aggregate accepts as many as it has members.
struct AnyField {
  template <class T>
  operator T() const; // NOLINT(implicit)
};
template <class N, size_t... I>
constexpr bool accepts(std::index_sequence<I...>) {
  return requires {
    N{(void(I), AnyField{})...};
  };
}
/// Counted down: a member without a default (Fun, Expr) must be given, so fewer are refused too.
template <class N, size_t K = 8>
constexpr size_t member_count() {
  if constexpr (K == 0 || accepts<N>(std::make_index_sequence<K>()))
    return K;
  else
    return member_count<N, K - 1>();
}
} // namespace detail

// A member missing from its fields() line would be skipped by hashing and equality, silently.
static_assert([]<class... Ns>(std::variant<Ns...>*) {
  return ((detail::member_count<Ns>() ==
           std::tuple_size_v<decltype(fields(std::declval<const Ns&>()))>)&&...);
}(static_cast<FunNode*>(nullptr)));

/// Calls `f` on each field of `node`, in order.
template <class N, class F>
void for_each_field(const N& node, F&& f) {
  std::apply([&](const auto&... x) { (f(x), ...); }, fields(node));
}

/// Whether `f` holds for every pair of corresponding fields of `a` and `b` (in order; stops at the
/// first that does not).
template <class N, class F>
bool all_fields(const N& a, const N& b, F&& f) {
  return std::apply(
      [&](const auto&... x) {
        return std::apply([&](const auto&... y) { return (f(x, y) && ...); }, fields(b));
      },
      fields(a));
}

/// `node` with each field replaced by `f(field)`, computed in order.
template <class N, class F>
N map_fields(const N& node, F&& f) {
  return std::apply([&](const auto&... x) { return N{f(x)...}; }, fields(node));
}

/// Builds a function node with the checks of its constructor in ir/expr.hpp (`Split{n}` as
/// split(n)); a lambda is eta-reduced as lambda() does.
Fun make(FunNode node);

/// `f` with each child (in for_each_child order) replaced by what `on_fun` / `on_expr` return for
/// it, rebuilt by make(); `f` itself when every child comes back unchanged (same_as).
Fun map_children(const Fun& f, const std::function<Fun(const Fun&)>& on_fun,
                 const std::function<Expr(const Expr&)>& on_expr);

} // namespace liftx::ir
