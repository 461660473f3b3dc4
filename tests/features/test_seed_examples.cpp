// The seed's two examples (seed 003 §4.2.2 Listing 3, §4.2.3 Listing 4) with values derived by
// hand, the bank-conflict model of seed 004 §5, and output formats.
#include "helpers.hpp"

#include <doctest/doctest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <random>

#include <numeric>
#include <random>

using namespace liftx;
using namespace liftx::features;

namespace {

std::string listing4(int n) {
  return fmt::format("userfun f(x: float): float {{ return x * 2.0f; }}\n"
                     "def listing4(in: [float]N) = join(mapGlb0(mapSeq(f), split({}, in)))\n",
                     n);
}

const char* kListing3 = R"(
userfun multByTwo(x: float): float { return x * 2.0f; }
def listing3(arg0: [float]N, arg1: [float]N) =
  join(mapWrg0(x => mapLcl0(toGlobal(multByTwo), toLocal(mapLcl0(add))(x)),
               split(64, zip(arg0, arg1))))
)";

} // namespace

TEST_CASE("distinct cache lines: offsets from the first lane, floor-divided by the line") {
  std::vector<std::optional<int64_t>> unit, by4, gapped;
  for (int64_t t = 0; t < 32; ++t) {
    unit.push_back(100 + t); // not line-aligned: still 1 line by the offset trick
    by4.push_back(4 * t);
    gapped.push_back(t % 2 == 0 ? std::optional<int64_t>(t) : std::nullopt);
  }
  CHECK(distinct_lines(unit, 4, 128) == 1);
  CHECK(distinct_lines(by4, 4, 128) == 4);
  CHECK(distinct_lines(gapped, 4, 128) == 1);
  CHECK(distinct_lines({std::nullopt}, 4, 128) == 0);
  // Negative offsets (a lane below the first) floor to the line before.
  CHECK(distinct_lines({10, 9}, 4, 128) == 2);
  // float4 accesses: 32 lanes x 16 bytes = 4 lines of 128 bytes; one unaligned vector spans two.
  std::vector<std::optional<int64_t>> by4_vectors;
  for (int64_t lane = 0; lane < 32; ++lane)
    by4_vectors.push_back(4 * lane);
  CHECK(distinct_lines(by4_vectors, 4, 128, 4) == 4);
  CHECK(distinct_lines({0, 30}, 4, 128, 1) == 1);
  CHECK(distinct_lines({0, 30}, 4, 128, 4) == 2);
}

TEST_CASE("line segments: runs of consecutive lines among a warp's lines") {
  // float4 lanes of a 32-wide row: 4 lines, one run.
  std::vector<std::optional<int64_t>> row, four_rows, reversed;
  for (int64_t lane = 0; lane < 32; ++lane) {
    row.push_back(4 * lane);
    // An 8-wide work-group of float4 lanes over rows 8192 floats apart: 4 lines, 4 runs.
    four_rows.push_back(8192 * (lane / 8) + 4 * (lane % 8));
    reversed.push_back(8192 * (3 - lane / 8) + 4 * (lane % 8)); // out of order: sorted first
  }
  CHECK(distinct_lines(row, 4, 128, 4) == 4);
  CHECK(line_segments(row, 4, 128, 4) == 1);
  CHECK(distinct_lines(four_rows, 4, 128, 4) == 4);
  CHECK(line_segments(four_rows, 4, 128, 4) == 4);
  CHECK(line_segments(reversed, 4, 128, 4) == 4);
  // Adjacent lines reached out of order still make one run; a one-line gap splits it.
  CHECK(line_segments({32, 0, 64}, 4, 128) == 1);
  CHECK(line_segments({0, 64}, 4, 128) == 2);
  CHECK(line_segments({std::nullopt}, 4, 128) == 0);
  // Random lanes: never more runs than lines, at least one when a lane is active.
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::optional<int64_t>> lanes;
    for (int lane = 0; lane < 32; ++lane)
      lanes.push_back(random() % 3 == 0 ? std::nullopt
                                        : std::optional<int64_t>(int64_t(random() % 4096)));
    const int64_t lines = distinct_lines(lanes, 4, 128), runs = line_segments(lanes, 4, 128);
    CHECK(runs <= lines);
    CHECK((runs >= 1) == (lines >= 1));
  }
}

TEST_CASE("bank conflicts: gcd(stride, banks) for uniform strides, broadcast counts 1") {
  for (int64_t stride : {0, 1, 2, 3, 4, 8, 16, 17, 32, 64}) {
    CAPTURE(stride);
    std::vector<std::optional<int64_t>> lanes;
    for (int64_t t = 0; t < 32; ++t)
      lanes.push_back(7 + stride * t);
    double expected = stride == 0 ? 1.0 : static_cast<double>(std::gcd(stride, int64_t{32}));
    CHECK(bank_conflict_degree(lanes, 4, 32) == expected);
  }
  // A 64-wide wavefront is served in two groups of 32 lanes: unit stride has no conflict.
  std::vector<std::optional<int64_t>> wave;
  for (int64_t t = 0; t < 64; ++t)
    wave.push_back(t);
  CHECK(bank_conflict_degree(wave, 4, 32) == 1.0);
}

TEST_CASE("Listing 4: join(mapGlb0(mapSeq(f), split(n, in))) coalescing") {
  // Lane t of a warp reads in[i + n * (gid0 + t)] at mapSeq iteration i (stores likewise to the
  // joined output). Offsets from lane 0 are {0, n, ..., 31n} floats; times 4 bytes, divided by
  // the 128-byte line (32 floats) of the nvidia profile: n = 1 -> all 0: 1 line; n = 4 ->
  // {0,0,..,3,3}: 4 lines (8 lanes per line); n = 32 -> {0, 1, ..., 31}: 32 lines; n = 64 -> 32
  // lines (every lane its own line, one line per lane at most). amd: 64 lanes, 64-byte lines
  // (16 floats): n = 1 -> 64 floats = 4 lines; n = 4 -> 256 floats = 16 lines; n = 32, 64 -> 64.
  // Every work-item runs the mapSeq n times: n loads, n stores, n calls of f (1 multiply); the
  // mapSeq is a for loop when n > 1 (n bodies per thread) and a block when n = 1. The lines are
  // consecutive (one run) until lanes are more than a line apart: n = 64 on nvidia (2 lines
  // apart: 32 runs), n = 32 and 64 on amd (64 runs).
  const int64_t N = 8192;
  struct Case {
    int n;
    double nvidia_lines;
    double amd_lines;
    double nvidia_segments;
    double amd_segments;
  };
  for (Case c : {Case{1, 1, 4, 1, 1}, Case{4, 4, 16, 1, 1}, Case{32, 32, 64, 1, 64},
                 Case{64, 32, 64, 32, 64}}) {
    CAPTURE(c.n);
    ir::Program program = test::parse_program(listing4(c.n));
    Sizes sizes{{"N", N}};
    Features nv = compute(program, sizes, {}, runtime::named_profile("nvidia"));
    CHECK(nv.global_size[0] == N / c.n);
    CHECK(nv.work_items == N / c.n);
    CHECK(nv.global_loads_per_thread == c.n);
    CHECK(nv.global_stores_per_thread == c.n);
    CHECK(nv.local_loads_per_thread == 0);
    CHECK(nv.for_bodies_per_thread == (c.n > 1 ? c.n : 0));
    CHECK(nv.if_statements_per_thread == 0);
    CHECK(nv.barriers_per_thread == 0);
    CHECK(nv.arith_ops_per_thread == c.n);
    CHECK(nv.cache_lines_per_warp_access == c.nvidia_lines);
    CHECK(nv.line_segments_per_warp_access == c.nvidia_segments);
    CHECK(nv.bytes_moved == 2 * N * 4);
    Features amd = compute(program, sizes, {}, runtime::named_profile("amd"));
    CHECK(amd.cache_lines_per_warp_access == c.amd_lines);
    CHECK(amd.line_segments_per_warp_access == c.amd_segments);
  }
}

TEST_CASE("Listing 3: zip, toLocal(add), toGlobal(multByTwo)") {
  // split(64) gives N/64 work-groups of 64 work-items (tied launch: global N, local 64). Per
  // work-item: `add` reads arg0[i] and arg1[i] (2 global loads, the tuple unboxed) and writes
  // local memory (1 local store); a barrier follows (other work-items read the local array);
  // `multByTwo` reads local (1 local load) and writes the output (1 global store). Local memory:
  // 64 floats = 256 bytes. Lanes read consecutive floats: nvidia 32 x 4 bytes = 1 line, amd 64 x 4
  // = 256 bytes = 4 lines of 64; local stride 1 word: no bank conflicts. Operations: add +
  // multiply = 2. Occupancy (nvidia): 2048 / 64 = 32 groups, capped at 32 resident groups: 1.0;
  // (amd) 2560 / 64 = 40, capped at 32: 32 * 64 / 2560 = 0.8.
  ir::Program program = test::parse_program(kListing3);
  const int64_t N = 4096;
  Sizes sizes{{"N", N}};
  Features nv = compute(program, sizes, {}, runtime::named_profile("nvidia"));
  CHECK(nv.global_size[0] == N);
  CHECK(nv.local_size[0] == 64);
  CHECK(nv.work_groups == N / 64);
  CHECK(nv.local_memory_bytes == 256);
  CHECK(nv.global_loads_per_thread == 2);
  CHECK(nv.local_stores_per_thread == 1);
  CHECK(nv.local_loads_per_thread == 1);
  CHECK(nv.global_stores_per_thread == 1);
  CHECK(nv.barriers_per_thread == 1);
  CHECK(nv.for_bodies_per_thread == 0);
  CHECK(nv.if_statements_per_thread == 0);
  CHECK(nv.arith_ops_per_thread == 2);
  CHECK(nv.cache_lines_per_warp_access == 1);
  CHECK(nv.bank_conflict_degree == 1);
  CHECK(nv.bytes_moved == 3 * N * 4);
  CHECK(nv.occupancy == doctest::Approx(1.0));
  Features amd = compute(program, sizes, {}, runtime::named_profile("amd"));
  CHECK(amd.cache_lines_per_warp_access == 4);
  CHECK(amd.occupancy == doctest::Approx(0.8));
}

TEST_CASE("free launch of Listing 4: averages over all launched work-items") {
  // n = 4 over N = 1000 elements: 250 chunks dealt to 64 work-items (global 64, local 16): the
  // first 250 - 3*64 = 58 work-items run 4 chunks, the other 6 run 3; average 250/64 chunks, each
  // 4 loads: 1000/64 loads per work-item; for bodies: chunk loop 250/64 + mapSeq 1000/64.
  ir::Program program = test::parse_program(listing4(4));
  exec::RunOptions options;
  options.global = {64};
  options.local = {16};
  Features f = compute(program, {{"N", 1000}}, options.request(), runtime::named_profile("nvidia"));
  CHECK(f.global_loads_per_thread == 1000.0 / 64);
  CHECK(f.for_bodies_per_thread == (250.0 + 1000.0) / 64);
  CHECK(f.work_groups == 4);
}

TEST_CASE("the seed examples: static == dynamic on PoCL") {
  for (int n : {1, 4, 32, 64}) {
    CAPTURE(n);
    ir::Program program = test::parse_program(listing4(n));
    exec::DynamicCounts dyn = exec::run_instrumented(test::pocl(), program, {{"N", 2048}}, {});
    Analysis a = KernelModel(dyn.kernel)
                     .analyze(dyn.launch, {{"N", 2048}}, runtime::named_profile("nvidia"));
    const auto& inst = *dyn.kernel.instrumentation;
    for (int s = 0; s < inst.access_slots; ++s) {
      int64_t total = 0;
      for (int64_t wi = 0; wi < dyn.work_items; ++wi)
        total += dyn.count(wi, s);
      CHECK(a.counts.accesses[size_t(s)] == total);
    }
  }
  ir::Program program = test::parse_program(kListing3);
  exec::DynamicCounts dyn = exec::run_instrumented(test::pocl(), program, {{"N", 1024}}, {});
  Analysis a =
      KernelModel(dyn.kernel).analyze(dyn.launch, {{"N", 1024}}, runtime::named_profile("nvidia"));
  const auto& inst = *dyn.kernel.instrumentation;
  for (int s = 0; s < inst.slots(); ++s) {
    int64_t total = 0;
    for (int64_t wi = 0; wi < dyn.work_items; ++wi)
      total += dyn.count(wi, s);
    int64_t expected = s < inst.access_slots ? a.counts.accesses[size_t(s)]
                       : s < inst.access_slots + inst.barrier_slots
                           ? a.counts.barriers[size_t(s - inst.access_slots)]
                           : a.counts.loops[size_t(s - inst.access_slots - inst.barrier_slots)];
    CHECK(expected == total);
  }
}

TEST_CASE("CSV and JSON output: one column per feature, stable names") {
  ir::Program program = test::parse_program(listing4(4));
  Features f = compute(program, {{"N", 1024}}, {}, runtime::named_profile("nvidia"));
  std::string header = csv_header();
  std::string row = csv_row("listing4", f);
  CHECK(header.rfind("program,global_size_0,global_size_1,global_size_2,local_size_0", 0) == 0);
  CHECK(std::count(header.begin(), header.end(), ',') == std::count(row.begin(), row.end(), ','));
  CHECK(row.rfind("listing4,256,1,1,", 0) == 0);
  nlohmann::json j = to_json(f);
  CHECK(j.at("global_loads_per_thread").get<double>() == 4.0);
  CHECK(j.at("cache_lines_per_warp_access").get<double>() == 4.0);
  CHECK(j.size() == columns().size());
  CHECK(csv_row("a,b", f).rfind("\"a,b\",", 0) == 0);
}

TEST_CASE("bad launches are user errors") {
  ir::Program program = test::parse_program(kListing3);
  KernelModel model(
      codegen::prepare_launch(program, {{"N", 256}}, {}, runtime::named_profile("nvidia").limits())
          .kernel);
  target::DeviceProfile nv = runtime::named_profile("nvidia");
  CHECK_THROWS_AS(model.analyze({1, {256, 1, 1}, {0, 0, 0}}, {{"N", 256}}, nv), UserError);
  CHECK_THROWS_AS(model.analyze({1, {256, 1, 1}, {48, 0, 0}}, {{"N", 256}}, nv), UserError);
  CHECK_THROWS_AS(model.analyze({1, {256, 1, 1}, {64, 0, 0}}, {}, nv), UserError);
}
