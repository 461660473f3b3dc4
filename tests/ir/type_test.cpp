#include "helpers.hpp"

#include <unordered_set>

using namespace liftx;
using namespace liftx::ir;
using namespace liftx::ir::test;

TEST_CASE("types: structural equality and hash") {
  Type a = arr(arr(f32(), N()), M());
  Type b = arr(arr(f32(), N()), M());
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  CHECK(a != arr(arr(f32(), M()), N()));
  CHECK(a != arr(arr(i32(), N()), M()));
  CHECK(arr(f32(), N() + 2) == arr(f32(), 2 + N()));
  CHECK(Type::tuple({f32(), i32()}) == Type::tuple({f32(), i32()}));
  CHECK(Type::tuple({f32(), i32()}) != Type::tuple({i32(), f32()}));
  CHECK(Type() == f32());
  std::unordered_set<Type> set{a, b, f32(), Type::tuple({f32(), f32()})};
  CHECK(set.size() == 3);
}

TEST_CASE("types: to_string") {
  CHECK(f32().to_string() == "float");
  CHECK(Type::double_().to_string() == "double");
  CHECK(Type::bool_().to_string() == "bool");
  CHECK(arr(arr(f32(), N()), M()).to_string() == "[[float]N]M");
  CHECK(arr(i32(), 3).to_string() == "[int]3");
  CHECK(Type::tuple({f32(), arr(i32(), N())}).to_string() == "(float, [int]N)");
  // Compound lengths are parenthesised.
  std::string padded = arr(f32(), N() + 2).to_string();
  CHECK(padded == "[float](" + (N() + 2).to_string() + ")");
}

TEST_CASE("types: rank, shape, base, size_vars") {
  Type t = arr(arr(arr(Type::tuple({f32(), i32()}), O()), N() * 2), M() + N());
  CHECK(array_rank(t) == 3);
  CHECK(array_rank(f32()) == 0);
  auto shape = array_shape(t);
  REQUIRE(shape.size() == 3);
  CHECK(shape[0] == M() + N());
  CHECK(shape[1] == N() * 2);
  CHECK(shape[2] == O());
  CHECK(array_base(t) == Type::tuple({f32(), i32()}));
  CHECK(array_base(f32()) == f32());
  auto vars = size_vars(t);
  REQUIRE(vars.size() == 3);
  CHECK(vars[0] == M());
  CHECK(vars[1] == N());
  CHECK(vars[2] == O());
  CHECK(size_vars(arr(f32(), 4)).empty());
}

TEST_CASE("types: a tuple needs two elements") {
  CHECK_THROWS_AS(Type::tuple({f32()}), UserError);
}
