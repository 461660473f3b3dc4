#!/usr/bin/env bash
# The 4096^2 part of the NVIDIA dataset (the same plans as scripts/nvidia-collect.sh): the seven
# stencils whose variants run in milliseconds first, gaussian (whose slowest variants take 100+ ms
# per run at this size) last, with one warm-up run after the verification run instead of three,
# so that the size fits the GPU time there is. Resumable like nvidia-collect.sh.
# Usage: scripts/nvidia-collect-4096.sh DB TIME_LIMIT_SECONDS [LIFTX_BINARY]
set -euo pipefail
SIZES="M=4096,N=4096" WARMUP=1 \
  STENCILS="gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d gaussian" \
  exec "$(dirname "$0")/nvidia-collect.sh" "$@"
