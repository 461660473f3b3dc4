#pragma once
// Shared helpers of the rewrite tests: parsing programs, choosing sites, checking a rewrite
// against an expected program and against the interpreter.
#include "ir/expr.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/walk.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace liftx::rewrite::test {

/// User functions every rule-table program may use.
inline const char* const kUserFuns = R"(
userfun neg(a: float): float { return -a; }
userfun sq(a: float): float { return a * a; }
userfun addsq(a: float, b: float): float { return a + b * b; }
userfun negsq(a: float): (float, float) { return {-a, a * a}; }
)";

inline ir::Module parse_program(const std::string& text) {
  return parse::parse_module(std::string(kUserFuns) + text, "<test>");
}

inline std::string describe_sites(const ir::Program& p) {
  std::string out;
  int i = 0;
  for (const Site& s : sites(p))
    out += fmt::format("  #{} {}{}\n", i++, s.is_function ? "(function) " : "", ir::print(s.expr));
  return out;
}

/// The site chosen by `which`: "#k" is the k-th site in pre-order, anything else the first site
/// whose printed call equals `which`. Fails the test when there is none.
inline Site find_site(const ir::Program& p, const std::string& which) {
  std::vector<Site> all = sites(p);
  if (!which.empty() && which[0] == '#') {
    size_t k = std::stoul(which.substr(1));
    INFO("sites:\n" << describe_sites(p));
    REQUIRE(k < all.size());
    return all[k];
  }
  for (const Site& s : all)
    if (ir::print(s.expr) == which)
      return s;
  FAIL("no site prints as '" << which << "'; sites:\n" << describe_sites(p));
  return all.at(0);
}

/// Random non-zero inputs for every parameter (fixed seed).
inline std::vector<interp::HostArray> random_inputs(const ir::Program& p, const Sizes& sizes,
                                                    uint64_t seed = 20240501) {
  std::mt19937_64 rng(seed);
  std::vector<interp::HostArray> inputs;
  for (const ir::Expr& param : p.params)
    inputs.push_back(interp::random_input(param.type(), sizes, rng));
  return inputs;
}

/// Both programs give the same result (exactly: rewrites keep the order of arithmetic) on the same
/// random inputs.
inline void check_same_results(const ir::Program& before, const ir::Program& after,
                               const Sizes& sizes) {
  auto inputs = random_inputs(before, sizes);
  interp::EvalOptions one_thread{1};
  interp::HostArray expected = interp::evaluate(before, inputs, sizes, one_thread);
  interp::HostArray got = interp::evaluate(after, inputs, sizes, one_thread);
  REQUIRE(got.shape == expected.shape);
  REQUIRE(got.data.size() == expected.data.size());
  bool any_nonzero = false;
  size_t mismatches = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    any_nonzero |= expected.data[i] != 0.0;
    if (got.data[i] != expected.data[i])
      ++mismatches;
  }
  CHECK(any_nonzero);
  CHECK(mismatches == 0);
}

/// print -> parse gives an alpha-equal program (the user functions printed with it).
inline void check_round_trip(const ir::Module& context, const ir::Program& p) {
  ir::Module m{context.userfuns, {p}};
  std::string text = ir::print(m);
  INFO("printed:\n" << text);
  ir::Module back = parse::parse_module(text, "<round-trip>");
  CHECK(ir::alpha_equal(back.main(), p));
}

struct AppliesRow {
  std::string input;    ///< a `def` using kUserFuns
  std::string site;     ///< "#k" or the printed call
  std::string expected; ///< the expected `def` (same parameters)
  Sizes sizes;          ///< a small size satisfying the rule's divisibility
};

struct RefusesRow {
  std::string input;
  std::string site;
  std::string reason; ///< a substring of the NoMatch reason
};

inline void check_applies(const Rule& rule, const AppliesRow& row) {
  INFO("rule " << rule.name << " on: " << row.input << " at " << row.site);
  ir::Module m = parse_program(row.input);
  const ir::Program& before = m.main();
  Site site = find_site(before, row.site);
  auto r = apply_at(before, rule, site);
  if (auto* no = std::get_if<NoMatch>(&r))
    FAIL("refused: " << no->why);
  const ir::Program& after = std::get<ir::Program>(r);
  ir::Program expected = parse_program(row.expected).main();
  INFO("got:      " << ir::print(after));
  INFO("expected: " << ir::print(expected));
  CHECK(ir::alpha_equal(after, expected));
  check_round_trip(m, after);
  check_same_results(before, after, row.sizes);
}

inline void check_refuses(const Rule& rule, const RefusesRow& row) {
  INFO("rule " << rule.name << " on: " << row.input << " at " << row.site);
  ir::Module m = parse_program(row.input);
  Site site = find_site(m.main(), row.site);
  auto r = apply_at(m.main(), rule, site);
  if (auto* p = std::get_if<ir::Program>(&r))
    FAIL("applied, giving " << ir::print(*p));
  const std::string& why = std::get<NoMatch>(r).why;
  INFO("reason: " << why);
  CHECK(why.find(row.reason) != std::string::npos);
}

/// Applies `rule` at the first site where it applies (and `where` holds); the program unchanged
/// with `applied` false if none.
inline ir::Program apply_first(const ir::Program& p, const Rule& rule, bool* applied = nullptr,
                               const std::function<bool(const Site&)>& where = {}) {
  for (const Site& s : sites(p)) {
    if (where && !where(s))
      continue;
    auto r = apply_at(p, rule, s);
    if (auto* out = std::get_if<ir::Program>(&r)) {
      if (applied)
        *applied = true;
      return *out;
    }
  }
  if (applied)
    *applied = false;
  return p;
}

} // namespace liftx::rewrite::test
