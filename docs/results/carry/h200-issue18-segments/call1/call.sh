#!/bin/bash
# Issue 18, a new feature (line_segments_per_warp_access): jacobi2d9pt explored at 8192^2 with two
# models trained with it (H100 data only; H100 + H200 data without the 8192^2 broad search), on
# one machine, beside a re-timing of the best known variant.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
for i in 1 2; do
  echo "=== j9 window 4x2 v4 2048x4096/128x4 tied, try $i"
  .gpu/liftx run docs/results/carry/h200-issue18-broad/c8/j9-4x2v4.lift --device nvidia --size M=8192,N=8192 --global 2048,4096 --local 128,4 --repeat 10 --reference stencils/jacobi2d9pt.lift --timeout-ms 60000 2>&1 | grep -E "^(time|check|bandwidth|error)"
done > $OUT/retime.txt 2>&1
for m in m-multi m-h100; do
  STENCILS="jacobi2d9pt" EXPLORE_TIMEOUT=170 EXPLORE_ARGS="--timeout-ms 20000" \
    scripts/nvidia-explore.sh $OUT/explore-$m.db .gpu/i18b/$m.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore-$m.txt 2>&1
  xz -T0 $OUT/explore-$m.db
done
cat $OUT/retime.txt; grep -E "^(===|best|time|bandwidth|  \[)" $OUT/explore-*.txt
