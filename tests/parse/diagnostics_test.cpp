// Every class of bad input is one located UserError (file:line:col and a clear message).
#include "examples.hpp"
#include "helpers.hpp"

#include <random>

namespace liftx::parse::test {
namespace {

TEST_CASE("malformed source") {
  check_error("def f(x: [float]N) = x @", 1, 24, "unexpected character '@'");
  check_error("def f(x: [float]N) = x\n/* open", 2, 1, "unterminated comment");
  check_error("userfun g(a: float): float { return a;\n", 1, 28, "unterminated userfun body");
  check_error("def f(x: [float]N) =\n  split(4, x]", 2, 13,
              "expected ')' after arguments, got ']'");
  check_error("def f(x: [float]N) =\n  split(4, x", 2, 13,
              "expected ')' after arguments, got end of input");
  check_error("foo", 1, 1, "expected 'def' or 'userfun', got 'foo'");
  check_error("def f(x: [float]N) = join(x, , x)", 1, 30, "expected an expression, got ','");
  check_error("def f(x: [float]N) x", 1, 20, "expected '=' after the parameters of 'f', got 'x'");
  check_error("def f(x: [float]) = x", 1, 17, "expected an array length after ']'");
  check_error("def f(x: (float)) = x", 1, 16, "a tuple type needs at least 2 components");
  check_error("def f(x: vector) = x", 1, 10, "expected a type");
  check_error("def f(x: [float]N) = pad(1, 1, constant(2f), x)", 1, 41, "malformed number '2f'");
  check_error("def f(x: [float]N) = x[1e]", 1, 24, "exponent without digits");
  check_error("def true(x: float) = x", 1, 5, "'true' is a keyword");
  check_error("userfun g(a: float) { return a; }", 1, 21, "expected ':' and the result type");
  check_error("userfun g(a: float): vec { return a; }", 1, 22, "expected a scalar type");
  check_error("userfun g(a): float { return a; }", 1, 12,
              "parameter 'a' of userfun 'g' needs a type");
  check_error("userfun g(a: float): (float) { return a; }", 1, 22,
              "the result of userfun 'g' is a tuple of one");
  check_error("userfun g(a: float): (float, vec) { return {a, a}; }", 1, 30,
              "expected a scalar type");
  check_error("userfun g(a: float): (float, float { return {a, a}; }", 1, 36,
              "expected ')' after the result's component types");
  check_error("userfun g(a: float): (float, float) { return a; }", 1, 46,
              "the result is a tuple of 2: write return {a, b, ...};");
  check_error("def f(x: float) = x < 1", 1, 24, "expected '?' after the comparison '<'");
}

TEST_CASE("a definition parameter without type") {
  check_error("def f(x) = x", 1, 7, "parameter 'x' of 'f' needs a type");
  check_error("def f(a: float,\n      b) = a", 2, 7, "parameter 'b' of 'f' needs a type");
}

TEST_CASE("unknown identifiers") {
  check_error("def f(x: [float]N) =\n  map(foo, x)", 2, 7, "unknown identifier 'foo'");
  check_error("def f(x: [float]N) = y", 1, 22, "unknown identifier 'y'");
  check_error("def f(x: [float]N) = bar(x)", 1, 22, "unknown identifier 'bar'");
  check_error("def g(x: [float]N) = x\ndef f(x: [float]N) = g(x)", 2, 22,
              "'g' is a definition; definitions cannot be used inside other definitions");
  check_error("def f(x: [float]N) = map(v => w, x)", 1, 31, "unknown identifier 'w'");
  // Lambda parameters are scoped to their body.
  check_error("def f(x: [float]N) = zip(map(v => v, x), map(id, v))", 1, 50,
              "unknown identifier 'v'");
}

TEST_CASE("wrong numbers of arguments") {
  check_error("def f(x: [float]N) =\n  split(4, 2, x)", 2, 3,
              "split expects 1 size argument and 1 array, got 3 arguments");
  check_error("def f(x: [float]N) = reduce(add, x)", 1, 22,
              "reduce expects 1 function, 1 initial value and 1 array, got 2 arguments");
  check_error("def f(x: [float]N) = split(4)", 1, 22,
              "split expects 1 size argument and 1 array, got 1 argument");
  check_error("def f(x: [float]N) = pad(1, clamp, x)", 1, 22,
              "pad expects 2 size arguments, 1 boundary and 1 array, got 3 arguments");
  check_error("def f(x: [float]N) = zip(x)", 1, 22,
              "zip expects at least 2 arrays, got 1 argument");
  check_error("def f(x: [float]N) = join(x, x)", 1, 22, "join expects 1 array, got 2 arguments");
  check_error("def f(x: [float]N) = map(split(4, x), x)", 1, 26,
              "expected a function here, but split is applied to its data");
  check_error("def f(x: [float]N) = map((a, b) => a, x)", 1, 26,
              "this lambda takes 2 parameters but receives 1 argument of type float");
  check_error("userfun g(a: float, b: float): float { return a; }\n"
              "def f(x: [float]N) = map(g(1.0f), x)",
              2, 26, "user function 'g' cannot be partially applied");
  check_error("def f(x: [float]N) = toLocal(id)", 1, 22, "toLocal expects a function and its data");
  check_error("def f(x: [float]N) = mapSeqSlide(w => w[0], 3, x)", 1, 22,
              "mapSeqSlide expects 1 function, 2 size arguments and 1 array (and, optionally, an "
              "unroll after the step), got 3 arguments");
  check_error("def f(x: [float]N) = mapSeqSlide(w => w[0], 3, 1, 0, x)", 1, 51,
              "mapSeqSlide: the unroll must be a constant in 1..64");
  check_error("def f(x: [float]N) = mapSeqSlide(w => w[0], 3, 1, N, x)", 1, 51,
              "mapSeqSlide: the unroll must be a constant in 1..64");
  check_error("def f(x: [float]N) = pad(1, 1, constant(1.0f, 2.0f), x)", 1, 32,
              "constant expects 1 literal, got 2 arguments");
}

TEST_CASE("type errors name the primitive, the expected and the actual type") {
  check_error("def f(x: [float]N) =\n  join(x)", 2, 3, "join");
  check_error("def f(x: [float]N) =\n  join(x)", 2, 3, "[float]N");
  // map names itself, the user function, its parameter type and the element type it got.
  for (const char* part : {"map", "userfun g", "float", "int"})
    check_error("userfun g(a: float): float { return a; }\ndef f(x: [int]N) = map(g, x)", 2, 20,
                part);
  check_error("def f(x: float) = map(id, x)", 1, 19, "map expects an array, got float");
  check_error("def f(x: [float]N) = map2D(id, x)", 1, 22,
              "map2D expects a 2-dimensional array, got [float]N");
  check_error("def f(a: [float]N, b: [float]M) = zip(a, b)", 1, 35, "zip");
  check_error("def f(a: [float]N, b: [float]M) = zip(a, b)", 1, 35, "different lengths");
  check_error("def f(x: [float]N) = reduce(add, 0, x)", 1, 22, "reduce");
  check_error("def f(x: [float]N) = pad(1, 1, constant(1), x)", 1, 22,
              "constant boundary of type int");
  check_error("def f(x: float) = x[0]", 1, 20, "at(0)");
  check_error("def f(x: float) = get(0, x)", 1, 19, "get(0)");
  check_error("def f(x: [float]6) = split(4, x)", 1, 22, "split(4)");
  check_error("def f(x: [float]N) = slide2D(3, 1, x)", 1, 22, "slide2D: ");
  check_error("def f(x: [float]N) = slide2D(3, 1, x)", 1, 22, "expected an array, got float");
  // Errors in nested applications point at the innermost offending call.
  check_error("def f(x: [float]N) =\n  map(id,\n      join(x))", 3, 7, "join");
}

TEST_CASE("errors inside user function bodies are located in the file") {
  check_error("\nuserfun g(a: float): float {\n  return b;\n}\ndef f(x: float) = g(x)", 3, 10, "b");
  check_error("userfun g(a: float): float { return a +; }", 1, 40, "");
}

TEST_CASE("redefinitions") {
  check_error("userfun g(a: float): float { return a; }\ndef g(x: [float]N) = x", 2, 5,
              "redefinition of 'g' (first defined at test.lift:1:9)");
  check_error("def f(x: float) = x\ndef f(x: float) = x", 2, 5, "redefinition of 'f'");
  check_error("def split(x: [float]N) = x", 1, 5, "'split' is a primitive and cannot be redefined");
  check_error("userfun add(a: float, b: float): float { return a; }", 1, 9,
              "'add' is a built-in function and cannot be redefined");
  check_error("def f(x: [float]N, x: [float]N) = x", 1, 20, "duplicate parameter 'x'");
  check_error("userfun g(a: float, a: int): float { return a; }", 1, 21, "duplicate parameter 'a'");
  check_error("def f(x: [float]N) = map((a, a) => a, zip(x, x))", 1, 30, "duplicate parameter 'a'");
  check_error("def f(map: [float]N) = map", 1, 7, "'map' names a primitive");
}

TEST_CASE("sizes: unknown, non-constant and misused") {
  check_error("def f(x: [float]N) = split(K, x)", 1, 28,
              "unknown size variable 'K': size arguments may use integer constants and the size "
              "variables of 'f' (N)");
  check_error("def f(x: [float]N) = iterate(N, id, x)", 1, 22, "iterate");
  check_error("def f(x: [float]N) = iterate(N, id, x)", 1, 22, "constant");
  check_error("def f(x: [float]N) = array(4, (i, n) => x[i])", 1, 43, "'i' is a value, not a size");
  check_error("def f(x: [float]N) = N", 1, 22, "'N' is a size variable");
  check_error("def f(x: [float]N) = split(N / 0, x)", 1, 30, "division by zero");
  check_error("def f(x: [float]N) = split(map, x)", 1, 28, "expected a size");
  check_error("def f(x: [float]N) = get(N, x)", 1, 26, "constant tuple index");
  check_error("def f(x: float) = x + x", 1, 21, "'+' is allowed only in size arguments");
  check_error("def f(x: [float]N) = pad(1, 1, zero, x)", 1, 32, "expected a boundary");
  check_error("def f(x: [int]N) = reduce(add, 3000000000, x)", 1, 32, "does not fit in int");
  check_error("def f(x: [float]N) = x[99999999999999999999]", 1, 24, "too large");
  check_error("def f(x: [float]N) = split(0, x)", 1, 22, "split");
  check_error("def f(x: [float]N) = map(x, x)", 1, 26, "'x' is a value, not a function");
  check_error("def f(x: [float]N) = join", 1, 22, "'join' is a function; a value is expected");
  check_error("def f(x: [float]N) = x => x", 1, 22, "expected a value, got a lambda");
}

/// A located "too deeply nested" UserError (the source is too long to log).
void check_too_deep(const std::string& source) {
  try {
    parse_module(source, "test.lift");
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(e.loc().line == 1);
    CHECK(e.loc().col > 1);
    CHECK(e.message().find("too deeply nested") != std::string::npos);
  }
}

TEST_CASE("deeply nested input is an error, not a stack overflow") {
  check_too_deep("def f(x: float) = " + std::string(10000, '(') + "x" + std::string(10000, ')'));
  check_too_deep("def f(x: float) = " + std::string(10000, '-') + "1");
  check_too_deep("def f(x: " + std::string(10000, '[') + "float]N) = x");
  std::string chain = "def f(x: [float]N) = x";
  for (int i = 0; i < 5000; ++i)
    chain += "[0]";
  check_too_deep(chain);
  std::string calls = "def f(x: [float]N) = id";
  for (int i = 0; i < 5000; ++i)
    calls += "(x)";
  check_too_deep(calls);
  // 150 levels of lambdas and parentheses are fine.
  std::string lambdas = "def f(x: [float]N) = ";
  for (int i = 0; i < 60; ++i)
    lambdas += "(v => ";
  lambdas += "v";
  for (int i = 0; i < 60; ++i)
    lambdas += ")(x)";
  CHECK(parse_module(lambdas).main().result_type() == float_array(size("N")));
}

TEST_CASE("a long sum or product is one level deep, however many terms it has") {
  std::string sum = "def f(x: [float]N) = x[0";
  for (int i = 0; i < 5000; ++i)
    sum += (i % 2 == 0 ? "+1" : "*1");
  CHECK(ir::print(parse_module(sum + "]").main()) == "def f(x: [float]N) = x[2500]");
  // Multiplied out, this size prints as a sum of 512 products; the printed module parses back.
  const std::string product =
      "def f(x: [float]((A+B)*(C+D)*(E+F)*(G+H)*(I+J)*(K+L)*(O+P)*(Q+R)*(S+T))) = x";
  const std::string printed = ir::print(parse_module(product));
  CHECK(printed.size() > 512 * 18);
  CHECK(ir::alpha_equal(parse_module(printed).main(), parse_module(product).main()));
}

TEST_CASE("a definition that nests too deeply once its shorthands are expanded is refused at "
          "its def") {
  // pad2D(..., x) is map(pad(...), pad(..., x)) once elaborated: two levels each when printed.
  auto nested_pads = [](int levels) {
    std::string body = "g";
    for (int i = 0; i < levels; ++i)
      body = "pad2D(1, 1, clamp, " + body + ")";
    return "def f(g: [[float]N]M) =\n  " + body;
  };
  const std::string accepted = ir::print(parse_module(nested_pads(60)));
  CHECK(ir::print(parse_module(accepted)) == accepted);
  try {
    parse_module(nested_pads(150), "test.lift");
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(e.loc().line == 1);
    CHECK(e.loc().col == 1);
    CHECK(e.message().find("'f' nests too deeply once its shorthands") != std::string::npos);
  }
}

/// Parsing arbitrary text either succeeds or throws a UserError: never another exception.
void check_only_user_errors(std::string_view source) {
  try {
    parse_module(source, "fuzz.lift");
  } catch (const UserError& e) {
    if (!e.loc().valid())
      FAIL("unlocated error: " << e.what() << "\nsource:\n" << source);
  } catch (const std::exception& e) {
    FAIL("non-UserError " << e.what() << "\nsource:\n" << source);
  }
}

TEST_CASE("truncated and mutated sources give located UserErrors only") {
  const char* sources[] = {kStencil1d, kTiled1d, kChunks, kJacobi2d5pt};
  for (const char* source : sources) {
    std::string text = source;
    for (size_t cut = 0; cut < text.size(); ++cut)
      check_only_user_errors(text.substr(0, cut));
  }
  std::mt19937 rng(20240611);
  const std::string alphabet = "()[],:=>+-*/%^{}xN01.f ";
  for (int round = 0; round < 1500; ++round) {
    std::string text = sources[round % 4];
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
      case 0:
        text.erase(at, 1);
        break;
      case 1:
        text.insert(at, 1, alphabet[rng() % alphabet.size()]);
        break;
      default:
        text[at] = alphabet[rng() % alphabet.size()];
        break;
      }
    }
    check_only_user_errors(text);
  }
}

} // namespace
} // namespace liftx::parse::test
