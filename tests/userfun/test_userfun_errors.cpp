#include "ir/userfun/userfun.hpp"

#include <doctest/doctest.h>

using namespace liftx;
using namespace liftx::ir;

namespace {

// The body starts at line 3, column 20 of k.lift, as if after `userfun f(...): float {`.
const SourceLoc body_loc{"k.lift", 3, 20};

struct ErrorCase {
  const char* body;
  int line;
  int col;
  const char* message; // without the "userfun f: " prefix
};

UserError parse_error(std::string_view body,
                      std::vector<UserFunParam> params = {{"a", ScalarKind::Float}},
                      SourceLoc loc = body_loc) {
  try {
    UserFunDef::parse("f", std::move(params), ScalarKind::Float, body, loc);
  } catch (const UserError& e) {
    return e;
  }
  FAIL("parsed without error: " << body);
  return UserError("unreachable");
}

} // namespace

TEST_CASE("syntax and type errors are located inside the original file") {
  const ErrorCase cases[] = {
      {"return a + q;", 3, 31, "unknown identifier 'q'"},
      {"float d = a; float d = a; return d;", 3, 39, "'d' is already declared"},
      {"float a = 1.0f; return a;", 3, 26, "'a' is already declared"},
      {"x = 1.0f; return a;", 3, 20, "assignment to undeclared variable 'x'"},
      {"return fmin(a);", 3, 27, "'fmin' takes 2 arguments, not 1"},
      {"return sqrt(a, a);", 3, 27, "'sqrt' takes 1 argument, not 2"},
      {"return clamp(a, a);", 3, 27, "'clamp' takes 3 arguments, not 2"},
      {"return a % 2.0f;", 3, 29, "'%' needs integer operands, not float and float"},
      {"int k = 1; return k % a;", 3, 40, "'%' needs integer operands, not int and float"},
      {"if (a > 0.0f) return a;", 3, 43, "not every path returns a value"},
      {"if (a > 0.0f) { return a; } else { a = 1.0f; }", 3, 66, "not every path returns a value"},
      {"return a", 3, 28, "expected ';' after the returned value, found end of body"},
      {"return a +;", 3, 30, "expected an expression, found ';'"},
      {"return (a;", 3, 29, "expected ')' to close the parenthesis, found ';'"},
      {"return a(1);", 3, 27, "'a' is not a function"},
      {"float d; return d;", 3, 36, "'d' is used before it is assigned"},
      {"float d; if (a > 0.0f) d = a; return d;", 3, 57, "'d' is used before it is assigned"},
      {"float d; d += a; return d;", 3, 29, "'d' is used before it is assigned"},
      {"if (a > 0.0f) float d = a; return a;", 3, 34,
       "a declaration cannot be the body of 'if' or 'else' (add braces)"},
      {"for (;;) {} return a;", 3, 20, "'for' is not part of the C subset of user functions"},
      {"return 2147483648;", 3, 27, "integer literal 2147483648 does not fit in int"},
      {"return 99999999999999999999;", 3, 27,
       "integer literal 99999999999999999999 does not fit in int"},
      {"return 1e39f;", 3, 27, "float literal 1e39f is out of range"},
      {"return 1f;", 3, 27, "malformed number literal '1f' (write '1.0f')"},
      {"return 1.5x;", 3, 27, "malformed number literal '1.5x'"},
      {"return 1e+f;", 3, 27, "malformed exponent in number literal"},
      {"return a @ a;", 3, 29, "unexpected character '@'"},
      {"return a & a;", 3, 29, "unexpected character '&'"},
      {"/* never closed", 3, 20, "unterminated comment"},
      {"return;", 3, 26, "'return' needs a value"},
      {"{ return a;", 3, 31, "expected '}' to close the block opened at 3:20"},
      {"float sqrt = a; return a;", 3, 26,
       "variable name 'sqrt' is the name of a builtin function"},
      {"float if = a; return a;", 3, 26, "variable name 'if' is a keyword"},
      {"a + 1.0f; return a;", 3, 20, "expected a statement, found 'a'"},
      {"return a ? a;", 3, 32, "expected ':' in the conditional expression, found ';'"},
      {"if a > 0.0f return a;", 3, 23, "expected '(' after 'if', found 'a'"},
      {"return return;", 3, 27, "expected an expression, found keyword 'return'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.body);
    const UserError e = parse_error(c.body);
    CHECK(e.message() == fmt::format("userfun f: {}", c.message));
    CHECK(e.loc().file == "k.lift");
    CHECK(e.loc().line == c.line);
    CHECK(e.loc().col == c.col);
  }
}

TEST_CASE("returns of tuple results are checked against the declared components") {
  struct TupleCase {
    const char* body;
    std::vector<ScalarKind> results;
    int col;
    const char* message;
  };
  const ScalarKind F = ScalarKind::Float;
  const TupleCase cases[] = {
      {"return {a, a};", {F}, 27, "the result is one float: return a value, not a braced list"},
      {"return a;", {F, F}, 27, "the result is a tuple of 2: write return {a, b, ...};"},
      {"return {a};", {F, F}, 27, "the result has 2 components, this return has 1"},
      {"return {a, a, a};", {F, F}, 34, "the result has 2 components, this return has more"},
      {"return {a, a;", {F, F}, 32, "expected '}' after the returned values, found ';'"},
      {"return {a, q};", {F, F}, 31, "unknown identifier 'q'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.body);
    try {
      UserFunDef::parse("f", {{"a", F}}, c.results, c.body, body_loc);
      FAIL("parsed without error");
    } catch (const UserError& e) {
      CHECK(e.message() == fmt::format("userfun f: {}", c.message));
      CHECK(e.loc().line == 3);
      CHECK(e.loc().col == c.col);
    }
  }
}

TEST_CASE("error messages carry the full location and track newlines") {
  const UserError e = parse_error("return a + q;");
  CHECK(std::string(e.what()) == "k.lift:3:31: error: userfun f: unknown identifier 'q'");
  // Line 4 is "  float d = a;" and line 5 "\treturn e + d;": a tab is one column.
  const UserError multi = parse_error("\n  float d = a;\n\treturn e + d;\n");
  CHECK(multi.loc().line == 5);
  CHECK(multi.loc().col == 9);
  CHECK(multi.message() == "userfun f: unknown identifier 'e'");
  const UserError comment = parse_error("// first line\n/* a\n comment */ return z;");
  CHECK(comment.loc().line == 5);
  CHECK(comment.loc().col == 20);
  const UserError unknown_fun = parse_error("\n\n   return foo(a);");
  CHECK(unknown_fun.loc().line == 5);
  CHECK(unknown_fun.loc().col == 11);
  CHECK(unknown_fun.message().starts_with("userfun f: unknown function 'foo' (builtins: sqrt,"));
  // Without a body location, locations are relative to the body.
  const UserError relative = parse_error("return\n  q;", {{"a", ScalarKind::Float}}, {});
  CHECK(relative.loc().line == 2);
  CHECK(relative.loc().col == 3);
  CHECK(relative.loc().file.empty());
}

TEST_CASE("bad parameters are reported without a line, so the caller can locate them") {
  const UserError keyword = parse_error("return 1.0f;", {{"if", ScalarKind::Float}});
  CHECK(keyword.message() == "userfun f: parameter name 'if' is a keyword");
  CHECK(!keyword.loc().valid());
  CHECK(keyword.loc().file == "k.lift");
  const UserError relocated = keyword.located({"k.lift", 2, 11});
  CHECK(relocated.loc().line == 2);
  const UserError dup =
      parse_error("return x;", {{"x", ScalarKind::Float}, {"x", ScalarKind::Int}});
  CHECK(dup.message() == "userfun f: 'x' is already declared");
  const UserError bad = parse_error("return 1.0f;", {{"2x", ScalarKind::Float}});
  CHECK(bad.message() == "userfun f: bad parameter name '2x'");
  const UserError builtin = parse_error("return 1.0f;", {{"min", ScalarKind::Float}});
  CHECK(builtin.message() == "userfun f: parameter name 'min' is the name of a builtin function");
}

TEST_CASE("pathological nesting is an error, not a stack overflow") {
  const std::string deep =
      "return " + std::string(100000, '(') + "a" + std::string(100000, ')') + ";";
  const UserError e = parse_error(deep);
  CHECK(e.message() == "userfun f: nesting deeper than 256 levels");
  CHECK(e.loc().line == 3);
  const std::string blocks = std::string(5000, '{') + "return a;" + std::string(5000, '}');
  CHECK(parse_error(blocks).message() == "userfun f: nesting deeper than 256 levels");
  // Moderate nesting is fine.
  const std::string ok = "return " + std::string(100, '(') + "a" + std::string(100, ')') + ";";
  CHECK(UserFunDef::parse("f", {{"a", ScalarKind::Float}}, ScalarKind::Float, ok)
            ->to_opencl()
            .find("return a;") != std::string::npos);
}

TEST_CASE("a body that would nest too deeply once printed is refused where it starts") {
  // An int sum prints as nested helper calls, one level per term.
  std::string sum = "return i";
  for (int k = 0; k < 300; ++k)
    sum += " + i";
  const UserError e = parse_error(sum + ";", {{"i", ScalarKind::Int}});
  CHECK(e.message() == "userfun f: nests too deeply once printed as OpenCL C (every compound "
                       "operand gets parentheses); split the expression with local variables");
  CHECK(e.loc().line == body_loc.line);
  CHECK(e.loc().col == body_loc.col);
  // The same sum split over locals is fine.
  std::string split = "int s = i";
  for (int k = 0; k < 300; ++k)
    split += k % 100 == 99 ? "; s = s + i" : " + i";
  CHECK_NOTHROW(UserFunDef::parse("f", {{"i", ScalarKind::Int}}, ScalarKind::Float,
                                  split + "; return s;", body_loc));
  // A chain of 250 negations prints as deep as it was written (`- -a`, not `-(-a)`).
  const std::string negations = "return " + std::string(250, '-') + "a;";
  CHECK_NOTHROW(UserFunDef::parse("f", {{"a", ScalarKind::Float}}, ScalarKind::Float,
                                  std::string_view(negations), body_loc));
}

TEST_CASE("names OpenCL C reserves are refused") {
  const std::vector<UserFunParam> one = {{"x", ScalarKind::Float}};
  for (const char* name : {"half", "kernel", "float4", "dot", "get_global_id", "mix"}) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(UserFunDef::parse(name, one, ScalarKind::Float, "return x;"),
                         doctest::Contains("reserved"), liftx::UserError);
  }
  CHECK_THROWS_WITH_AS(
      UserFunDef::parse("f", {{"global", ScalarKind::Float}}, ScalarKind::Float, "return global;"),
      doctest::Contains("reserved in OpenCL C"), liftx::UserError);
  CHECK_NOTHROW(UserFunDef::parse("blend", one, ScalarKind::Float, "return x;"));
}
