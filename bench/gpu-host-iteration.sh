#!/usr/bin/env bash
# Issue 23, host-side iteration on an NVIDIA GPU: the hand-lowered naive (global2d) and register-
# window variants of the Jacobi 2D stencils at SIZE^2 (default 8192), as one launch and as STEPS
# launches (default 64) of the same kernel with two buffers swapped (`--steps`). Each kernel is
# first verified at SIZE^2 with two launches (the swap included) against the interpreter's iterate;
# the timed runs then skip the check (64 interpreted steps at 8192^2 take minutes; the kernel
# source is the same). One JSON report per run under OUT.
# LIFTX (default build/liftx) is the executable; the NVIDIA ICD must be registered
# (scripts/nvidia-env.sh).
set -euo pipefail
liftx=${LIFTX:-build/liftx}
out=$1
size=${SIZE:-8192}
steps=${STEPS:-64}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" || true
for stencil in jacobi2d5pt jacobi2d9pt; do
  for variant in global2d window; do
    file=stencils/variants/$stencil/$variant.lift
    "$liftx" run "$file" --device nvidia --size "$size" --steps 2 --repeat 3 --format json \
      >"$out/$stencil-$variant-check2.json" || true
    "$liftx" run "$file" --device nvidia --size "$size" --no-check --repeat 20 --format json \
      >"$out/$stencil-$variant-1.json" || true
    "$liftx" run "$file" --device nvidia --size "$size" --steps "$steps" --no-check --repeat 10 \
      --format json >"$out/$stencil-$variant-$steps.json" || true
  done
done
