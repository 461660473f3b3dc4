#!/usr/bin/env bash
# The 4096^2 part of the NVIDIA dataset (scripts/nvidia-collect.sh measures the same plans): the
# seven stencils whose variants run in milliseconds first, gaussian (whose slowest variants take
# 100+ ms per run at this size) last, with one warm-up run after the verification run instead of
# three, so that the whole size fits the GPU time there was. Resumable like nvidia-collect.sh.
# Usage: scripts/nvidia-collect-4096.sh DB TIME_LIMIT_SECONDS [LIFTX_BINARY]
set -euo pipefail
db=$1
limit=$2
liftx=${3:-build/liftx}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/nvidia-env.sh"
builders=$(($(nproc) > 3 ? $(nproc) - 2 : 1))
stencils=(gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d gaussian)
files=()
for s in "${stencils[@]}"; do files+=("$here/stencils/$s.lift"); done
"$liftx" collect "${files[@]}" --size M=4096,N=4096 \
  --device nvidia --profile nvidia --sample 1000 --seed 1 --repeat 10 --warmup 1 \
  --timeout-ms 20000 --build-jobs "$builders" --time-limit "$limit" --resume --quiet --db "$db"
