// Host-side iteration: a program `iterate(T, f, p)` over one of its parameters runs as T launches
// of f's kernel, two buffers swapped between launches. Detection and rewrapping in the IR, the
// kernel's launch count, and runs on PoCL verified against the interpreter's iterate (which
// applies f T times) for launch counts of both parities, timed too.
#include "codegen/kernel.hpp"
#include "exec/run.hpp"
#include "ir/host_iteration.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include "pocl.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

using namespace liftx;

namespace {

const char* const kUserFuns = R"(
userfun avg3(a: float, b: float, c: float): float { return 0.25f * a + 0.5f * b + 0.25f * c; }
userfun twice(a: float): float { return 2.0f * a; }
userfun addq(a: float, q: float): float { return a + q; }
)";

ir::Program parse_main(const std::string& text) {
  return parse::parse_module(std::string(kUserFuns) + text, "<test>").main();
}

/// A lowered 1D smoother iterated `steps` times: global threads, one point each.
std::string smoother(int64_t steps, const std::string& boundary = "clamp") {
  return fmt::format("def smooth(xs: [float]N) = iterate({}, x => mapGlb0(w => avg3(w[0], w[1], "
                     "w[2]), slide(3, 1, pad(1, 1, {}, x))), xs)",
                     steps, boundary);
}

} // namespace

TEST_CASE("host_iteration finds iterate over a parameter at the top of a program") {
  const ir::Program p = parse_main(smoother(3));
  const std::optional<ir::HostIteration> h = ir::host_iteration(p);
  REQUIRE(h);
  CHECK(h->count == 3);
  CHECK(h->input == 0);
  // The step: the program's parameters with the iterated one replaced, the step's body.
  CHECK(h->step.params.size() == 1);
  CHECK(h->step.result_type() == h->step.params[0].type());
  CHECK(ir::print(h->step.body).starts_with("mapGlb0("));
  // Wrapping the step back gives the program again.
  CHECK(ir::alpha_equal(ir::iterate_step(h->step, h->count, h->input), p));

  // The iterated parameter need not be the first; the others stay free in the step.
  const ir::Program second =
      parse_main("def s(q: [float]N, xs: [float]N) = iterate(2, x => mapGlb0((a, b) => addq(a, b), "
                 "zip(x, q)), xs)");
  const std::optional<ir::HostIteration> h2 = ir::host_iteration(second);
  REQUIRE(h2);
  CHECK(h2->input == 1);
  CHECK(ir::alpha_equal(ir::iterate_step(h2->step, h2->count, h2->input), second));

  // An eta-reduced step is applied to a parameter of its own.
  const ir::Program eta = parse_main("def e(xs: [float]N) = iterate(4, mapGlb0(twice), xs)");
  const std::optional<ir::HostIteration> h3 = ir::host_iteration(eta);
  REQUIRE(h3);
  CHECK(h3->count == 4);
  CHECK(ir::print(h3->step.body).starts_with("mapGlb0(twice"));
}

TEST_CASE("an iterate over another iterate's result is a host iteration with a tail") {
  // Three launches of one step, then two of another (temporal blocking's remainder has this
  // form: fused steps, then the steps left over).
  const ir::Program p = parse_main(
      "def t(xs: [float]N) = iterate(2, y => mapGlb0(twice, y), iterate(3, x => mapGlb0(w => "
      "avg3(w[0], w[1], w[2]), slide(3, 1, pad(1, 1, clamp, x))), xs))");
  const std::optional<ir::HostIteration> h = ir::host_iteration(p);
  REQUIRE(h);
  CHECK(h->count == 3);
  CHECK(h->tail_count == 2);
  REQUIRE(h->tail);
  CHECK(ir::print(h->tail->body).starts_with("mapGlb0(twice"));
  // Wrapping both steps back gives the program again, and it prints and parses back.
  const ir::Program wrapped = ir::iterate_steps(h->step, 3, *h->tail, 2, h->input);
  CHECK(ir::alpha_equal(wrapped, p));
  CHECK(ir::alpha_equal(parse_main(ir::print(wrapped)), p));

  const codegen::Kernel k = codegen::generate(p);
  CHECK(k.launches == 3);
  REQUIRE(k.tail);
  CHECK(k.tail->launches == 2);
  CHECK(k.total_launches() == 5);
  CHECK(k.tail->source == codegen::generate(*h->tail).source);

  // Every split of the launches between the two kernels, both parities: verified against the
  // interpreter's nested iterate.
  for (int64_t head : {1, 2, 3})
    for (int64_t tail : {1, 2}) {
      CAPTURE(head);
      CAPTURE(tail);
      const ir::Program program = parse_main(fmt::format(
          "def t(q: [float]N, xs: [float]N) = iterate({}, y => mapGlb0((a, b) => addq(a, b), "
          "zip(y, q)), iterate({}, x => mapGlb0(w => avg3(w[0], w[1], w[2]), slide(3, 1, pad(1, "
          "1, mirror, x))), xs))",
          tail, head));
      exec::RunOptions o;
      o.warmup = 0;
      o.repeat = 1;
      o.roofline = false;
      const exec::RunReport r = exec::run_program(test::pocl(), program, {{"N", 29}}, o);
      INFO(r.message);
      CHECK(r.status == runtime::Status::ok);
      CHECK(r.verification.passed);
      CHECK(r.launches == head + tail);
    }
}

TEST_CASE("host_iteration refuses what is not an iterate over a parameter") {
  // Not at the top: an iterate inside each work-item's chunk is the kernel's own loop.
  CHECK_FALSE(ir::host_iteration(
      parse_main("def c(xs: [float]N) = join(mapGlb0(chunk => iterate(3, mapSeq(twice), chunk), "
                 "split(4, xs)))")));
  // Over a computed value, not a parameter.
  CHECK_FALSE(ir::host_iteration(
      parse_main("def v(xs: [float]N) = iterate(2, mapGlb0(twice), mapGlb0(twice, xs))")));
  // Zero steps launch nothing.
  CHECK_FALSE(
      ir::host_iteration(parse_main("def z(xs: [float]N) = iterate(0, mapGlb0(twice), xs)")));
  // A plain program.
  CHECK_FALSE(ir::host_iteration(parse_main("def p(xs: [float]N) = mapGlb0(twice, xs)")));
}

TEST_CASE("the kernel of an iterated program is its step's, launched T times") {
  const ir::Program p = parse_main(smoother(5));
  const codegen::Kernel k = codegen::generate(p);
  CHECK(k.launches == 5);
  CHECK(k.iterated_input == 0);
  const codegen::Kernel step = codegen::generate(ir::host_iteration(p)->step);
  CHECK(k.source == step.source);
  CHECK(step.launches == 1);
  CHECK(step.iterated_input == -1);
  // A step that ignores the iterated grid still binds it (every parameter is an argument).
  const ir::Program constant_step =
      parse_main("def k(xs: [float]N, q: [float]N) = iterate(3, x => mapGlb0(twice, q), xs)");
  CHECK(codegen::generate(constant_step).launches == 3);
}

TEST_CASE("iterated kernels verify against the interpreter's iterate for odd and even counts") {
  for (int64_t steps : {1, 2, 3, 6})
    for (const char* boundary : {"clamp", "wrap", "mirror", "constant(0.5f)"}) {
      CAPTURE(steps);
      CAPTURE(boundary);
      const ir::Program p = parse_main(smoother(steps, boundary));
      exec::RunOptions o;
      o.warmup = 1;
      o.repeat = 2;
      o.roofline = false;
      exec::RunReport r = exec::run_program(test::pocl(), p, {{"N", 37}}, o);
      INFO(r.message);
      CHECK(r.status == runtime::Status::ok);
      CHECK(r.verification.passed);
      CHECK(r.verification.elements == 37);
      CHECK(r.launches == steps);
      REQUIRE(r.timing);
      CHECK(r.timing->samples_ms.size() == 2);
      // Every launch reads its input and writes its output once.
      CHECK(r.bytes_moved == doctest::Approx(2.0 * 37 * 4 * static_cast<double>(steps)));
    }
  // A step with a second, never iterated grid: it is read at every launch.
  const ir::Program source =
      parse_main("def s(q: [float]N, xs: [float]N) = iterate(3, x => mapGlb0((a, b) => addq(a, b), "
                 "zip(x, q)), xs)");
  exec::RunOptions o;
  o.time = false;
  o.roofline = false;
  exec::RunReport r = exec::run_program(test::pocl(), source, {{"N", 20}}, o);
  INFO(r.message);
  CHECK(r.status == runtime::Status::ok);
  CHECK(r.launches == 3);
}

TEST_CASE("a wrong number of launches is caught by the check") {
  // The kernel of 3 steps verified against 2 steps of the same smoother must fail.
  const ir::Program three = parse_main(smoother(3));
  const ir::Program two = parse_main(smoother(2));
  exec::RunOptions o;
  o.time = false;
  o.roofline = false;
  o.reference = &two;
  exec::RunReport r = exec::run_program(test::pocl(), three, {{"N", 33}}, o);
  CHECK(r.status == runtime::Status::wrong_result);
}

TEST_CASE("a failed check says when the reference itself amplifies rounding") {
  // Each step multiplies an alternating pattern by 4.8: after 24 steps rounding differences near
  // the result's zero crossings are far beyond the tolerance. The kernel's centre weight is one
  // ulp off (3.0000002f), as a kernel's own rounding would be.
  auto unstable = [](const char* centre) {
    return parse::parse_module(
               fmt::format("userfun amp(a: float, b: float, c: float): float {{ return 0.9f * a "
                           "- {} * b + 0.9f * c; }}\ndef amp24(xs: [float]N) = iterate(24, x => "
                           "mapGlb0(w => amp(w[0], w[1], w[2]), slide(3, 1, pad(1, 1, clamp, "
                           "x))), xs)",
                           centre),
               "<test>")
        .main();
  };
  const ir::Program reference = unstable("3.0f");
  const ir::Program kernel = unstable("3.0000002f");
  exec::RunOptions o;
  o.time = false;
  o.roofline = false;
  o.reference = &reference;
  const exec::RunReport r = exec::run_program(test::pocl(), kernel, {{"N", 4096}}, o);
  INFO(r.message);
  CHECK(r.status == runtime::Status::wrong_result);
  CHECK(r.verification.reference_ill_conditioned);
  CHECK(r.message.find("the reference itself is ill-conditioned") != std::string::npos);
  CHECK(exec::report_from_json(exec::to_json(r)).verification.reference_ill_conditioned);
  // A check that passed on fewer steps for that reason says so where it is recorded.
  exec::Verification shortened;
  shortened.checked = shortened.passed = shortened.reference_ill_conditioned = true;
  shortened.steps_checked = 9;
  shortened.steps = 64;
  CHECK(exec::describe_check(shortened) ==
        "checked on 9 of 64 steps (over every step the reference is ill-conditioned)");
  shortened.reference_ill_conditioned = false;
  CHECK(exec::describe_check(shortened) == "checked on 9 of 64 steps");
  // A wrong kernel against a smoother, which damps rounding: only the mismatch is reported.
  const ir::Program three = parse_main(smoother(3));
  const ir::Program two = parse_main(smoother(2));
  o.reference = &two;
  const exec::RunReport wrong = exec::run_program(test::pocl(), three, {{"N", 33}}, o);
  CHECK(wrong.status == runtime::Status::wrong_result);
  CHECK_FALSE(wrong.verification.reference_ill_conditioned);
  CHECK(wrong.message.find("ill-conditioned") == std::string::npos);
}

TEST_CASE("iterating a tuple of grids on the host is refused clearly") {
  const ir::Program p = parse_main(
      "def t(xs: [float]N, ys: [float]N) = iterate(2, z => mapGlb0((a, b) => tuple(twice(a), "
      "twice(b)), z), zip(xs, ys))");
  // zip(xs, ys) is not a parameter: no host iteration, and the kernel-level iterate refuses.
  CHECK_FALSE(ir::host_iteration(p));
  CHECK_THROWS_AS(codegen::generate(p), UserError);
}
