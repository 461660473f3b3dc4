#!/bin/bash
# The 3D and multi-output check of docs/results.md, "The top of the space": the shipped recipe
# (boosted, log, depth 6, all columns; not nested: the setting was fixed before) trained on the
# H100 data alone (h100-only.txt) or with every H200 database of the shipped model
# (h100-h200.txt), tested on the H200's 3D and multi-output samples (issue 22: 256³ samples and
# 512³ windows, merged), without srad1 at 4096² (an input of nvidia-h200.db, so in training).
# Every database's features refreshed first, as scripts/train-nvidia-model.sh does.
# Usage: evaluate.sh LIFTX OUT_DIR (from the repository root; databases decompressed to $T)
set -euo pipefail
liftx=$1
out=$2
T=${T:-/tmp}
C=docs/results/carry
xz -dc model/data/nvidia.db.xz > $T/h100.db
xz -dc model/data/nvidia-h200.db.xz > $T/h200.db
xz -dc $C/h200-window-4096/h200-window-4096.db.xz > $T/w4096.db
xz -dc $C/h200-issue18-4096x8192/h200-window-4096x8192.db.xz > $T/w48.db
xz -dc $C/h200-issue18-top/top.db.xz > $T/top.db
xz -dc $C/h200-issue22/i22.db.xz > $T/i22.db
xz -dc $C/h200-issue22-512-windows/w3d.db.xz > $T/w3d.db
rm -f $T/test3d.db
scripts/merge-perf-db.sh $T/test3d.db $T/i22.db $T/w3d.db
sqlite3 $T/test3d.db "DELETE FROM measurements WHERE configuration_id IN (SELECT c.id FROM
  configurations c JOIN variants v ON v.id = c.variant_id JOIN programs p ON p.id = v.program_id
  WHERE p.name = 'srad1')"
for db in h100 h200 w4096 w48 top test3d; do $liftx db --db $T/$db.db --refresh-features nvidia; done
E="$liftx evaluate --db $T/h100.db --profile nvidia --protocol transfer --test-db $T/test3d.db
  --kind boosted --transform log --boost-depth 6 --features all --boost-threads 2 --quiet"
$E > $out/h100-only.txt 2>&1
$E --add-db $T/h200.db --add-db $T/w4096.db --add-db $T/w48.db --add-db $T/top.db > $out/h100-h200.txt 2>&1
