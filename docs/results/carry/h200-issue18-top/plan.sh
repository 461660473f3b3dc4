#!/bin/bash
# Issue 18: plans, on the development machine, the H200 measurements at the top of the space:
# for each of three models (the shipped one, m-multi and m-multi2: docs/results.md), the 50
# variants it ranks best over the whole space of each of the eight stencils, at two sizes that
# are not the 8192^2 reference (4096x8192 and 8192x4096). call.sh measures them.
# Usage: plan.sh LIFTX MODEL_DIR DB
set -euo pipefail
liftx=$1
models=$2
db=$3
files=""
for s in gaussian gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d; do files+=" stencils/$s.lift"; done
for m in m-multi2 shipped m-multi; do
  $liftx collect $files --size M=4096,N=8192 --size M=8192,N=4096 --profile nvidia --plan-only \
    --ranked-by $models/$m.json --sample 50 --quiet --db $db
done
