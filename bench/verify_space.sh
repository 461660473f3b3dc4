#!/usr/bin/env bash
# Verifies every variant of every stencil on PoCL at a small size (C++ driver: the gated test case
# of test_space, which runs exec::run_program in-process with the check on and timing off).
# Usage: bench/verify_space.sh [BUILD_DIR] [M,N[,max_tile[,depth[,max_chunk]]]]
# The default space (max tile 4, depth 1, chunks up to 4) keeps the run to minutes; pass
# 16,32,32,2,32 for the full default space (thousands of kernels: about 0.3 s of PoCL build each).
set -euo pipefail
build=${1:-build}
spec=${2:-16,32,4,1,4}
cd "$(dirname "$0")/.."
LIFTX_VERIFY_ALL="$spec" "$build/tests/test_space" -tc="verify every variant*" --no-intro=true \
  | grep -E "variants|FAILED|test cases"
