#!/usr/bin/env bash
# Explores the eight stencils on the first NVIDIA GPU as a new device's user would: with the
# shipped NVIDIA models hidden (moved aside for the run, restored at exit), so explore takes the
# device's calibrated model from STATE_DIR (scripts/nvidia-calibrate.sh) when there is one, else
# the closest shipped model with online adaptation. Every run is recorded in STATE_DIR/explore.db.
# Usage: scripts/nvidia-first-day.sh STATE_DIR SIZE BUDGET [LIFTX_BINARY]
set -euo pipefail
state=$1
size=$2
budget=$3
liftx=${4:-build/liftx}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/nvidia-env.sh"
hidden=$(mktemp -d)
restore() { mv "$hidden"/*.json "$here/model/data/" 2>/dev/null || true; }
trap restore EXIT
mv "$here"/model/data/nvidia*-model.json "$hidden/"
mkdir -p "$state"
export XDG_DATA_HOME=$state/data
read -r -a stencils <<<"${STENCILS:-gaussian gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d}"
for s in "${stencils[@]}"; do
  echo "=== $s"
  timeout "${EXPLORE_TIMEOUT:-170}" "$liftx" explore "$here/stencils/$s.lift" --device nvidia \
    --size "$size" --budget "$budget" --db "$state/explore.db" 2>&1 |
    grep -E '^(model|note|space|online|  \[|best|time|bandwidth)' || echo "explore of $s failed"
done
