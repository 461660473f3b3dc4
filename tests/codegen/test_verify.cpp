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
                                                    got.size(), want.data(), 1, {1e-4, 1.0}, 1);
  CHECK(c.mismatches == 0);
  CHECK(c.unwritten == 0);
  CHECK(c.max_abs_error == doctest::Approx(0.05).epsilon(0.01));
}

TEST_CASE("check_elements: an output whose every element is small is compared at its own scale") {
  // 64 steps of a decaying iteration leave values near 1e-25: against a floor of 1, zeros match.
  const std::vector<double> want = {1e-25, -3e-25, 2e-25};
  const std::vector<float> zeros = {0.0f, 0.0f, 0.0f};
  const exec::ElementCheck lenient = exec::check_elements(
      ir::ScalarKind::Float, bytes_of(zeros), 0, zeros.size(), want.data(), 1, {1e-4, 1.0}, 1);
  CHECK(lenient.mismatches == 0);
  const double floor = exec::output_floor(want.data(), want.size(), 1);
  CHECK(floor == doctest::Approx(3e-25));
  const exec::ElementCheck scaled = exec::check_elements(
      ir::ScalarKind::Float, bytes_of(zeros), 0, zeros.size(), want.data(), 1, {1e-4, floor}, 1);
  CHECK(scaled.mismatches == 3);
  // Rounding at the output's scale still matches, an element far below the others included.
  const std::vector<double> spread = {1e-25, -3e-25, 1e-31};
  const std::vector<float> rounded = {1.00001e-25f, -3.00002e-25f, 1.2e-31f};
  CHECK(exec::check_elements(ir::ScalarKind::Float, bytes_of(rounded), 0, rounded.size(),
                             spread.data(), 1, {1e-4, exec::output_floor(spread.data(), 3, 1)}, 1)
            .mismatches == 0);
}

TEST_CASE("output_floor: at most 1, the largest finite magnitude, never below a normal float") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> ordinary = {0.5, -3.0, inf, nan};
  CHECK(exec::output_floor(ordinary.data(), ordinary.size(), 1) == 1.0);
  // Every other element (a tuple's component): 1e-3, -inf and -2e-3.
  const std::vector<double> small = {1e-3, 7.0, -inf, 7.0, -2e-3};
  CHECK(exec::output_floor(small.data(), 3, 2) == doctest::Approx(2e-3));
  const std::vector<double> zeros = {0.0, -0.0};
  CHECK(exec::output_floor(zeros.data(), zeros.size(), 1) ==
        static_cast<double>(std::numeric_limits<float>::min()));
}

TEST_CASE("check_elements: mismatches and unwritten elements, the first reported by index") {
  // The bytes are elements 10 to 14 of an output of 15 (one chunk of a longer read).
  const std::vector<double> want = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5};
  const std::vector<float> got = {1, poison_value(), 3, 4.5f, 5};
  const exec::ElementCheck c = exec::check_elements(ir::ScalarKind::Float, bytes_of(got), 10,
                                                    got.size(), want.data(), 1, {1e-4, 1.0}, 1);
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
                           0, ints.size(), want.data(), 2, {0.0, 1.0}, 1);
  CHECK(c.mismatches == 1);
  CHECK(c.first_mismatch == 2);
  CHECK(c.first_got == -10);
  const std::vector<double> doubles = {7, 8, -9};
  c = exec::check_elements(ir::ScalarKind::Double,
                           reinterpret_cast<const unsigned char*>(doubles.data()), 0,
                           doubles.size(), want.data(), 2, {0.0, 1.0}, 1);
  CHECK(c.mismatches == 0);
  CHECK_THROWS(
      exec::check_elements(ir::ScalarKind::Bool, nullptr, 0, 0, want.data(), 1, {0.0, 1.0}));
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
  const exec::ElementCheck one = exec::check_elements(ir::ScalarKind::Float, bytes_of(got), 0, n,
                                                      want.data(), 1, {1e-4, 1.0}, 1);
  CHECK(one.mismatches > 0);
  for (unsigned threads : {2u, 3u, 5u, 8u, 0u}) {
    CAPTURE(threads);
    const exec::ElementCheck many = exec::check_elements(ir::ScalarKind::Float, bytes_of(got), 0, n,
                                                         want.data(), 1, {1e-4, 1.0}, threads);
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
