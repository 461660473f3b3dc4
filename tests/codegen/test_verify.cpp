// The element-by-element comparison behind every verified run: what matches, what is counted,
// which mismatch is reported first, and that splitting the range over threads changes nothing.
#include "exec/verify.hpp"
#include "runtime/launch.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace liftx;

namespace {

const unsigned char* bytes_of(const std::vector<float>& v) {
  return reinterpret_cast<const unsigned char*>(v.data());
}

float poison_value() {
  float v;
  const uint32_t bits = runtime::kPoisonBits;
  std::memcpy(&v, &bits, 4);
  return v;
}

} // namespace

TEST_CASE("check_elements: equal, within tolerance, NaN and infinities match") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> want = {1.0, 1000.0, nan, inf, -inf, 0.0};
  // 1000.05 is 5e-5 relative to 1000: within 1e-4.
  const std::vector<float> got = {1.0f, 1000.05f, std::nanf(""), HUGE_VALF, -HUGE_VALF, 5e-5f};
  const exec::ElementCheck c = exec::check_elements(ir::ScalarKind::Float, bytes_of(got), 0,
                                                    got.size(), want.data(), 1, 1e-4, 1);
  CHECK(c.mismatches == 0);
  CHECK(c.unwritten == 0);
  CHECK(c.max_abs_error == doctest::Approx(0.05).epsilon(0.01));
}

TEST_CASE("check_elements: mismatches and unwritten elements, the first reported by index") {
  // The bytes are elements 10 to 14 of an output of 15 (one chunk of a longer read).
  const std::vector<double> want = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5};
  const std::vector<float> got = {1, poison_value(), 3, 4.5f, 5};
  const exec::ElementCheck c = exec::check_elements(ir::ScalarKind::Float, bytes_of(got), 10,
                                                    got.size(), want.data(), 1, 1e-4, 1);
  CHECK(c.mismatches == 2);
  CHECK(c.unwritten == 1);
  CHECK(c.first_mismatch == 11); // indices count from `first`
  CHECK(c.first_unwritten);
  CHECK(c.max_abs_error == doctest::Approx(0.5));
}

TEST_CASE("check_elements: int and double elements, a stride over tuple components") {
  const std::vector<double> want = {7, -1, 8, -1, -9, -1}; // component 0 of pairs
  const std::vector<int32_t> ints = {7, 8, -10};
  exec::ElementCheck c =
      exec::check_elements(ir::ScalarKind::Int, reinterpret_cast<const unsigned char*>(ints.data()),
                           0, ints.size(), want.data(), 2, 0.0, 1);
  CHECK(c.mismatches == 1);
  CHECK(c.first_mismatch == 2);
  CHECK(c.first_got == -10);
  const std::vector<double> doubles = {7, 8, -9};
  c = exec::check_elements(ir::ScalarKind::Double,
                           reinterpret_cast<const unsigned char*>(doubles.data()), 0,
                           doubles.size(), want.data(), 2, 0.0, 1);
  CHECK(c.mismatches == 0);
  CHECK_THROWS(exec::check_elements(ir::ScalarKind::Bool, nullptr, 0, 0, want.data(), 1, 0.0));
}

TEST_CASE("check_elements: any number of threads gives the one-thread result") {
  // Long enough to be split (a thread per 2^20 elements), with mismatches and unwritten elements
  // scattered over every thread's share.
  const size_t n = (size_t{5} << 20) + 12345;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> value(-4, 4);
  std::vector<double> want(n);
  std::vector<float> got(n);
  for (size_t i = 0; i < n; ++i) {
    got[i] = value(random);
    want[i] = got[i];
  }
  std::uniform_int_distribution<size_t> where(n / 3, n - 1); // none in the first thread's share
  for (int k = 0; k < 40; ++k) {
    const size_t i = where(random);
    if (k % 4 == 0)
      got[i] = poison_value();
    else
      want[i] += 0.5;
  }
  const exec::ElementCheck one =
      exec::check_elements(ir::ScalarKind::Float, bytes_of(got), 0, n, want.data(), 1, 1e-4, 1);
  CHECK(one.mismatches > 0);
  for (unsigned threads : {2u, 3u, 5u, 8u, 0u}) {
    CAPTURE(threads);
    const exec::ElementCheck many = exec::check_elements(ir::ScalarKind::Float, bytes_of(got), 0, n,
                                                         want.data(), 1, 1e-4, threads);
    CHECK(many.mismatches == one.mismatches);
    CHECK(many.unwritten == one.unwritten);
    CHECK(many.max_abs_error == one.max_abs_error);
    CHECK(many.first_mismatch == one.first_mismatch);
    CHECK(many.first_unwritten == one.first_unwritten);
  }
}

TEST_CASE("output_element: each kind's value, and the poison pattern") {
  bool poisoned = true;
  const float f = -2.5f;
  CHECK(exec::output_element(ir::ScalarKind::Float, reinterpret_cast<const unsigned char*>(&f),
                             &poisoned) == -2.5);
  CHECK_FALSE(poisoned);
  const float p = poison_value();
  CHECK(std::isnan(exec::output_element(ir::ScalarKind::Float,
                                        reinterpret_cast<const unsigned char*>(&p), &poisoned)));
  CHECK(poisoned);
  const int32_t i = -7;
  CHECK(exec::output_element(ir::ScalarKind::Int, reinterpret_cast<const unsigned char*>(&i),
                             &poisoned) == -7);
  CHECK_FALSE(poisoned);
  const double d = 1e300;
  CHECK(exec::output_element(ir::ScalarKind::Double, reinterpret_cast<const unsigned char*>(&d),
                             &poisoned) == 1e300);
  CHECK_FALSE(poisoned);
  CHECK_THROWS(exec::output_element(ir::ScalarKind::Bool,
                                    reinterpret_cast<const unsigned char*>(&i), &poisoned));
}
