#!/bin/bash
# Issue 18: m-multi3 at the non-square sizes of docs/results.md "Non-square sizes on the H200"
# (jacobi2d5pt and srad1 at 2048x8192 and 8192x2048, budget 10), against the shipped model's runs
# there: a regression check of the model before shipping it.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
.gpu/liftx roofline --device nvidia > $OUT/roofline.txt 2>&1
xz -dc .gpu/x/m-multi3.json.xz > /tmp/m-multi3.json
for s in M=2048,N=8192 M=8192,N=2048; do
  echo "##### $s"
  STENCILS="jacobi2d5pt srad1" EXPLORE_TIMEOUT=${EXPLORE_TIMEOUT:-70} EXPLORE_ARGS="--timeout-ms 20000" \
    scripts/nvidia-explore.sh $OUT/explore.db /tmp/m-multi3.json $s 10 .gpu/liftx
done > $OUT/explore.txt 2>&1
xz -T0 $OUT/explore.db
grep -E "^(#####|===|best|time|bandwidth|explore of)" $OUT/explore.txt
