#!/usr/bin/env bash
# Issue 22, vector stores of tuple results on an NVIDIA GPU: every variant file of DIR (default:
# variants/ beside this script) run at 4096² against stencils/srad1full.lift (verified element by
# element on all five outputs before it is timed), one JSON report each in OUT. LIFTX (default
# build/liftx); the NVIDIA ICD registered (scripts/nvidia-env.sh).
#   run.sh OUT [DIR]
set -euo pipefail
out=$1
variants=${2:-$(dirname "$0")/variants}
mkdir -p "$out"
"${LIFTX:-build/liftx}" run stencils/variants/jacobi2d5pt/global2d.lift --device nvidia \
  --size 4096 --repeat 20 >"$out/roofline.txt"
for file in "$variants"/*.lift; do
  name=$(basename "${file%.lift}")
  "${LIFTX:-build/liftx}" run "$file" --launch "${file%.lift}.json" --device nvidia --size 4096 \
    --reference stencils/srad1full.lift --json >"$out/$name.json" || true
done
