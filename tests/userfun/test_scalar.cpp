#include "ir/userfun/scalar.hpp"
#include "ir/userfun/userfun.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

using namespace liftx::ir;

TEST_CASE("scalar names and kinds") {
  CHECK(std::string(scalar_name(ScalarKind::Bool)) == "bool");
  CHECK(std::string(scalar_name(ScalarKind::Int)) == "int");
  CHECK(std::string(scalar_name(ScalarKind::Float)) == "float");
  CHECK(std::string(scalar_name(ScalarKind::Double)) == "double");
  CHECK(kind_of(Scalar{true}) == ScalarKind::Bool);
  CHECK(kind_of(Scalar{int32_t{3}}) == ScalarKind::Int);
  CHECK(kind_of(Scalar{1.5f}) == ScalarKind::Float);
  CHECK(kind_of(Scalar{1.5}) == ScalarKind::Double);
  CHECK(to_double(Scalar{true}) == 1.0);
  CHECK(to_double(Scalar{int32_t{-7}}) == -7.0);
  CHECK(to_double(Scalar{0.25f}) == 0.25);
}

TEST_CASE("convert follows C, saturating where C is undefined") {
  CHECK(std::get<int32_t>(convert(Scalar{2.7f}, ScalarKind::Int)) == 2);
  CHECK(std::get<int32_t>(convert(Scalar{-2.7f}, ScalarKind::Int)) == -2);
  CHECK(std::get<int32_t>(convert(Scalar{-2.7}, ScalarKind::Int)) == -2);
  CHECK(std::get<int32_t>(convert(Scalar{1e10f}, ScalarKind::Int)) == INT32_MAX);
  CHECK(std::get<int32_t>(convert(Scalar{-1e10}, ScalarKind::Int)) == INT32_MIN);
  CHECK(std::get<int32_t>(convert(Scalar{std::nanf("")}, ScalarKind::Int)) == 0);
  CHECK(std::get<int32_t>(
            convert(Scalar{std::numeric_limits<float>::infinity()}, ScalarKind::Int)) == INT32_MAX);
  CHECK(std::get<int32_t>(convert(Scalar{true}, ScalarKind::Int)) == 1);
  CHECK(std::get<bool>(convert(Scalar{int32_t{-3}}, ScalarKind::Bool)) == true);
  CHECK(std::get<bool>(convert(Scalar{0.0f}, ScalarKind::Bool)) == false);
  CHECK(std::get<bool>(convert(Scalar{0.5}, ScalarKind::Bool)) == true);
  CHECK(std::get<float>(convert(Scalar{true}, ScalarKind::Float)) == 1.0f);
  CHECK(std::get<float>(convert(Scalar{int32_t{16777217}}, ScalarKind::Float)) == 16777216.0f);
  CHECK(std::get<float>(convert(Scalar{0.1}, ScalarKind::Float)) == 0.1f);
  CHECK(std::get<double>(convert(Scalar{0.1f}, ScalarKind::Double)) == static_cast<double>(0.1f));
  // double -> float beyond float's range: IEEE rounding, not UB.
  CHECK(std::get<float>(convert(Scalar{1e300}, ScalarKind::Float)) ==
        std::numeric_limits<float>::infinity());
  CHECK(std::get<float>(convert(Scalar{-1e300}, ScalarKind::Float)) ==
        -std::numeric_limits<float>::infinity());
  CHECK(std::get<float>(convert(Scalar{static_cast<double>(FLT_MAX) * (1 + 1e-10)},
                                ScalarKind::Float)) == FLT_MAX);
  CHECK(std::isnan(std::get<float>(convert(Scalar{std::nan("")}, ScalarKind::Float))));
  CHECK(std::get<bool>(convert(Scalar{true}, ScalarKind::Bool)) == true);
}

TEST_CASE("literal_text spellings") {
  CHECK(literal_text(Scalar{0.2f}) == "0.2f");
  CHECK(literal_text(Scalar{1.0f}) == "1.0f");
  CHECK(literal_text(Scalar{1e-5f}) == "1e-05f");
  CHECK(literal_text(Scalar{-2.5f}) == "-2.5f");
  CHECK(literal_text(Scalar{1e20f}) == "1e+20f");
  CHECK(literal_text(Scalar{-0.0f}) == "-0.0f");
  CHECK(literal_text(Scalar{0.1}) == "0.1");
  CHECK(literal_text(Scalar{3.0}) == "3.0");
  CHECK(literal_text(Scalar{int32_t{-7}}) == "-7");
  CHECK(literal_text(Scalar{int32_t{INT32_MIN}}) == "-2147483648");
  CHECK(literal_text(Scalar{true}) == "true");
  CHECK(literal_text(Scalar{false}) == "false");
  CHECK(literal_text(Scalar{std::numeric_limits<float>::infinity()}) == "INFINITY");
  CHECK(literal_text(Scalar{-std::numeric_limits<float>::infinity()}) == "-INFINITY");
  CHECK(literal_text(Scalar{std::nanf("")}) == "NAN");
  CHECK(literal_text(Scalar{std::numeric_limits<double>::infinity()}) == "(double)INFINITY");
  CHECK(literal_text(Scalar{std::nan("")}) == "(double)NAN");
}

TEST_CASE("literal_text round-trips random floats and doubles bit-exactly") {
  std::mt19937 rng(12345);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(x))
      continue;
    const std::string text = literal_text(Scalar{x});
    char* end = nullptr;
    const float back = std::strtof(text.c_str(), &end);
    REQUIRE_MESSAGE(std::bit_cast<uint32_t>(back) == std::bit_cast<uint32_t>(x), text);
    // The only unread character is the suffix, and the text is a floating literal.
    REQUIRE_MESSAGE(std::string(end) == (std::isinf(x) ? "" : "f"), text);
    if (!std::isinf(x))
      REQUIRE(text.find_first_of(".e") != std::string::npos);
    ++checked;
  }
  CHECK(checked > 190000);
  // Special values and subnormals.
  for (float x : {std::numeric_limits<float>::denorm_min(), FLT_MIN, FLT_MAX, -FLT_MAX,
                  std::numeric_limits<float>::infinity(), 16777216.0f, 0.1f, 3.4028235e38f}) {
    const std::string text = literal_text(Scalar{x});
    CHECK_MESSAGE(std::bit_cast<uint32_t>(std::strtof(text.c_str(), nullptr)) ==
                      std::bit_cast<uint32_t>(x),
                  text);
  }
  std::mt19937_64 rng64(777);
  for (int i = 0; i < 50000; ++i) {
    const double x = std::bit_cast<double>(static_cast<uint64_t>(rng64()));
    if (std::isnan(x) || std::isinf(x))
      continue;
    const std::string text = literal_text(Scalar{x});
    REQUIRE_MESSAGE(std::bit_cast<uint64_t>(std::strtod(text.c_str(), nullptr)) ==
                        std::bit_cast<uint64_t>(x),
                    text);
    REQUIRE(text.find_first_of(".e") != std::string::npos);
  }
}

TEST_CASE("literal_text reads back through the user function parser") {
  std::mt19937 rng(99);
  for (int i = 0; i < 3000; ++i) {
    float x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(x))
      continue;
    if (i % 3 == 0)
      x = std::ldexp(x, -std::ilogb(x)); // also plenty of ordinary magnitudes
    const auto f =
        UserFunDef::parse("lit", {}, ScalarKind::Float, "return " + literal_text(Scalar{x}) + ";");
    const float back = std::get<float>(f->evaluate({}));
    REQUIRE_MESSAGE(std::bit_cast<uint32_t>(back) == std::bit_cast<uint32_t>(x),
                    literal_text(Scalar{x}));
  }
  for (float x : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::denorm_min(), -0.0f, FLT_MAX}) {
    const auto f =
        UserFunDef::parse("lit", {}, ScalarKind::Float, "return " + literal_text(Scalar{x}) + ";");
    CHECK(std::bit_cast<uint32_t>(std::get<float>(f->evaluate({}))) == std::bit_cast<uint32_t>(x));
  }
  const auto nan = UserFunDef::parse("lit", {}, ScalarKind::Float, "return NAN;");
  CHECK(std::isnan(std::get<float>(nan->evaluate({}))));
  for (double x : {0.1, -1e-300, 1e300, 4.9e-324, std::numeric_limits<double>::infinity()}) {
    const auto f =
        UserFunDef::parse("lit", {}, ScalarKind::Double, "return " + literal_text(Scalar{x}) + ";");
    CHECK(std::bit_cast<uint64_t>(std::get<double>(f->evaluate({}))) == std::bit_cast<uint64_t>(x));
  }
  for (int32_t x : {0, 1, -1, 123456, INT32_MAX, INT32_MIN}) {
    const auto f =
        UserFunDef::parse("lit", {}, ScalarKind::Int, "return " + literal_text(Scalar{x}) + ";");
    CHECK(std::get<int32_t>(f->evaluate({})) == x);
  }
}
