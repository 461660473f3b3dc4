#!/usr/bin/env bash
# The full-warp streams (32 lanes, the shifted last tiles among them) of the fused programs, on
# the first NVIDIA GPU, into two databases: SUITE_DB, the regression suite's three fused inputs
# at 8192² × 64 steps (their pools predate the shifted streams, which are now the fastest
# variants the space holds: data/h100-fused-explores-worst-of-three), and TRAIN_DB, the
# time-steps route's three training programs at 4096² × 64 (its training data holds no 32-lane
# stream, and the shipped model ranks the slow four-column ones first for jacobi2d9pt).
# Every variant is checked with all 64 steps at 512² against the interpreter, then timed.
# Resumable: a second run measures what the databases lack; each program gets LIMIT seconds
# (default 120), planning included.
# Usage: scripts/nvidia-collect-warp-streams.sh SUITE_DB TRAIN_DB [LIFTX] (default build/liftx).
# PLAN_ONLY=1 only enumerates the variants into the databases (`collect --plan-only`, no device,
# no time limit): run it on the development machine first and carry both databases, so that the
# device's time goes to measuring.
set -euo pipefail
suite_db=$1
train_db=$2
liftx=${3:-build/liftx}
here=$(cd "$(dirname "$0")/.." && pwd)
if [[ ${PLAN_ONLY:-0} == 1 ]]; then
  common=(--plan-only --profile nvidia --quiet --resume)
else
  source "$here/scripts/nvidia-env.sh"
  builders=$(($(nproc) > 3 ? $(nproc) - 2 : 1))
  common=(--device nvidia --profile nvidia --build-jobs "$builders" --quiet --resume
          --time-limit "${LIMIT:-120}")
fi
streams=(--all --where warp=1 --where lanes=32 --check-size "M=512,N=512")
for name in jacobi2d5pt_x64 jacobi2d9pt_x64 heat2d_x64; do
  "$liftx" collect "$here/stencils/iterated/$name.lift" --size M=8192,N=8192 "${streams[@]}" \
    --db "$suite_db" "${common[@]}"
done
for name in box2d9_wrap_x64 cross2d_constant_x64 star2d_mirror_x64; do
  "$liftx" collect "$here/model/data/programs/$name.lift" --size M=4096,N=4096 "${streams[@]}" \
    --db "$train_db" "${common[@]}"
done
