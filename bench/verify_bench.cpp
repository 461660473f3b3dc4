// The comparison every verified run makes (exec::check_elements): time per output element at a
// grid's size, on one thread and on every core. A variant measured at 8192^2 is checked on 67
// million elements; on a GPU the kernel itself takes a fraction of a millisecond.
//   build/verify_bench [side] [rounds]      (defaults: 8192, 3; the output is side x side floats)
#include "exec/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

using namespace liftx;

int main(int argc, char** argv) {
  const size_t side = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 8192;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const size_t n = side * side;
  // Kernel output and interpreter values as a verified run sees them: equal up to rounding.
  std::vector<float> got(n);
  std::vector<double> want(n);
  std::mt19937 random(1);
  std::uniform_real_distribution<float> value(-1, 1);
  for (size_t i = 0; i < n; ++i) {
    got[i] = value(random);
    want[i] = static_cast<double>(got[i]) * (1 + 1e-7);
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  fmt::print("verify_bench: {} x {} float outputs ({} elements), best of {} rounds\n", side, side,
             n, rounds);
  fmt::print("| threads | ms | ns per element | mismatches |\n|---|---|---|---|\n");
  for (unsigned threads : {1u, cores}) {
    double best = 1e30;
    int64_t mismatches = -1;
    for (int r = 0; r < rounds; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const exec::ElementCheck c = exec::check_elements(
          ir::ScalarKind::Float, reinterpret_cast<const unsigned char*>(got.data()), 0, n,
          want.data(), 1, {1e-4, 1.0}, threads);
      best = std::min(
          best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      mismatches = c.mismatches;
    }
    fmt::print("| {} | {:.1f} | {:.2f} | {} |\n", threads, best * 1e3, best * 1e9 / double(n),
               mismatches);
    if (cores == 1)
      break;
  }
  return 0;
}
