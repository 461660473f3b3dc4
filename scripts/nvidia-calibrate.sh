#!/usr/bin/env bash
# A new NVIDIA GPU's first day, as docs/calibrate.md describes it: calibrate on the first NVIDIA
# GPU with every shipped NVIDIA model removed, so that what explore then reaches comes from the
# calibration alone. The database, the calibration state and the model live under STATE_DIR
# (XDG_DATA_HOME=STATE_DIR/data): a call cut short, or a later call with a larger MINUTES, goes
# on where the last one stopped.
# Usage: scripts/nvidia-calibrate.sh STATE_DIR MINUTES [LIFTX_BINARY]
set -euo pipefail
state=$1
minutes=$2
liftx=${3:-build/liftx}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/nvidia-env.sh"
mkdir -p "$state"
export XDG_DATA_HOME=$state/data
"$liftx" calibrate --device nvidia --minutes "$minutes" --stencils "$here"/stencils/*.lift \
  --db "$state/calibration.db"
