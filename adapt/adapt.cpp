#include "adapt/adapt.hpp"

#include "codegen/launch.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/launch.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace liftx::adapt {

std::string AdaptiveCandidate::describe() const {
  std::string text = strategy;
  for (const auto& [name, value] : parameters)
    text += fmt::format(" {}={}", name, value);
  text = fmt::format("{}, local {}", text, fmt::join(local, "x"));
  if (fixed_grid())
    text += fmt::format(", global {}", fmt::join(global, "x"));
  return text;
}

AdaptiveCandidate candidate_of(const space::Variant& variant, const ir::Module& module) {
  AdaptiveCandidate c;
  c.printed = ir::print(ir::Module{module.userfuns, {variant.program}});
  c.strategy = variant.strategy;
  c.parameters = variant.parameters;
  const int dims = variant.launch.dims;
  LIFTX_INTERNAL_CHECK(variant.launch.local_given() || variant.launch.tied,
                       "a free-thread adaptive candidate needs its work-group");
  c.local.assign(variant.launch.local.begin(), variant.launch.local.begin() + dims);
  if (!variant.launch.tied)
    c.global.assign(variant.launch.global.begin(), variant.launch.global.begin() + dims);
  return c;
}

bool is_shape_free(const std::map<std::string, int64_t>& parameters) {
  for (const char* key : {"tile_x", "tile_y", "tile_z", "split", "chunk", "vector"})
    if (const auto it = parameters.find(key); it != parameters.end() && it->second > 1)
      return false;
  return true;
}

std::optional<space::Variant> candidate_at(const AdaptiveCandidate& candidate, const Sizes& sizes,
                                           const DeviceLimits& device) {
  // A member runs at small shapes too: the space's pruning of launches with few work-groups
  // (DeviceLimits::min_work_groups) is about ranking, not about what a device can run.
  DeviceLimits limits = device;
  limits.min_work_groups = 1;
  const ir::Module module = parse::parse_module(candidate.printed, "<adaptive candidate>");
  space::Variant v;
  v.strategy = candidate.strategy;
  v.parameters = candidate.parameters;
  v.program = module.main();
  try {
    interp::check_sizes(v.program, sizes); // tiles and splits divide these sizes
    const codegen::PreparedLaunch prepared = codegen::prepare_launch(
        v.program, sizes, {candidate.global, candidate.local, false}, limits);
    // A fixed grid may equal the tied launch at some shape: the same work-items either way.
    if ((!candidate.fixed_grid() && !prepared.launch.tied) ||
        prepared.launch.dims != static_cast<int>(candidate.local.size()))
      return std::nullopt;
    for (int d = 0; d < prepared.launch.dims; ++d)
      if (prepared.launch.local[d] != candidate.local[size_t(d)] ||
          prepared.launch.global[d] % prepared.launch.local[d] != 0 ||
          (candidate.fixed_grid() && prepared.launch.global[d] != candidate.global[size_t(d)]))
        return std::nullopt; // rounded up: extra work-items, not the variant measured
    if (codegen::launch_refusal(prepared.kernel, prepared.launch, sizes, limits,
                                prepared.local_bytes))
      return std::nullopt;
    v.launch = prepared.launch;
  } catch (const UserError&) {
    return std::nullopt;
  }
  return v;
}

namespace {

/// The candidate's kernel launched with its work-group and the global size rounded up to a
/// multiple of it (codegen::prepare_launch generates the free-thread kernel for such a launch).
std::optional<space::Variant> candidate_rounded(const AdaptiveCandidate& candidate,
                                                const Sizes& sizes, const DeviceLimits& limits) {
  const ir::Module module = parse::parse_module(candidate.printed, "<adaptive candidate>");
  space::Variant v;
  v.strategy = candidate.strategy;
  v.parameters = candidate.parameters;
  v.program = module.main();
  codegen::PreparedLaunch prepared;
  try {
    prepared = codegen::prepare_launch(v.program, sizes, {{}, candidate.local, false}, limits);
  } catch (const UserError&) {
    return std::nullopt; // refused (e.g. a barrier the extra work-items would not reach)
  }
  if (prepared.launch.dims != static_cast<int>(candidate.local.size()))
    return std::nullopt;
  for (int d = 0; d < prepared.launch.dims; ++d)
    if (prepared.launch.local[d] != candidate.local[size_t(d)])
      return std::nullopt;
  if (codegen::launch_refusal(prepared.kernel, prepared.launch, sizes, limits,
                              prepared.local_bytes))
    return std::nullopt;
  v.launch = prepared.launch;
  return v;
}

} // namespace

std::optional<space::Variant> candidate_at_fitted(const AdaptiveCandidate& candidate,
                                                  const Sizes& sizes, const DeviceLimits& device,
                                                  Fit* fit) {
  *fit = Fit::as_measured;
  if (std::optional<space::Variant> as_measured = candidate_at(candidate, sizes, device))
    return as_measured;
  if (candidate.fixed_grid())
    return std::nullopt; // its grid strides over any shape: what stops it, fitting cannot mend
  // The tied launch's global size at these sizes (the runtime's work-group), then the largest
  // work-group within the candidate's that divides it.
  DeviceLimits limits = device;
  limits.min_work_groups = 1;
  try {
    const ir::Module module = parse::parse_module(candidate.printed, "<adaptive candidate>");
    interp::check_sizes(module.main(), sizes);
    const codegen::PreparedLaunch rule = codegen::prepare_launch(module.main(), sizes, {}, limits);
    if (!rule.launch.tied || rule.launch.dims != static_cast<int>(candidate.local.size()))
      return std::nullopt;
    AdaptiveCandidate fitted = candidate;
    int64_t kept = 1, measured = 1;
    for (size_t d = 0; d < fitted.local.size(); ++d) {
      // The largest divisor of the global size within the measured work-group.
      int64_t local = std::min(fitted.local[d], rule.launch.global[d]);
      while (local > 1 && rule.launch.global[d] % local != 0)
        --local;
      fitted.local[d] = std::max<int64_t>(local, 1);
      kept *= fitted.local[d];
      measured *= candidate.local[d];
    }
    if (2 * kept < measured)
      if (std::optional<space::Variant> v = candidate_rounded(candidate, sizes, limits)) {
        *fit = Fit::rounded;
        return v;
      }
    std::optional<space::Variant> v = candidate_at(fitted, sizes, device);
    if (v)
      *fit = Fit::shrunk;
    return v;
  } catch (const UserError&) {
    return std::nullopt;
  }
}

std::optional<double> AdaptiveTable::best_ms(size_t s) const {
  std::optional<double> best;
  for (const std::optional<double>& t : ms.at(s))
    if (t && (!best || *t < *best))
      best = t;
  return best;
}

double AdaptiveTable::fraction(size_t s, size_t c) const {
  const std::optional<double> best = best_ms(s);
  const std::optional<double>& t = ms.at(s).at(c);
  return best && t && *t > 0 ? *best / *t : 0.0;
}

namespace {

/// Worst and mean over the shapes of the best fraction any member of `members` reaches.
std::pair<double, double> portfolio_score(const AdaptiveTable& table,
                                          const std::vector<size_t>& members) {
  double worst = 1, sum = 0;
  for (size_t s = 0; s < table.shapes.size(); ++s) {
    double best = 0;
    for (size_t c : members)
      best = std::max(best, table.fraction(s, c));
    worst = std::min(worst, best);
    sum += best;
  }
  return {worst, table.shapes.empty() ? 0.0 : sum / double(table.shapes.size())};
}

double log_distance(const Sizes& a, const Sizes& b) {
  double d = 0;
  for (const auto& [name, value] : a) {
    const auto other = b.find(name);
    LIFTX_INTERNAL_CHECK(other != b.end(), "shape without size {}", name);
    const double delta = std::log2(double(value)) - std::log2(double(other->second));
    d += delta * delta;
  }
  return d;
}

} // namespace

namespace {

/// Portfolios compare by their worst shape, then their mean, then their size (smaller is better).
bool better(std::pair<double, double> score, size_t size, std::pair<double, double> than,
            size_t than_size) {
  constexpr double kTie = 1e-12;
  if (std::fabs(score.first - than.first) > kTie)
    return score.first > than.first;
  if (std::fabs(score.second - than.second) > kTie)
    return score.second > than.second;
  return size < than_size;
}

/// Every subset of at most `k` of `n` candidates, when there are few enough to try them all.
constexpr double kMaxSubsets = 200000;

double subsets_up_to(size_t n, size_t k) {
  double total = 0, choose = 1;
  for (size_t i = 1; i <= k && i <= n; ++i) {
    choose = choose * double(n - i + 1) / double(i);
    total += choose;
  }
  return total;
}

std::vector<size_t> best_subset(const AdaptiveTable& table, size_t k) {
  const size_t n = table.candidates.size();
  std::vector<size_t> best, current;
  std::pair<double, double> best_score{-1, -1};
  std::function<void(size_t)> extend = [&](size_t from) {
    if (!current.empty()) {
      const std::pair<double, double> score = portfolio_score(table, current);
      if (best.empty() || better(score, current.size(), best_score, best.size())) {
        best = current;
        best_score = score;
      }
    }
    if (current.size() == k)
      return;
    for (size_t c = from; c < n; ++c) {
      current.push_back(c);
      extend(c + 1);
      current.pop_back();
    }
  };
  extend(0);
  return best;
}

std::vector<size_t> greedy(const AdaptiveTable& table, size_t k) {
  std::vector<size_t> members;
  std::pair<double, double> score{-1, -1};
  while (members.size() < k) {
    std::optional<size_t> pick;
    std::pair<double, double> pick_score = score;
    for (size_t c = 0; c < table.candidates.size(); ++c) {
      if (std::find(members.begin(), members.end(), c) != members.end())
        continue;
      std::vector<size_t> with = members;
      with.push_back(c);
      const std::pair<double, double> s = portfolio_score(table, with);
      if (s > pick_score) { // worst first, then mean; the first index wins ties
        pick = c;
        pick_score = s;
      }
    }
    if (!pick)
      break; // nobody raises the worst or the mean
    members.push_back(*pick);
    score = pick_score;
  }
  return members;
}

} // namespace

std::vector<size_t> choose_portfolio(const AdaptiveTable& table, size_t k) {
  std::vector<size_t> members = subsets_up_to(table.candidates.size(), k) <= kMaxSubsets
                                    ? best_subset(table, k)
                                    : greedy(table, k);
  // Members in order of their mean fraction, best first (the selector breaks no ties by it, but
  // a reader of the portfolio expects the broadest member first).
  auto mean = [&](size_t c) {
    double sum = 0;
    for (size_t s = 0; s < table.shapes.size(); ++s)
      sum += table.fraction(s, c);
    return sum;
  };
  std::stable_sort(members.begin(), members.end(),
                   [&](size_t a, size_t b) { return mean(a) > mean(b); });
  // A member that adds nothing (no shape where it is the portfolio's best) goes.
  std::vector<size_t> useful;
  for (size_t c : members) {
    bool best_somewhere = false;
    for (size_t s = 0; s < table.shapes.size() && !best_somewhere; ++s) {
      double others = 0;
      for (size_t o : useful)
        others = std::max(others, table.fraction(s, o));
      best_somewhere = table.fraction(s, c) > others;
    }
    if (best_somewhere)
      useful.push_back(c);
  }
  return useful;
}

std::vector<Sizes> coverage_probes(const Sizes& shape) {
  std::vector<Sizes> probes;
  for (int64_t k : {2, 4, 8, 16}) {
    Sizes probe;
    for (const auto& [name, value] : shape) {
      int64_t v = std::max<int64_t>(value, 1);
      while (v % k != 0 || v % (2 * k) == 0)
        ++v;
      probe[name] = v;
    }
    if (probe != shape)
      probes.push_back(std::move(probe));
  }
  return probes;
}

AdaptiveTable with_coverage_probes(const AdaptiveTable& table, const DeviceLimits& device) {
  AdaptiveTable out = table;
  for (size_t s = 0; s < table.shapes.size(); ++s)
    for (const Sizes& probe : coverage_probes(table.shapes[s])) {
      std::vector<std::optional<double>> row;
      bool any = false;
      for (size_t c = 0; c < table.candidates.size(); ++c) {
        Fit fit = Fit::as_measured;
        const bool applies =
            table.ms[s][c] && candidate_at_fitted(table.candidates[c], probe, device, &fit);
        row.push_back(applies ? table.ms[s][c] : std::nullopt);
        any = any || applies;
      }
      if (!any)
        continue; // no candidate runs there: the row would not tell portfolios apart
      out.shapes.push_back(probe);
      out.ms.push_back(std::move(row));
    }
  return out;
}

AdaptiveSelector fit_selector(const AdaptiveTable& table, const std::vector<size_t>& portfolio) {
  AdaptiveSelector selector;
  if (!table.shapes.empty())
    for (const auto& [name, value] : table.shapes.front())
      selector.size_names.push_back(name);
  selector.shapes = table.shapes;
  for (size_t s = 0; s < table.shapes.size(); ++s) {
    std::vector<size_t> ran;
    for (size_t p = 0; p < portfolio.size(); ++p)
      if (table.ms[s][portfolio[p]])
        ran.push_back(p);
    std::stable_sort(ran.begin(), ran.end(), [&](size_t a, size_t b) {
      return *table.ms[s][portfolio[a]] < *table.ms[s][portfolio[b]];
    });
    selector.order.push_back(std::move(ran));
  }
  return selector;
}

std::optional<size_t> AdaptiveSelector::choose(const Sizes& sizes,
                                               const std::function<bool(size_t)>& applies) const {
  std::vector<size_t> nearest(shapes.size());
  std::iota(nearest.begin(), nearest.end(), size_t{0});
  std::stable_sort(nearest.begin(), nearest.end(), [&](size_t a, size_t b) {
    return log_distance(sizes, shapes[a]) < log_distance(sizes, shapes[b]);
  });
  for (size_t s : nearest)
    for (size_t p : order[s])
      if (applies(p))
        return p;
  return std::nullopt;
}

std::optional<AdaptiveArtifact::Pick> AdaptiveArtifact::pick(const Sizes& sizes,
                                                             const DeviceLimits& limits) const {
  // The faster member first, with its work-group fitted if need be: a member that runs only
  // with another work-group is still nearly always faster than a slower one as measured.
  std::optional<Pick> picked;
  auto runs = [&](size_t member) {
    Fit fit = Fit::as_measured;
    std::optional<space::Variant> v =
        candidate_at_fitted(portfolio.at(member), sizes, limits, &fit);
    if (v)
      picked = Pick{
          member,
          std::vector<int64_t>(v->launch.local.begin(), v->launch.local.begin() + v->launch.dims),
          portfolio.at(member).global, fit == Fit::as_measured, fit == Fit::rounded};
    return v.has_value();
  };
  if (selector.choose(sizes, runs) || (fallback && runs(*fallback)))
    return picked;
  return std::nullopt;
}

namespace {

nlohmann::json candidate_json(const AdaptiveCandidate& c) {
  return {{"module", c.printed},
          {"strategy", c.strategy},
          {"parameters", c.parameters},
          {"local", c.local},
          {"global", c.global}};
}

AdaptiveCandidate candidate_from(const nlohmann::json& j, const std::string& origin) {
  AdaptiveCandidate c;
  c.printed = j.at("module").get<std::string>();
  c.strategy = j.at("strategy").get<std::string>();
  c.parameters = j.at("parameters").get<std::map<std::string, int64_t>>();
  c.local = j.at("local").get<std::vector<int64_t>>();
  // Absent in artifacts from before fixed grids: tied threads.
  c.global = j.value("global", std::vector<int64_t>{});
  LIFTX_USER_CHECK(c.global.empty() || c.global.size() == c.local.size(),
                   "{}: a candidate's fixed grid ({} sizes) and work-group ({}) differ in "
                   "dimensions",
                   origin, c.global.size(), c.local.size());
  return c;
}

nlohmann::json times_json(const std::vector<std::optional<double>>& row) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::optional<double>& t : row)
    out.push_back(t ? nlohmann::json(*t) : nlohmann::json(nullptr));
  return out;
}

} // namespace

nlohmann::json to_json(const AdaptiveArtifact& a) {
  nlohmann::json portfolio = nlohmann::json::array();
  for (const AdaptiveCandidate& c : a.portfolio)
    portfolio.push_back(candidate_json(c));
  nlohmann::json candidates = nlohmann::json::array();
  for (const AdaptiveCandidate& c : a.training.candidates)
    candidates.push_back(candidate_json(c));
  nlohmann::json ms = nlohmann::json::array();
  for (const auto& row : a.training.ms)
    ms.push_back(times_json(row));
  return {{"format", "liftx-adaptive-1"},
          {"program", a.program_name},
          {"source", a.program_source},
          {"device", a.device},
          {"profile", a.profile},
          {"portfolio", portfolio},
          {"fallback", a.fallback ? nlohmann::json(*a.fallback) : nlohmann::json(nullptr)},
          {"selector",
           {{"size_names", a.selector.size_names},
            {"shapes", a.selector.shapes},
            {"order", a.selector.order}}},
          {"training", {{"shapes", a.training.shapes}, {"candidates", candidates}, {"ms", ms}}}};
}

AdaptiveArtifact adaptive_artifact_from(const nlohmann::json& j, const std::string& origin) {
  try {
    LIFTX_USER_CHECK(j.value("format", "") == "liftx-adaptive-1",
                     "{}: not a liftx adaptive program (written by `liftx adapt`)", origin);
    AdaptiveArtifact a;
    a.program_name = j.at("program").get<std::string>();
    a.program_source = j.at("source").get<std::string>();
    a.device = j.at("device").get<std::string>();
    a.profile = j.at("profile").get<std::string>();
    for (const nlohmann::json& c : j.at("portfolio"))
      a.portfolio.push_back(candidate_from(c, origin));
    if (j.contains("fallback") && !j.at("fallback").is_null()) {
      a.fallback = j.at("fallback").get<size_t>();
      LIFTX_USER_CHECK(*a.fallback < a.portfolio.size(), "{}: the fallback names member {} of {}",
                       origin, *a.fallback, a.portfolio.size());
    }
    const nlohmann::json& sel = j.at("selector");
    a.selector.size_names = sel.at("size_names").get<std::vector<std::string>>();
    a.selector.shapes = sel.at("shapes").get<std::vector<Sizes>>();
    a.selector.order = sel.at("order").get<std::vector<std::vector<size_t>>>();
    const nlohmann::json& tr = j.at("training");
    a.training.shapes = tr.at("shapes").get<std::vector<Sizes>>();
    for (const nlohmann::json& c : tr.at("candidates"))
      a.training.candidates.push_back(candidate_from(c, origin));
    for (const nlohmann::json& row : tr.at("ms")) {
      std::vector<std::optional<double>> times;
      for (const nlohmann::json& t : row)
        times.push_back(t.is_null() ? std::nullopt : std::optional<double>(t.get<double>()));
      a.training.ms.push_back(std::move(times));
    }
    LIFTX_USER_CHECK(a.selector.order.size() == a.selector.shapes.size(),
                     "{}: the selector has {} shapes and {} orders", origin,
                     a.selector.shapes.size(), a.selector.order.size());
    for (const std::vector<size_t>& order : a.selector.order)
      for (size_t p : order)
        LIFTX_USER_CHECK(p < a.portfolio.size(), "{}: the selector names member {} of {}", origin,
                         p, a.portfolio.size());
    return a;
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: not a liftx adaptive program: {}", origin, e.what()));
  }
}

std::optional<double> paired_fraction(const std::vector<std::optional<double>>& best_ms,
                                      const std::vector<std::optional<double>>& variant_ms) {
  std::vector<double> ratios;
  for (size_t r = 0; r < std::min(best_ms.size(), variant_ms.size()); ++r)
    if (best_ms[r] && variant_ms[r] && *variant_ms[r] > 0)
      ratios.push_back(*best_ms[r] / *variant_ms[r]);
  if (ratios.empty())
    return std::nullopt;
  return std::min(1.0, runtime::summarize_samples(std::move(ratios)).median_ms);
}

std::string shape_text(const Sizes& sizes) {
  std::vector<int64_t> values;
  for (const auto& [name, value] : sizes)
    values.push_back(value);
  return fmt::format("{}", fmt::join(values, "x"));
}

Sizes parse_shape(const std::string& text, const std::vector<std::string>& names) {
  Sizes sizes;
  auto bad = [&](const std::string& why) {
    return UserError(fmt::format("shape '{}': {} (write {} as {} or {}=..)", text, why,
                                 fmt::join(names, ", "), fmt::join(names, "x"),
                                 fmt::join(names, "=..,")));
  };
  auto number = [&](const std::string& part) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      throw bad(fmt::format("'{}' is not a number", part));
    }
    if (used != part.size() || v < 1)
      throw bad(fmt::format("'{}' is not a positive integer", part));
    return v;
  };
  std::vector<std::string> parts;
  const char separator = text.find('=') != std::string::npos ? ',' : 'x';
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(separator, start), text.size());
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (separator == 'x') {
    if (parts.size() != names.size())
      throw bad(fmt::format("{} numbers for {} sizes", parts.size(), names.size()));
    for (size_t i = 0; i < names.size(); ++i)
      sizes[names[i]] = number(parts[i]);
  } else {
    for (const std::string& part : parts) {
      const size_t eq = part.find('=');
      if (eq == std::string::npos)
        throw bad(fmt::format("'{}' is not NAME=VALUE", part));
      const std::string name = part.substr(0, eq);
      if (std::find(names.begin(), names.end(), name) == names.end())
        throw bad(fmt::format("no size named {}", name));
      sizes[name] = number(part.substr(eq + 1));
    }
    if (sizes.size() != names.size())
      throw bad("every size needs a value");
  }
  return sizes;
}

} // namespace liftx::adapt
