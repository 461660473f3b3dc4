// Golden kernels and structural checks of the code generator. Regenerate the golden files with
// LIFTX_UPDATE_GOLDEN=1 after an intended change, and review the diff.
#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "pocl.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace liftx;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(LIFTX_SOURCE_DIR) / "tests" / "codegen";

ir::Module load(const std::string& name) {
  return parse::parse_file((kDir / "programs" / (name + ".lift")).string());
}

std::string describe(const codegen::Kernel& k) {
  std::string text = k.source + "\n// launch: dims " + std::to_string(k.launch.dims);
  for (int d = 0; d < k.launch.dims; ++d)
    text += "; global" + std::to_string(d) + " " +
            (k.launch.global[d] ? k.launch.global[d]->to_string() : "any") + ", local" +
            std::to_string(d) + " " + (k.launch.local[d] ? k.launch.local[d]->to_string() : "any");
  text += "\n// local bytes: " + k.local_bytes().to_string() + "\n";
  for (const codegen::LoopRecord& loop : k.loops)
    text += "// " + loop.primitive + " over " + loop.trip_count.to_string() + ": " +
            codegen::cl::loop_kind_name(loop.kind) + "\n";
  return text;
}

void check_golden(const std::string& name, const codegen::Kernel& kernel) {
  fs::path golden = kDir / "golden" / (name + ".cl");
  std::string text = describe(kernel);
  if (std::getenv("LIFTX_UPDATE_GOLDEN")) {
    std::ofstream(golden) << text;
    return;
  }
  std::ifstream in(golden);
  REQUIRE_MESSAGE(in.good(), "missing golden file " << golden.string());
  std::stringstream expected;
  expected << in.rdbuf();
  CHECK(text == expected.str());
}

codegen::Kernel generate(const std::string& name, bool tied = true) {
  ir::Module m = load(name);
  return codegen::generate(m.main(), codegen::Options{tied});
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

codegen::cl::LoopKind kind_of(const codegen::Kernel& k, const std::string& primitive) {
  for (const codegen::LoopRecord& loop : k.loops)
    if (loop.primitive == primitive)
      return loop.kind;
  FAIL("no loop " << primitive);
  return codegen::cl::LoopKind::None;
}

} // namespace

TEST_CASE("golden kernels") {
  for (const char* name :
       {"chunks", "tiled1d", "interior", "clamp2d", "private_chunk", "local_private"}) {
    CAPTURE(name);
    check_golden(name, generate(name));
  }
  check_golden("chunks_free_threads", generate("chunks", false));
}

TEST_CASE("a kernel generated without its text has the same records, arguments and launch") {
  int programs = 0;
  for (const auto& file : fs::directory_iterator(kDir / "programs")) {
    if (file.path().extension() != ".lift")
      continue;
    const ir::Program program = parse::parse_file(file.path().string()).main();
    for (bool tied : {true, false}) {
      INFO(file.path().filename().string() << (tied ? " tied" : " free"));
      codegen::Options full, records;
      full.tie_threads_to_lengths = records.tie_threads_to_lengths = tied;
      records.source = false;
      codegen::Kernel with_text, without_text;
      try {
        with_text = codegen::generate(program, full);
      } catch (const UserError&) {
        continue; // a program this form of kernel does not take
      }
      without_text = codegen::generate(program, records);
      CHECK_FALSE(with_text.source.empty());
      CHECK(without_text.source.empty());
      without_text.source = with_text.source;
      CHECK(describe(without_text) == describe(with_text));
      REQUIRE(without_text.accesses.size() == with_text.accesses.size());
      for (size_t k = 0; k < with_text.accesses.size(); ++k) {
        CHECK(without_text.accesses[k].index == with_text.accesses[k].index);
        CHECK(without_text.accesses[k].buffer == with_text.accesses[k].buffer);
        CHECK(without_text.accesses[k].loops.size() == with_text.accesses[k].loops.size());
      }
      REQUIRE(without_text.args.size() == with_text.args.size());
      for (size_t a = 0; a < with_text.args.size(); ++a)
        CHECK(without_text.args[a].name == with_text.args[a].name);
      CHECK(without_text.name == with_text.name);
      CHECK(without_text.census.fors == with_text.census.fors);
      CHECK(without_text.census.ifs == with_text.census.ifs);
      CHECK(without_text.census.barriers == with_text.census.barriers);
      CHECK(without_text.private_bytes == with_text.private_bytes);
      CHECK(without_text.size_divisors == with_text.size_divisors);
      ++programs;
    }
  }
  CHECK(programs > 10);
}

TEST_CASE("loops become nothing, a block, an if or a for from their ranges") {
  using codegen::cl::LoopKind;
  codegen::Kernel chunks = generate("chunks");
  CHECK(kind_of(chunks, "mapGlb0") == LoopKind::Block);
  CHECK(kind_of(chunks, "mapSeq") == LoopKind::For);
  CHECK(generate("chunks", false).loops.back().kind == LoopKind::For);
  codegen::Kernel tiled = generate("tiled1d");
  CHECK(tiled.loops.at(1).kind == LoopKind::Block); // copy: 18 elements, 18 work-items
  CHECK(tiled.loops.at(2).kind == LoopKind::If);    // compute: 16 elements, 18 work-items
  CHECK(kind_of(generate("private_chunk"), "mapSeq") == LoopKind::Unrolled);
}

TEST_CASE("barriers only where work-items read each other's local data") {
  CHECK(generate("tiled1d").census.barriers == 1);
  CHECK(generate("local_private").census.barriers == 0);
  CHECK(generate("chunks").census.barriers == 0);
  // The barrier follows the copy into local memory, before the reads.
  std::string src = generate("tiled1d").source;
  CHECK(src.find("barrier(CLK_LOCAL_MEM_FENCE)") > src.find("lcl_2[lid0_3] ="));
  CHECK(src.find("barrier(CLK_LOCAL_MEM_FENCE)") < src.find("acc_5 = add"));
}

TEST_CASE("a mapLcl nested in a mapLcl synchronises before its result is reduced") {
  for (bool tied : {true, false}) {
    CAPTURE(tied);
    codegen::Kernel k = generate("nested_lcl_reduce", tied);
    const std::string& src = k.source;
    // The products go to a global temporary other work-items read: a global fence after the
    // inner loop's last store, before the reduction's first load.
    const size_t fence = src.find("barrier(CLK_GLOBAL_MEM_FENCE)");
    REQUIRE(fence != std::string::npos);
    CHECK(fence > src.find("tmp_4[((9 * N * wg1_1) + lid0_5"));
    CHECK(fence < src.find("acc_6 = add"));
    // Recorded inside the mapLcl1, so that launches can be checked against it.
    bool inside_lcl1 = false;
    for (const codegen::BarrierRecord& b : k.barriers)
      for (const codegen::LoopContext& loop : b.loops)
        inside_lcl1 = inside_lcl1 || loop.primitive == "mapLcl1";
    CHECK(inside_lcl1);
  }
}

TEST_CASE("divergent_barrier refuses local sizes that split a barrier's loop unevenly") {
  const std::map<std::string, int64_t, std::less<>> sizes{{"M", 16}, {"N", 16}};
  codegen::Kernel free = generate("nested_lcl_reduce", false);
  // The mapLcl1 holding the barrier runs 4 iterations over all work-items.
  CHECK_FALSE(codegen::divergent_barrier(free, {32, 1, 1}, sizes));
  CHECK_FALSE(codegen::divergent_barrier(free, {16, 2, 1}, sizes));
  CHECK_FALSE(codegen::divergent_barrier(free, {1, 4, 1}, sizes));
  std::optional<std::string> eight = codegen::divergent_barrier(free, {8, 8, 1}, sizes);
  REQUIRE(eight);
  CHECK(eight->find("local size 8 in dimension 1 does not divide the 4 iterations of mapLcl1") !=
        std::string::npos);
  CHECK(codegen::divergent_barrier(free, {8, 3, 1}, sizes));
  CHECK(codegen::divergent_barrier(free, {8, 0, 1}, sizes)); // the runtime's choice: unknown
  // The tied kernel runs each loop once per work-item (blocks), and barriers outside any mapLcl
  // (a local tile) never diverge.
  CHECK_FALSE(codegen::divergent_barrier(generate("nested_lcl_reduce"), {9, 4, 1}, sizes));
  CHECK_FALSE(codegen::divergent_barrier(generate("tiled1d"), {18, 1, 1}, {{"N", 64}}));
}

TEST_CASE("index_overflow bounds every intermediate of an index at concrete sizes") {
  codegen::Kernel k = generate("wide_index");
  CHECK_FALSE(codegen::index_overflow(k, {{"M", 2048}, {"N", 2048}}));
  std::optional<std::string> why = codegen::index_overflow(k, {{"M", 4096}, {"N", 4096}});
  REQUIRE(why);
  CHECK(why->find("an index of tmp_4 reaches 4.8") != std::string::npos);
  // 200 * N * wg1 with wg1 < M /^ 8: 4.2e8 at 4096^2, 2.6e9 (over) at 10240^2.
  codegen::Kernel fitting = generate("fitting_index", false);
  CHECK_FALSE(codegen::index_overflow(fitting, {{"M", 4096}, {"N", 4096}}));
  CHECK(codegen::index_overflow(fitting, {{"M", 10240}, {"N", 10240}}));
  // Unknown sizes bound nothing; plain kernels fit until their indices do not.
  CHECK_FALSE(codegen::index_overflow(k, {}));
  codegen::Kernel clamp = generate("clamp2d");
  CHECK_FALSE(codegen::index_overflow(clamp, {{"M", 8192}, {"N", 8192}}));
  CHECK(codegen::index_overflow(clamp, {{"M", 65536}, {"N", 65536}}));
}

TEST_CASE("index_overflow divides by constant divisors and bounds remainders by the divisor") {
  // The index of a 9-grid AoSoA(32) group (288 floats per block of 32 columns) at 4096^2 reaches
  // 9 * 4096^2 = 1.5e8; the bound once took (N + 31) / 32 as N + 31 and saw 4.9e9.
  using namespace arith;
  const Expr n = size_var("N");
  const Expr row_group = range_var("gid0", cst(0), exact_div(size_var("M"), cst(4)));
  const Expr row_in_group = range_var("i", cst(0), cst(4));
  const Expr column = range_var("col", cst(0), n);
  const Expr blocks = (n + cst(31)) / cst(32);
  codegen::Kernel k;
  k.accesses.push_back({"aosoa_d0", codegen::AddressSpace::Global,
                        cst(1152) * row_group * blocks + cst(288) * row_in_group * blocks +
                            cst(288) * (column / cst(32)) + column % cst(32)});
  CHECK_FALSE(codegen::index_overflow(k, {{"M", 4096}, {"N", 4096}}));
  // Still an overflow where the true index is one: 9 * 20480^2 = 3.8e9.
  CHECK(codegen::index_overflow(k, {{"M", 20480}, {"N", 20480}}));
  // A remainder is no larger than its divisor, nor than its dividend.
  codegen::Kernel remainder;
  remainder.accesses.push_back(
      {"r", codegen::AddressSpace::Global, cst(1 << 20) * (range_var("j", cst(0), n) % cst(8))});
  CHECK_FALSE(codegen::index_overflow(remainder, {{"N", 1 << 30}}));
}

TEST_CASE("boundary code only where an access can leave the array") {
  std::string interior = generate("interior").source;
  CHECK(count(interior, "?") == 0);
  CHECK(count(interior, "min(") == 0);
  std::string clamp = generate("clamp2d").source;
  CHECK(count(clamp, "max(") == 1); // the north neighbour
  CHECK(count(clamp, "min(") == 1); // the south neighbour
  std::string tiled = generate("tiled1d").source;
  CHECK(count(tiled, "? arg[") == 1); // constant padding guards the copy's load
}

TEST_CASE("size variables are kernel arguments; local buffers report their size") {
  codegen::Kernel k = generate("tiled1d");
  CHECK(k.args.back().role == codegen::KernelArg::Role::Size);
  CHECK(k.args.back().name == "N");
  CHECK(k.local_bytes() == arith::Expr(72));
  CHECK(k.launch.local[0] == arith::Expr(18));
}

TEST_CASE("programs that are not lowered or not lowerable are refused with a location") {
  struct Case {
    const char* source;
    const char* message;
    int line;
  };
  const Case cases[] = {
      {"userfun f(x: float): float { return x; }\ndef p(x: [float]N) =\n  map(f, x)",
       "map is not lowered", 3},
      {"def p(x: [float]N) =\n  join(mapGlb0(reduce(add, 0.0f), slide(3, 1, x)))",
       "reduce is not lowered", 2},
      {"def p(x: [float]N) =\n  join(mapGlb0(mapLcl0(id), split(4, x)))", "mapLcl0 outside mapWrg0",
       2},
      {"def p(x: [float]N) =\n  join(mapGlb0(c => mapSeq(id, toLocal(mapSeq(id))(c)), split(4, "
       "x)))",
       "toLocal outside mapWrg", 2},
      {"def p(x: [float]N) =\n  join(mapGlb0(mapGlb0(id), split(4, x)))",
       "mapGlb0 nested inside mapGlb0", 2},
      {"def p(x: [float]N) = split(4, x)", "pure data layout", 1},
  };
  for (const Case& c : cases) {
    CAPTURE(c.source);
    ir::Module m = parse::parse_module(c.source, "prog.lift");
    try {
      codegen::generate(m.main());
      FAIL("not refused");
    } catch (const UserError& e) {
      CHECK(std::string(e.what()).find(c.message) != std::string::npos);
      CHECK(e.loc().file == "prog.lift");
      CHECK(e.loc().line == c.line);
      INFO(e.what());
    }
  }
}

TEST_CASE("launches the device cannot take are refused before running") {
  ir::Module m = load("tiled1d");
  target::DeviceProfile small;
  small.max_work_group_size = 1024;
  small.max_work_item_sizes = {1024, 1024, 1024};
  small.local_mem_bytes = 64; // the tile needs 72 bytes
  Sizes sizes{{"N", 64}};
  try {
    codegen::prepare_launch(m.main(), sizes, {}, small.limits());
    FAIL("not refused");
  } catch (const UserError& e) {
    std::string what = e.what();
    CHECK(what.find("72 bytes") != std::string::npos);
    CHECK(what.find("toLocal at") != std::string::npos);
  }
  small.local_mem_bytes = 1 << 16;
  small.max_work_group_size = 16; // the kernel needs 18 work-items
  CHECK_THROWS_WITH_AS(codegen::prepare_launch(m.main(), sizes, {}, small.limits()),
                       doctest::Contains("work-group of 18"), UserError);
  exec::RunOptions bad_local;
  bad_local.global = {72};
  bad_local.local = {5};
  small.max_work_group_size = 1024;
  CHECK_THROWS_WITH_AS(
      codegen::prepare_launch(m.main(), sizes, bad_local.request(), small.limits()),
      doctest::Contains("does not divide"), UserError);
}

TEST_CASE("a launch that leaves the work-group to the runtime is checked at smaller sizes under "
          "the same rule") {
  // explore checks a large product at smaller sizes; its default lowering asks no local size.
  ir::Module m = parse::parse_module("userfun sq(x: float): float { return x * x; }\n"
                                     "def p(in: [float]N) = mapGlb0(sq, in)",
                                     "runtime-local.lift");
  const DeviceLimits cpu = runtime::named_profile("cpu").limits();
  const codegen::PreparedLaunch prepared = codegen::prepare_launch(m.main(), {{"N", 64}}, {}, cpu);
  REQUIRE(prepared.launch.local[0] == 0);
  CHECK(codegen::request_for(prepared.launch).local.empty());

  exec::RunOptions options;
  options.time = false;
  options.roofline = false;
  options.check_sizes = {{"N", 16}};
  const exec::RunReport report = exec::run_program(test::pocl(), m.main(), {{"N", 64}}, options);
  INFO(report.message);
  CHECK(report.status == runtime::Status::ok);
  CHECK(report.verification.passed);
  CHECK(report.verification.checked_sizes == Sizes{{"N", 16}});
}

TEST_CASE("shifted tiles: windows read from min(i * step, n - size), rows written back alike, "
          "and the sizes they need checked before a launch") {
  ir::Module m = parse::parse_module("userfun sq(x: float): float { return x * x + 1.0f; }\n"
                                     "def p(in: [float]N) = joinShifted(N, 1, mapGlb0(w => "
                                     "mapSeq(sq, w), slideShifted(4, 4, in)))",
                                     "shifted.lift");
  const codegen::Kernel kernel = codegen::generate(m.main());
  CHECK(kernel.source.find("min(") != std::string::npos);
  REQUIRE(kernel.size_conditions.size() == 3);
  exec::RunOptions options;
  options.time = false;
  options.roofline = false;
  // 4 divides 12; 13 and 10 shift the last tile back (by 3 and 2), which rewrites its
  // neighbour's outputs with the same values.
  for (const int64_t n : {int64_t(12), int64_t(13), int64_t(10)}) {
    CAPTURE(n);
    const exec::RunReport report = exec::run_program(test::pocl(), m.main(), {{"N", n}}, options);
    INFO(report.message);
    CHECK(report.status == runtime::Status::ok);
    CHECK(report.verification.passed);
    CHECK(report.verification.elements == n);
  }
  // 4 elements: one tile, not the margin of 1 past it; 4 <= N < 5 has no launch.
  const DeviceLimits cpu = runtime::named_profile("cpu").limits();
  CHECK_THROWS_WITH_AS(codegen::prepare_launch(m.main(), {{"N", 4}}, {}, cpu),
                       doctest::Contains("start at least its margin in"), UserError);
  CHECK_NOTHROW(codegen::prepare_launch(m.main(), {{"N", 5}}, {}, cpu));
}

TEST_CASE("launches whose work-group would need more registers than the device has are refused") {
  // 128 floats of private memory per work-item: about 144 registers, so a GPU's 65,536 hold
  // work-groups of up to 455 work-items.
  ir::Module m = parse::parse_module(
      "userfun sq(x: float): float { return x * x; }\n"
      "def p(in: [float]N) = join(mapGlb0(c => mapSeq(id, toPrivate(mapSeq(sq))(c)), split(128, "
      "in)))",
      "registers.lift");
  const codegen::Kernel kernel = codegen::generate(m.main(), codegen::Options{true});
  CHECK(kernel.private_bytes == 512);
  CHECK(codegen::estimated_registers_per_work_item(kernel) == 144);
  const Sizes sizes{{"N", 128 * 4096}};
  auto launch_of = [](int64_t local) {
    codegen::Launch l;
    l.global[0] = 4096;
    l.local[0] = local;
    return l;
  };
  const DeviceLimits gpu = runtime::named_profile("nvidia").limits();
  CHECK(gpu.register_words == 65536);
  std::optional<codegen::LaunchRefusal> refused =
      codegen::launch_refusal(kernel, launch_of(512), sizes, gpu);
  REQUIRE(refused);
  CHECK(refused->reason == "registers over limit");
  CHECK(refused->message.find("512 bytes of private memory") != std::string::npos);
  CHECK_FALSE(codegen::launch_refusal(kernel, launch_of(256), sizes, gpu));
  // A CPU has no such limit; a probed GPU that reports its registers is held to them.
  CHECK_FALSE(codegen::launch_refusal(kernel, launch_of(512), sizes,
                                      runtime::named_profile("cpu").limits()));
  target::DeviceProfile reported = runtime::named_profile("nvidia");
  reported.registers_per_work_group = 32768;
  CHECK(codegen::launch_refusal(kernel, launch_of(256), sizes, reported.limits()));
  // The estimate prunes the space; a launch a user asks for explicitly goes to the device.
  exec::RunOptions explicit_local;
  explicit_local.local = {512};
  CHECK(codegen::prepare_launch(m.main(), sizes, explicit_local.request(), gpu).launch.local[0] ==
        512);
}

TEST_CASE("every array access is recorded with its enclosing loops") {
  using codegen::AddressSpace;
  codegen::Kernel chunks = generate("chunks");
  REQUIRE(chunks.accesses.size() == 2);
  const codegen::MemoryAccess& load = chunks.accesses[0];
  const codegen::MemoryAccess& store = chunks.accesses[1];
  CHECK(load.buffer == "in");
  CHECK_FALSE(load.is_store);
  CHECK(store.is_store);
  CHECK(store.space == AddressSpace::Global);
  REQUIRE(load.loops.size() == 2);
  CHECK(load.loops[0].primitive == "mapGlb0");
  CHECK(load.loops[1].primitive == "mapSeq");
  // The index is 4*gid + i over the loop variables.
  CHECK(load.index == 4 * load.loops[0].var + load.loops[1].var);

  codegen::Kernel tiled = generate("tiled1d");
  int global_loads = 0, local_loads = 0, local_stores = 0, global_stores = 0;
  for (const codegen::MemoryAccess& a : tiled.accesses) {
    if (a.space == AddressSpace::Global)
      (a.is_store ? global_stores : global_loads)++;
    if (a.space == AddressSpace::Local)
      (a.is_store ? local_stores : local_loads)++;
  }
  CHECK(global_loads == 1);  // the copy reads the padded input once per element
  CHECK(local_stores == 1);  // ... into the tile
  CHECK(local_loads == 3);   // the reduction (3 steps, unrolled) reads the tile once per step
  CHECK(global_stores == 1); // one output per work-item
  REQUIRE(tiled.barriers.size() == 1);
  CHECK(tiled.barriers[0].loops.size() == 1); // inside the mapWrg only
  // A reduction's loads sit inside its loop.
  for (const codegen::MemoryAccess& a : tiled.accesses)
    if (a.space == AddressSpace::Local && !a.is_store) {
      CHECK(a.loops.back().primitive == "reduceSeq");
      CHECK(a.loops.back().trip == arith::Expr(3));
    }
  // Unrolled copies are recorded one by one.
  codegen::Kernel unrolled = generate("private_chunk");
  int private_stores = 0;
  for (const codegen::MemoryAccess& a : unrolled.accesses)
    private_stores += a.space == AddressSpace::Private && a.is_store;
  CHECK(private_stores == 4);
}

TEST_CASE("instrumented kernels count every access, barrier and loop body per work-item") {
  setenv("LIFTX_CACHE_DIR", (fs::temp_directory_path() / "liftx-test-codegen-cache").c_str(), 1);
  runtime::Device device = runtime::select_device("cpu");
  {
    ir::Module m = load("chunks");
    exec::DynamicCounts d = exec::run_instrumented(device, m.main(), {{"N", 64}}, {});
    REQUIRE(d.work_items == 16);
    const codegen::Instrumentation& inst = *d.kernel.instrumentation;
    REQUIRE(inst.access_slots == 2);
    for (int64_t wi = 0; wi < d.work_items; ++wi) {
      CHECK(d.count(wi, 0) == 4); // four loads of `in`
      CHECK(d.count(wi, 1) == 4); // four stores
      // First executions: element 4*wi, for both the load and the store.
      CHECK(d.first_index[static_cast<size_t>(wi * 2)] == 4 * wi);
    }
    // Loop slots: the mapGlb0 block entered once, the mapSeq body four times.
    CHECK(d.count(0, inst.access_slots + inst.barrier_slots + 0) == 1);
    CHECK(d.count(0, inst.access_slots + inst.barrier_slots + 1) == 4);
  }
  {
    ir::Module m = load("tiled1d");
    exec::DynamicCounts d = exec::run_instrumented(device, m.main(), {{"N", 64}}, {});
    REQUIRE(d.work_items == 72); // 4 work-groups of 18
    const codegen::Instrumentation& inst = *d.kernel.instrumentation;
    REQUIRE(inst.barrier_slots == 1);
    int64_t barriers = 0, local_loads = 0;
    for (int64_t wi = 0; wi < d.work_items; ++wi) {
      barriers += d.count(wi, inst.access_slots);
      for (int a = 0; a < inst.access_slots; ++a)
        if (d.kernel.accesses[a].space == codegen::AddressSpace::Local &&
            !d.kernel.accesses[a].is_store)
          local_loads += d.count(wi, a);
    }
    CHECK(barriers == 72);            // every work-item passes the one barrier
    CHECK(local_loads == 4 * 16 * 3); // 16 computing work-items per group, 3 reads each
  }
}
