#!/bin/bash
# Issue 18, call 2: explore jacobi2d9pt, hotspot2d and srad2 at 8192^2 with the shipped model on the
# machine that ran the broad search, and re-time jacobi2d9pt's best known variant there
# (j9-4x2v4.lift: the `printed` text of variant 28 of ../../h200-8192/h200-explore.db.xz, found at
# run 18 of a budget-20 explore on 2026-11-26). Run from the repository root with .gpu/ carried.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
for i in 1 2; do
  echo "=== j9 window 4x2 v4 2048x4096/128x4 tied, try $i"
  .gpu/liftx run docs/results/carry/h200-issue18-broad/c8/j9-4x2v4.lift --device nvidia --size M=8192,N=8192 --global 2048,4096 --local 128,4 --repeat 10 --reference stencils/jacobi2d9pt.lift --timeout-ms 60000 2>&1 | grep -E "^(time|check|bandwidth|error)"
done > $OUT/retime.txt 2>&1
STENCILS="jacobi2d9pt hotspot2d srad2" EXPLORE_TIMEOUT=160 EXPLORE_ARGS="--timeout-ms 20000" \
  scripts/nvidia-explore.sh $OUT/explore.db model/data/nvidia-model.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore.txt 2>&1
.gpu/liftx roofline --device nvidia > $OUT/roofline.txt 2>&1
xz -T0 $OUT/explore.db
cat $OUT/retime.txt; grep -E "^(===|best|time|bandwidth)" $OUT/explore.txt; tail -3 $OUT/roofline.txt
