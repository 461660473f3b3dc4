// The public C++ API on PoCL at small sizes: compile and run a DSL stencil against a plain C++
// loop, existing OpenCL buffers, errors as exceptions with clear messages, in-application tuning
// (a stored winner is reused without running anything; other sizes tune again), and use from
// several threads. Only the public headers are included.
#include <liftx/liftx.hpp>

#include "api_test_helpers.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace liftx;
using namespace liftx_api_test;

namespace {

/// The heat-diffusion step: each point moves towards the mean of its four neighbours; the grid
/// is padded with `border` (cold walls).
Program heat_program(float alpha) {
  using namespace liftx::dsl;
  const std::string body =
      "return c + " + std::to_string(alpha) + "f * (n + s + e + w - 4.0f * c);";
  Fn heat = userfun("heat_point",
                    {{"c", ScalarKind::Float},
                     {"n", ScalarKind::Float},
                     {"s", ScalarKind::Float},
                     {"e", ScalarKind::Float},
                     {"w", ScalarKind::Float}},
                    ScalarKind::Float, body);
  return program("heat2d", {{"grid", array_of(Type::float_(), "N", "M")}}, [&](Expr grid) {
    return map2D(
        Fn({"nbh"},
           [&](Expr nbh) { return heat(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]); }),
        slide2D(3, 1, pad2D(1, 1, constant(0.0f), grid)));
  });
}

/// The same step as a plain loop over an m x n row-major grid.
std::vector<float> heat_step(const std::vector<float>& g, int64_t m, int64_t n, float alpha) {
  auto at = [&](int64_t y, int64_t x) {
    return y < 0 || y >= m || x < 0 || x >= n ? 0.0f : g[size_t(y * n + x)];
  };
  std::vector<float> out(g.size());
  for (int64_t y = 0; y < m; ++y)
    for (int64_t x = 0; x < n; ++x) {
      const float c = at(y, x);
      out[size_t(y * n + x)] =
          c + alpha * (at(y - 1, x) + at(y + 1, x) + at(y, x + 1) + at(y, x - 1) - 4.0f * c);
    }
  return out;
}

constexpr float kAlpha = 0.2f;
const Sizes kSizes = {{"M", 24}, {"N", 40}}; // not square: a transposition would show

} // namespace

TEST_CASE("api: devices are listed and a Context opens PoCL; an unknown device is a UserError") {
  const std::vector<DeviceInfo> all = devices();
  REQUIRE_FALSE(all.empty());
  Context ctx("cpu");
  CHECK(ctx.device().type == "cpu");
  CHECK_FALSE(ctx.device().key.empty());
  CHECK(ctx.opencl_context() != nullptr);
  CHECK(ctx.opencl_queue() != nullptr);
  const std::string message = message_of<UserError>([] { Context bad("no-such-device-anywhere"); });
  CHECK(contains(message, "no-such-device-anywhere"));
}

TEST_CASE("api: a DSL stencil compiles, runs on host arrays, and matches a plain C++ loop") {
  Context ctx("cpu");
  const Program p = heat_program(kAlpha);
  Kernel k = ctx.compile(p, kSizes);
  CHECK(k.variant().rfind("global2d_10", 0) == 0); // lowered by the first strategy
  CHECK(k.inputs() == 1);
  CHECK(k.input_size(0) == 24 * 40);
  CHECK(k.input_shape(0) == std::vector<int64_t>{24, 40});
  CHECK(k.output_shape() == std::vector<int64_t>{24, 40});
  CHECK(k.output_kind() == ScalarKind::Float);
  CHECK(contains(k.opencl_source(), "kernel void heat2d"));
  CHECK(contains(k.lowered_program(), "mapGlb"));

  for (uint32_t seed : {1u, 2u}) { // a second run reuses the staging buffers with new data
    const std::vector<float> grid = random_grid(24 * 40, seed);
    std::vector<float> out;
    const RunStats stats = k.run({grid}, out);
    CHECK(stats.kernel_ms > 0);
    CHECK(stats.total_ms >= stats.kernel_ms);
    CHECK(max_difference(out, heat_step(grid, 24, 40, kAlpha)) < 1e-5);
  }
  // A fixed-size span as the output.
  const std::vector<float> grid = random_grid(24 * 40, 3);
  std::vector<float> out(24 * 40, 0.0f);
  k.run({grid}, std::span<float>(out));
  CHECK(max_difference(out, heat_step(grid, 24, 40, kAlpha)) < 1e-5);

  const ContextStats stats = ctx.stats();
  CHECK(stats.compiles == 1);
  CHECK(stats.verifications == 1);
  CHECK(stats.runs == 3);
}

TEST_CASE("api: a 3D stencil compiles to a 3D NDRange and matches a loop on a non-cubic grid") {
  Context ctx("cpu");
  const Program p = load_program(LIFTX_SOURCE_DIR "/tests/space/programs/j3d7pt.lift");
  const int64_t nz = 6, ny = 8, nx = 12;
  Kernel k = ctx.compile(p, {{"M", nz}, {"N", ny}, {"O", nx}});
  CHECK(k.variant().rfind("global3d_210", 0) == 0);
  const std::vector<float> g = random_grid(size_t(nz * ny * nx), 11);
  std::vector<float> out;
  k.run({g}, out);
  auto at = [&](int64_t z, int64_t y, int64_t x) { // clamp
    z = std::clamp<int64_t>(z, 0, nz - 1);
    y = std::clamp<int64_t>(y, 0, ny - 1);
    x = std::clamp<int64_t>(x, 0, nx - 1);
    return g[size_t((z * ny + y) * nx + x)];
  };
  std::vector<float> want;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        want.push_back(0.4f * at(z, y, x) +
                       0.1f * (at(z - 1, y, x) + at(z + 1, y, x) + at(z, y - 1, x) +
                               at(z, y + 1, x) + at(z, y, x - 1) + at(z, y, x + 1)));
  CHECK(max_difference(out, want) < 1e-5);
}

TEST_CASE("api: a .lift stencil loads and runs; a lowered program is used as written") {
  Context ctx("cpu");
  const Program p = load_program(LIFTX_SOURCE_DIR "/stencils/jacobi2d5pt.lift");
  Kernel k = ctx.compile(p, {{"M", 16}, {"N", 24}});
  const std::vector<float> g = random_grid(16 * 24, 7);
  std::vector<float> out;
  k.run({g}, out);
  auto at = [&](int64_t y, int64_t x) { // clamp
    y = std::clamp<int64_t>(y, 0, 15);
    x = std::clamp<int64_t>(x, 0, 23);
    return g[size_t(y * 24 + x)];
  };
  std::vector<float> want(g.size());
  for (int64_t y = 0; y < 16; ++y)
    for (int64_t x = 0; x < 24; ++x)
      want[size_t(y * 24 + x)] = (5.0f * at(y - 1, x) + 12.0f * at(y, x - 1) + 15.0f * at(y, x) +
                                  5.0f * at(y + 1, x) + 12.0f * at(y, x + 1)) /
                                 118.0f;
  CHECK(max_difference(out, want) < 1e-5);

  const Program lowered =
      load_program(LIFTX_SOURCE_DIR "/stencils/variants/jacobi2d5pt/tiled_local.lift");
  Kernel tiled = ctx.compile(lowered, {{"M", 32}, {"N", 32}});
  CHECK(tiled.variant().rfind("as written", 0) == 0);
  const std::vector<float> g2 = random_grid(32 * 32, 8);
  std::vector<float> out2;
  tiled.run({g2}, out2);
  CHECK(out2.size() == 32 * 32);
  // print_program parses back to a program of the same identity.
  CHECK(program_identity(parse_program(print_program(p))) == program_identity(p));
}

TEST_CASE("api: grids stored together (a layout clause) are packed from the host inputs") {
  Context ctx("cpu");
  const std::string source = [] {
    std::ifstream in(LIFTX_SOURCE_DIR "/stencils/shallow_water.lift");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const Program apart = parse_program(source);
  const Sizes sizes{{"M", 12}, {"N", 40}};
  std::vector<std::vector<float>> grids;
  for (uint32_t f = 0; f < 3; ++f) { // depths and momenta kept away from zero
    grids.push_back(random_grid(12 * 40, 30 + f));
    for (float& v : grids.back())
      v = 1.5f + 0.5f * v;
  }
  std::vector<float> h0, hu0, hv0;
  ctx.compile(apart, sizes).run({grids[0], grids[1], grids[2]}, {h0, hu0, hv0});
  const std::string header = "def shallow_water(h: [[float]N]M, hu: [[float]N]M, hv: [[float]N]M)";
  for (const std::string layout : {"aos(h, hu, hv)", "aosoa(32, hv, h)"}) {
    CAPTURE(layout);
    std::string stored = source;
    stored.replace(stored.find(header), header.size(), header + " layout " + layout);
    Kernel k = ctx.compile(parse_program(stored), sizes);
    std::vector<float> h, hu, hv;
    k.run({grids[0], grids[1], grids[2]}, {h, hu, hv});
    CHECK(max_difference(h, h0) < 1e-5);
    CHECK(max_difference(hu, hu0) < 1e-5);
    CHECK(max_difference(hv, hv0) < 1e-5);
    // A device Buffer cannot be one of the grids: the group is packed on the host.
    Buffer on_device = ctx.upload(grids[0]);
    CHECK(contains(message_of<UserError>([&] {
                     k.run({on_device, grids[1], grids[2]}, {h, hu, hv});
                   }),
                   "pass its data from the host"));
  }
}

TEST_CASE("api: existing OpenCL buffers are used in place") {
  Context ctx("cpu");
  Kernel k = ctx.compile(heat_program(kAlpha), kSizes);
  const size_t n = 24 * 40;
  const std::vector<float> grid = random_grid(n, 11);
  cl_int err = CL_SUCCESS;
  cl_mem in = clCreateBuffer(ctx.opencl_context(), CL_MEM_READ_WRITE, n * 4, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  cl_mem out = clCreateBuffer(ctx.opencl_context(), CL_MEM_READ_WRITE, n * 4, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  REQUIRE(clEnqueueWriteBuffer(ctx.opencl_queue(), in, CL_TRUE, 0, n * 4, grid.data(), 0, nullptr,
                               nullptr) == CL_SUCCESS);
  Buffer bin = ctx.wrap(in, ScalarKind::Float, n);
  Buffer bout = ctx.wrap(out, ScalarKind::Float, n);
  clReleaseMemObject(in); // the Buffers retain them
  clReleaseMemObject(out);
  k.run({bin}, bout);
  std::vector<float> result(n);
  REQUIRE(clEnqueueReadBuffer(ctx.opencl_queue(), bout.get(), CL_TRUE, 0, n * 4, result.data(), 0,
                              nullptr, nullptr) == CL_SUCCESS);
  CHECK(max_difference(result, heat_step(grid, 24, 40, kAlpha)) < 1e-5);

  // Ping-pong on the device for several steps, as a simulation does.
  Buffer a = ctx.upload(grid), b = ctx.buffer<float>(n);
  std::vector<float> host = grid;
  for (int step = 0; step < 5; ++step) {
    k.run({a}, b);
    std::swap(a, b);
    host = heat_step(host, 24, 40, kAlpha);
  }
  CHECK(max_difference(a.read<float>(), host) < 1e-5);
}

TEST_CASE("api: errors are exceptions with clear messages") {
  Context ctx("cpu");
  Kernel k = ctx.compile(heat_program(kAlpha), kSizes);
  const std::vector<float> grid = random_grid(24 * 40, 5);
  std::vector<float> out;

  CHECK(contains(message_of<UserError>([&] { k.run({}, out); }),
                 "heat2d takes 1 input (grid), got 0"));
  CHECK(contains(message_of<UserError>([&] { k.run({std::vector<float>(5)}, out); }),
                 "needs 960 float elements (24x40), got 5 float elements"));
  CHECK(contains(message_of<UserError>([&] { k.run({std::vector<int32_t>(960)}, out); }),
                 "got 960 int elements"));
  std::vector<float> small(10);
  CHECK(contains(message_of<UserError>([&] { k.run({grid}, std::span<float>(small)); }),
                 "got room for 10 float elements"));
  Buffer same = ctx.upload(grid);
  CHECK(contains(message_of<UserError>([&] { k.run({same}, same); }), "also one of its inputs"));
  Context other("cpu");
  Buffer foreign = other.upload(grid);
  CHECK(contains(message_of<UserError>([&] { k.run({foreign}, out); }), "another Context"));
  cl_int err = CL_SUCCESS;
  cl_mem foreign_mem = clCreateBuffer(other.opencl_context(), CL_MEM_READ_WRITE, 64, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  CHECK(contains(message_of<UserError>([&] { ctx.wrap(foreign_mem, ScalarKind::Float, 16); }),
                 "another OpenCL context"));
  clReleaseMemObject(foreign_mem);
  CHECK(contains(message_of<UserError>([&] { Kernel().run({grid}, out); }), "empty Kernel"));

  const Program p = heat_program(kAlpha);
  CHECK(contains(message_of<UserError>([&] { ctx.compile(p, {{"M", 8}}); }), "missing size N"));
  CHECK(contains(message_of<UserError>([&] {
                   ctx.compile(p, {{"M", 8}, {"N", 8}, {"K", 2}});
                 }),
                 "unknown size K"));
  CHECK(contains(message_of<UserError>([&] {
                   ctx.compile(p, {{"M", 0}, {"N", 8}});
                 }),
                 "size M must be at least 1"));
  CHECK(contains(message_of<UserError>(
                     [] { parse_program("def f(a: [float]N) = map(x => x, b)", "", "bad.lift"); }),
                 "bad.lift:1:"));
  CHECK(contains(message_of<UserError>([] { load_program("/no/such/file.lift"); }),
                 "/no/such/file.lift"));
  CHECK(contains(message_of<UserError>([] {
                   using namespace liftx::dsl;
                   // map2D over a 1D array: a type error when the program is built.
                   program("bad", {{"a", array_of(Type::float_(), "N")}},
                           [](Expr a) { return map2D(Fn([](Expr x) { return x; }), a); });
                 }),
                 "map"));

  TempDir dir("errors");
  ContextOptions options;
  options.tuning_db = (dir.path / "tuning.db").string();
  Context tuned("cpu", options);
  TuneOptions bad;
  bad.budget = 0;
  CHECK(contains(message_of<UserError>([&] { tune(tuned, p, kSizes, bad); }),
                 "budget must be at least 1"));
  CHECK(
      contains(message_of<UserError>([&] { tune(tuned, p, kSizes, {}, {std::vector<float>(3)}); }),
               "needs 960 float elements"));
  TuneOptions missing_model;
  missing_model.model = (dir.path / "none.json").string();
  CHECK(contains(message_of<UserError>([&] { tune(tuned, p, kSizes, missing_model); }),
                 "none.json does not exist"));
}

TEST_CASE("api: tune stores the winner; a second tune reuses it without running anything") {
  TempDir dir("tune");
  ContextOptions options;
  options.tuning_db = (dir.path / "tuning.db").string();
  TuneOptions o;
  o.budget = 2;
  o.max_variants = 300;
  o.repeat = 2;
  const Sizes sizes = {{"M", 16}, {"N", 32}};
  const std::vector<float> grid = random_grid(16 * 32, 21);
  const std::vector<float> want = heat_step(grid, 16, 32, kAlpha);

  Context ctx("cpu", options);
  const Program p = heat_program(kAlpha);
  const TuneResult first = tune(ctx, p, sizes, o, {grid});
  CHECK_FALSE(first.reused);
  CHECK(first.ranked > 0);
  CHECK(first.ranked <= 300);
  REQUIRE(first.trials.size() == 3); // the default lowering, then the budget's 2
  CHECK(first.trials[0].rank == 0);
  CHECK(first.trials[0].variant.rfind("default global2d_10", 0) == 0);
  CHECK(first.trials[1].rank == 1);
  CHECK(first.trials[2].rank == 2);
  CHECK(first.timed_on == "application inputs");
  CHECK(first.median_ms > 0);
  CHECK(contains(first.model, "cpu-model.json"));
  CHECK(fs::exists(first.database));
  CHECK(contains(first.report(), "winner"));
  std::vector<float> out;
  first.kernel.run({grid}, out);
  CHECK(max_difference(out, want) < 1e-5);
  const ContextStats after_first = ctx.stats();
  CHECK(after_first.verifications == int64_t(first.trials.size()));
  CHECK(after_first.timed_variants >= 1);

  // The same program, built again, at the same sizes on the same device: reused.
  const TuneResult second = tune(ctx, heat_program(kAlpha), sizes, o, {grid});
  CHECK(second.reused);
  CHECK(second.trials.empty());
  CHECK(second.key == first.key);
  CHECK(second.variant == first.variant);
  CHECK(second.kernel.variant() == first.variant);
  const ContextStats after_second = ctx.stats();
  CHECK(after_second.verifications == after_first.verifications);   // nothing checked,
  CHECK(after_second.timed_variants == after_first.timed_variants); // timed
  CHECK(after_second.runs == after_first.runs);                     // or run
  out.clear();
  second.kernel.run({grid}, out);
  CHECK(max_difference(out, want) < 1e-5);

  // A later run of the application: a new Context, the same database.
  Context later("cpu", options);
  const TuneResult third = tune(later, p, sizes, o);
  CHECK(third.reused);
  CHECK(later.stats().verifications == 0);
  CHECK(later.stats().runs == 0);

  // Other sizes, or asked to: tuned again.
  const TuneResult other_sizes = tune(ctx, p, {{"M", 16}, {"N", 16}}, o);
  CHECK_FALSE(other_sizes.reused);
  CHECK(other_sizes.key != first.key);
  CHECK(other_sizes.timed_on == "random inputs");
  CHECK(ctx.stats().verifications > after_second.verifications);
  TuneOptions again = o;
  again.retune = true;
  again.budget = 1;
  CHECK_FALSE(tune(ctx, p, sizes, again).reused);
  TuneOptions model_only = o;
  model_only.include_default = false;
  model_only.budget = 1;
  const TuneResult ranked_only = tune(ctx, p, {{"M", 8}, {"N", 16}}, model_only);
  REQUIRE(ranked_only.trials.size() >= 1);
  CHECK(ranked_only.trials[0].rank == 1);
  // A program lowered by hand has no variant space: it is measured as written.
  const Program lowered =
      load_program(LIFTX_SOURCE_DIR "/stencils/variants/jacobi2d5pt/tiled_local.lift");
  const TuneResult as_written = tune(ctx, lowered, {{"M", 32}, {"N", 32}}, o);
  CHECK_FALSE(as_written.reused);
  CHECK(as_written.ranked == 0);
  REQUIRE(as_written.trials.size() == 1);
  CHECK(as_written.trials[0].variant.rfind("default as written", 0) == 0);
  CHECK(contains(as_written.report(), "already lowered"));
  CHECK(tune(ctx, lowered, {{"M", 32}, {"N", 32}}, o).reused);
  // Another program has another identity.
  CHECK(program_identity(heat_program(0.1f)) != program_identity(p));
  CHECK(program_identity(heat_program(kAlpha)) == program_identity(p));
}

TEST_CASE("api: tune reports its progress: ranking, each variant measured, done") {
  TempDir dir("tune_progress");
  ContextOptions options;
  options.tuning_db = (dir.path / "tuning.db").string();
  std::vector<TuneProgress> events;
  std::vector<std::string> trial_variants;
  TuneOptions o;
  o.budget = 2;
  o.max_variants = 5000; // past one progress step of the ranking (4096 variants)
  o.repeat = 2;
  o.on_progress = [&](const TuneProgress& p) {
    events.push_back(p);
    trial_variants.push_back(p.trial ? p.trial->variant : "");
  };
  Context ctx("cpu", options);
  const Sizes sizes = {{"M", 16}, {"N", 32}};
  const TuneResult result = tune(ctx, heat_program(kAlpha), sizes, o);
  REQUIRE_FALSE(events.empty());
  CHECK(events.front().phase == "ranking");
  CHECK(events.front().done == 4096);
  std::vector<size_t> measuring;
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].phase == "measuring")
      measuring.push_back(i);
  REQUIRE(measuring.size() == result.trials.size());
  for (size_t k = 0; k < measuring.size(); ++k) {
    const TuneProgress& e = events[measuring[k]];
    CHECK(e.done == int64_t(k + 1));
    CHECK(e.total >= e.done);
    CHECK(trial_variants[measuring[k]] == result.trials[k].variant);
    if (k > 0)
      CHECK(e.seconds >= events[measuring[k - 1]].seconds);
  }
  CHECK(events.back().phase == "done");
  CHECK(events.back().done == int64_t(result.trials.size()));

  // A stored winner is reused without a word.
  events.clear();
  CHECK(tune(ctx, heat_program(kAlpha), sizes, o).reused);
  CHECK(events.empty());
}

TEST_CASE("api: one Context used from several threads, and a Context per thread") {
  Context shared("cpu");
  Kernel k = shared.compile(heat_program(kAlpha), kSizes);
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const std::vector<float> grid = random_grid(24 * 40, uint32_t(100 + t * 10 + i));
        std::vector<float> out;
        k.run({grid}, out);
        failures[size_t(t)] += max_difference(out, heat_step(grid, 24, 40, kAlpha)) > 1e-5;
      }
    });
  for (int t = 2; t < 4; ++t)
    threads.emplace_back([&, t] {
      Context own("cpu");
      Kernel mine = own.compile(heat_program(kAlpha), {{"M", 8}, {"N", 12}});
      const std::vector<float> grid = random_grid(8 * 12, uint32_t(t));
      std::vector<float> out;
      mine.run({grid}, out);
      failures[size_t(t)] += max_difference(out, heat_step(grid, 8, 12, kAlpha)) > 1e-5;
    });
  for (std::thread& t : threads)
    t.join();
  CHECK(failures == std::vector<int>{0, 0, 0, 0});
  CHECK(shared.stats().runs == 20);
}

// The DSL examples of docs/library.md, built and (where they are whole programs) run against
// plain C++ loops, so the documentation cannot drift from what compiles.
TEST_CASE("api: the DSL examples of docs/library.md build and compute what they say") {
  using namespace liftx::dsl;
  const auto F = ScalarKind::Float;
  const Type vec = array_of(Type::float_(), "N");       // [float]N
  const Type grid = array_of(Type::float_(), "N", "M"); // [[float]N]M: M rows of N
  Fn times2 = userfun("times2", {{"x", F}}, F, "return 2.0f * x;");
  Fn axpy = userfun("axpy", {{"a", F}, {"x", F}, {"y", F}}, F, "return a * x + y;");
  Fn ramp = userfun("ramp", {{"i", ScalarKind::Int}, {"n", ScalarKind::Int}}, F,
                    "return (float)i / (float)n;");

  Context ctx("cpu");
  const std::vector<float> xs = random_grid(64, 31), ys = random_grid(64, 32);
  auto run1 = [&](const Program& p, std::vector<Input> in, const Sizes& sizes) {
    std::vector<float> out;
    ctx.compile(p, sizes).run(in, out);
    return out;
  };
  const Sizes n64 = {{"N", 64}};

  // map, a user function, a C++ lambda
  const Program scale = program("scale", {{"xs", vec}}, [&](Expr xs) { return map(times2, xs); });
  const Program half = program("halve", {{"xs", vec}}, [&](Expr xs) {
    return map([](Expr x) { return mult(x, lit(0.5f)); }, xs);
  });
  // zip: a function of k parameters receives the k components of each tuple
  const Program saxpy = program("saxpy", {{"xs", vec}, {"ys", vec}}, [&](Expr xs, Expr ys) {
    return map(Fn({"x", "y"}, [&](Expr x, Expr y) { return axpy(lit(2.0f), x, y); }), zip(xs, ys));
  });
  // get: a component of a tuple
  const Program sum2 = program("sum2", {{"xs", vec}, {"ys", vec}}, [&](Expr xs, Expr ys) {
    return map(Fn({"p"}, [](Expr p) { return add(get(0, p), get(1, p)); }), zip(xs, ys));
  });
  // slide + pad + at (x[i]): a 3-point moving sum with clamped ends
  const Program smooth = program("smooth", {{"xs", vec}}, [&](Expr xs) {
    return map(Fn({"w"}, [](Expr w) { return add(add(w[0], w[1]), w[2]); }),
               slide(3, 1, pad(1, 1, clamp, xs)));
  });
  // split + join: the same map, chunk by chunk
  const Program chunked = program("chunked", {{"xs", vec}},
                                  [&](Expr xs) { return join(map(map(times2), split(8, xs))); });
  // reduce: one sum per row ([[float]N]M -> [[float]1]M)
  const Program row_sums =
      program("row_sums", {{"g", grid}}, [&](Expr g) { return map(reduce(add, lit(0.0f)), g); });
  // iterate: times2 applied 3 times, inside each work-item's chunk of 4 (an iterate over a whole
  // kernel would need a global synchronisation between iterations)
  const Program times8 = program("times8", {{"xs", vec}}, [&](Expr xs) {
    return join(mapGlb(0,
                       Fn({"chunk"}, [&](Expr chunk) { return iterate(3, mapSeq(times2), chunk); }),
                       split(4, xs)));
  });
  // array: generated values, i / n for i in [0, N)
  const Program ramp_plus = program("ramp_plus", {{"xs", vec}}, [&](Expr xs) {
    Expr r = array(liftx::arith::size_var("N"), ramp);
    return map(Fn({"x", "r"}, [](Expr x, Expr r) { return add(x, r); }), zip(xs, r));
  });
  // transpose and id
  const Program flip =
      program("flip", {{"g", grid}}, [&](Expr g) { return map(map(id()), transpose(g)); });
  // lowered by hand: global threads, and work-groups with a local-memory copy
  const Program scale_glb =
      program("scale_glb", {{"xs", vec}}, [&](Expr xs) { return mapGlb(0, times2, xs); });
  const Program scale_wrg = program("scale_wrg", {{"xs", vec}}, [&](Expr xs) {
    return join(
        mapWrg(0,
               Fn({"chunk"},
                  [&](Expr chunk) { return mapLcl(0, times2, toLocal(mapLcl(0, id()))(chunk)); }),
               split(16, xs)));
  });

  std::vector<float> want(64);
  auto each = [&](auto f) {
    for (size_t i = 0; i < 64; ++i)
      want[i] = f(i);
    return want;
  };
  CHECK(max_difference(run1(scale, {xs}, n64), each([&](size_t i) { return 2 * xs[i]; })) < 1e-6);
  CHECK(max_difference(run1(half, {xs}, n64), each([&](size_t i) { return 0.5f * xs[i]; })) < 1e-6);
  CHECK(max_difference(run1(saxpy, {xs, ys}, n64),
                       each([&](size_t i) { return 2 * xs[i] + ys[i]; })) < 1e-6);
  CHECK(max_difference(run1(sum2, {xs, ys}, n64), each([&](size_t i) { return xs[i] + ys[i]; })) <
        1e-6);
  CHECK(max_difference(run1(smooth, {xs}, n64), each([&](size_t i) {
                         return xs[i == 0 ? 0 : i - 1] + xs[i] + xs[i == 63 ? 63 : i + 1];
                       })) < 1e-5);
  CHECK(max_difference(run1(chunked, {xs}, n64), each([&](size_t i) { return 2 * xs[i]; })) < 1e-6);
  CHECK(max_difference(run1(times8, {xs}, n64), each([&](size_t i) { return 8 * xs[i]; })) < 1e-6);
  CHECK(max_difference(run1(ramp_plus, {xs}, n64),
                       each([&](size_t i) { return xs[i] + float(i) / 64.0f; })) < 1e-6);
  CHECK(max_difference(run1(scale_glb, {xs}, n64), each([&](size_t i) { return 2 * xs[i]; })) <
        1e-6);
  CHECK(max_difference(run1(scale_wrg, {xs}, n64), each([&](size_t i) { return 2 * xs[i]; })) <
        1e-6);
  const Sizes g8x8 = {{"M", 8}, {"N", 8}};
  const std::vector<float> rows = run1(row_sums, {xs}, g8x8);
  REQUIRE(rows.size() == 8);
  for (size_t r = 0; r < 8; ++r) {
    float s = 0;
    for (size_t c = 0; c < 8; ++c)
      s += xs[r * 8 + c];
    CHECK(std::fabs(rows[r] - s) < 1e-5);
  }
  const std::vector<float> flipped = run1(flip, {xs}, g8x8);
  REQUIRE(flipped.size() == 64);
  for (size_t r = 0; r < 8; ++r)
    for (size_t c = 0; c < 8; ++c)
      CHECK(flipped[c * 8 + r] == xs[r * 8 + c]);

  // The 2D and 3D forms type as documented.
  const Type g3 = array_of(Type::float_(), "N", "M", "L");
  const Expr g = ir::param(grid, "g"), h = ir::param(grid, "h"), c = ir::param(g3, "c");
  CHECK(map2D(times2, g).type() == grid);
  CHECK(pad2D(1, 1, mirror, g).type().to_string() == "[[float](N + 2)](M + 2)");
  CHECK(slide2D(3, 1, pad2D(1, 1, wrap, g)).type() ==
        array_of(array_of(Type::float_(), 3, 3), "N", "M"));
  CHECK(zip2D(g, h).type() == array_of(tuple_of(Type::float_(), Type::float_()), "N", "M"));
  CHECK(map3D(times2, c).type() == g3);
  CHECK(slide3D(3, 1, pad3D(1, 1, constant(0.0f), c)).type() ==
        array_of(array_of(Type::float_(), 3, 3, 3), "N", "M", "L"));
  CHECK(zip3D(c, c).type() == array_of(tuple_of(Type::float_(), Type::float_()), "N", "M", "L"));
  CHECK(toGlobal(mapSeq(times2))(ir::param(vec, "v")).type() == vec);
  CHECK(toPrivate(id())(lit(1.0f)).type() == Type::float_());
  CHECK(reduceSeq(mult, lit(1.0f), ir::param(vec, "v")).type() == array_of(Type::float_(), 1));
}

// ---- Programs whose result holds a tuple per point: one output per component --------------------

namespace {

/// Differences and the Laplacian of a clamp-padded grid, per point, in two forms: a tuple of
/// three per point, and a zip2D of two map2D nests over the same windows.
const char* const kGradientSource = R"(
userfun ddx(e: float, w: float): float { return 0.5f * (e - w); }
userfun ddy(s: float, n: float): float { return 0.5f * (s - n); }
userfun lap(c: float, n: float, s: float, e: float, w: float): float {
  return n + s + e + w - 4.0f * c;
}
def grad3(x: [[float]N]M) =
  map2D(w => tuple(ddx(w[1][2], w[1][0]), ddy(w[2][1], w[0][1]),
                   lap(w[1][1], w[0][1], w[2][1], w[1][2], w[1][0])),
        slide2D(3, 1, pad2D(1, 1, clamp, x)))
def grad_zip(x: [[float]N]M) =
  zip2D(map2D(w => ddx(w[1][2], w[1][0]), slide2D(3, 1, pad2D(1, 1, clamp, x))),
        map2D(w => ddy(w[2][1], w[0][1]), slide2D(3, 1, pad2D(1, 1, clamp, x))))
)";

constexpr int64_t kGm = 13, kGn = 21; // not square: a transposition would show
const Sizes kGradSizes = {{"M", kGm}, {"N", kGn}};

/// ddx, ddy and lap of an m x n row-major grid as plain loops (clamped borders).
std::vector<std::vector<float>> gradient_loops(const std::vector<float>& g, int64_t m, int64_t n) {
  auto at = [&](int64_t y, int64_t x) {
    return g[size_t(std::clamp<int64_t>(y, 0, m - 1) * n + std::clamp<int64_t>(x, 0, n - 1))];
  };
  std::vector<std::vector<float>> out(3, std::vector<float>(size_t(m * n)));
  for (int64_t y = 0; y < m; ++y)
    for (int64_t x = 0; x < n; ++x) {
      const size_t i = size_t(y * n + x);
      out[0][i] = 0.5f * (at(y, x + 1) - at(y, x - 1));
      out[1][i] = 0.5f * (at(y + 1, x) - at(y - 1, x));
      out[2][i] = at(y - 1, x) + at(y + 1, x) + at(y, x + 1) + at(y, x - 1) - 4.0f * at(y, x);
    }
  return out;
}

/// Random values of magnitude in [0.5, 1.5) with random signs: no zeros, no two neighbours equal
/// by construction, so an unwritten or misplaced element shows.
std::vector<float> nonzero_grid(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.5f, 1.5f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(count);
  for (float& x : v)
    x = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return v;
}

/// Elements of `got` that differ from `want` by more than 1e-5 (a NaN counts); a wrong length
/// counts every element.
size_t mismatches(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size())
    return std::max(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    bad += !(std::fabs(double(got[i]) - double(want[i])) <= 1e-5);
  return bad;
}

} // namespace

TEST_CASE("api: a tuple result runs as one output per component, on host arrays and Buffers") {
  Context ctx("cpu");
  const Program p = parse_program(kGradientSource, "grad3", "grad.lift");
  Kernel k = ctx.compile(p, kGradSizes); // verified, every component, against the interpreter
  CHECK(ctx.stats().verifications == 1);
  CHECK(k.variant().rfind("global2d_10", 0) == 0);
  REQUIRE(k.outputs() == 3);
  for (size_t c = 0; c < 3; ++c) {
    CHECK(k.output_size(c) == size_t(kGm * kGn));
    CHECK(k.output_shape(c) == std::vector<int64_t>{kGm, kGn});
    CHECK(k.output_kind(c) == ScalarKind::Float);
  }
  CHECK(k.output_shape() == std::vector<int64_t>{kGm, kGn}); // output 0
  CHECK(contains(message_of<UserError>([&] { k.output_size(3); }),
                 "grad3 has 3 outputs; there is no output 3"));

  const size_t n = size_t(kGm * kGn);
  for (uint32_t seed : {41u, 42u}) { // the second run reuses the staging buffers
    const std::vector<float> grid = nonzero_grid(n, seed);
    const std::vector<std::vector<float>> want = gradient_loops(grid, kGm, kGn);
    // Host vectors (resized by the run).
    std::vector<float> dx, dy, lp;
    const RunStats stats = k.run({grid}, {dx, dy, lp});
    CHECK(stats.kernel_ms > 0);
    CHECK(mismatches(dx, want[0]) == 0);
    CHECK(mismatches(dy, want[1]) == 0);
    CHECK(mismatches(lp, want[2]) == 0);
    // Fixed-size spans poisoned with NaN: every element must be written.
    std::vector<std::vector<float>> spans(3, std::vector<float>(n, std::nanf("")));
    k.run({grid},
          {std::span<float>(spans[0]), std::span<float>(spans[1]), std::span<float>(spans[2])});
    for (size_t c = 0; c < 3; ++c)
      CHECK(mismatches(spans[c], want[c]) == 0);
    // Buffers, the input on the device too.
    Buffer in = ctx.upload(grid);
    std::vector<Buffer> outs;
    for (size_t c = 0; c < 3; ++c)
      outs.push_back(ctx.upload(std::vector<float>(n, std::nanf(""))));
    k.run({in}, {outs[0], outs[1], outs[2]});
    for (size_t c = 0; c < 3; ++c)
      CHECK(mismatches(outs[c].read<float>(), want[c]) == 0);
    // Mixed: a Buffer and host arrays.
    std::vector<float> first, last;
    Buffer middle = ctx.buffer<float>(n);
    k.run({grid}, {first, middle, last});
    CHECK(mismatches(first, want[0]) == 0);
    CHECK(mismatches(middle.read<float>(), want[1]) == 0);
    CHECK(mismatches(last, want[2]) == 0);
  }

  // zip2D(map2D(f, g), map2D(h, g)): two outputs.
  const Program zipped = parse_program(kGradientSource, "grad_zip", "grad.lift");
  Kernel kz = ctx.compile(zipped, kGradSizes);
  // Fused into one 2D nest (zip-of-maps), as the variant space does, before it is lowered.
  CHECK(kz.variant().rfind("global2d_10", 0) == 0);
  REQUIRE(kz.outputs() == 2);
  CHECK(kz.output_shape(1) == std::vector<int64_t>{kGm, kGn});
  const std::vector<float> grid = nonzero_grid(n, 43);
  const std::vector<std::vector<float>> want = gradient_loops(grid, kGm, kGn);
  std::vector<float> dx, dy;
  kz.run({grid}, {dx, dy});
  CHECK(mismatches(dx, want[0]) == 0);
  CHECK(mismatches(dy, want[1]) == 0);
  Buffer bx = ctx.buffer<float>(n), by = ctx.buffer<float>(n);
  kz.run({ctx.upload(grid)}, {bx, by});
  CHECK(mismatches(bx.read<float>(), want[0]) == 0);
  CHECK(mismatches(by.read<float>(), want[1]) == 0);
  CHECK(ctx.stats().verifications == 2);

  // A program with one output takes a vector of one Output as well.
  Kernel heat = ctx.compile(heat_program(kAlpha), kSizes);
  CHECK(heat.outputs() == 1);
  const std::vector<float> hgrid = random_grid(24 * 40, 44);
  std::vector<float> hout;
  heat.run({hgrid}, std::vector<Output>{hout});
  CHECK(max_difference(hout, heat_step(hgrid, 24, 40, kAlpha)) < 1e-5);
  std::vector<float> braced;
  heat.run({hgrid}, {braced}); // a braced list of one
  CHECK(max_difference(braced, heat_step(hgrid, 24, 40, kAlpha)) < 1e-5);
}

TEST_CASE("api: misusing the outputs of a tuple result is a UserError that says what to pass") {
  Context ctx("cpu");
  Kernel k = ctx.compile(parse_program(kGradientSource, "grad3", "grad.lift"), kGradSizes);
  const size_t n = size_t(kGm * kGn);
  const std::vector<float> grid = nonzero_grid(n, 51);
  std::vector<float> a, b, c;
  CHECK(contains(message_of<UserError>([&] { k.run({grid}, a); }),
                 "grad3 has 3 outputs (one per tuple component): pass a vector of Outputs"));
  CHECK(contains(message_of<UserError>([&] {
                   k.run({grid}, {a, b});
                 }),
                 "grad3 has 3 outputs (one per tuple component), got 2"));
  CHECK(contains(message_of<UserError>([&] { k.run({grid}, std::vector<Output>{}); }),
                 "grad3 has 3 outputs (one per tuple component), got 0"));
  CHECK(contains(message_of<UserError>([&] { k.run({grid}, {a}); }),
                 "grad3 has 3 outputs (one per tuple component), got 1"));
  std::vector<float> small(5);
  CHECK(contains(message_of<UserError>([&] {
                   k.run({grid}, {a, std::span<float>(small), c});
                 }),
                 "output 1 (component 1 of the result) of grad3 needs 273 float elements (13x21), "
                 "got room for 5"));
  std::vector<int32_t> ints;
  CHECK(contains(message_of<UserError>([&] {
                   k.run({grid}, {a, b, ints});
                 }),
                 "output 2 (component 2 of the result) of grad3 has float elements, got a "
                 "vector of int"));
  CHECK(contains(message_of<UserError>([&] {
                   k.run({grid}, {a, b, a});
                 }),
                 "output 2 (component 2 of the result) of grad3 is the same host array as "
                 "output 0"));
  Buffer in = ctx.upload(grid);
  Buffer x = ctx.buffer<float>(n), y = ctx.buffer<float>(n);
  CHECK(contains(message_of<UserError>([&] {
                   k.run({in}, {x, y, x});
                 }),
                 "is the same Buffer as output 0"));
  CHECK(contains(message_of<UserError>([&] {
                   k.run({in}, {x, y, in});
                 }),
                 "output 2 (component 2 of the result) of grad3 is also one of its inputs"));
  CHECK(contains(message_of<UserError>([&] {
                   k.run({in}, {in, x, y});
                 }),
                 "also one of its inputs"));
  Buffer wrong = ctx.buffer<float>(n + 1);
  CHECK(contains(message_of<UserError>([&] {
                   k.run({in}, {x, wrong, y});
                 }),
                 "output 1 (component 1 of the result) of grad3 needs 273 float elements"));
  CHECK(ctx.stats().runs == 0); // nothing launched

  // A one-output program given several outputs.
  Kernel heat = ctx.compile(heat_program(kAlpha), kSizes);
  CHECK(contains(message_of<UserError>([&] {
                   heat.run({random_grid(24 * 40, 1)}, {a, b});
                 }),
                 "heat2d has 1 output, got 2"));
  CHECK(contains(message_of<UserError>([&] { heat.output_kind(1); }),
                 "heat2d has 1 output; there is no output 1"));
  // Parameters holding tuples are still refused.
  CHECK(contains(
      message_of<NotImplemented>([&] {
        ctx.compile(parse_program("def f(a: [(float, float)]N) = map(p => p, a)"), {{"N", 8}});
      }),
      "parameters holding tuples"));
}

TEST_CASE("api: tune finds, stores and reuses a winner for a tuple result") {
  TempDir dir("tune_tuples");
  ContextOptions options;
  options.tuning_db = (dir.path / "tuning.db").string();
  TuneOptions o;
  o.budget = 2;
  o.max_variants = 300;
  o.repeat = 2;
  o.warmup = 1;
  const size_t n = size_t(kGm * kGn);
  const std::vector<float> grid = nonzero_grid(n, 61);
  const std::vector<std::vector<float>> want = gradient_loops(grid, kGm, kGn);
  Context ctx("cpu", options);

  // Timed on the application's inputs (the variants run through the API's outputs).
  const Program p = parse_program(kGradientSource, "grad3", "grad.lift");
  const TuneResult first = tune(ctx, p, kGradSizes, o, {grid});
  INFO(first.report());
  CHECK_FALSE(first.reused);
  CHECK(first.ranked > 0);
  REQUIRE(first.trials.size() >= 2);
  CHECK(first.timed_on == "application inputs");
  size_t succeeded = 0;
  for (const Trial& t : first.trials)
    succeeded += t.status == "ok";
  CHECK(succeeded >= 2);
  REQUIRE(first.kernel.outputs() == 3);
  std::vector<float> dx, dy, lp;
  first.kernel.run({grid}, {dx, dy, lp});
  CHECK(mismatches(dx, want[0]) == 0);
  CHECK(mismatches(dy, want[1]) == 0);
  CHECK(mismatches(lp, want[2]) == 0);

  // The stored winner is reused, with its three outputs.
  const TuneResult again = tune(ctx, p, kGradSizes, o, {grid});
  CHECK(again.reused);
  REQUIRE(again.kernel.outputs() == 3);
  std::vector<Buffer> outs = {ctx.buffer<float>(n), ctx.buffer<float>(n), ctx.buffer<float>(n)};
  again.kernel.run({grid}, {outs[0], outs[1], outs[2]});
  for (size_t c = 0; c < 3; ++c)
    CHECK(mismatches(outs[c].read<float>(), want[c]) == 0);

  // The zip form, timed on random inputs.
  const TuneResult zipped =
      tune(ctx, parse_program(kGradientSource, "grad_zip", "grad.lift"), kGradSizes, o);
  INFO(zipped.report());
  CHECK_FALSE(zipped.reused);
  CHECK(zipped.timed_on == "random inputs");
  REQUIRE_FALSE(zipped.trials.empty());
  CHECK(zipped.trials[0].variant.rfind("default global2d_10", 0) == 0);
  REQUIRE(zipped.kernel.outputs() == 2);
  dx.clear();
  dy.clear();
  zipped.kernel.run({grid}, {dx, dy});
  CHECK(mismatches(dx, want[0]) == 0);
  CHECK(mismatches(dy, want[1]) == 0);
}

TEST_CASE("api: an iterated stencil runs as one launch per step, compiled and tuned") {
  using namespace liftx::dsl;
  Fn heat = userfun("heat_point",
                    {{"c", ScalarKind::Float},
                     {"n", ScalarKind::Float},
                     {"s", ScalarKind::Float},
                     {"e", ScalarKind::Float},
                     {"w", ScalarKind::Float}},
                    ScalarKind::Float, "return c + 0.2f * (n + s + e + w - 4.0f * c);");
  // heat_program's step iterated 5 times over the grid: iterate(5, g => step(g), grid).
  Fn one_step({"g"}, [&](Expr g) {
    return map2D(
        Fn({"nbh"},
           [&](Expr nbh) { return heat(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]); }),
        slide2D(3, 1, pad2D(1, 1, constant(0.0f), g)));
  });
  const Program iterated = program("heat5", {{"grid", array_of(Type::float_(), "N", "M")}},
                                   [&](Expr grid) { return iterate(5, one_step, grid); });
  const std::vector<float> grid = random_grid(24 * 40, 7);
  std::vector<float> want = grid;
  for (int s = 0; s < 5; ++s)
    want = heat_step(want, 24, 40, kAlpha);

  Context ctx("cpu");
  Kernel k = ctx.compile(iterated, kSizes);
  std::vector<float> out;
  k.run({grid}, out);
  CHECK(max_difference(out, want) < 1e-5);
  // A device input is read, never written: the launches alternate between the output and a
  // buffer of the kernel's own.
  Buffer input = ctx.buffer<float>(grid.size());
  input.write(std::span<const float>(grid));
  Buffer result = ctx.buffer<float>(grid.size());
  k.run({input}, result);
  CHECK(max_difference(result.read<float>(), want) < 1e-5);
  CHECK(max_difference(input.read<float>(), grid) == 0);

  // Three launches, then two of a second kernel (an iterate over an iterate's result: the form of
  // a temporal-blocking remainder) on the same buffers.
  const Program split =
      program("heat3then2", {{"grid", array_of(Type::float_(), "N", "M")}},
              [&](Expr grid) { return iterate(2, one_step, iterate(3, one_step, grid)); });
  Kernel two_kernels = ctx.compile(split, kSizes);
  out.clear();
  two_kernels.run({grid}, out);
  CHECK(max_difference(out, want) < 1e-5);
  two_kernels.run({input}, result);
  CHECK(max_difference(result.read<float>(), want) < 1e-5);
  CHECK(max_difference(input.read<float>(), grid) == 0);

  TempDir dir("tune_iterated");
  ContextOptions options;
  options.tuning_db = (dir.path / "tuning.db").string();
  Context tuning("cpu", options);
  TuneOptions o;
  o.budget = 2;
  o.max_variants = 300;
  o.repeat = 2;
  o.warmup = 1;
  const TuneResult tuned = tune(tuning, iterated, kSizes, o, {grid});
  INFO(tuned.report());
  REQUIRE_FALSE(tuned.trials.empty());
  out.clear();
  tuned.kernel.run({grid}, out);
  CHECK(max_difference(out, want) < 1e-5);
}
