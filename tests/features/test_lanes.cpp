// The warp's lanes evaluated in one batch (CompiledExpr::evaluate_lanes) against one lane at a
// time (CompiledExpr::evaluate, the definition), on random expressions and lane values; and the
// cache-line and bank-conflict counts against their first, allocation-heavy implementations.
#include "features/compiled_expr.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

using namespace liftx;
using namespace liftx::features;

namespace {

/// Random integer expressions over `vars`: every node kind, constants that divide by zero,
/// overflow or are rational, so that both the batch's int64 path and its refusals are exercised.
struct ExprGen {
  std::mt19937_64& rng;
  const std::vector<arith::Expr>& vars;

  int64_t pick(std::initializer_list<int64_t> values) {
    std::vector<int64_t> v(values);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  }
  arith::Expr leaf() {
    if (std::uniform_int_distribution<int>(0, 2)(rng) > 0)
      return vars[std::uniform_int_distribution<size_t>(0, vars.size() - 1)(rng)];
    return arith::cst(pick({0, 1, -1, 2, 3, 4, 7, 16, 32, -8, 1000, int64_t(1) << 40}));
  }
  arith::Expr operator()(int depth) {
    if (depth == 0)
      return leaf();
    const arith::Expr a = (*this)(depth - 1), b = (*this)(depth - 1);
    switch (std::uniform_int_distribution<int>(0, 11)(rng)) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return a / b;
    case 4:
      return a % b;
    case 5: // constant divisors, powers of two among them (the batch's shift path)
      return a / arith::cst(pick({1, 2, 4, 8, 32, 3, -4, 0}));
    case 6:
      return a % arith::cst(pick({1, 2, 4, 16, 64, 5, -2, 0}));
    case 7:
      return arith::min(a, b);
    case 8:
      return arith::max(a, b);
    case 9:
      return arith::select(arith::CmpOp(std::uniform_int_distribution<int>(0, 5)(rng)), a, b,
                           (*this)(depth - 1), (*this)(depth - 1));
    case 10:
      return arith::pow(a, pick({0, 1, 2, 3, -1}));
    default:
      return std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? arith::exact_div(a, b)
                                                                : a + arith::cst(1);
    }
  }
};

std::optional<int64_t> scalar(const CompiledExpr& e, const std::vector<int64_t>& values) {
  try {
    return e.evaluate(values);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

// The implementations before the batch (per-lane optionals, a map per bank), kept as references.
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t reference_lines(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                        int64_t line_bytes, int64_t width) {
  std::optional<int64_t> first;
  std::vector<int64_t> lines;
  for (const std::optional<int64_t>& index : indices) {
    if (!index)
      continue;
    if (!first)
      first = *index;
    const int64_t begin = (*index - *first) * element_bytes;
    const int64_t end = begin + width * element_bytes - 1;
    for (int64_t line = floor_div(begin, line_bytes); line <= floor_div(end, line_bytes); ++line)
      lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return std::unique(lines.begin(), lines.end()) - lines.begin();
}

double reference_banks(const std::vector<std::optional<int64_t>>& indices, int64_t element_bytes,
                       int64_t banks) {
  double sum = 0;
  int groups = 0;
  for (size_t start = 0; start < indices.size(); start += static_cast<size_t>(banks)) {
    std::vector<int64_t> words;
    size_t stop = std::min(indices.size(), start + static_cast<size_t>(banks));
    for (size_t k = start; k < stop; ++k)
      if (indices[k])
        words.push_back(floor_div(*indices[k] * element_bytes, 4));
    if (words.empty())
      continue;
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    std::unordered_map<int64_t, int> per_bank;
    int worst = 0;
    for (int64_t w : words)
      worst = std::max(worst, ++per_bank[((w % banks) + banks) % banks]);
    sum += worst;
    ++groups;
  }
  return groups == 0 ? 0.0 : sum / groups;
}

} // namespace

TEST_CASE("evaluate_lanes equals evaluate lane by lane on random expressions") {
  std::mt19937_64 rng(19);
  const std::vector<arith::Expr> vars{arith::var("i"), arith::var("j"), arith::size_var("N"),
                                      arith::var("k", {arith::cst(0), arith::cst(64)})};
  ExprGen gen{rng, vars};
  int batched = 0, refused = 0, failing_lanes = 0;
  LaneScratch scratch;
  for (int trial = 0; trial < 4000; ++trial) {
    SlotTable slots;
    for (const arith::Expr& v : vars)
      slots.slot(v);
    arith::Expr e = arith::cst(0);
    try {
      e = gen(std::uniform_int_distribution<int>(0, 4)(rng));
    } catch (const UserError&) {
      continue; // the simplifier folds some constants and refuses what overflows
    }
    const CompiledExpr compiled(e, slots);
    const size_t lanes = trial % 7 == 0 ? 1 : trial % 5 == 0 ? 64 : 32;
    const auto n_slots = static_cast<size_t>(slots.size());
    // Small values mostly (tile-like indices), sometimes huge ones that overflow.
    std::vector<int64_t> values(n_slots * lanes);
    const bool huge = trial % 9 == 0;
    for (size_t s = 0; s < n_slots; ++s)
      for (size_t l = 0; l < lanes; ++l)
        values[s * lanes + l] = huge ? std::uniform_int_distribution<int64_t>(-(int64_t(1) << 62),
                                                                              int64_t(1) << 62)(rng)
                                     : std::uniform_int_distribution<int64_t>(-40, 300)(rng);
    // Half the trials give some slots one value in every lane and say so (sizes, work-group
    // ids): the nodes over them are computed once.
    std::vector<uint8_t> uniform(n_slots, 0);
    if (trial % 2 == 0)
      for (size_t s = 0; s < n_slots; ++s)
        if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
          uniform[s] = 1;
          std::fill_n(values.begin() + ptrdiff_t(s * lanes), lanes, values[s * lanes]);
        }
    std::vector<uint8_t> active(lanes);
    for (size_t l = 0; l < lanes; ++l)
      active[l] = std::uniform_int_distribution<int>(0, 4)(rng) != 0;
    std::vector<int64_t> out(lanes, 0);
    const bool ok = compiled.evaluate_lanes(values.data(), lanes, active.data(), out.data(),
                                            scratch, trial % 2 == 0 ? uniform.data() : nullptr);
    ok ? ++batched : ++refused;
    for (size_t l = 0; l < lanes; ++l) {
      if (!active[l])
        continue;
      std::vector<int64_t> lane(n_slots);
      for (size_t s = 0; s < n_slots; ++s)
        lane[s] = values[s * lanes + l];
      const std::optional<int64_t> expected = scalar(compiled, lane);
      failing_lanes += !expected;
      if (ok) {
        INFO(e.to_string() << " lane " << l);
        // A batch that succeeds is exact, and no active lane of it could have failed.
        REQUIRE(expected.has_value());
        CHECK(out[l] == *expected);
      }
    }
  }
  // Both paths were exercised: most expressions batch, some need the lane-by-lane path.
  CHECK(batched > 2000);
  CHECK(refused > 100);
  CHECK(failing_lanes > 100);
}

TEST_CASE("expressions compiled together evaluate as each on its own") {
  std::mt19937_64 rng(23);
  const std::vector<arith::Expr> vars{arith::var("i"), arith::var("j"), arith::size_var("N")};
  ExprGen gen{rng, vars};
  int together = 0, refused = 0, shared = 0;
  // Apart: the rows of evaluate_all_lanes live in its scratch.
  LaneScratch scratch, each_scratch;
  std::vector<const int64_t*> rows;
  for (int trial = 0; trial < 1500; ++trial) {
    SlotTable slots;
    for (const arith::Expr& v : vars)
      slots.slot(v);
    // Index-like expressions around a common base (as a stencil's neighbours are).
    std::vector<arith::Expr> roots;
    try {
      const arith::Expr base = gen(std::uniform_int_distribution<int>(0, 3)(rng));
      const int count = std::uniform_int_distribution<int>(1, 6)(rng);
      for (int r = 0; r < count; ++r)
        roots.push_back(r % 2 == 0 ? base + arith::cst(r) : base * vars[0] + gen(1));
    } catch (const UserError&) {
      continue;
    }
    const CompiledExpr all(roots, slots);
    std::vector<CompiledExpr> each;
    for (const arith::Expr& e : roots)
      each.emplace_back(e, slots);
    REQUIRE(all.roots() == roots.size());
    const size_t lanes = trial % 3 == 0 ? 8 : 32;
    const auto n_slots = static_cast<size_t>(slots.size());
    std::vector<int64_t> values(n_slots * lanes);
    const bool huge = trial % 10 == 0;
    for (int64_t& v : values)
      v = huge ? std::uniform_int_distribution<int64_t>(-(int64_t(1) << 62), int64_t(1) << 62)(rng)
               : std::uniform_int_distribution<int64_t>(-40, 300)(rng);
    std::vector<uint8_t> uniform(n_slots, 0);
    uniform[2] = 1; // N: the same in every lane
    std::fill_n(values.begin() + ptrdiff_t(2 * lanes), lanes, values[2 * lanes]);
    const bool ok = all.evaluate_all_lanes(values.data(), lanes, rows, scratch, uniform.data());
    ok ? ++together : ++refused;
    const std::vector<uint8_t> active(lanes, 1);
    std::vector<int64_t> out(lanes);
    bool every_one_ok = true;
    for (size_t r = 0; r < roots.size(); ++r) {
      const bool one_ok = each[r].evaluate_lanes(values.data(), lanes, active.data(), out.data(),
                                                 each_scratch, uniform.data());
      every_one_ok = every_one_ok && one_ok;
      if (ok) {
        // Together succeeds only when no lane fails: then each on its own succeeds, equal.
        REQUIRE(one_ok);
        for (size_t l = 0; l < lanes; ++l) {
          INFO(roots[r].to_string() << " lane " << l);
          CHECK(rows[r][l] == out[l]);
        }
      }
    }
    if (!ok)
      CHECK_FALSE(every_one_ok); // refused only where some lane of some expression fails
    shared += roots.size() > 1;
  }
  CHECK(together > 1000);
  CHECK(refused > 10);
  CHECK(shared > 500);
}

TEST_CASE("one scratch shared by expressions, lane counts and copies gives fresh results") {
  // The scratch keeps an expression's constants from one call to the next when it evaluates the
  // same expression for as many lanes again: interleaved with other expressions (constants at
  // the same rows), other lane counts and copies, every result equals a fresh scratch's.
  std::mt19937_64 rng(29);
  const std::vector<arith::Expr> vars{arith::var("i"), arith::var("j"), arith::size_var("N")};
  ExprGen gen{rng, vars};
  SlotTable slots;
  for (const arith::Expr& v : vars)
    slots.slot(v);
  std::vector<CompiledExpr> exprs;
  while (exprs.size() < 12) {
    try {
      exprs.emplace_back(gen(3), slots);
    } catch (const UserError&) {
    }
  }
  exprs.push_back(exprs.front()); // a copy: the same nodes, the same constants
  LaneScratch shared;
  int compared = 0;
  for (int call = 0; call < 600; ++call) {
    const CompiledExpr& e = exprs[std::uniform_int_distribution<size_t>(0, exprs.size() - 1)(rng)];
    const size_t lanes = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 8 : 32;
    std::vector<int64_t> values(3 * lanes);
    for (int64_t& v : values)
      v = std::uniform_int_distribution<int64_t>(-40, 300)(rng);
    const std::vector<uint8_t> active(lanes, 1);
    std::vector<int64_t> out(lanes), expected(lanes);
    LaneScratch fresh;
    const bool ok = e.evaluate_lanes(values.data(), lanes, active.data(), out.data(), shared);
    const bool fresh_ok =
        e.evaluate_lanes(values.data(), lanes, active.data(), expected.data(), fresh);
    REQUIRE(ok == fresh_ok);
    if (ok) {
      CHECK(out == expected);
      ++compared;
    }
  }
  CHECK(compared > 300);
}

TEST_CASE("evaluate_lanes ignores failures of inactive lanes") {
  SlotTable slots;
  const arith::Expr i = arith::var("i");
  const CompiledExpr e(arith::cst(100) / i, slots);
  std::vector<int64_t> values{0, 5, -3, 0};
  std::vector<uint8_t> active{0, 1, 1, 0};
  std::vector<int64_t> out(4);
  LaneScratch scratch;
  REQUIRE(e.evaluate_lanes(values.data(), 4, active.data(), out.data(), scratch));
  CHECK(out[1] == 20);
  CHECK(out[2] == -33);
  active[0] = 1; // lane 0 divides by zero: the caller must take the lane-by-lane path
  CHECK_FALSE(e.evaluate_lanes(values.data(), 4, active.data(), out.data(), scratch));
}

TEST_CASE("cache lines and bank conflicts equal their reference implementations") {
  std::mt19937_64 rng(25);
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t lanes = trial % 11 == 0 ? 7 : 32;
    const int64_t stride = std::uniform_int_distribution<int64_t>(-3, 40)(rng);
    const int64_t base = std::uniform_int_distribution<int64_t>(-1000, 1000)(rng);
    const bool scattered = trial % 3 == 0;
    std::vector<std::optional<int64_t>> indices(lanes);
    for (size_t l = 0; l < lanes; ++l) {
      if (std::uniform_int_distribution<int>(0, 9)(rng) == 0)
        continue; // an inactive lane
      indices[l] = scattered ? std::uniform_int_distribution<int64_t>(-500, 500)(rng)
                             : base + stride * static_cast<int64_t>(l);
    }
    for (int64_t element : {1, 4, 8})
      for (int64_t width : {1, 2, 4}) {
        INFO("trial " << trial << " element " << element << " width " << width);
        CHECK(distinct_lines(indices, element, 128, width) ==
              reference_lines(indices, element, 128, width));
      }
    for (int64_t banks : {32, 16, 5})
      for (int64_t element : {4, 8, 2}) {
        INFO("trial " << trial << " banks " << banks << " element " << element);
        CHECK(bank_conflict_degree(indices, element, banks) ==
              reference_banks(indices, element, banks));
      }
  }
}

TEST_CASE("compute with a reused scratch equals analyze on every hand-lowered variant") {
  // Many launches of many kernels through one scratch, in an order that changes the kernel and
  // the warp's width between calls: nothing of one launch may leak into the next.
  const target::DeviceProfile nvidia = runtime::named_profile("nvidia");
  const target::DeviceProfile cpu = runtime::named_profile("cpu");
  AnalysisScratch nvidia_scratch(nvidia), cpu_scratch(cpu);
  const Sizes sizes{{"M", 64}, {"N", 128}};
  int launches = 0;
  for (const auto& dir : std::filesystem::directory_iterator(
           std::filesystem::path(LIFTX_SOURCE_DIR) / "stencils" / "variants")) {
    if (!dir.is_directory())
      continue;
    for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
      if (file.path().extension() != ".lift")
        continue;
      const ir::Program program = parse::parse_file(file.path().string()).main();
      codegen::PreparedLaunch prepared =
          codegen::prepare_launch(program, sizes, {}, nvidia.limits());
      const KernelModel model(prepared.kernel);
      std::vector<Launch> tried{prepared.launch};
      for (int64_t lx : {1, 2, 4, 8, 16, 32})
        for (int64_t ly : {1, 2, 8}) {
          Launch l = prepared.launch;
          if (!l.local_given() || l.dims < 2 || l.global[0] % lx != 0 || l.global[1] % ly != 0)
            continue;
          l.local[0] = lx;
          l.local[1] = ly;
          tried.push_back(l);
        }
      for (const Launch& launch : tried)
        for (const auto* profile : {&nvidia, &cpu}) {
          INFO(file.path().string()
               << " " << codegen::describe(launch) << " " << profile->device_name);
          std::string expected;
          try {
            expected = csv_row("v", model.analyze(launch, sizes, *profile).features);
          } catch (const UserError&) {
            continue; // a launch the kernel does not take
          }
          AnalysisScratch& scratch = profile == &nvidia ? nvidia_scratch : cpu_scratch;
          CHECK(csv_row("v", model.compute(launch, sizes, scratch)) == expected);
          ++launches;
        }
    }
  }
  CHECK(launches > 100);
}
