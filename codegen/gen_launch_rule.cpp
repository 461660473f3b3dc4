// What a kernel asks of its launch: thread counts tied to the mapped lengths (the launch rule,
// from the first pass's census), and the divisibility of size variables its aligned vector
// accesses rely on.
#include "codegen/generator.hpp"

#include <numeric>

namespace liftx::codegen {

namespace {

std::optional<arith::Expr> most_common(const std::vector<arith::Expr>& lengths) {
  if (lengths.empty())
    return std::nullopt;
  std::unordered_map<arith::Expr, int> counts;
  for (const arith::Expr& l : lengths)
    ++counts[l];
  arith::Expr best = lengths.front();
  for (const arith::Expr& l : lengths)
    if (counts[l] > counts[best])
      best = l;
  return best;
}

} // namespace

/// A length (p/q)*N in a type of the program means the exact division made N a multiple of q.
void Generator::collect_size_divisors() {
  std::set<std::string> size_names;
  for (const arith::Expr& v : program_.size_vars())
    size_names.insert(v.node().name);
  std::set<const void*> seen;
  std::function<void(const ir::Type&)> on_type = [&](const ir::Type& t) {
    if (const auto* a = t.as<ir::ArrayType>()) {
      const arith::Node& n = a->length.node();
      if (n.kind == arith::Kind::Prod && n.operands.size() == 2) {
        const arith::Node& c = n.operands[0].node();
        const arith::Node& v = n.operands[1].node();
        if (c.kind == arith::Kind::Cst && c.value.den > 1 && v.kind == arith::Kind::Var &&
            size_names.count(v.name)) {
          int64_t& d = divisors_[v.name];
          d = d == 0 ? c.value.den : std::lcm(d, c.value.den);
        }
      }
      on_type(a->element);
    } else if (const auto* tuple = t.as<ir::TupleType>()) {
      for (const ir::Type& e : tuple->elements)
        on_type(e);
    }
  };
  std::function<void(const ir::Fun&)> on_fun;
  std::function<void(const ir::Expr&)> on_expr = [&](const ir::Expr& e) {
    if (!seen.insert(e.identity()).second)
      return;
    on_type(e.type());
    ir::for_each_child(e, on_fun, on_expr);
  };
  on_fun = [&](const ir::Fun& f) {
    if (seen.insert(f.identity()).second)
      ir::for_each_child(f, on_fun, on_expr);
  };
  on_expr(program_.body);
}

void Generator::collect_size_conditions() {
  auto require = [&](const arith::Expr& length, const arith::Expr& least, const char* what) {
    const arith::Expr condition = length - least;
    if (arith::prove_nonneg(condition))
      return;
    for (const Kernel::SizeCondition& c : kernel_.size_conditions)
      if (c.at_least_zero == condition)
        return;
    kernel_.size_conditions.push_back(
        {condition, fmt::format("{}: {} >= {}", what, length.to_string(), least.to_string())});
  };
  // The function a map of any level applies to each element; null for anything else.
  auto mapped = [](const ir::Fun& f) -> const ir::Fun* {
    return std::visit(
        [](const auto& n) -> const ir::Fun* {
          using N = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<N, ir::Map> || std::is_same_v<N, ir::MapSeq> ||
                        std::is_same_v<N, ir::MapGlb> || std::is_same_v<N, ir::MapWrg> ||
                        std::is_same_v<N, ir::MapLcl>)
            return &n.f;
          else
            return nullptr;
        },
        f.data().node);
  };
  std::set<const void*> seen;
  std::function<void(const ir::Fun&)> on_fun;
  std::function<void(const ir::Expr&)> on_expr = [&](const ir::Expr& e) {
    if (!seen.insert(e.identity()).second)
      return;
    if (const auto* call = e.as<ir::Call>(); call && call->args.size() == 1) {
      // Through maps of it (map(slideShifted(...)) over rows): the function applied to elements.
      ir::Fun fun = call->fun;
      ir::Type arg = call->args[0].type();
      for (const ir::Fun* inner = mapped(fun); inner && arg.as<ir::ArrayType>();
           inner = mapped(fun)) {
        arg = arg.as<ir::ArrayType>()->element;
        fun = *inner;
      }
      const auto* in = arg.as<ir::ArrayType>();
      if (const auto* s = fun.as<ir::SlideShifted>(); s && in)
        require(in->length, s->size, "slideShifted's array must hold a window");
      if (const auto* j = fun.as<ir::JoinShifted>(); j && in) {
        // The last row starts `margin` in, and adds `margin` past the others.
        const arith::Expr row = in->element.as<ir::ArrayType>()->length;
        require(j->length, row + j->margin,
                "joinShifted's shifted last tile must start at least its margin in");
        require(j->length - (j->length - arith::Expr(1)) / row * row, j->margin,
                "joinShifted's shifted last tile must add at least its margin past the others "
                "(a fused tile repairs only the edges it touches)");
      }
    }
    ir::for_each_child(e, on_fun, on_expr);
  };
  on_fun = [&](const ir::Fun& f) {
    if (seen.insert(f.identity()).second)
      ir::for_each_child(f, on_fun, on_expr);
  };
  on_expr(program_.body);
}

/// Global sizes follow the first mapGlb of each dimension; work-groups follow the first mapWrg,
/// sized by the length most mapLcl of that dimension map over.
void Generator::decide_launch() {
  LaunchRule& rule = kernel_.launch;
  int dims = 1;
  for (int d = 0; d < 3; ++d) {
    if (!lengths_->glb[d].empty() || !lengths_->wrg[d].empty())
      dims = d + 1;
    if (!options_.tie_threads_to_lengths)
      continue;
    if (!lengths_->glb[d].empty()) {
      rule.global[d] = lengths_->glb[d].front();
    } else if (!lengths_->wrg[d].empty()) {
      arith::Expr local = most_common(lengths_->lcl[d]).value_or(arith::Expr(1));
      rule.local[d] = local;
      rule.global[d] = lengths_->wrg[d].front() * local;
    }
  }
  rule.dims = dims;
}

/// Threads (or groups) sharing the iterations of a parallel map, as an expression, when the
/// launch rule ties them to lengths; nullopt when free.
std::optional<arith::Expr> Generator::workers(Level level, int dim) const {
  const LaunchRule& rule = kernel_.launch;
  if (!lengths_ || !options_.tie_threads_to_lengths)
    return std::nullopt;
  switch (level) {
  case Level::Glb:
    return rule.global[dim];
  case Level::Wrg:
    if (rule.global[dim] && rule.local[dim])
      return lengths_->wrg[dim].front();
    return std::nullopt;
  case Level::Lcl:
    return rule.local[dim];
  case Level::Seq:
    return arith::Expr(1);
  }
  return std::nullopt;
}

} // namespace liftx::codegen
