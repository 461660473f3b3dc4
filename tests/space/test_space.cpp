// The variant space: size of the space per stencil, determinism, laziness, printing, and a
// fixed-seed sample of variants built and verified on the OpenCL CPU device (PoCL).
#include "codegen/launch.hpp"
#include "exec/run.hpp"
#include "ir/host_iteration.hpp"
#include "ir/parse/parser.hpp"
#include "rewrite/product.hpp"
#include "rewrite/reduction.hpp"
#include "runtime/device.hpp"
#include "space/space.hpp"

#include "../sanitized.hpp"
#include "../verify_options.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace liftx;

namespace {

const std::vector<std::string> kStencils = {"jacobi2d5pt", "jacobi2d9pt", "gradient", "gaussian",
                                            "stencil2d",   "hotspot2d",   "srad1",    "srad2"};

ir::Module load(const std::string& name) {
  return parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/" + name + ".lift");
}

space::SpaceOptions options_for(const Sizes& sizes, const std::string& profile = "nvidia") {
  space::SpaceOptions o;
  o.sizes = sizes;
  o.device = runtime::named_profile(profile).limits();
  return o;
}

space::SpaceOptions options_for(int64_t m, int64_t n, const std::string& profile = "nvidia") {
  return options_for({{"M", m}, {"N", n}}, profile);
}

/// A stencil of tests/space/programs/ (1D, anisotropic and 3D ones).
ir::Module load_test_program(const std::string& name) {
  return parse::parse_file(fmt::format("{}/tests/space/programs/{}.lift", LIFTX_SOURCE_DIR, name));
}

/// Identity of a variant for comparisons: strategy, parameters, launch and the kernel source hash.
std::string describe(const space::Variant& v) {
  std::string s = v.strategy;
  for (const auto& [k, val] : v.parameters)
    s += fmt::format(" {}={}", k, val);
  s += fmt::format(" dims={} g={},{} l={},{} {} src={}", v.launch.dims, v.launch.global[0],
                   v.launch.global[1], v.launch.local[0], v.launch.local[1],
                   v.launch.tied ? "tied" : "free", std::hash<std::string>{}(v.kernel_source()));
  return s;
}

std::string temp_cache_dir() {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("liftx-space-cache-{}", getpid());
  std::filesystem::create_directories(dir);
  return dir.string();
}

} // namespace

TEST_CASE("device profiles") {
  CHECK(runtime::named_profile("nvidia").limits().max_work_group_size == 1024);
  CHECK(runtime::named_profile("nvidia").limits().local_memory_bytes == 49152);
  CHECK(runtime::named_profile("amd").warp_width == 64);
  CHECK(runtime::named_profile("amd").limits().max_work_group_size == 256);
  CHECK(runtime::named_profile("cpu").limits().max_work_group_size == 4096);
  CHECK_THROWS_AS(runtime::named_profile("tpu"), UserError);
}

TEST_CASE("every stencil has thousands of variants and hundreds of kernels at 1024^2 and 4096^2") {
  // Under the sanitizers two stencils (one grid, and zipped grids): the same code paths.
  const std::vector<std::string> stencils =
      test::kSanitized ? std::vector<std::string>{"jacobi2d5pt", "hotspot2d"} : kStencils;
  for (const std::string& name : stencils) {
    ir::Module module = load(name);
    for (int64_t size : {1024, 4096}) {
      CAPTURE(name);
      CAPTURE(size);
      space::VariantStream stream(module.main(), options_for(size, size));
      space::Variant v;
      std::set<std::string> variants;
      std::set<size_t> sources;
      bool local_tile = false;
      while (stream.next(v)) {
        variants.insert(describe(v));
        sources.insert(std::hash<std::string>{}(v.kernel_source()));
        if (v.strategy == "workgroup2d_local" && v.parameters.count("tile_x") &&
            v.kernel_source().find("local float") != std::string::npos &&
            v.kernel_source().find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos)
          local_tile = !local_tile &&
                               [&] {
                                 std::string text = ir::print(v.program);
                                 return text.find("mapWrg1") != std::string::npos &&
                                        text.find("mapLcl0") != std::string::npos &&
                                        text.find("toLocal") != std::string::npos;
                               }()
                           ? true
                           : local_tile;
        // The space is large: stop once the thresholds are met well past them.
        if (variants.size() >= 5000 && sources.size() >= 150 && local_tile)
          break;
      }
      CHECK(variants.size() >= 1000);
      CHECK(sources.size() >= 100);
      CHECK(local_tile);
    }
  }
}

TEST_CASE("launches respect the device limits and local divides global") {
  struct Case {
    ir::Module module;
    Sizes sizes;
  };
  const std::vector<Case> cases{
      {load("jacobi2d5pt"), {{"M", 256}, {"N", 512}}},
      // Register windows along z keep hundreds of bytes per work-item: big work-groups of them
      // need more registers than a GPU has.
      {parse::parse_file(fmt::format("{}/stencils/3d/j3d7pt.lift", LIFTX_SOURCE_DIR)),
       {{"M", 32}, {"N", 64}, {"O", 64}}}};
  for (const Case& c : cases) {
    for (const char* profile : {"nvidia", "amd"}) {
      CAPTURE(c.module.main().name);
      CAPTURE(profile);
      space::SpaceOptions o = options_for(c.sizes, profile);
      space::VariantStream stream(c.module.main(), o);
      space::Variant v;
      int64_t n = 0;
      while (stream.next(v) && n++ < 20000) {
        int64_t threads = 1, groups = 1;
        for (int d = 0; d < v.launch.dims; ++d) {
          REQUIRE(v.launch.local[d] >= 1);
          REQUIRE(v.launch.global[d] % v.launch.local[d] == 0);
          threads *= v.launch.local[d];
          groups *= v.launch.global[d] / v.launch.local[d];
        }
        REQUIRE(threads <= o.device.max_work_group_size);
        REQUIRE(groups >= o.device.min_work_groups);
        REQUIRE(codegen::estimated_registers_per_work_item(*v.kernel) * threads <=
                o.device.register_words);
      }
      CHECK(n > 1000);
      const std::map<std::string, int64_t>& rejections = stream.counts().rejections;
      CHECK(rejections.at("work-group too large") > 0);
      CHECK(rejections.at("too few work-groups") > 0);
      // AMD's work-groups (at most 256 work-items) fit any register count; on NVIDIA the 3D
      // windows' do not (the 2D stencil's larger windows may not either, further in the stream).
      if (std::string(profile) == "amd")
        CHECK(rejections.count("registers over limit") == 0);
      else if (c.sizes.count("O"))
        CHECK(rejections.at("registers over limit") > 0);
    }
  }
}

TEST_CASE("generation is deterministic") {
  ir::Module module = load("hotspot2d");
  auto first = [&](int count) {
    space::VariantStream stream(module.main(), options_for(1024, 1024));
    std::vector<std::string> out;
    space::Variant v;
    while (static_cast<int>(out.size()) < count && stream.next(v))
      out.push_back(describe(v));
    return std::make_pair(out, stream.counts().rejections);
  };
  // Under the sanitizers a tenth: the plain build checks the long prefix.
  const int prefix = test::kSanitized ? 3000 : 30000;
  auto a = first(prefix);
  auto b = first(prefix);
  CHECK(a.first.size() == static_cast<size_t>(prefix));
  CHECK(a.first == b.first);
  CHECK(a.second == b.second);
  // Full counts at a small size agree too (the plain build: two whole enumerations take minutes
  // under the sanitizers, whose enumeration paths the prefixes above already run).
  if (test::kSanitized)
    return;
  auto full = [&] {
    space::VariantStream stream(module.main(), options_for(16, 32));
    space::Variant v;
    while (stream.next(v)) {
    }
    return stream.counts();
  };
  space::SpaceCounts c1 = full(), c2 = full();
  CHECK(c1.variants == c2.variants);
  CHECK(c1.distinct_sources == c2.distinct_sources);
  CHECK(c1.per_strategy == c2.per_strategy);
  CHECK(c1.rejections == c2.rejections);
  CHECK(c1.variants > 1000);
}

TEST_CASE("the stream is the same on any number of threads, its counts at every variant too") {
  // Kernels are generated a batch of lowered programs ahead on several threads; what lowering
  // counted ahead must not show before the stream reaches it.
  struct Case {
    ir::Program program;
    Sizes sizes;
    int64_t prefix;
  };
  const std::vector<Case> cases = {
      {load("linalg/mm").main(), {{"K", 32}, {"M", 32}, {"N", 32}}, 0},
      {load("iterated/heat2d").main(), {{"M", 32}, {"N", 64}}, test::kSanitized ? 2000 : 20000},
  };
  for (const Case& c : cases) {
    space::SpaceOptions one = options_for(c.sizes), three = one;
    one.threads = 1;
    three.threads = 3;
    space::VariantStream a(c.program, one), b(c.program, three);
    auto same_counts = [](const space::SpaceCounts& x, const space::SpaceCounts& y) {
      return x.variants == y.variants && x.high_level_programs == y.high_level_programs &&
             x.lowered_programs == y.lowered_programs && x.kernels == y.kernels &&
             x.distinct_sources == y.distinct_sources && x.per_strategy == y.per_strategy &&
             x.rejections == y.rejections;
    };
    space::Variant va, vb;
    int64_t walked = 0, differing = 0;
    while (c.prefix == 0 || walked < c.prefix) {
      const bool more = a.next(va);
      REQUIRE(b.next(vb) == more);
      if (!more)
        break;
      ++walked;
      differing += describe(va) != describe(vb) || va.index != vb.index ||
                   va.kernel_index != vb.kernel_index || !same_counts(a.counts(), b.counts());
    }
    CAPTURE(c.program.name);
    CHECK(walked > 1000);
    CHECK(differing == 0);
    CHECK(same_counts(a.counts(), b.counts()));
  }
}

TEST_CASE("next_kernel hands out the variants next() would, a kernel at a time") {
  ir::Module module = load("gradient");
  const space::SpaceOptions options = options_for(64, 128);
  const int prefix = test::kSanitized ? 2000 : 20000;
  // The variants one at a time.
  std::vector<std::string> one_by_one;
  std::vector<std::shared_ptr<const codegen::Kernel>> kernels;
  space::VariantStream single(module.main(), options);
  space::Variant v;
  while (static_cast<int>(one_by_one.size()) < prefix && single.next(v)) {
    one_by_one.push_back(fmt::format("{} {} {}", v.index, v.kernel_index, describe(v)));
    kernels.push_back(v.kernel);
  }
  REQUIRE(one_by_one.size() == size_t(prefix));
  // The same stream a kernel at a time, after 7 variants taken one by one (the first kernel's
  // rest then comes as a group of its own).
  space::VariantStream grouped(module.main(), options);
  std::vector<std::string> by_kernel;
  size_t groups = 0;
  for (int i = 0; i < 7; ++i) {
    REQUIRE(grouped.next(v));
    by_kernel.push_back(fmt::format("{} {} {}", v.index, v.kernel_index, describe(v)));
  }
  space::KernelVariants group;
  while (by_kernel.size() < one_by_one.size() && grouped.next_kernel(group)) {
    ++groups;
    for (size_t i = 0; i < group.launches.size() && by_kernel.size() < one_by_one.size(); ++i) {
      space::Variant expanded;
      expanded.strategy = group.strategy;
      expanded.parameters = group.parameters;
      expanded.program = group.program;
      expanded.launch = group.launches[i];
      expanded.index = group.first_index + int64_t(i);
      expanded.kernel_index = group.kernel_index;
      expanded.kernel = group.kernel;
      CHECK(expanded.kernel->source == kernels[by_kernel.size()]->source);
      by_kernel.push_back(
          fmt::format("{} {} {}", expanded.index, expanded.kernel_index, describe(expanded)));
    }
  }
  CHECK(by_kernel == one_by_one);
  CHECK(groups > 10);
  CHECK(grouped.counts().per_strategy.size() > 1);
}

TEST_CASE("the stream is lazy") {
  ir::Module module = load("jacobi2d5pt");
  space::VariantStream stream(module.main(), options_for(4096, 4096));
  space::Variant v;
  REQUIRE(stream.next(v));
  // One high-level program expanded, one lowered program generated, for the first variant.
  CHECK(stream.counts().high_level_programs == 1);
  CHECK(stream.counts().lowered_programs == 1);
  CHECK(stream.counts().variants == 1);
  for (int i = 0; i < 10; ++i)
    REQUIRE(stream.next(v));
  CHECK(stream.counts().lowered_programs == 1);
}

// Under the sanitizers: printing and parsing back in tests/variants and tests/parse.
TEST_CASE("variants print to .lift and parse back alpha-equal; sidecars carry the launch" *
          doctest::skip(test::kPlainBuildOnly)) {
  for (const std::string& name : {std::string("gaussian"), std::string("srad2")}) {
    ir::Module module = load(name);
    space::VariantStream stream(module.main(), options_for(64, 128));
    const size_t n = 40;
    std::vector<space::Variant> picked = space::sample(stream, n, 7);
    REQUIRE(picked.size() == n);
    std::set<std::string> strategies;
    for (const space::Variant& v : picked) {
      strategies.insert(v.strategy);
      ir::Module out{module.userfuns, {v.program}};
      ir::Module back = parse::parse_module(ir::print(out), "variant.lift");
      CHECK(ir::alpha_equal(back.main(), v.program));
      std::string json = space::sidecar_json(v, {{"M", 64}, {"N", 128}});
      CHECK(json.find(fmt::format("\"strategy\": \"{}\"", v.strategy)) != std::string::npos);
      CHECK(json.find("\"global\": [") != std::string::npos);
    }
    CHECK(strategies.size() >= 3);
  }
}

TEST_CASE("sizes no tile divides leave a stencil untiled, and the stream says so from the start") {
  ir::Module module = load("jacobi2d5pt");
  // 33 x 35: no power of two from 2 divides 35 outputs a row, so no window, work-group tile or
  // fused step; 32 x 35 neither (tiles need both); 33 x 32 has rows of windows one high.
  struct Case {
    int64_t m, n;
    bool untiled;
  };
  for (const Case& c :
       std::vector<Case>{{33, 35, true}, {32, 35, true}, {33, 32, false}, {32, 32, false}}) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    space::SpaceOptions o = options_for(c.m, c.n);
    o.kernel_source = false;
    space::VariantStream stream(module.main(), o);
    CHECK(stream.counts().no_tile_divides == c.untiled);
    space::Variant v;
    bool tiled = false;
    while (!tiled && stream.next(v))
      tiled = v.parameters.count("tile_x") > 0;
    CHECK(tiled == !c.untiled);
  }
  // A point-wise program has no tiling to lose at any size.
  const ir::Module pointwise =
      parse::parse_module("userfun twice(x: float): float { return 2.0f * x; }\n"
                          "def scale(grid: [[float]N]M) = map2D(twice, grid)\n");
  CHECK_FALSE(space::VariantStream(pointwise.main(), options_for(33, 35)).counts().no_tile_divides);
}

TEST_CASE("lowering strategies refuse with reasons") {
  ir::Module module = load("jacobi2d5pt");
  Sizes sizes{{"M", 64}, {"N", 64}};
  auto global = rewrite::lower(module.main(), "global2d_10", 0, sizes);
  REQUIRE(std::holds_alternative<ir::Program>(global));
  CHECK(ir::print(std::get<ir::Program>(global)).find("mapGlb1") != std::string::npos);
  // No tiles in the untiled program: the local copy cannot apply.
  auto local = rewrite::lower(module.main(), "workgroup2d_local", 0, sizes);
  REQUIRE(std::holds_alternative<std::string>(local));
  CHECK(std::get<std::string>(local).find("strategy does not apply") == 0);
  // A chunk that does not divide N = 64 + 0 ... 48 is not a multiple of 32.
  auto chunk = rewrite::lower(module.main(), "chunks", 32, {{"M", 64}, {"N", 48}});
  REQUIRE(std::holds_alternative<std::string>(chunk));
  CHECK(std::get<std::string>(chunk) == "split does not divide");
}

TEST_CASE("lowering strategies are data: the steps that run are the steps printed") {
  const std::vector<rewrite::LoweringStrategy>& all = rewrite::lowering_strategies();
  std::set<std::string> names;
  for (const rewrite::LoweringStrategy& s : all) {
    CHECK(names.insert(s.name).second); // one strategy per name
    REQUIRE(!s.steps.empty());
    CHECK(s.steps.back().name != ""); // every step is named
  }
  auto find = [&](const std::string& name) {
    for (const rewrite::LoweringStrategy& s : all)
      if (s.name == name)
        return s;
    FAIL("no strategy " << name);
    return all.front();
  };
  CHECK(rewrite::describe(find("chunks")) ==
        "map-to-mapGlb1, map-to-mapGlb0, chunk-outputs(n), sequential");
  CHECK(rewrite::describe(find("window")) ==
        "map-to-mapGlb1, map-to-mapGlb0, slide-window-2d | slide-window-2d-zip, sequential, "
        "vectorise-outputs(w)");
  CHECK(find("chunks").parameter == "chunk");
  CHECK(find("window").parameter == "vector");
  CHECK(find("global1d").parameter.empty());
  space::SpaceOptions o = options_for(64, 64);
  CHECK(find("window").parameter_values(o.max_chunk) == std::vector<int64_t>{1, 2, 4, 8});
  CHECK(find("global1d").parameter_values(o.max_chunk) == std::vector<int64_t>{0});
  CHECK(find("chunks").parameter_values(8) == std::vector<int64_t>{2, 4, 8});

  // What runs: global1d maps only dimension 0 to work-items. A 1D program's only map takes
  // global2d_10's first step (map-to-mapGlb1); the second finds no map left and is named.
  ir::Module module = load("jacobi2d5pt");
  auto lowered = rewrite::lower(module.main(), "global1d", 0, o.sizes);
  REQUIRE(std::holds_alternative<ir::Program>(lowered));
  const std::string printed = ir::print(std::get<ir::Program>(lowered));
  CHECK(printed.find("mapGlb0") != std::string::npos);
  CHECK(printed.find("mapGlb1") == std::string::npos);
  ir::Module one_d = parse::parse_module("userfun twice(a: float): float { return 2.0f * a; }\n"
                                         "def f(x: [float]N) = map(twice, x)",
                                         "<test>");
  auto refused = rewrite::lower(one_d.main(), "global2d_10", 0, {{"N", 16}});
  REQUIRE(std::holds_alternative<std::string>(refused));
  CHECK(std::get<std::string>(refused) == "strategy does not apply: map-to-mapGlb0");
}

namespace {

struct VerifySummary {
  int64_t verified = 0;
  int64_t failed = 0;
  std::vector<std::string> failures;
};

VerifySummary verify(runtime::Device& device, const ir::Module& module,
                     const std::vector<space::Variant>& variants, const Sizes& sizes,
                     const std::string& name) {
  VerifySummary s;
  for (const space::Variant& v : variants) {
    const exec::RunOptions o = test::verify_options(v, module.main());
    std::string problem;
    try {
      exec::RunReport r = exec::run_program(device, v.program, sizes, o);
      if (r.status != runtime::Status::ok || !r.verification.passed)
        problem = fmt::format("{}: {}", runtime::to_string(r.status), r.message);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (problem.empty()) {
      ++s.verified;
      continue;
    }
    ++s.failed;
    std::string file = fmt::format("/tmp/space-fail-{}-{}.lift", name, v.index);
    FILE* f = std::fopen(file.c_str(), "w");
    if (f) {
      std::fputs(ir::print(ir::Module{module.userfuns, {v.program}}).c_str(), f);
      std::fclose(f);
    }
    s.failures.push_back(fmt::format("{} [{}] {}", describe(v), file, problem));
  }
  return s;
}

/// One walk of a stream: a fixed-seed reservoir of up to `keep` variants of each lowering
/// strategy among those `wanted` accepts (all when unset), how many each strategy had, and, with
/// LIFTX_VERIFY_ALL set (docs/results.md: the whole-space verification runs), every one of them.
struct StrategySample {
  std::map<std::string, std::vector<space::Variant>> picked;
  std::map<std::string, int64_t> seen;
  bool every = std::getenv("LIFTX_VERIFY_ALL") != nullptr;
  std::vector<space::Variant> all; ///< with `every`

  /// What to verify: every variant with `every`, else the reservoirs.
  std::vector<space::Variant> to_verify() const {
    if (every)
      return all;
    std::vector<space::Variant> out;
    for (const auto& [strategy, variants] : picked)
      out.insert(out.end(), variants.begin(), variants.end());
    return out;
  }
};

StrategySample sample_per_strategy(space::VariantStream& stream, size_t keep, uint64_t seed,
                                   const std::function<bool(const space::Variant&)>& wanted = {}) {
  StrategySample out;
  std::mt19937_64 rng(seed);
  space::Variant v;
  while (stream.next(v)) {
    if (wanted && !wanted(v))
      continue;
    if (out.every)
      out.all.push_back(v);
    std::vector<space::Variant>& mine = out.picked[v.strategy];
    const int64_t n = ++out.seen[v.strategy];
    if (mine.size() < keep)
      mine.push_back(v);
    else if (auto j = std::uniform_int_distribution<int64_t>(0, n - 1)(rng); j < int64_t(keep))
      mine[static_cast<size_t>(j)] = v;
  }
  return out;
}

/// Verifies `variants` on PoCL and checks that every one passed; prints the count when all of a
/// space are verified.
void check_all_verify(runtime::Device& device, const ir::Module& module,
                      const std::vector<space::Variant>& variants, const Sizes& sizes,
                      const std::string& name, bool print) {
  VerifySummary s = verify(device, module, variants, sizes, name);
  if (print)
    fmt::print("{}: {} variants: {} verified, {} failed\n", name, variants.size(), s.verified,
               s.failed);
  for (const std::string& f : s.failures)
    MESSAGE(f);
  CHECK(s.failed == 0);
  CHECK(s.verified == static_cast<int64_t>(variants.size()));
}

} // namespace

// Under the sanitizers: the smaller verified samples below (1D, 3D, multi-output, reductions).
TEST_CASE("a fixed-seed sample of 30 variants per stencil verifies on PoCL" *
          doctest::skip(test::kPlainBuildOnly)) {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  Sizes sizes{{"M", 32}, {"N", 64}};
  for (const std::string& name : kStencils) {
    CAPTURE(name);
    ir::Module module = load(name);
    space::VariantStream stream(module.main(), options_for(32, 64));
    const size_t n = 30;
    // Seed 2024's sample of this space (after the free-thread twins of tied launches left it)
    // holds a free-thread workgroup2d variant of gaussian (global 8x1024, local 1x2) whose
    // kernel PoCL 3.1's compiler aborts on ("Could not find a dominating alternative
    // variable"): in this process the abort would end the test. explore, collect and run
    // build in a worker and record it as run_error (killed by signal 6).
    std::vector<space::Variant> picked = space::sample(stream, n, 2025);
    REQUIRE(picked.size() == n);
    VerifySummary s = verify(device, module, picked, sizes, name);
    for (const std::string& f : s.failures)
      MESSAGE(f);
    CHECK(s.failed == 0);
    CHECK(s.verified == static_cast<int64_t>(n));
  }
}

// Under the sanitizers: the 1D and 3D register windows below.
TEST_CASE("register-window variants of every stencil verify on PoCL" *
          doctest::skip(test::kPlainBuildOnly)) {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  Sizes sizes{{"M", 32}, {"N", 64}};
  for (const std::string& name : kStencils) {
    CAPTURE(name);
    ir::Module module = load(name);
    // One rewrite deep (the tiles) and tiles up to 8: the window variants without the space's
    // other families, so the whole stream is walked quickly.
    space::SpaceOptions options = options_for(32, 64);
    options.depth = 1;
    options.max_tile = 8;
    space::VariantStream stream(module.main(), options);
    // A fixed-seed reservoir of the window variants (tied and free launches, every width).
    std::vector<space::Variant> picked;
    std::mt19937_64 rng(11);
    int64_t seen = 0;
    std::set<int64_t> widths;
    space::Variant v;
    while (stream.next(v)) {
      if (v.strategy != "window")
        continue;
      widths.insert(v.parameters.at("vector"));
      ++seen;
      if (picked.size() < 12) {
        picked.push_back(v);
      } else if (auto j = std::uniform_int_distribution<int64_t>(0, seen - 1)(rng); j < 12) {
        picked[static_cast<size_t>(j)] = v;
      }
    }
    CHECK(seen >= 100);
    CHECK(widths.count(1) == 1);
    CHECK(widths.count(4) == 1);
    REQUIRE(picked.size() == 12);
    VerifySummary s = verify(device, module, picked, sizes, name);
    for (const std::string& f : s.failures)
      MESSAGE(f);
    CHECK(s.failed == 0);
    CHECK(s.verified == 12);
  }
}

TEST_CASE(
    "1D stencils get work-group tiles, chunks and register windows, and they verify on PoCL") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  const Sizes sizes{{"N", 64}};
  for (const std::string name : {"smooth1d", "sum5_1d"}) {
    CAPTURE(name);
    ir::Module module = load_test_program(name);
    space::SpaceOptions options = options_for(sizes);
    options.depth = 1;
    options.max_tile = 8;
    space::VariantStream stream(module.main(), options);
    const StrategySample sample = sample_per_strategy(stream, 6, 5);
    for (const char* strategy :
         {"global1d", "workgroup1d", "workgroup1d_local", "chunks1d", "window1d"})
      REQUIRE_MESSAGE(sample.seen.count(strategy) == 1, strategy);
    // Vector stores of scalar outputs (reduce's one-element arrays are not vectorised).
    if (name == "smooth1d")
      CHECK(sample.seen.count("vector1d") == 1);
    CHECK(sample.picked.at("workgroup1d").front().parameters.count("tile_x") == 1);
    // The seed's Listing 2 (tiled1d): overlapped tiles, one per work-group, copied to local
    // memory by the work-group's items, the windows slid over the local copy.
    const std::string printed = ir::print(sample.picked.at("workgroup1d_local").front().program);
    CHECK(printed.find("mapWrg0(tile => mapLcl0(") != std::string::npos);
    CHECK(printed.find("toLocal(mapLcl0(id), tile)") != std::string::npos);
    check_all_verify(device, module, sample.to_verify(), sizes, name + " N=64", sample.every);
  }
}

TEST_CASE("an anisotropic 2D stencil (a window per dimension) has variants that verify on PoCL") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  ir::Module module = load_test_program("aniso2d");
  space::VariantStream stream(module.main(), options_for(16, 40));
  std::vector<space::Variant> picked = space::sample(stream, 24, 7);
  REQUIRE(picked.size() == 24);
  check_all_verify(device, module, picked, {{"M", 16}, {"N", 40}}, "aniso2d", false);
  CHECK(stream.counts().variants > 1000);
}

TEST_CASE("a 3D stencil gets 3D thread mappings, 3D tiles and z-windows, and they verify on PoCL") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  ir::Module module = load_test_program("j3d7pt");
  const Sizes sizes{{"M", 8}, {"N", 12}, {"O", 16}}; // not a cube
  space::SpaceOptions options = options_for(sizes);
  options.depth = 1;
  options.max_tile = 4;
  space::VariantStream stream(module.main(), options);
  const StrategySample sample = sample_per_strategy(stream, 6, 3, [](const space::Variant& v) {
    if (!v.strategy.starts_with("global3d") && !v.strategy.starts_with("workgroup3d") &&
        v.strategy != "window3d")
      return false;
    CHECK(v.launch.dims == 3);
    return true;
  });
  REQUIRE(sample.picked.size() == 5);
  for (const char* strategy :
       {"global3d_210", "global3d_012", "workgroup3d", "workgroup3d_local", "window3d"})
    REQUIRE(sample.picked.at(strategy).size() == 6);
  // The local tile is a 3D copy; the window marches planes along z in registers.
  const std::string local = ir::print(sample.picked.at("workgroup3d_local").front().program);
  CHECK(local.find("toLocal(mapLcl2(mapLcl1(mapLcl0(id)))") != std::string::npos);
  const std::string window = ir::print(sample.picked.at("window3d").front().program);
  CHECK(window.find("mapSeqSlide(") != std::string::npos);
  check_all_verify(device, module, sample.to_verify(), sizes, "j3d7pt M=8 N=12 O=16", sample.every);
}

TEST_CASE("every 3D suite stencil has thousands of variants with 3D tiles and z-windows, and a "
          "sample of 20 verifies on PoCL") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
#ifdef LIFTX_SANITIZED
  // Under the sanitizers (10x slower) the zipped-grid shape of the suite (its code paths include
  // the one-grid ones).
  const std::vector<std::string> stencils{"hotspot3d"};
#else
  const std::vector<std::string> stencils{"heat3d",  "j3d7pt",    "j3d13pt",
                                          "j3d27pt", "poisson3d", "hotspot3d"};
#endif
  const Sizes sizes{{"M", 16}, {"N", 24}, {"O", 32}}; // not a cube
  for (const std::string& name : stencils) {
    CAPTURE(name);
    ir::Module module =
        parse::parse_file(fmt::format("{}/stencils/3d/{}.lift", LIFTX_SOURCE_DIR, name));
    space::SpaceOptions options = options_for(sizes);
    options.depth = 1;
    options.max_tile = 8;
    space::VariantStream stream(module.main(), options);
    // Four of each 3D strategy, a fixed-seed reservoir over the whole stream.
    const StrategySample sample = sample_per_strategy(
        stream, 4, 5, [](const space::Variant& v) { return v.launch.dims == 3; });
    const space::SpaceCounts& counts = stream.counts();
    CHECK(counts.variants >= 1000);
    for (const char* strategy :
         {"global3d_210", "global3d_012", "workgroup3d", "workgroup3d_local", "window3d"}) {
      CAPTURE(strategy);
      REQUIRE(sample.picked.count(strategy) == 1);
      CHECK(sample.picked.at(strategy).size() == 4);
    }
    check_all_verify(device, module, sample.to_verify(), sizes, name + " M=16 N=24 O=32",
                     sample.every);
  }
}

TEST_CASE("multi-output stencils get the whole space as one fused nest, and verify on PoCL") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  const Sizes sizes{{"M", 16}, {"N", 40}};
#ifdef LIFTX_SANITIZED
  const std::vector<std::string> stencils{"shallow_water"}; // 10x slower: one of the two
#else
  const std::vector<std::string> stencils{"srad1full", "shallow_water"};
#endif
  for (const std::string& name : stencils) {
    CAPTURE(name);
    ir::Module module = load(name);
    space::SpaceOptions options = options_for(sizes);
    options.max_tile = 8;
    space::VariantStream stream(module.main(), options);
    const StrategySample sample =
        sample_per_strategy(stream, 2, 11, [](const space::Variant&) { return true; });
    // Tiles in local memory and register windows as for one-output stencils.
    CHECK(sample.picked.count("workgroup2d_local") == 1);
    CHECK(sample.picked.count("window") == 1);
    CHECK(sample.to_verify().size() >= 12);
    check_all_verify(device, module, sample.to_verify(), sizes, name + " M=16 N=40", sample.every);
    // Register windows storing each output buffer's rows as vectors (vectorise-outputs of a
    // tuple result).
    space::VariantStream vector_stream(module.main(), options);
    const StrategySample vectors =
        sample_per_strategy(vector_stream, 2, 12, [](const space::Variant& v) {
          const auto width = v.parameters.find("vector");
          return v.strategy == "window" && width != v.parameters.end() && width->second > 1;
        });
    REQUIRE(vectors.picked.count("window") == 1);
    CHECK(vectors.picked.at("window").size() == 2);
    check_all_verify(device, module, vectors.to_verify(), sizes, name + " M=16 N=40, vector stores",
                     vectors.every);
  }
}

TEST_CASE("grids stored together (AoS, AoSoA(32)) are a dimension of the space and verify on "
          "PoCL") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  // N = 40: AoSoA(32) rows end in unused slots.
  const Sizes sizes{{"M", 16}, {"N", 40}};
#ifdef LIFTX_SANITIZED
  const std::vector<std::string> stencils{"hotspot2d"};
#else
  const std::vector<std::string> stencils{"hotspot2d", "srad2", "shallow_water", "d2q9"};
#endif
  for (const std::string& name : stencils) {
    CAPTURE(name);
    ir::Module module = load(name);
    space::SpaceOptions options = options_for(sizes);
    options.max_tile = 8;
    options.depth = 1;
    options.layouts = true;
    space::VariantStream stream(module.main(), options);
    std::map<std::string, int64_t> per_layout;
    const StrategySample sample = sample_per_strategy(stream, 2, 5, [&](const space::Variant& v) {
      const bool aos = v.parameters.contains("aos");
      const bool aosoa = v.parameters.contains("aosoa");
      ++per_layout[aos ? "aos" : aosoa ? "aosoa" : "apart"];
      // Each stored variant's program says so, and its kernel reads one buffer per group.
      CHECK(v.program.storage.size() == (aos || aosoa ? 1 : 0));
      return aos || aosoa;
    });
    // Every layout has as many variants as the grids apart (the same rewrites and lowerings).
    CHECK(per_layout["apart"] > 0);
    CHECK(per_layout["aos"] == per_layout["apart"]);
    CHECK(per_layout["aosoa"] == per_layout["apart"]);
    CHECK(sample.to_verify().size() >= 8);
    check_all_verify(device, module, sample.to_verify(), sizes, name + " M=16 N=40, layouts",
                     sample.every);
  }
}

// Under the sanitizers: the fused launches of tests/space/test_temporal.cpp.
TEST_CASE("iterated stencils run as launches of each lowered step and verify on PoCL, for every "
          "pad mode and a launch count of either parity" *
          doctest::skip(test::kPlainBuildOnly)) {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  struct Case {
    std::string file;
    Sizes sizes;
    size_t keep; ///< variants per strategy
  };
#ifdef LIFTX_SANITIZED
  // 10x slower under the sanitizers: two pad modes, both parities.
  const std::vector<Case> cases{
      {"stencils/iterated/heat2d", {{"M", 16}, {"N", 40}}, 1},
      {"tests/space/programs/iter_jacobi_clamp", {{"M", 24}, {"N", 16}}, 1},
  };
#else
  const std::vector<Case> cases{
      {"stencils/iterated/heat2d", {{"M", 16}, {"N", 40}}, 2},                 // wrap, 6 steps
      {"tests/space/programs/iter_jacobi_clamp", {{"M", 24}, {"N", 16}}, 2},   // clamp, 5
      {"tests/space/programs/iter_box_mirror", {{"M", 8}, {"N", 24}}, 1},      // mirror, 2
      {"tests/space/programs/iter_source_constant", {{"M", 16}, {"N", 8}}, 1}, // constant, 3
      {"tests/space/programs/iter_smooth1d", {{"N", 48}}, 2},                  // 1D, 4
  };
#endif
  for (const Case& c : cases) {
    CAPTURE(c.file);
    ir::Module module = parse::parse_file(fmt::format("{}/{}.lift", LIFTX_SOURCE_DIR, c.file));
    const std::optional<ir::HostIteration> iteration = ir::host_iteration(module.main());
    REQUIRE(iteration);
    space::SpaceOptions options = options_for(c.sizes, "cpu");
    options.max_tile = 8;
    space::VariantStream stream(module.main(), options);
    const StrategySample sample = sample_per_strategy(stream, c.keep, 5);
    CHECK(stream.counts().variants > 1000);
    // Every strategy of the step's grid rank, work-group tiles, register windows and fused steps
    // included.
    CHECK(sample.picked.size() >= (c.sizes.size() == 2 ? 8u : 4u));
    for (const space::Variant& v : sample.to_verify()) {
      const std::optional<ir::HostIteration> lowered = ir::host_iteration(v.program);
      REQUIRE(lowered);
      // A fused launch (temporal2d) computes steps_per_launch steps, a remainder launch the rest.
      CHECK(lowered->count * space::steps_per_launch(v) + space::remainder_steps(v) ==
            iteration->count);
      CHECK(lowered->tail_count == (space::remainder_steps(v) > 0 ? 1 : 0));
      CHECK(lowered->input == iteration->input);
    }
    check_all_verify(device, module, sample.to_verify(), c.sizes, c.file, sample.every);
  }
}

/// A program of stencils/linalg/ (matrix-vector products, matrix product, convolution).
ir::Module load_linalg(const std::string& name) {
  return parse::parse_file(fmt::format("{}/stencils/linalg/{}.lift", LIFTX_SOURCE_DIR, name));
}

// Under the sanitizers: every work-group reduction of mv and tmv, below.
TEST_CASE("a fixed-seed sample of the linear-algebra programs' variants verifies on PoCL" *
          doctest::skip(test::kPlainBuildOnly)) {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  const std::vector<std::pair<std::string, Sizes>> cases = {
      {"mv", {{"M", 48}, {"N", 64}}},
      {"tmv", {{"M", 64}, {"N", 48}}},
      {"mm", {{"K", 16}, {"M", 24}, {"N", 32}}},
      {"conv2d", {{"M", 24}, {"N", 32}}}};
  for (const auto& c : cases) {
    // (named, not a structured binding: clang 14's doctest macros cannot capture a binding)
    const std::string& name = c.first;
    const Sizes& sizes = c.second;
    CAPTURE(name);
    ir::Module module = load_linalg(name);
    space::VariantStream stream(module.main(), options_for(sizes, "cpu"));
    const size_t n = 12;
    std::vector<space::Variant> picked = space::sample(stream, n, 7);
    REQUIRE(picked.size() == n);
    VerifySummary s = verify(device, module, picked, sizes, name);
    for (const std::string& f : s.failures)
      MESSAGE(f);
    CHECK(s.failed == 0);
  }
}

TEST_CASE("products of long dot products are fused: no global temporary, mm has variants at "
          "4096^3") {
  // Unfused, every variant of mm stored its products in an M*N*K temporary (2^36 floats at
  // 4096^3, an index beyond int): the space had no variant at that size.
  for (const std::string name : {"mm", "mv", "tmv"}) {
    CAPTURE(name);
    ir::Module module = load_linalg(name);
    const Sizes sizes = name == "mm" ? Sizes{{"K", 4096}, {"M", 4096}, {"N", 4096}}
                                     : Sizes{{"M", 4096}, {"N", 4096}};
    space::VariantStream stream(module.main(), options_for(sizes, "nvidia"));
    space::Variant v;
    std::set<std::string> strategies;
    int64_t variants = 0, temporaries = 0;
    while (stream.next(v) && variants < 3000) {
      ++variants;
      strategies.insert(v.strategy);
      REQUIRE(v.kernel);
      for (const codegen::KernelArg& arg : v.kernel->args)
        temporaries += arg.role == codegen::KernelArg::Role::Temporary;
    }
    CHECK(variants >= (name == "mm" ? 3000 : 100));
    CHECK(temporaries == 0);
    CHECK(strategies.size() >= 2);
  }
}

TEST_CASE("every work-group reduction of mv and tmv verifies on PoCL, rows and column blocks") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  // Non-square, so that a transposed or mis-strided index cannot pass.
  for (const auto& c : std::vector<std::pair<std::string, Sizes>>{
           {"mv", {{"M", 40}, {"N", 256}}}, {"tmv", {{"M", 80}, {"N", 64}}}}) {
    // (named, not a structured binding: clang 14's doctest macros cannot capture a binding)
    const std::string& name = c.first;
    const Sizes& sizes = c.second;
    CAPTURE(name);
    ir::Module module = load_linalg(name);
    space::VariantStream stream(module.main(), options_for(sizes, "cpu"));
    std::vector<space::Variant> reductions;
    std::set<std::pair<int64_t, int64_t>> tilings;
    space::Variant v;
    while (stream.next(v))
      if (v.strategy == rewrite::kReductionStrategy) {
        reductions.push_back(v);
        tilings.insert({v.parameters.at("lanes"), v.parameters.at("parts")});
      }
    // mv: rows of 256 split into 32 to 256 parts; tmv: blocks of 8 to 64 columns, 1 to 16 parts
    // of 80 rows (32 does not divide 80).
    if (name == "mv")
      CHECK(tilings ==
            std::set<std::pair<int64_t, int64_t>>{{32, 32}, {64, 64}, {128, 128}, {256, 256}});
    else {
      CHECK(tilings.contains({64, 1}));
      CHECK(tilings.contains({256, 16}));
      CHECK(!tilings.contains({256, 32})); // 32 parts do not divide 80 rows
      CHECK(!tilings.contains({64, 16}));  // blocks of 4 columns: too narrow to coalesce
    }
    if (test::kSanitized && reductions.size() > 4)
      reductions.resize(4);
    VerifySummary s = verify(device, module, reductions, sizes, name);
    for (const std::string& f : s.failures)
      MESSAGE(f);
    CHECK(s.failed == 0);
    CHECK(s.verified == static_cast<int64_t>(reductions.size()));
  }
}

TEST_CASE("every register block of mm verifies on PoCL, each block and unrolling once") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  // Non-square and K of 24: 16-row blocks divide M, 8-column blocks N, chunks of 4 and 8 K.
  const Sizes sizes{{"M", 32}, {"N", 16}, {"K", 24}};
  ir::Module module = load_linalg("mm");
  // The CPU profile: a 16x8 block leaves 4 work-items here, too few work-groups for a GPU's.
  space::VariantStream stream(module.main(), options_for(sizes, "cpu"));
  std::map<std::map<std::string, int64_t>, space::Variant> first_of;
  space::Variant v;
  while (stream.next(v))
    if (v.strategy == rewrite::kRegisterBlockStrategy && !first_of.contains(v.parameters))
      first_of.emplace(v.parameters, v);
  std::set<std::tuple<int64_t, int64_t, int64_t>> blocks, vector_blocks;
  std::vector<space::Variant> variants;
  for (const auto& [parameters, variant] : first_of) {
    blocks.insert({parameters.at("rows"), parameters.at("columns"), parameters.at("unroll")});
    if (parameters.contains("vector_width"))
      vector_blocks.insert(
          {parameters.at("rows"), parameters.at("columns"), parameters.at("unroll")});
    variants.push_back(variant);
  }
  // Vector reads of B: every block of 4 or 8 columns, once more.
  CHECK(vector_blocks.size() == 4 * 2 * 3);
  // 2-16 rows by 2-8 columns, at least 8 outputs, k in 1, 4 or 8 steps at a time.
  CHECK(blocks.contains({16, 8, 4}));
  CHECK(blocks.contains({2, 4, 1}));
  CHECK(blocks.contains({4, 2, 8}));
  CHECK(!blocks.contains({2, 2, 1})); // 4 outputs: too few
  CHECK(blocks.size() >= 25);
  if (test::kSanitized && variants.size() > 4)
    variants.resize(4);
  VerifySummary s = verify(device, module, variants, sizes, "mm");
  for (const std::string& f : s.failures)
    MESSAGE(f);
  CHECK(s.failed == 0);
  CHECK(s.verified == static_cast<int64_t>(variants.size()));
}

TEST_CASE("local-memory tiles of mm verify on PoCL, every variant of 8 x 8 work-groups once") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  // Non-square, K of 48: tiles of 16 to 64 rows and columns divide M and N, chunks of 4, 8 and
  // 16 steps divide K.
  const Sizes sizes{{"M", 64}, {"N", 32}, {"K", 48}};
  ir::Module module = load_linalg("mm");
  space::VariantStream stream(module.main(), options_for(sizes, "cpu"));
  std::map<std::map<std::string, int64_t>, space::Variant> first_of;
  space::Variant v;
  while (stream.next(v))
    if (v.strategy == rewrite::kLocalTilesStrategy && !first_of.contains(v.parameters))
      first_of.emplace(v.parameters, v);
  std::set<std::vector<int64_t>> shapes;
  std::vector<space::Variant> variants;
  size_t vector_reads = 0;
  for (const auto& [p, variant] : first_of) {
    shapes.insert({p.at("threads_y"), p.at("threads_x"), p.at("rows"), p.at("columns")});
    // 8 x 8 work-groups: every block, chunk, way of copying and assignment of outputs to
    // work-items, unpadded, with and without vector reads; padded, the 2 x 2 blocks (the suite's
    // time: all 288 pass).
    if (p.at("threads_y") == 8 && p.at("threads_x") == 8 &&
        (p.at("padding") == 0 || (p.at("rows") == 2 && p.at("columns") == 2))) {
      variants.push_back(variant);
      vector_reads += p.contains("vector_width") ? 1 : 0;
    }
  }
  CHECK(shapes.contains({8, 8, 2, 2}));
  CHECK(shapes.contains({16, 16, 4, 2}));
  CHECK(shapes.contains({8, 16, 8, 2}));
  CHECK(!shapes.contains({16, 16, 8, 4})); // a 128-row tile does not divide M
  // 8 columns: a 64-column tile > N. Vector reads: of the 2 x 3 x 4 blocks and ways of copying,
  // the 12 where a block of 4 or 8 rows or of 4 columns is stored step by step, each chunk; and
  // the transposing copies of 4 or 8 rows by 2 or 4 columns, unpadded, each chunk; and those of
  // 4 or 8 rows by 4 columns interleaved by vectors, unpadded, in chunks of 8 and 16.
  CHECK(vector_reads == 12 * 3 + 2 * 2 * 3 + 2 * 2);
  CHECK(variants.size() == 3 * 2 * 3 * 4 * 2 + 3 * 4 * 2 + vector_reads);
  if (test::kSanitized && variants.size() > 4)
    variants.resize(4);
  VerifySummary s = verify(device, module, variants, sizes, "mm-local");
  for (const std::string& f : s.failures)
    MESSAGE(f);
  CHECK(s.failed == 0);
  CHECK(s.verified == static_cast<int64_t>(variants.size()));
}

TEST_CASE("a product checked at smaller sizes: the same launch rule, then timed at its own") {
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  ir::Module mm = load_linalg("mm");
  auto built = rewrite::build_local_tiled(mm.main(), {8, 8, 2, 2, 4, true, false, 0});
  REQUIRE(std::holds_alternative<ir::Program>(built));
  const ir::Program& tiled = std::get<ir::Program>(built);
  exec::RunOptions run;
  run.roofline = false;
  run.warmup = 0;
  run.repeat = 1;
  run.reference = &mm.main();
  run.check_sizes = {{"M", 32}, {"N", 16}, {"K", 8}};
  const Sizes sizes{{"M", 64}, {"N", 48}, {"K", 40}};
  const exec::RunReport r = exec::run_program(device, tiled, sizes, run);
  INFO(r.message);
  CHECK(r.status == runtime::Status::ok);
  CHECK(r.verification.passed);
  CHECK(r.verification.elements == 32 * 16);
  CHECK(r.verification.checked_sizes == run.check_sizes);
  CHECK(exec::describe_check(r.verification) == "checked at K=8 M=32 N=16");
  CHECK(r.sizes == sizes);
  CHECK(r.launch.global[0] * r.launch.global[1] == (64 / 2) * (48 / 2)); // the full sizes' rule
  REQUIRE(r.timing);
  CHECK(exec::report_from_json(exec::to_json(r)).verification.checked_sizes == run.check_sizes);

  // A kernel of another program fails the check, which says where it checked; nothing is timed.
  const ir::Module other = parse::parse_module(
      "def mm(A: [[float]K]M, B: [[float]N]K) = map(row => map(column => reduce(add, 0.0f, "
      "map(add, zip(row, column)))[0], transpose(B)), A)",
      "<test>");
  run.reference = &other.main();
  const exec::RunReport wrong = exec::run_program(device, tiled, sizes, run);
  CHECK(wrong.status == runtime::Status::wrong_result);
  CHECK(wrong.message.find("checked at K=8 M=32 N=16") != std::string::npos);
  CHECK_FALSE(wrong.timing);
}

// The bench driver (bench/verify_space.sh): every variant of every stencil, when asked for.
TEST_CASE("verify every variant (LIFTX_VERIFY_ALL=M,N[,max_tile[,depth[,max_chunk]]])" *
          doctest::skip(std::getenv("LIFTX_VERIFY_ALL") == nullptr)) {
  std::vector<int64_t> args;
  std::string spec = std::getenv("LIFTX_VERIFY_ALL");
  for (size_t start = 0; start <= spec.size();) {
    size_t comma = spec.find(',', start);
    args.push_back(std::stoll(spec.substr(start, comma - start)));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  REQUIRE(args.size() >= 2);
  setenv("LIFTX_CACHE_DIR", temp_cache_dir().c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  Sizes sizes{{"M", args[0]}, {"N", args[1]}};
  const char* only = std::getenv("LIFTX_VERIFY_STENCILS");
  for (const std::string& name : kStencils) {
    if (only && std::string(only).find(name) == std::string::npos)
      continue;
    ir::Module module = load(name);
    space::SpaceOptions o = options_for(args[0], args[1]);
    if (args.size() > 2)
      o.max_tile = args[2];
    if (args.size() > 3)
      o.depth = static_cast<int>(args[3]);
    if (args.size() > 4)
      o.max_chunk = args[4];
    space::VariantStream stream(module.main(), o);
    std::vector<space::Variant> all;
    space::Variant v;
    while (stream.next(v))
      all.push_back(v);
    VerifySummary s = verify(device, module, all, sizes, name);
    fmt::print("{:<12} M={} N={}: {} variants, {} kernel sources: {} verified, {} failed\n", name,
               args[0], args[1], all.size(), stream.counts().distinct_sources, s.verified,
               s.failed);
    for (size_t i = 0; i < s.failures.size() && i < 10; ++i)
      fmt::print("  FAILED {}\n", s.failures[i]);
    std::fflush(stdout);
    CHECK(s.failed == 0);
  }
}

TEST_CASE("every free-thread launch of the space runs the free-thread kernel it was ranked by") {
  // A free launch that asks for exactly the tied kernel's threads would run the tied kernel
  // (prepare_launch), so its features, computed from the free kernel, would describe a kernel
  // that never runs: the space leaves such twins out. Only a free launch with its tied kernel's
  // global size can be one; each of those is prepared as the runtime prepares it.
  const std::vector<std::string> stencils =
      test::kSanitized ? std::vector<std::string>{"jacobi2d5pt"}
                       : std::vector<std::string>{"jacobi2d5pt", "gaussian"};
  for (const std::string& name : stencils) {
    CAPTURE(name);
    const ir::Module module = load(name);
    const space::SpaceOptions options = options_for(32, 64);
    space::VariantStream stream(module.main(), options);
    space::Variant v;
    // A lowered program's tied launches come before its free ones in the stream.
    std::map<size_t, std::array<int64_t, 3>> tied_global; // by lowered program
    int64_t free_launches = 0, same_global = 0;
    while (stream.next(v)) {
      const size_t program = v.program.body.hash();
      if (v.launch.tied) {
        tied_global[program] = v.launch.global;
        continue;
      }
      ++free_launches;
      const auto tied = tied_global.find(program);
      if (tied == tied_global.end() || tied->second != v.launch.global)
        continue;
      ++same_global;
      const codegen::PreparedLaunch prepared = codegen::prepare_launch(
          v.program, options.sizes, codegen::request_for(v.launch), options.device);
      INFO(describe(v));
      REQUIRE_FALSE(prepared.launch.tied);
    }
    CHECK(free_launches > 100);
    CHECK(same_global > 10); // launches of the tied global size with another work-group
    CHECK(stream.counts().rejections.count("free launch runs as its tied twin") == 1);
  }
}
