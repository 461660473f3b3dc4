#!/usr/bin/env bash
# Issue 27: the same 120 planned variants measured on each GPU of the host at once (one database each).
set -u
liftx=${LIFTX:-build/liftx}
out=$1
mkdir -p "$out"
$liftx collect stencils/jacobi2d5pt.lift stencils/gradient.lift --profile nvidia --device nvidia --size 1024 --sample 60 --seed 7 --plan-only --db "$out/plan.db" --quiet > /dev/null
cp "$out/plan.db" "$out/gpu0.db"; cp "$out/plan.db" "$out/gpu1.db"
LIFTX_CACHE_DIR=/tmp/c0 $liftx collect stencils/jacobi2d5pt.lift stencils/gradient.lift --profile nvidia --device 0:0 --size 1024 --sample 60 --seed 7 --db "$out/gpu0.db" --quiet > "$out/gpu0.log" 2>&1 &
LIFTX_CACHE_DIR=/tmp/c1 $liftx collect stencils/jacobi2d5pt.lift stencils/gradient.lift --profile nvidia --device 0:1 --size 1024 --sample 60 --seed 7 --db "$out/gpu1.db" --quiet > "$out/gpu1.log" 2>&1 &
wait
sqlite3 -csv "$out/gpu0.db" "ATTACH '$out/gpu1.db' AS g1; SELECT a.configuration_id, a.status, a.median_ms, b.status, b.median_ms FROM measurements a JOIN g1.measurements b USING (configuration_id)" > "$out/pairs.csv"
