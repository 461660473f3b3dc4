// Tuple results: a program whose result holds several values per point is stored as one output
// buffer per component (struct of arrays). Each kernel is verified on PoCL against the
// interpreter, every output element by element.
#include "codegen/kernel.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"

#include "pocl.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace liftx;

namespace {

const char* const kUserFuns = R"(
userfun neg(a: float): float { return -a; }
userfun sq(a: float): float { return a * a; }
userfun sub(a: float, b: float): float { return a - b; }
userfun mean3(a: float, b: float, c: float): float { return (a + b + c) / 3.0f; }
userfun gradient(w: float, e: float, n: float, s: float): (float, float, float) {
  float dx = e - w;
  float dy = s - n;
  return {dx, dy, sqrt(dx * dx + dy * dy)};
}
userfun divmod(a: int, b: int): (int, int) { return {a / b, a % b}; }
)";

ir::Module parse_text(const std::string& text) {
  return parse::parse_module(std::string(kUserFuns) + text, "<test>");
}

exec::RunReport run(const ir::Program& program, const Sizes& sizes,
                    const ir::Program* reference = nullptr) {
  return test::run_verified(program, sizes, reference);
}

void check_runs(const ir::Program& program, const Sizes& sizes, int64_t elements) {
  test::check_verified(program, sizes, elements);
}

std::vector<const codegen::KernelArg*> outputs(const codegen::Kernel& k) {
  std::vector<const codegen::KernelArg*> out;
  for (const codegen::KernelArg& a : k.args)
    if (a.role == codegen::KernelArg::Role::Output)
      out.push_back(&a);
  return out;
}

} // namespace

TEST_CASE("a tuple per point is stored as one output buffer per component") {
  ir::Module m = parse_text(R"(
def two(x: [[float]N]M) =
  mapGlb1(mapGlb0(w => tuple(sub(w[1][2], w[1][0]), sub(w[2][1], w[0][1]))),
          slide2D(3, 1, pad2D(1, 1, clamp, x)))
)");
  codegen::Kernel k = codegen::generate(m.main());
  std::vector<const codegen::KernelArg*> outs = outputs(k);
  REQUIRE(outs.size() == 2);
  CHECK(outs[0]->output_index == 0);
  CHECK(outs[1]->output_index == 1);
  CHECK(outs[0]->elements == outs[1]->elements);
  // One store per component per work-item, no tuple type in OpenCL.
  int stores = 0;
  for (const codegen::MemoryAccess& a : k.accesses)
    stores += a.is_store ? 1 : 0;
  CHECK(stores == 2);
  check_runs(m.main(), {{"M", 5}, {"N", 7}}, 2 * 5 * 7);
}

TEST_CASE("components may come from one nest or from separate map nests") {
  ir::Module three = parse_text(R"(
def three(x: [float]N) = mapGlb0(a => tuple(neg(a), sq(a), a), x)
)");
  codegen::Kernel k = codegen::generate(three.main());
  CHECK(outputs(k).size() == 3);
  check_runs(three.main(), {{"N", 33}}, 3 * 33);

  // zip of two lowered nests: each nest writes straight into its own output.
  ir::Module zipped = parse_text(R"(
def zipped(x: [float]N, y: [float]N) = zip(mapGlb0(neg, x), mapGlb0(sq, y))
)");
  check_runs(zipped.main(), {{"N", 17}}, 2 * 17);
  ir::Module zipped2d = parse_text(R"(
def zipped2d(x: [[float]N]M) = zip2D(mapGlb1(mapGlb0(neg), x), mapGlb1(mapGlb0(sq), x))
)");
  check_runs(zipped2d.main(), {{"M", 3}, {"N", 9}}, 2 * 27);
}

TEST_CASE("tuples kept in local and private memory live in one buffer per component") {
  // Each work-group computes (neg, sq) of its chunk into local memory, then combines them with a
  // neighbour: the local temporary of tuples is two local arrays.
  ir::Module m = parse_text(R"(
def local_pairs(x: [float]N) =
  join(mapWrg0(t => mapLcl0(p => tuple(sub(get(0, p), get(1, p)), get(1, p)),
                            toLocal(mapLcl0(a => tuple(neg(a), sq(a))))(t)),
               split(8, x)))
)");
  codegen::Kernel k = codegen::generate(m.main());
  int local_buffers = 0;
  for (const codegen::KernelArg& a : k.args)
    local_buffers += a.role == codegen::KernelArg::Role::Local ? 1 : 0;
  CHECK(local_buffers == 2);
  CHECK(outputs(k).size() == 2);
  check_runs(m.main(), {{"N", 32}}, 2 * 32);

  ir::Module priv = parse_text(R"(
def private_pairs(x: [float]N) =
  join(mapGlb0(t => mapSeq(p => tuple(mean3(get(0, p), get(1, p), get(0, p)), neg(get(1, p))),
                           toPrivate(mapSeq(a => tuple(neg(a), sq(a))))(t)),
               split(4, x)))
)");
  check_runs(priv.main(), {{"N", 24}}, 2 * 24);
}

TEST_CASE("a wrong component is reported with its output number") {
  ir::Module m = parse_text(R"(
def pair(x: [float]N) = mapGlb0(a => tuple(neg(a), sq(a)), x)
def swapped(x: [float]N) = map(a => tuple(neg(a), neg(a)), x)
)");
  const ir::Program& program = m.programs.at(0);
  const ir::Program& other = m.programs.at(1);
  exec::RunReport r = run(program, {{"N", 16}}, &other);
  CHECK(r.status == runtime::Status::wrong_result);
  CHECK(r.verification.mismatches == 16);
  CHECK(r.verification.elements == 32);
  CHECK(r.message.find("output 1 of 2") != std::string::npos);
}

TEST_CASE("a user function returning a tuple: one call, its components stored or passed on") {
  // Stored: three outputs from one call per point (a struct in OpenCL C, read field by field).
  ir::Module m = parse_text(R"(
def grad(x: [[float]N]M) =
  mapGlb1(mapGlb0(w => gradient(w[1][0], w[1][2], w[0][1], w[2][1])),
          slide2D(3, 1, pad2D(1, 1, clamp, x)))
)");
  codegen::Kernel k = codegen::generate(m.main());
  CHECK(outputs(k).size() == 3);
  CHECK(k.source.find("typedef struct { float _0; float _1; float _2; } "
                      "liftx_tuple_float_float_float;") != std::string::npos);
  size_t calls = 0;
  for (size_t at = k.source.find("gradient("); at != std::string::npos;
       at = k.source.find("gradient(", at + 1))
    ++calls;
  CHECK(calls == 2); // its definition and one call
  // The call's four reads are recorded once, with the three stores.
  int loads = 0, stores = 0;
  for (const codegen::MemoryAccess& a : k.accesses)
    (a.is_store ? stores : loads) += 1;
  CHECK(loads == 4);
  CHECK(stores == 3);
  check_runs(m.main(), {{"M", 6}, {"N", 9}}, 3 * 6 * 9);

  // Passed on: the tuple spreads over the parameters of the next function; get picks one field.
  ir::Module chained = parse_text(R"(
def chained(x: [float]N) =
  mapGlb0(a => tuple(mean3(gradient(a, sq(a), neg(a), a)), get(1, gradient(a, a, a, neg(a)))), x)
)");
  check_runs(chained.main(), {{"N", 21}}, 2 * 21);

  // Integer components (the int helpers define division and remainder of negatives).
  ir::Module ints = parse_text(R"(
def ints(x: [int]N, y: [int]N) = mapGlb0(divmod, zip(x, y))
)");
  const std::string source = codegen::generate(ints.main()).source;
  CHECK(source.find("liftx_tuple_int_int") != std::string::npos);
  CHECK(source.find("liftx_div(") != std::string::npos);
}

TEST_CASE("a tuple-returning user function of constants folds to its values") {
  ir::Module m = parse_text(R"(
def folded(x: [float]N) = mapGlb0(a => tuple(sub(a, get(2, gradient(0.0f, 3.0f, 0.0f, 4.0f))),
                                              a), x)
)");
  codegen::Kernel k = codegen::generate(m.main());
  CHECK(k.source.find("gradient(") == std::string::npos); // evaluated at generation: 5.0f
  CHECK(k.source.find("5.0f") != std::string::npos);
  check_runs(m.main(), {{"N", 8}}, 2 * 8);
}
