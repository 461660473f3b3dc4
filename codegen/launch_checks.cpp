// Checks of a generated kernel against concrete sizes and launches, for what the OpenCL runtime
// would not report: barriers some work-items never reach, and index arithmetic that overflows.
#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace liftx::codegen {

std::optional<std::string>
divergent_barrier(const Kernel& kernel, const std::array<int64_t, 3>& local, const Sizes& sizes) {
  for (const BarrierRecord& barrier : kernel.barriers)
    for (const LoopContext& loop : barrier.loops) {
      if (loop.primitive.rfind("mapLcl", 0) != 0 || loop.kind == cl::LoopKind::Block ||
          loop.kind == cl::LoopKind::None)
        continue;
      const int dim = std::clamp(loop.dim, 0, 2);
      const int64_t threads = local[static_cast<size_t>(dim)];
      std::optional<int64_t> trip = loop.trip.as_constant();
      if (!trip) {
        try {
          trip = arith::evaluate(loop.trip, sizes);
        } catch (const UserError&) {
        }
      }
      if (threads <= 0 || !trip)
        return fmt::format("a barrier inside {} needs a known local size in dimension {} that "
                           "divides its {} iterations",
                           loop.primitive, dim, loop.trip.to_string());
      // Work-item l runs ceil((trip - l) / threads) iterations (none when l >= trip): the same
      // number for every work-item exactly when `threads` divides `trip`.
      if (*trip % threads != 0)
        return fmt::format("local size {} in dimension {} does not divide the {} iterations of {} "
                           "that contain a barrier: work-items would disagree on reaching it",
                           threads, dim, *trip, loop.primitive);
    }
  return std::nullopt;
}

namespace {

/// Upper bounds of |value| of an expression, and of the largest intermediate the generated C
/// computes on the way (doubles: the point is to see values beyond int64 too). Exact divisions
/// print as a numerator over a denominator, (a + b) / 4: the numerator is the intermediate.
class MagnitudeBound {
public:
  explicit MagnitudeBound(const Sizes& sizes) : sizes_(sizes) {}

  /// Bound of |e|; nullopt when a variable has no bound at these sizes.
  std::optional<double> of(const arith::Expr& e) {
    const arith::Node& n = e.node();
    double value = 0, numerator = 0;
    switch (n.kind) {
    case arith::Kind::Cst:
      value = std::abs(static_cast<double>(n.value.num)) / static_cast<double>(n.value.den);
      numerator = std::abs(static_cast<double>(n.value.num));
      break;
    case arith::Kind::Var: {
      std::optional<double> v = variable(n);
      if (!v)
        return std::nullopt;
      value = numerator = *v;
      break;
    }
    case arith::Kind::Sum: {
      double denominators = 1; // the terms' common denominator (a bound of their lcm)
      for (const arith::Expr& term : n.operands) {
        std::optional<double> t = of(term);
        if (!t)
          return std::nullopt;
        value += *t;
        denominators = std::max(denominators, coefficient_denominator(term));
      }
      numerator = value * denominators;
      break;
    }
    case arith::Kind::Prod: {
      // coefficient * factors, divided at the end by the coefficient's denominator and by the
      // negative powers (divisors of at least 1, which only shrink the value).
      double product = 1;
      for (const arith::Expr& factor : n.operands) {
        std::optional<double> f = of(factor);
        if (!f)
          return std::nullopt;
        const arith::Node& fn = factor.node();
        if (fn.kind == arith::Kind::Cst)
          product *= std::abs(static_cast<double>(fn.value.num));
        else if (!(fn.kind == arith::Kind::Pow && fn.exponent < 0))
          product *= *f;
      }
      numerator = product;
      value = product / coefficient_denominator(e);
      break;
    }
    case arith::Kind::Pow: {
      std::optional<double> base = of(n.operands.at(0));
      if (!base)
        return std::nullopt;
      value = n.exponent > 0 ? std::pow(*base, static_cast<double>(n.exponent)) : 1.0;
      numerator = n.exponent > 0 ? value : *base;
      break;
    }
    case arith::Kind::IntDiv:
    case arith::Kind::Mod: {
      // a / c with a constant divisor c >= 1 is at most |a| / c, and a % b is at most |a| and
      // below |b| (an AoSoA index (N + 31) / 32 * 288 is not N * 288); a divisor that is not a
      // constant is still at least 1.
      std::optional<double> dividend = of(n.operands.at(0));
      std::optional<double> divisor = of(n.operands.at(1));
      if (!dividend || !divisor)
        return std::nullopt;
      const arith::Node& d = n.operands.at(1).node();
      const double constant_divisor =
          d.kind == arith::Kind::Cst && d.value.den == 1 && d.value.num >= 1
              ? static_cast<double>(d.value.num)
              : 1.0;
      value = n.kind == arith::Kind::IntDiv ? std::floor(*dividend / constant_divisor)
                                            : std::min(*dividend, *divisor);
      numerator = *dividend;
      break;
    }
    default: { // Min, Max, Select: no larger than their largest operand
      for (const arith::Expr& operand : n.operands) {
        std::optional<double> o = of(operand);
        if (!o)
          return std::nullopt;
        value = std::max(value, *o);
      }
      numerator = value;
    }
    }
    largest_ = std::max(largest_, numerator);
    return value;
  }

  /// The largest intermediate seen by `of`.
  double largest() const { return largest_; }

private:
  std::optional<double> variable(const arith::Node& n) {
    if (auto it = sizes_.find(n.name); it != sizes_.end())
      return std::abs(static_cast<double>(it->second));
    if (!n.range.start || !n.range.stop)
      return std::nullopt;
    std::optional<double> start = of(*n.range.start);
    std::optional<double> stop = of(*n.range.stop);
    if (!start || !stop)
      return std::nullopt;
    return std::max(*start, *stop);
  }

  static double coefficient_denominator(const arith::Expr& term) {
    const arith::Node& t = term.node();
    if (t.kind == arith::Kind::Cst)
      return static_cast<double>(t.value.den);
    if (t.kind == arith::Kind::Prod)
      for (const arith::Expr& f : t.operands)
        if (f.node().kind == arith::Kind::Cst)
          return static_cast<double>(f.node().value.den);
    return 1;
  }

  const Sizes& sizes_;
  double largest_ = 0;
};

} // namespace

std::optional<std::string> index_overflow(const Kernel& kernel, const Sizes& sizes) {
  constexpr double kIntMax = static_cast<double>(std::numeric_limits<int32_t>::max());
  for (const MemoryAccess& access : kernel.accesses) {
    MagnitudeBound bound(sizes);
    if (!bound.of(access.index) || bound.largest() <= kIntMax)
      continue;
    return fmt::format("an index of {} reaches {:.3g} (computing {}), beyond the 32-bit int the "
                       "kernel computes indices in",
                       access.buffer, bound.largest(), arith::to_c(access.index));
  }
  return std::nullopt;
}

std::optional<std::string> launch_index_overflow(const Kernel& kernel, const Launch& launch,
                                                 const Sizes& sizes) {
  constexpr double kIntMax = static_cast<double>(std::numeric_limits<int32_t>::max());
  // A free-thread kernel steps each map's loop by the global size (or the number of groups),
  // in int: the step past the last index must still fit. The largest index any access
  // computes bounds every loop's range.
  if (!launch.tied) {
    double largest = 0;
    for (const MemoryAccess& access : kernel.accesses) {
      MagnitudeBound bound(sizes);
      if (bound.of(access.index))
        largest = std::max(largest, bound.largest());
    }
    for (int d = 0; d < launch.dims; ++d) {
      const double step = static_cast<double>(launch.global[d]);
      if (step + largest + 1 > kIntMax)
        return fmt::format("a global size of {} in dimension {} steps the kernel's loops past "
                           "2^31 - 1, the 32-bit int it counts in (its largest index is {:.0f}); "
                           "use at most {:.0f}",
                           launch.global[d], d, largest, std::max(1.0, kIntMax - largest - 1));
    }
  }
  // The instrumented kernel numbers its work-items in one int.
  if (kernel.instrumentation) {
    double work_items = 1;
    for (int d = 0; d < launch.dims; ++d)
      work_items *= static_cast<double>(launch.global[d]);
    if (work_items > kIntMax)
      return fmt::format("{:.0f} work-items do not fit the 32-bit int the instrumented kernel "
                         "numbers them in",
                         work_items);
  }
  return std::nullopt;
}

} // namespace liftx::codegen
