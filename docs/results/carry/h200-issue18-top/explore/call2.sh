#!/bin/bash
# Issue 18, the second explore call (see call.sh): the other four stencils, then srad2 again
# (cut off at 7 runs by call 1's 120 s limit) on call 1's database, so its 7 runs count and
# only the rest of its budget is measured.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
.gpu/liftx roofline --device nvidia > $OUT/roofline.txt 2>&1
xz -dc .gpu/x/m-multi3.json.xz > /tmp/m-multi3.json
xz -dc .gpu/x/explore-c1.db.xz > $OUT/explore.db
STENCILS="gradient hotspot2d jacobi2d5pt srad1" EXPLORE_TIMEOUT=100 EXPLORE_ARGS="--timeout-ms 20000" \
  scripts/nvidia-explore.sh $OUT/explore.db /tmp/m-multi3.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore.txt 2>&1
STENCILS="srad2" EXPLORE_TIMEOUT=175 EXPLORE_ARGS="--timeout-ms 20000" \
  scripts/nvidia-explore.sh $OUT/explore.db /tmp/m-multi3.json M=8192,N=8192 10 .gpu/liftx >> $OUT/explore.txt 2>&1
xz -T0 $OUT/explore.db
cat $OUT/roofline.txt; grep -E "^(===|best|time|bandwidth|explore of)" $OUT/explore.txt
