#!/usr/bin/env bash
# The main job: set up, build the liftx tool (only: the tests, benchmarks and link checks are the
# test command's), then explore the variants of the Jacobi 2D 5-point stencil on the default
# OpenCL device (PoCL on the CPU) with the shipped cost model: rank the variant space, build, run
# and verify the best-ranked few, and report the best.
set -euo pipefail
cd "$(dirname "$0")/.."
LIFTX_BUILD_TARGETS="${LIFTX_BUILD_TARGETS:-liftx}" scripts/setup.sh
build/liftx explore stencils/jacobi2d5pt.lift
