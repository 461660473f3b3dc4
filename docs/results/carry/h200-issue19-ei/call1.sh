#!/bin/bash
# Explore jacobi2d9pt at 8192^2 with expected improvement first (batches of 4, the shipped model),
# after re-timing its best known variant once.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
.gpu/liftx run docs/results/carry/h200-issue18-broad/c8/j9-4x2v4.lift --device nvidia --size M=8192,N=8192 --global 2048,4096 --local 128,4 --repeat 10 --reference stencils/jacobi2d9pt.lift --timeout-ms 60000 2>&1 | grep -E "^(time|check|bandwidth|error)" > $OUT/retime.txt
STENCILS="jacobi2d9pt" EXPLORE_TIMEOUT=175 EXPLORE_ARGS="--timeout-ms 20000 --acquisition ei" \
  scripts/nvidia-explore.sh $OUT/explore.db model/data/nvidia-model.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore.txt 2>&1
xz -T0 $OUT/explore.db
cat $OUT/gpu.txt $OUT/retime.txt; grep -E "^(===|space|online|  \[|best|time|bandwidth)" $OUT/explore.txt
