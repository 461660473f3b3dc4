#!/bin/bash
# Issue 18: explore at 8192^2 on the H200 with m-multi3 (the shipped recipe trained on the H100
# data and every H200 measurement that is not at 8192^2, the top-of-space rows of ../call.sh
# included), budget 10, online batches of 4, every run verified: the stencils named in STENCILS.
# The float4-copy roofline is measured first, so the ranking sees the device's bandwidth as the
# earlier explores did.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
.gpu/liftx roofline --device nvidia > $OUT/roofline.txt 2>&1
xz -dc .gpu/x/m-multi3.json.xz > /tmp/m-multi3.json
EXPLORE_TIMEOUT=${EXPLORE_TIMEOUT:-120} EXPLORE_ARGS="--timeout-ms 20000" \
  scripts/nvidia-explore.sh $OUT/explore.db /tmp/m-multi3.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore.txt 2>&1
xz -T0 $OUT/explore.db
cat $OUT/roofline.txt; grep -E "^(===|best|time|bandwidth|explore of)" $OUT/explore.txt
