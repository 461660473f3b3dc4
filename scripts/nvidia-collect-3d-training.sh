#!/usr/bin/env bash
# Broad ground truth for the 3D training programs (model/data/programs: star3d_mirror, star3d_r2,
# aniso3d, edge3d19, box3d) on the first NVIDIA GPU: per program, uniform window3d variants (seed
# 31), then uniform variants of the whole space (seed 32), each stage time-limited so that every
# program gets its share. Resumable: a second run measures what the database lacks.
# Usage: scripts/nvidia-collect-3d-training.sh DB [LIFTX] [SIZE]
# (default build/liftx, 256: M = N = O = SIZE). WINDOWS, UNIFORM: variants asked per program and
# stage (default 250, 400); WINDOW_SECONDS, UNIFORM_SECONDS: each stage's limit (default 42).
set -euo pipefail
db=$1
liftx=${2:-build/liftx}
size=${3:-256}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/nvidia-env.sh"
builders=$(($(nproc) > 3 ? $(nproc) - 2 : 1))
common=(--device nvidia --profile nvidia --build-jobs "$builders" --quiet --db "$db" --resume
        --size "M=$size,N=$size,O=$size")
for p in star3d_mirror star3d_r2 aniso3d edge3d19 box3d; do
  program=$here/model/data/programs/$p.lift
  start=$(date +%s)
  "$liftx" collect "$program" "${common[@]}" --where strategy=window3d \
    --sample "${WINDOWS:-250}" --seed 31 --time-limit "${WINDOW_SECONDS:-42}"
  echo "$p: window3d sample in $(($(date +%s) - start)) s"
  start=$(date +%s)
  "$liftx" collect "$program" "${common[@]}" --sample "${UNIFORM:-400}" --seed 32 \
    --time-limit "${UNIFORM_SECONDS:-42}"
  echo "$p: uniform sample in $(($(date +%s) - start)) s"
done
