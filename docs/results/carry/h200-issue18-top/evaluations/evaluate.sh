#!/bin/bash
# The offline evaluation of docs/results.md, "The top of the space": nested transfer to the 8192^2
# broad search (H200) of models trained on the H100's uniform database plus every H200 database
# that is not at 8192^2, the top-of-space rows (../top.db.xz) included; runs to 90% and (-95) 95%.
# Usage: evaluate.sh LIFTX OUT_DIR (from the repository root; databases decompressed to $T)
set -euo pipefail
liftx=$1
out=$2
T=${T:-/tmp}
C=docs/results/carry
xz -dkc model/data/nvidia.db.xz > $T/nvidia-uniform.db
sqlite3 $T/nvidia-uniform.db "DELETE FROM measurements WHERE configuration_id NOT IN
  (SELECT configuration_id FROM plan_configurations)"
xz -dkc model/data/nvidia-h200.db.xz > $T/nvidia-h200.db
xz -dkc $C/h200-window-4096/h200-window-4096.db.xz > $T/h200-window-4096.db
xz -dkc $C/h200-issue18-4096x8192/h200-window-4096x8192.db.xz > $T/w48.db
xz -dkc $C/h200-issue18-top/top.db.xz > $T/top.db
xz -dkc $C/h200-issue18-broad/broad-8192.db.xz > $T/broad-8192.db
A4="--add-db $T/nvidia-h200.db --add-db $T/h200-window-4096.db --add-db $T/w48.db --add-db $T/top.db"
E="$liftx evaluate --db $T/nvidia-uniform.db --profile nvidia --nested --protocol transfer --boost-threads 2"
for k in boosted knn; do
  for f in 0.9 0.95; do
    s=$([ $f = 0.9 ] && echo "" || echo "-95")
    $E --fraction $f --kinds $k --test-db $T/broad-8192.db $A4 --out $out/b3-$k$s >$out/b3-$k$s.txt 2>&1
  done
done
