#!/bin/bash
# Issue 19: the static order (explore --strategy model) over the whole space, for the three
# stencils whose online explore ran in call 2, same kind of machine, same budget.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
STENCILS="jacobi2d9pt hotspot2d srad2" EXPLORE_TIMEOUT=150 EXPLORE_ARGS="--timeout-ms 20000 --strategy model" \
  scripts/nvidia-explore.sh $OUT/explore-static.db model/data/nvidia-model.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore-static.txt 2>&1
xz -T0 $OUT/explore-static.db
grep -E "^(===|space|best|time|bandwidth)" $OUT/explore-static.txt
