#pragma once
// Shared by the tests that verify lowered variants on a device (space, synth): the options of one
// checked, untimed run of a variant's launch against its high-level stencil, so that a rewrite
// that changed the function cannot pass.
#include "exec/run.hpp"
#include "space/space.hpp"

namespace liftx::test {

inline exec::RunOptions verify_options(const space::Variant& variant,
                                       const ir::Program& reference) {
  exec::RunOptions o;
  o.check = true;
  o.time = false;
  o.roofline = false;
  o.warmup = 0;
  o.repeat = 1;
  const codegen::Launch& launch = variant.launch;
  o.global.assign(launch.global.begin(), launch.global.begin() + launch.dims);
  o.local.assign(launch.local.begin(), launch.local.begin() + launch.dims);
  o.reference = &reference;
  return o;
}

} // namespace liftx::test
