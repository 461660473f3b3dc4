#!/bin/bash
# Issue 18, call 2: explore at 8192^2 with the model trained with line_segments_per_warp_access on
# H100 + H200 data (m-multi.json, shipped as model/data/nvidia-model.json): gaussian gradient hotspot2d jacobi2d5pt.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
STENCILS="gaussian gradient hotspot2d jacobi2d5pt" EXPLORE_TIMEOUT=135 EXPLORE_ARGS="--timeout-ms 20000" \
  scripts/nvidia-explore.sh $OUT/explore.db .gpu/i18b/m-multi.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore.txt 2>&1
xz -T0 $OUT/explore.db
grep -E "^(===|best|time|bandwidth)" $OUT/explore.txt
