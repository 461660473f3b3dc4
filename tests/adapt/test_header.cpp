// `liftx adapt --emit header` (adapt/header.hpp): a generated header compiled with the
// system's C++ compiler chooses, on random shapes and two sets of device limits, exactly what
// AdaptiveArtifact::pick chooses (member, work-group, whether it was measured so), and gives
// the buffer lengths liftx computes.
#include "adapt/adapt.hpp"
#include "adapt/header.hpp"
#include "codegen/kernel.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "space/space.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace liftx;
namespace fs = std::filesystem;

namespace {

/// Up to `per_strategy` tied variants of each strategy of jacobi2d5pt's space at 64x96, the
/// first shape-free one, and two fixed grids (free-thread launches): a shape-free one and a
/// tiled one.
std::vector<adapt::AdaptiveCandidate> sample_candidates(const ir::Module& module,
                                                        size_t per_strategy) {
  space::SpaceOptions options;
  options.sizes = {{"M", 64}, {"N", 96}};
  options.device = runtime::named_profile("nvidia").limits();
  space::VariantStream stream(module.main(), options);
  std::map<std::string, size_t> taken;
  std::vector<adapt::AdaptiveCandidate> out;
  std::mt19937_64 rng(17);
  space::Variant v;
  bool shape_free = false; // one member that applies at every shape (the fallback)
  bool fixed_free = false, fixed_tiled = false;
  while (stream.next(v)) {
    if (v.launch.tied && !shape_free && adapt::is_shape_free(v.parameters)) {
      shape_free = true;
      out.push_back(adapt::candidate_of(v, module));
      continue;
    }
    if (!v.launch.tied && v.launch.local_given() && rng() % 20 == 0) {
      bool& taken_kind = adapt::is_shape_free(v.parameters) ? fixed_free : fixed_tiled;
      if (!taken_kind) {
        taken_kind = true;
        out.push_back(adapt::candidate_of(v, module));
        continue;
      }
    }
    if (!v.launch.tied || taken[v.strategy] >= per_strategy || rng() % 50 != 0)
      continue;
    ++taken[v.strategy];
    out.push_back(adapt::candidate_of(v, module));
  }
  return out;
}

/// Runs `command`, returning its standard output; fails the test on a non-zero exit.
std::string output_of(const std::string& command) {
  std::string out;
  std::FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    out.append(buffer, n);
  const int status = pclose(pipe);
  REQUIRE_MESSAGE(status == 0, command);
  return out;
}

std::string pick_text(const std::optional<adapt::AdaptiveArtifact::Pick>& pick) {
  if (!pick)
    return "none";
  std::vector<int64_t> local = pick->local;
  local.resize(3, 1);
  return fmt::format("{} {}x{}x{} {}", pick->member, local[0], local[1], local[2],
                     pick->as_measured ? 1
                     : pick->rounded   ? 2
                                       : 0);
}

} // namespace

TEST_CASE("a generated header chooses what the adaptive artifact picks, shape by shape") {
  const ir::Module module =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift");
  adapt::AdaptiveArtifact a;
  a.program_name = module.main().name;
  a.device = "test device";
  a.profile = "cpu";
  a.training.candidates = sample_candidates(module, 2);
  REQUIRE(a.training.candidates.size() >= 6);
  std::set<std::string> strategies;
  for (const adapt::AdaptiveCandidate& c : a.training.candidates)
    strategies.insert(c.strategy);
  CHECK(strategies.count("workgroup2d_local") == 1); // local memory and barriers
  CHECK(strategies.count("window") >= 1);            // vectors: aligned sizes
  CHECK(std::count_if(a.training.candidates.begin(), a.training.candidates.end(),
                      [](const adapt::AdaptiveCandidate& c) { return c.fixed_grid(); }) == 2);
  // Made-up times at three training shapes; every candidate in the portfolio.
  a.training.shapes = {{{"M", 64}, {"N", 64}}, {{"M", 32}, {"N", 256}}, {{"M", 256}, {"N", 32}}};
  std::mt19937_64 rng(5);
  for (size_t s = 0; s < a.training.shapes.size(); ++s) {
    std::vector<std::optional<double>> row;
    for (size_t c = 0; c < a.training.candidates.size(); ++c)
      row.push_back(rng() % 4 == 0 ? std::nullopt
                                   : std::optional<double>(1.0 + double(rng() % 1000) / 100));
    a.training.ms.push_back(row);
  }
  std::vector<size_t> all(a.training.candidates.size());
  std::iota(all.begin(), all.end(), size_t{0});
  a.portfolio = a.training.candidates;
  a.selector = adapt::fit_selector(a.training, all);
  for (size_t p = 0; p < a.portfolio.size(); ++p)
    if (adapt::is_shape_free(a.portfolio[p].parameters) && !a.portfolio[p].fixed_grid())
      a.fallback = p;
  REQUIRE(a.fallback.has_value());
  // A work-group that few shapes divide: elsewhere the header must fit it as pick() does.
  a.portfolio[*a.fallback].local = {16, 8};

  // Random shapes, a third of them multiples of 32 (where the tiled members apply).
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int i = 0; i < 120; ++i) {
    const bool aligned = i % 3 == 0;
    const int64_t m = aligned ? 32 * int64_t(1 + rng() % 12) : int64_t(1 + rng() % 400);
    const int64_t n = aligned ? 32 * int64_t(1 + rng() % 12) : int64_t(1 + rng() % 400);
    shapes.emplace_back(m, n);
  }
  DeviceLimits small = runtime::named_profile("cpu").limits();
  small.max_work_group_size = 64;
  small.max_work_item_sizes = {32, 16, 4};
  small.local_memory_bytes = 2048;
  const std::vector<DeviceLimits> limit_sets{runtime::named_profile("cpu").limits(), small};

  const fs::path dir = fs::temp_directory_path() / fmt::format("liftx-header-{}", ::getpid());
  fs::create_directories(dir);
  {
    std::ofstream header(dir / "jacobi_adaptive.hpp");
    header << adapt::adaptive_header(a);
  }
  std::ofstream main_cpp(dir / "main.cpp");
  main_cpp << R"(#include "jacobi_adaptive.hpp"
#include <cstdio>
namespace j = liftx_adaptive::jacobi2d5pt;
int main() {
  long long g, i0, i1, i2, m, n, b;
  while (std::scanf("%lld %lld %lld %lld %lld %lld %lld", &g, &i0, &i1, &i2, &m, &n, &b) == 7) {
    const j::Limits limits{g, {i0, i1, i2}, b};
    const std::int64_t s[2] = {m, n};
    const std::optional<j::Launch> launch = j::choose(s, limits);
    if (!launch) {
      std::printf("none\n");
      continue;
    }
    std::printf("%d %lldx%lldx%lld %d %lldx%lldx%lld", launch->member, (long long)launch->local[0],
                (long long)launch->local[1], (long long)launch->local[2],
                launch->as_measured ? 1 : launch->rounded ? 2 : 0, (long long)launch->global[0],
                (long long)launch->global[1], (long long)launch->global[2]);
    for (int arg = 0; arg < j::kMembers[launch->member].arg_count; ++arg)
      std::printf(" %lld", (long long)j::buffer_elements(launch->member, arg, s));
    std::printf("\n");
  }
}
)";
  main_cpp.close();
  output_of(
      fmt::format("c++ -std=c++17 -Wall -Werror -o '{0}/choose' '{0}/main.cpp'", dir.string()));

  std::ofstream input(dir / "shapes.txt");
  std::vector<std::string> expected;
  for (const DeviceLimits& limits : limit_sets)
    for (const auto& [m, n] : shapes) {
      input << fmt::format("{} {} {} {} {} {} {}\n", limits.max_work_group_size,
                           limits.max_work_item_sizes[0], limits.max_work_item_sizes[1],
                           limits.max_work_item_sizes[2], m, n, limits.local_memory_bytes);
      const Sizes sizes{{"M", m}, {"N", n}};
      const std::optional<adapt::AdaptiveArtifact::Pick> pick = a.pick(sizes, limits);
      std::string line = pick_text(pick);
      if (pick) {
        // The launch liftx runs for that pick: its global size.
        adapt::Fit fit = adapt::Fit::as_measured;
        const std::optional<space::Variant> v =
            adapt::candidate_at_fitted(a.portfolio[pick->member], sizes, limits, &fit);
        REQUIRE(v);
        std::array<int64_t, 3> global{1, 1, 1};
        for (int d = 0; d < v->launch.dims; ++d)
          global[size_t(d)] = v->launch.global[d];
        line += fmt::format(" {}x{}x{}", global[0], global[1], global[2]);
        // The buffer lengths liftx computes for that member.
        const ir::Module member =
            parse::parse_module(a.portfolio[pick->member].printed, "<member>");
        const codegen::Kernel kernel = codegen::generate(member.main());
        for (const codegen::KernelArg& arg : kernel.args)
          line += fmt::format(" {}", arg.is_buffer()
                                         ? arith::evaluate(arg.elements, {{"M", m}, {"N", n}})
                                         : int64_t{-1});
      }
      expected.push_back(line);
    }
  input.close();
  std::istringstream got(output_of(fmt::format("'{0}/choose' < '{0}/shapes.txt'", dir.string())));
  std::map<std::string, int> seen; // how often each kind of answer came up
  std::string line;
  for (size_t i = 0; i < expected.size(); ++i) {
    REQUIRE(std::getline(got, line));
    CAPTURE(i);
    CAPTURE(shapes[i % shapes.size()].first);
    CAPTURE(shapes[i % shapes.size()].second);
    CHECK(line == expected[i]);
    const size_t space = line.find(' ');
    ++seen[line == "none" ? "none" : line.substr(line.find(' ', space + 1) + 1, 1)];
    if (line != "none" && a.portfolio[std::stoul(line.substr(0, space))].fixed_grid())
      ++seen["fixed grid"];
  }
  // Every kind of pick came up: as measured, with the work-group shrunk and with the global size
  // rounded up; and the small device's limits changed some choices.
  CHECK(seen["1"] > 0);
  CHECK(seen["0"] > 0);
  CHECK(seen["2"] > 0);
  CHECK(seen["fixed grid"] > 0);
  size_t changed = 0;
  for (size_t i = 0; i < shapes.size(); ++i)
    changed += expected[i] != expected[i + shapes.size()] ? 1 : 0;
  CHECK(changed > 0);
  MESSAGE(fmt::format("{} shapes x 2 limit sets: {} as measured ({} of them fixed grids), {} "
                      "shrunk, {} rounded, {} none; {} changed by the small limits",
                      shapes.size(), seen["1"], seen["fixed grid"], seen["0"], seen["2"],
                      seen["none"], changed));
  fs::remove_all(dir);
}
