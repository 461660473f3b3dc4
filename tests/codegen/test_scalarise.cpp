// The private-array scalarisation pass over the kernel AST: the rows it applies to (every use a
// constant index) and the rows it refuses (any other use), then the pass inside generated kernels.
#include "codegen/kernel.hpp"
#include "codegen/scalarise.hpp"
#include "ir/parse/parser.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace liftx;
namespace cl = codegen::cl;

namespace {

cl::Stmt line(std::string text) {
  return {cl::Line{std::move(text)}};
}
cl::Stmt array(std::string name, int64_t count) {
  return {cl::ArrayDecl{"float", std::move(name), count}};
}
cl::Stmt scope(std::vector<cl::Stmt> body) {
  return {cl::Scope{{std::move(body)}}};
}
cl::Stmt for_loop(std::string var, std::string trip, std::vector<cl::Stmt> body) {
  return {cl::For{"int " + var + " = 0", var + " < " + trip, var + " += 1", {std::move(body)}}};
}

/// The pass's result as text, and the arrays it scalarised.
struct Scalarised {
  std::vector<std::string> names;
  std::string text;
};
Scalarised scalarise(std::vector<cl::Stmt> stmts) {
  cl::Block block{std::move(stmts)};
  std::vector<std::string> names = cl::scalarise_private_arrays(block);
  return {names, cl::print(block, 0)};
}

} // namespace

TEST_CASE("scalarisation applies: a private array indexed only by constants becomes scalars") {
  Scalarised r = scalarise({
      array("p", 3),
      scope({line("p[0] = in[gid];")}),
      scope({line("p[1] = in[gid + 1];")}),
      {cl::If{"p[1] < 0.0f", {{line("p[2] = p[0] + p[1];")}}}},
      line("out[gid] = p[2];"),
  });
  CHECK(r.names == std::vector<std::string>{"p"});
  CHECK(r.text == "float p_0, p_1, p_2;\n"
                  "{\n  p_0 = in[gid];\n}\n"
                  "{\n  p_1 = in[gid + 1];\n}\n"
                  "if (p_1 < 0.0f) {\n  p_2 = p_0 + p_1;\n}\n"
                  "out[gid] = p_2;\n");
}

TEST_CASE("scalarisation applies to an array declared in a nested block and never read") {
  Scalarised r = scalarise({scope({array("q", 2)})});
  CHECK(r.names == std::vector<std::string>{"q"});
  CHECK(r.text == "{\n  float q_0, q_1;\n}\n");
}

TEST_CASE("scalarisation refuses: an array indexed by a loop variable stays an array") {
  const std::vector<cl::Stmt> stmts = {
      array("p", 4),
      for_loop("i", "4", {line("p[i] = in[i];")}),
      line("out[0] = p[3];"),
  };
  const std::string before = cl::print(cl::Block{stmts}, 0);
  Scalarised r = scalarise(stmts);
  CHECK(r.names.empty());
  CHECK(r.text == before);
  CHECK(r.text.find("float p[4];") != std::string::npos);
}

TEST_CASE("scalarisation refuses other non-constant uses") {
  for (const char* use : {
           "float* src = p + 0;", // a pointer to the array (iterate's swapped buffers)
           "out[0] = p[1 + 1];",  // an index that is not a literal
           "out[0] = p[];",       // (no index at all)
           "f(p);",               // the array passed whole
       }) {
    CAPTURE(use);
    Scalarised r = scalarise({array("p", 2), line("p[0] = 1.0f;"), line(use)});
    CHECK(r.names.empty());
    CHECK(r.text.find("float p[2];") != std::string::npos);
  }
  // A loop header is code: a use in a for condition counts.
  Scalarised r = scalarise({array("p", 2), for_loop("i", "p[k]", {})});
  CHECK(r.names.empty());
}

TEST_CASE("scalarisation matches whole identifiers and decides per array") {
  Scalarised r = scalarise({
      array("p", 2),
      array("p2", 2),
      line("p2[0] = xp[0] + p_x + p[1];"), // p2, xp and p_x are other names
      for_loop("i", "2", {line("p2[i] = 0.0f;")}),
      {cl::Comment{"p is read at p[i] here"}}, // comments are not uses
  });
  CHECK(r.names == std::vector<std::string>{"p"});
  CHECK(r.text == "float p_0, p_1;\n"
                  "float p2[2];\n"
                  "p2[0] = xp[0] + p_x + p_1;\n"
                  "for (int i = 0; i < 2; i += 1) {\n  p2[i] = 0.0f;\n}\n"
                  "// p is read at p[i] here\n");
}

TEST_CASE("scalarisation sees the scalars an earlier array became, declarations included") {
  // p becomes p_0 and p_1; p_1 the array is then named bare in that declaration, so it stays an
  // array, as a pass over the whole kernel per array would decide.
  Scalarised r = scalarise({
      array("p", 2),
      array("p_1", 2),
      line("out[0] = p[0] + p_1[1];"),
  });
  CHECK(r.names == std::vector<std::string>{"p"});
  CHECK(r.text == "float p_0, p_1;\n"
                  "float p_1[2];\n"
                  "out[0] = p_0 + p_1[1];\n");
  // Without the clash both become scalars.
  Scalarised apart = scalarise({array("p", 2), array("q", 2), line("out[0] = p[0] + q[1];")});
  CHECK(apart.names == std::vector<std::string>{"p", "q"});
}

TEST_CASE("generated kernels: unrolled private arrays are scalars, iterate's buffers stay arrays") {
  auto generate = [](const std::string& name) {
    ir::Module m = parse::parse_file(std::string(LIFTX_SOURCE_DIR) + "/tests/codegen/programs/" +
                                     name + ".lift");
    return codegen::generate(m.main());
  };
  const std::string unrolled = generate("private_chunk").source;
  CHECK(unrolled.find("float priv_2_0, priv_2_1, priv_2_2, priv_2_3;") != std::string::npos);
  CHECK(unrolled.find("priv_2[") == std::string::npos);
  // iterate swaps pointers to its two private buffers: they must stay arrays.
  const std::string iterated = generate("iterate_private").source;
  CHECK(iterated.find("float priv_") != std::string::npos);
  CHECK(iterated.find("[4];") != std::string::npos);
  CHECK(iterated.find("* src_") != std::string::npos);
}
