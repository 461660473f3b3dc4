// KernelModel::group_traffic: the distinct cache lines of the representative work-group, per
// buffer, times the work-groups with work. Hand-counted launches, and the relations that make the
// model differ from per-warp line counts: a line re-read by neighbouring work-items or a later
// iteration counts once, so a tile in local memory and direct reads of the same window agree.
#include "helpers.hpp"

#include "codegen/launch.hpp"
#include "features/derived.hpp"

#include <doctest/doctest.h>

using namespace liftx;
using namespace liftx::features;

namespace {

const std::string kAvg3 =
    "userfun avg3(a: float, b: float, c: float): float { return (a + b + c) / 3.0f; }\n"
    "userfun copy(a: float): float { return a; }\n";
/// One work-item per point (mapGlb0: a `for` with a stride of the global size when the launch
/// has fewer work-items than points).
const std::string kSmoother = kAvg3 + "def s(xs: [float]N) = mapGlb0(w => avg3(w[0], w[1], "
                                      "w[2]), slide(3, 1, pad(1, 1, clamp, xs)))\n";
/// Eight outputs per work-group, each work-item reading its window from global memory.
const std::string kGroupSmoother =
    kAvg3 + "def s(xs: [float]N) = join(mapWrg0(t => mapLcl0(w => avg3(w[0], w[1], w[2]), "
            "slide(3, 1, t)), slide(10, 8, pad(1, 1, clamp, xs))))\n";
/// The same, with the group's ten points copied to local memory first.
const std::string kLocalSmoother =
    kAvg3 + "def s(xs: [float]N) = join(mapWrg0(t => mapLcl0(w => avg3(w[0], w[1], w[2]), "
            "slide(3, 1, toLocal(mapLcl0(copy))(t))), slide(10, 8, pad(1, 1, clamp, xs))))\n";

struct Modelled {
  KernelModel::GroupTraffic traffic;
  Features features;
};

Modelled model(const std::string& source, const Sizes& sizes, const codegen::LaunchRequest& request,
               int64_t budget = KernelModel::kTrafficBudget) {
  const target::DeviceProfile nvidia = runtime::named_profile("nvidia"); // 128-byte lines
  codegen::PreparedLaunch prepared =
      codegen::prepare_launch(test::parse_program(source), sizes, request, nvidia.limits());
  const KernelModel kernel(std::move(prepared.kernel));
  return {kernel.group_traffic(prepared.launch, sizes, nvidia, 0, budget),
          kernel.compute(prepared.launch, sizes, nvidia)};
}

} // namespace

TEST_CASE("group traffic: a 1D three-point smoother, counted by hand") {
  // Work-group g of 128 reads points 128g-1 .. 128g+128: bytes 512g-4 .. 512g+515, lines 4g-1 ..
  // 4g+4 (six), and writes four lines. 32 groups: 320 lines of 128 bytes for 32 KiB moved.
  const Modelled m = model(kSmoother, {{"N", 4096}}, {{4096}, {128}});
  CHECK(m.traffic.lines == 320);
  CHECK(m.traffic.per_byte == doctest::Approx(320.0 * 128 / (2 * 4096 * 4)));
  CHECK_FALSE(m.traffic.extrapolated);
  // Per warp, each of the three loads and the store touches a line (offsets from the first
  // lane): 128 warps x 4 lines, 1.6 times the group's count.
  CHECK(modelled_traffic_per_byte(m.features, runtime::named_profile("nvidia").throughput()) ==
        doctest::Approx(2.0));

  SUBCASE("fewer work-items than points: each runs 16 iterations, 256 points apart") {
    // Two groups, the representative (group 1: points 256i+128 .. 256i+255) touching ten lines
    // per iteration and none twice, but for the clamped right edge in its last iteration (points
    // 3967 .. 4095: five lines read).
    const Modelled strided = model(kSmoother, {{"N", 4096}}, {{256}, {128}});
    CHECK(strided.traffic.lines == 2 * (16 * 10 - 1));
    CHECK_FALSE(strided.traffic.extrapolated);
    // A budget of one iteration per work-item: the first iteration's ten lines, scaled by 16.
    const Modelled cut = model(kSmoother, {{"N", 4096}}, {{256}, {128}}, 128);
    CHECK(cut.traffic.extrapolated);
    CHECK(cut.traffic.lines == doctest::Approx(320));
  }
  SUBCASE("work-groups of 32: the halo's lines count for each group") {
    // Points 32g-1 .. 32g+32: bytes 128g-4 .. 128g+131, lines g-1 .. g+1 (three), and one line
    // written; 128 groups.
    const Modelled small = model(kSmoother, {{"N", 4096}}, {{4096}, {32}});
    CHECK(small.traffic.lines == 4 * 128);
  }
}

TEST_CASE("group traffic: a tile in local memory reads what direct reads of the window read") {
  const Sizes sizes{{"N", 4096}};
  const Modelled direct = model(kGroupSmoother, sizes, {{4096}, {8}});
  const Modelled tiled = model(kLocalSmoother, sizes, {{4096}, {8}});
  const Modelled plain = model(kSmoother, sizes, {{4096}, {8}});
  // Group 256 of 512 reads points 2047 .. 2058 (bytes 8188 .. 8235, lines 63 and 64) and writes
  // points 2048 .. 2055 (line 64).
  CHECK(direct.traffic.lines == 3 * 512);
  CHECK(tiled.traffic.lines == direct.traffic.lines);
  CHECK(plain.traffic.lines == direct.traffic.lines);
  // Per warp the tile reads each point once and the direct reads three times.
  CHECK(tiled.features.global_loads_per_thread < direct.features.global_loads_per_thread);
}

TEST_CASE("group traffic: Jacobi 2D, one work-item per point, 32x8 work-groups") {
  // The representative group (8, 32) writes points x = 256 .. 287 (one line) of rows 256 .. 263
  // and reads x - 1 .. x + 32 (bytes 1020 .. 1155: three lines) of those rows, and only x (north
  // and south: one line) of rows 255 and 264: 8 + 24 + 2 = 34 lines per group, 16 x 64 groups.
  const std::string source = test::read_source("stencils/variants/jacobi2d5pt/global2d.lift");
  const Modelled m = model(source, {{"M", 512}, {"N", 512}}, {{512, 512}, {32, 8}});
  CHECK(m.traffic.lines == 34 * 16 * 64);
  CHECK(m.traffic.per_byte == doctest::Approx(34.0 * 1024 * 128 / (2 * 512 * 512 * 4)));
}

TEST_CASE("group traffic: a budget below one execution per access is refused") {
  CHECK_THROWS_AS(model(kSmoother, {{"N", 4096}}, {{4096}, {128}}, 0), UserError);
}
