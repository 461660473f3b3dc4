#!/bin/bash
# The transfer evaluations of docs/results.md, "H200 windows at 4096x8192": trained on the H100's
# uniform database alone (w1, b1) or with the H200's other data too (w2, b2: --add-db), tested on
# the 4096x8192 windows (w*) or the 8192^2 broad search (b*), runs to 90% and (-95) to 95%.
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
xz -dkc $C/h200-issue18-broad/broad-8192.db.xz > $T/broad-8192.db
A2="--add-db $T/nvidia-h200.db --add-db $T/h200-window-4096.db"
A3="$A2 --add-db $T/w48.db"
E="$liftx evaluate --db $T/nvidia-uniform.db --profile nvidia --nested --protocol transfer --boost-threads 2"
for k in boosted knn; do
  for f in 0.9 0.95; do
    s=$([ $f = 0.9 ] && echo "" || echo "-95")
    $E --fraction $f --kinds $k --test-db $T/w48.db --out $out/w1-$k$s >$out/w1-$k$s.txt 2>&1
    $E --fraction $f --kinds $k --test-db $T/w48.db $A2 --out $out/w2-$k$s >$out/w2-$k$s.txt 2>&1
    $E --fraction $f --kinds $k --test-db $T/broad-8192.db --out $out/b1-$k$s >$out/b1-$k$s.txt 2>&1
    $E --fraction $f --kinds $k --test-db $T/broad-8192.db $A3 --out $out/b2-$k$s >$out/b2-$k$s.txt 2>&1
  done
done
