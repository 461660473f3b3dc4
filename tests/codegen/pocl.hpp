#pragma once
// What the code-generation tests that run kernels share: PoCL, and one untimed run on random
// inputs verified element by element against the interpreter.
#include "exec/run.hpp"
#include "runtime/device.hpp"

#include <doctest/doctest.h>

namespace liftx::test {

/// PoCL (the CPU device), selected once per test binary.
inline runtime::Device& pocl() {
  static runtime::Device device = runtime::select_device("cpu");
  return device;
}

/// Runs `program` on PoCL at `sizes`, untimed, verified against `reference`'s interpretation
/// (the program's own when null).
inline exec::RunReport run_verified(const ir::Program& program, const Sizes& sizes,
                                    const ir::Program* reference = nullptr) {
  exec::RunOptions o;
  o.time = false;
  o.roofline = false;
  o.reference = reference;
  return exec::run_program(pocl(), program, sizes, o);
}

/// run_verified, checking that it ran, passed, compared `elements` elements and left none
/// unwritten.
inline void check_verified(const ir::Program& program, const Sizes& sizes, int64_t elements,
                           const ir::Program* reference = nullptr) {
  exec::RunReport r = run_verified(program, sizes, reference);
  INFO(r.message);
  INFO(r.kernel_source);
  CHECK(r.status == runtime::Status::ok);
  CHECK(r.verification.passed);
  CHECK(r.verification.elements == elements);
  CHECK(r.verification.unwritten == 0);
}

} // namespace liftx::test
