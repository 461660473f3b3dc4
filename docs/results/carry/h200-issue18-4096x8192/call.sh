#!/bin/bash
# Issue 18: H200 training data at a large non-square size kept apart from the 8192^2 reference:
# a fixed-seed sample of 250 window variants per stencil at M=4096 rows of N=8192, measured and
# verified like the rest of the dataset (resumable: run again on the same database to go on).
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
files=""
for s in gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d gaussian; do files+=" stencils/$s.lift"; done
.gpu/liftx collect $files --size M=4096,N=8192 --where strategy=window \
  --device nvidia --profile nvidia --sample 250 --seed 1 --repeat 10 --warmup 3 \
  --timeout-ms 20000 --build-jobs 14 --time-limit 330 --resume --quiet \
  --db $OUT/h200-window-4096x8192.db > $OUT/collect.txt 2>&1
echo "collect exit $?" >> $OUT/collect.txt
xz -T0 $OUT/h200-window-4096x8192.db
cat $OUT/collect.txt
