// The kind of a program (rewrite/program_kind.hpp), which the regression suite of the cost model
// groups its inputs by: every shipped example of each kind is recognised, and the precedence
// (time steps before everything, a stencil's window sums not a reduction) holds.
#include "ir/parse/parser.hpp"
#include "rewrite/program_kind.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

using namespace liftx;
using rewrite::ProgramKind;

namespace {

std::string kind_of_file(const std::string& relative) {
  std::ifstream in(std::string(LIFTX_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return std::string(
      rewrite::kind_name(rewrite::program_kind(parse::parse_module(text.str(), relative).main())));
}

std::string kind_of_text(const std::string& text) {
  return std::string(
      rewrite::kind_name(rewrite::program_kind(parse::parse_module(text, "<test>").main())));
}

} // namespace

TEST_CASE("the shipped programs are of the kinds their folders say") {
  for (const char* file :
       {"stencils/jacobi2d5pt.lift", "stencils/gaussian.lift", "stencils/stencil2d.lift",
        "stencils/srad1.lift", "stencils/linalg/conv2d.lift"})
    CHECK_MESSAGE(kind_of_file(file) == "stencil2d", file);
  for (const char* file : {"stencils/3d/j3d7pt.lift", "stencils/3d/j3d27pt.lift",
                           "stencils/3d/heat3d.lift", "stencils/3d/hotspot3d.lift"})
    CHECK_MESSAGE(kind_of_file(file) == "stencil3d", file);
  CHECK(kind_of_file("stencils/iterated/heat2d.lift") == "time_steps");
  CHECK(kind_of_file("stencils/linalg/mv.lift") == "reduction");
  CHECK(kind_of_file("stencils/linalg/tmv.lift") == "reduction");
  CHECK(kind_of_file("stencils/linalg/mm.lift") == "product");
  CHECK(kind_of_file("stencils/shallow_water.lift") == "multi_output");
  CHECK(kind_of_file("stencils/srad1full.lift") == "multi_output");
  CHECK(kind_of_file("stencils/d2q9.lift") == "multi_output");
  for (const char* name : {"heat2d", "jacobi2d5pt_x64", "jacobi2d9pt_x64", "heat2d_x64"})
    CHECK_MESSAGE(kind_of_file(std::string("stencils/iterated/") + name + ".lift") == "time_steps",
                  name);
}

TEST_CASE("the training programs of the new kinds are the kinds they were written for") {
  for (const char* name : {"rowsumsq", "colabssum", "rowaxpy", "colweighted"})
    CHECK_MESSAGE(kind_of_file(std::string("model/data/programs/") + name + ".lift") == "reduction",
                  name);
  for (const char* name : {"abt", "sqdist", "atb", "l1dist"})
    CHECK_MESSAGE(kind_of_file(std::string("model/data/programs/") + name + ".lift") == "product",
                  name);
  for (const char* name : {"jacobi2d5pt_x4", "box2d_x3", "star2d_mirror_x64", "box2d9_wrap_x64",
                           "cross2d_constant_x64"})
    CHECK_MESSAGE(
        kind_of_file(std::string("model/data/programs/") + name + ".lift") == "time_steps", name);
}

TEST_CASE("a layout clause makes a layout program; a window sum is no reduction") {
  const std::string step = R"(
userfun plus(a: float, b: float): float { return a + b; }
def two(a: [[float]N]M, b: [[float]N]M) layout aos(a, b) =
  map(map((x, y) => plus(x, y)), map(zip, zip(a, b)))
)";
  CHECK(kind_of_text(step) == "layout");
  CHECK(kind_of_text(R"(
def rowsum(A: [[float]N]M) = map(row => reduce(add, 0.0f, row)[0], A)
)") == "reduction");
  CHECK(kind_of_text(R"(
def box(g: [[float]N]M) = map2D(w => reduce(add, 0.0f, join(w))[0], slide2D(3, 1, pad2D(1, 1, clamp, g)))
)") == "stencil2d");
  CHECK(kind_of_text("userfun twice(a: float): float { return 2.0f * a; }\n"
                     "def scale(x: [float]N) = map(twice, x)") == "stencil2d");
}

TEST_CASE("kind names round-trip and unknown names are refused") {
  for (ProgramKind kind : rewrite::program_kinds())
    CHECK(rewrite::parse_program_kind(rewrite::kind_name(kind)) == kind);
  CHECK_FALSE(rewrite::parse_program_kind("stencil"));
}
