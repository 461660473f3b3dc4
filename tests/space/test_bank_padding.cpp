// Padding local arrays against bank conflicts (seed 004, section 5): the degree the features give a
// warp lying in one row is the seed's gcd(stride, banks); Algorithm 2
// (space::choose_bank_padding) pads where that lowers the cost; and before and after padding the
// static degrees equal what the instrumented kernel's own first indices give over every warp of the
// launch, on PoCL.
#include "exec/run.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "space/bank_padding.hpp"
#include "space/space.hpp"
#include "tests/sanitized.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>

using namespace liftx;

namespace {

runtime::Device& pocl() {
  static runtime::Device device = [] {
    const auto dir = std::filesystem::temp_directory_path() / "liftx-test-bank-padding-cache";
    setenv("LIFTX_CACHE_DIR", dir.c_str(), 1);
    return runtime::select_device("cpu");
  }();
  return device;
}

/// Each work-item sums one row of its work-group's 32x32 tile in local memory: its lanes read
/// (and copy) down a column, 32 words apart, so every lane of a warp meets the same bank.
const char* const kRowSums = R"(
def rowsums(x: [[float]32]N) =
  join(mapWrg0(t => mapLcl0(r => reduceSeq(add, 0.0f, r), toLocal(mapLcl0(mapSeq(id)))(t)),
               split(32, x)))
)";

/// Per local access: the bank-conflict degree over every warp of the launch (averaged over the
/// warps with an active lane), from the instrumented kernel's first indices; -1 for the others.
std::vector<double> instrumented_degrees(const exec::DynamicCounts& dyn, int64_t warp,
                                         int64_t banks) {
  const codegen::Kernel& kernel = dyn.kernel;
  const int slots = kernel.instrumentation->access_slots;
  const int64_t local = dyn.launch.local[0];
  const int64_t groups = dyn.launch.global[0] / local;
  std::vector<double> degrees;
  for (size_t k = 0; k < kernel.accesses.size(); ++k) {
    if (kernel.accesses[k].space != codegen::AddressSpace::Local) {
      degrees.push_back(-1);
      continue;
    }
    double sum = 0;
    int warps = 0;
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t start = 0; start < local; start += warp) {
        std::vector<std::optional<int64_t>> indices;
        for (int64_t t = start; t < std::min(local, start + warp); ++t) {
          const int32_t first =
              dyn.first_index.at(static_cast<size_t>((g * local + t) * slots) + k);
          indices.push_back(first < 0 ? std::nullopt : std::optional<int64_t>(first));
        }
        if (std::none_of(indices.begin(), indices.end(),
                         [](const auto& i) { return i.has_value(); }))
          continue;
        sum += features::bank_conflict_degree(indices, 4, banks);
        ++warps;
      }
    degrees.push_back(warps ? sum / warps : -1);
  }
  return degrees;
}

/// The features' degree of each local access (the representative warp, nvidia profile) equals
/// the degree of the same warp's lanes at the indices the instrumented kernel recorded. Returns
/// the worst access's degree averaged over every warp of the launch, from the recorded indices.
double check_against_instrumented(const ir::Program& program, const Sizes& sizes,
                                  const codegen::LaunchRequest& launch = {}) {
  exec::RunOptions options;
  options.time = false;
  options.roofline = false;
  options.global = launch.global;
  options.local = launch.local;
  const exec::DynamicCounts dyn = exec::run_instrumented(pocl(), program, sizes, options);
  const target::DeviceProfile nvidia = runtime::named_profile("nvidia");
  const features::Analysis a = features::KernelModel(dyn.kernel).analyze(dyn.launch, sizes, nvidia);
  const int slots = dyn.kernel.instrumentation->access_slots;
  const std::vector<double> all_warps =
      instrumented_degrees(dyn, nvidia.warp_width, nvidia.local_mem_banks);
  double worst = 0;
  int local_accesses = 0;
  for (size_t k = 0; k < all_warps.size(); ++k) {
    if (all_warps[k] < 0)
      continue;
    CAPTURE(k);
    CAPTURE(dyn.kernel.accesses[k].index.to_string());
    std::vector<std::optional<int64_t>> lanes;
    for (size_t lane = 0; lane < a.warp.lanes.size(); ++lane) {
      const int64_t wi = a.warp.work_item(lane, dyn.launch.global);
      const int32_t first = dyn.first_index.at(static_cast<size_t>(wi * slots) + k);
      lanes.push_back(first < 0 ? std::nullopt : std::optional<int64_t>(first));
    }
    if (std::any_of(lanes.begin(), lanes.end(), [](const auto& i) { return i.has_value(); })) {
      REQUIRE(a.accesses[k].value.has_value());
      CHECK(*a.accesses[k].value ==
            features::bank_conflict_degree(lanes, 4, nvidia.local_mem_banks));
    }
    worst = std::max(worst, all_warps[k]);
    ++local_accesses;
  }
  CHECK(local_accesses > 0);
  return worst;
}

} // namespace

TEST_CASE("a warp in one row of the work-group: the degree is the seed's gcd(stride, banks)") {
  for (int64_t banks : {16, 32})
    for (int64_t stride = 0; stride <= 80; ++stride) {
      CAPTURE(banks);
      CAPTURE(stride);
      std::vector<std::optional<int64_t>> indices;
      for (int64_t lane = 0; lane < banks; ++lane)
        indices.emplace_back(7 + stride * lane);
      CHECK(features::bank_conflict_degree(indices, 4, banks) ==
            (stride == 0 ? 1 : std::gcd(stride, banks)));
    }
}

TEST_CASE("Algorithm 2 pads a tile read down its columns, and the instrumented kernel agrees") {
  const ir::Module module = parse::parse_module(kRowSums, "rowsums.lift");
  const ir::Program& program = module.main();
  const Sizes sizes{{"N", 128}};
  const target::DeviceProfile nvidia = runtime::named_profile("nvidia");
  const space::BankPadding padding =
      space::choose_bank_padding(program, sizes, codegen::LaunchRequest{}, nvidia);
  REQUIRE(padding.arrays.size() == 1);
  const space::LocalArrayPadding& tile = padding.arrays[0];
  CHECK(padding.changed());
  CHECK(tile.padding == 1); // the smallest p that makes the row stride odd
  CHECK(tile.degree_unpadded == 32);
  CHECK(tile.degree_padded == 1);
  // 33 references (the copy's store and the 32 unrolled reads), each C(n) = 1 + n.
  CHECK(tile.cost_unpadded == 33 * (1 + 32));
  CHECK(tile.cost_padded == 33 * (1 + 1));
  CHECK(ir::print(padding.program).find("toLocalPadded(1, ") != std::string::npos);
  // The padded kernel computes the same (run_instrumented verifies against the interpreter), and
  // its degrees, like the unpadded one's, are the instrumented kernel's.
  CHECK(check_against_instrumented(program, sizes) == 32);
  CHECK(check_against_instrumented(padding.program, sizes) == 1);
}

TEST_CASE("Algorithm 2 leaves conflict-free tiles and one-dimensional local arrays alone") {
  const target::DeviceProfile nvidia = runtime::named_profile("nvidia");
  // Jacobi's overlapped tile (18 x 10, the work-group's rows read along them): no conflict.
  const ir::Module tiled = parse::parse_file(std::string(LIFTX_SOURCE_DIR) +
                                             "/stencils/variants/jacobi2d5pt/tiled_local.lift");
  const Sizes sizes{{"M", 32}, {"N", 64}};
  const space::BankPadding jacobi =
      space::choose_bank_padding(tiled.main(), sizes, codegen::LaunchRequest{}, nvidia);
  REQUIRE(jacobi.arrays.size() == 1);
  CHECK_FALSE(jacobi.changed());
  CHECK(jacobi.arrays[0].degree_unpadded == 1);
  CHECK(ir::alpha_equal(jacobi.program, tiled.main()));
  if (!test::kSanitized)
    CHECK(check_against_instrumented(tiled.main(), sizes) == 1);
  // A one-dimensional local array has no row to pad.
  const ir::Module one = parse::parse_module("def f(x: [float]N) = join(mapWrg0(t => mapLcl0(neg, "
                                             "toLocal(mapLcl0(id))(t)), split(32, x)))\n"
                                             "userfun neg(a: float): float { return -a; }",
                                             "one.lift");
  CHECK(space::choose_bank_padding(one.main(), {{"N", 64}}, {}, nvidia).arrays.empty());
}

TEST_CASE("padded variants of the space: the features' degrees are the instrumented kernel's") {
  // Jacobi's space at a small size, nvidia profile: the local-tile variants whose work-group rows
  // are shorter than a warp can meet a bank twice; Algorithm 2 pads those.
  const ir::Module module =
      parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/stencils/jacobi2d5pt.lift");
  const Sizes sizes{{"M", 32}, {"N", 64}};
  const target::DeviceProfile nvidia = runtime::named_profile("nvidia");
  space::SpaceOptions options;
  options.sizes = sizes;
  options.device = nvidia.limits();
  space::VariantStream stream(module.main(), options);
  space::Variant v;
  const int wanted = test::kSanitized ? 1 : 3;
  int padded = 0, local = 0;
  while (padded < wanted && stream.next(v)) {
    if (ir::print(v.program).find("toLocal(") == std::string::npos || local++ % 7 != 0)
      continue;
    const codegen::LaunchRequest request = codegen::request_for(v.launch);
    const space::BankPadding padding =
        space::choose_bank_padding(v.program, sizes, request, nvidia);
    if (!padding.changed())
      continue;
    CAPTURE(v.index);
    CAPTURE(v.strategy);
    ++padded;
    const space::LocalArrayPadding& tile = padding.arrays.back();
    CHECK(tile.degree_unpadded > 1);
    CHECK(tile.degree_padded < tile.degree_unpadded);
    // Before and after: the static degrees are the instrumented kernel's, and the padded kernel
    // computes what the interpreter does (run_instrumented verifies it).
    (void)check_against_instrumented(v.program, sizes, request);
    (void)check_against_instrumented(padding.program, sizes, request);
  }
  CHECK(padded == wanted);
}
