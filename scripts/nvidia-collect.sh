#!/usr/bin/env bash
# Measures the NVIDIA dataset: the eight stencils at four sizes, a fixed-seed sample of 1000
# variants per stencil and size, on the first NVIDIA GPU. Resumable: each run measures what the
# database lacks and stops cleanly at its time limit.
# Usage: scripts/nvidia-collect.sh DB TIME_LIMIT_SECONDS [LIFTX_BINARY]
# SIZES, STENCILS (names, in measuring order), STENCIL_FILES (paths instead of names), SAMPLE
# (configurations per stencil and size, default 1000) and WARMUP override the defaults.
set -euo pipefail
db=$1
limit=$2
liftx=${3:-build/liftx}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/nvidia-env.sh"
builders=$(($(nproc) > 3 ? $(nproc) - 2 : 1))
read -r -a sizes <<<"${SIZES:-M=512,N=512 M=1024,N=1024 M=2048,N=2048 M=4096,N=4096}"
read -r -a stencils <<<"${STENCILS:-gaussian gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d}"
args=()
if [ -n "${STENCIL_FILES:-}" ]; then
  read -r -a args <<<"$STENCIL_FILES"
else
  for s in "${stencils[@]}"; do args+=("$here/stencils/$s.lift"); done
fi
for s in "${sizes[@]}"; do args+=(--size "$s"); done
"$liftx" collect "${args[@]}" \
  --device nvidia --profile nvidia --sample "${SAMPLE:-1000}" --seed 1 --repeat 10 --warmup "${WARMUP:-3}" \
  --timeout-ms 20000 --build-jobs "$builders" --time-limit "$limit" --resume --quiet --db "$db"
