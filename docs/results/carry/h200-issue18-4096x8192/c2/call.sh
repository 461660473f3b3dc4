#!/bin/bash
# Issue 18: the second call of the 4096x8192 window collection (../call.sh): the same plan and
# options, resumed on the first call's database (carried in .gpu), so only the variants left
# unmeasured there (the rest of stencil2d, gaussian) are measured now.
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
xz -dc .gpu/h200-window-4096x8192.db.xz > $OUT/h200-window-4096x8192.db
files=""
for s in gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d gaussian; do files+=" stencils/$s.lift"; done
.gpu/liftx collect $files --size M=4096,N=8192 --where strategy=window \
  --device nvidia --profile nvidia --sample 250 --seed 1 --repeat 10 --warmup 3 \
  --timeout-ms 20000 --build-jobs 14 --time-limit 400 --resume --quiet \
  --db $OUT/h200-window-4096x8192.db > $OUT/collect.txt 2>&1
echo "collect exit $?" >> $OUT/collect.txt
xz -T0 $OUT/h200-window-4096x8192.db
cat $OUT/collect.txt
