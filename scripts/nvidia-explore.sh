#!/usr/bin/env bash
# Explores each of the eight stencils on the first NVIDIA GPU with a given model and records every
# run in a database, so that what explore reaches can be set against the best variant known at
# that size (docs/results.md, "Explore at the user's size").
# Usage: scripts/nvidia-explore.sh DB MODEL SIZE BUDGET [LIFTX_BINARY]
# STENCILS (names) overrides the eight; EXPLORE_TIMEOUT (seconds per stencil, default 170) bounds
# each exploration so that one slow stencil cannot use up a device call; EXPLORE_ARGS adds options
# (e.g. --timeout-ms 20000). Variants the database has measured on the GPU are not run again, so a
# cut-off exploration goes on where it stopped when run again on the same database.
set -euo pipefail
db=$1
model=$2
size=$3
budget=$4
liftx=${5:-build/liftx}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/nvidia-env.sh"
read -r -a stencils <<<"${STENCILS:-gaussian gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d}"
for s in "${stencils[@]}"; do
  echo "=== $s"
  timeout "${EXPLORE_TIMEOUT:-170}" "$liftx" explore "$here/stencils/$s.lift" --device nvidia --model "$model" --size "$size" \
    --budget "$budget" --repeat 10 --db "$db" ${EXPLORE_ARGS:-} 2>&1 |
    grep -E '^(program|device|model|note|space|online|  \[|best|launch|time|bandwidth|why)' || echo "explore of $s failed"
done
