#!/usr/bin/env bash
# Measures the NVIDIA dataset: the eight stencils at four sizes, a fixed-seed sample of 1000
# variants per stencil and size, on the first NVIDIA GPU. Resumable: each run measures what the
# database lacks and stops cleanly at its time limit.
# Usage: scripts/nvidia-collect.sh DB TIME_LIMIT_SECONDS [LIFTX_BINARY]
set -euo pipefail
db=$1
limit=$2
liftx=${3:-build/liftx}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/nvidia-env.sh"
builders=$(($(nproc) > 3 ? $(nproc) - 2 : 1))
"$liftx" collect "$here"/stencils/*.lift \
  --size M=512,N=512 --size M=1024,N=1024 --size M=2048,N=2048 --size M=4096,N=4096 \
  --device nvidia --profile nvidia --sample 1000 --seed 1 --repeat 10 --warmup 3 \
  --timeout-ms 20000 --build-jobs "$builders" --time-limit "$limit" --resume --quiet --db "$db"
