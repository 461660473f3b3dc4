#!/bin/bash
# Issue 18: srad2 on one H200, its best known variant at 8192^2 (the broad search's: window
# split 2, 2x1 v2, 2048x8192 / 16x8) against the best of m-multi3's explore (interchanged window
# 4x2 v2, 2048x2048 / 1x256), alternately, twice each, verified against the interpreter.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
R=docs/results/carry/h200-issue18-top/explore/retime
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
for i in 1 2; do
  echo "=== best known: window split 2 2x1 v2 2048x8192/16x8, try $i"
  .gpu/liftx run $R/srad2-best-known.lift --device nvidia --size M=8192,N=8192 --global 2048,8192 --local 16,8 --repeat 10 --reference stencils/srad2.lift --timeout-ms 120000 2>&1 | grep -E "^(time|check|bandwidth|error)"
  echo "=== explore's best: window interchange 4x2 v2 2048x2048/1x256, try $i"
  .gpu/liftx run $R/srad2-explore-best.lift --device nvidia --size M=8192,N=8192 --global 2048,2048 --local 1,256 --repeat 10 --reference stencils/srad2.lift --timeout-ms 120000 2>&1 | grep -E "^(time|check|bandwidth|error)"
done > $OUT/retime.txt 2>&1
cat $OUT/retime.txt
