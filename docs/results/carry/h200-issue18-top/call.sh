#!/bin/bash
# Issue 18: measures on the H200 the plans of plan.sh (each model's 50 best-ranked variants per
# stencil at 4096x8192 and 8192x4096; the database and the three models carried in .gpu/top),
# one collect per model, resumable; a variant two models share is measured once.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
.gpu/liftx devices --json > $OUT/devices.json
mkdir -p /tmp/top && xz -dc .gpu/top/top.db.xz > $OUT/top.db
files=""
for s in gaussian gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d; do files+=" stencils/$s.lift"; done
for m in m-multi2 shipped m-multi; do
  xz -dc .gpu/top/$m.json.xz > /tmp/top/$m.json
  echo "=== $m"
  .gpu/liftx collect $files --size M=4096,N=8192 --size M=8192,N=4096 --profile nvidia \
    --ranked-by /tmp/top/$m.json --sample 50 --device nvidia --repeat 10 --warmup 3 \
    --timeout-ms 20000 --build-jobs 14 --time-limit ${LIMIT:-150} --resume --quiet --db $OUT/top.db
  echo "collect exit $?"
done > $OUT/collect.txt 2>&1
xz -T0 $OUT/top.db
cat $OUT/collect.txt
