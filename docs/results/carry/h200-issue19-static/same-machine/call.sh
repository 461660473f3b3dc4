#!/bin/bash
# Issue 19: static (--strategy model) and online (the default) explores of jacobi2d9pt and
# hotspot2d at 8192^2 on one machine, one after the other, each into its own database.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
for strategy in model online; do
  STENCILS="jacobi2d9pt hotspot2d" EXPLORE_TIMEOUT=120 EXPLORE_ARGS="--timeout-ms 20000 --strategy $strategy" \
    scripts/nvidia-explore.sh $OUT/explore-$strategy.db model/data/nvidia-model.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore-$strategy.txt 2>&1
  sqlite3 $OUT/explore-$strategy.db "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null 2>&1
  xz -T0 $OUT/explore-$strategy.db
  echo "### $strategy"; grep -E "^(===|best|time)" $OUT/explore-$strategy.txt
done
