#!/bin/bash
# Issue 22: explore each 3D stencil of stencils/3d/ at 512^3 on an NVIDIA GPU with the model
# trained on the 3D samples at 256^3, BUDGET (default 10) verified runs each.
# usage: [LIFTX=build/liftx] [MODEL=FILE.json] [BUDGET=10] bench/gpu-explore-3d-model.sh OUT STENCIL...
# OUT gets gpu.txt, explore-STENCIL.txt (the report), e3d.db (the measurements), times.txt.
# The libraries carried in .gpu/ (bench/device-openmpi.sh) serve a build copied to the device.
set -u
out=$1
shift
liftx=${LIFTX:-build/liftx}
model=${MODEL:-}
if [ -z "$model" ]; then  # the 3D model of bench/RESULTS.md, from its archive in data/
  tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
  tar xJf data/h200-3d-512-explore-model.tar.xz -C "$tmp" h200-3d-512-explore-model/nvidia-3d-model.json || exit 2
  model=$tmp/h200-3d-512-explore-model/nvidia-3d-model.json
fi
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.gpu/lib:$PWD/.gpu/ompi-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# shellcheck disable=SC1091
source bench/device-openmpi.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt"
for s in "$@"; do
  start=$(date +%s)
  timeout 240 "$liftx" explore "stencils/3d/$s.lift" --device nvidia --size 512 \
    --budget "${BUDGET:-10}" --model "$model" --db "$out/e3d.db" >"$out/explore-$s.txt" 2>&1
  echo "$s rc=$? $(($(date +%s) - start)) s" >>"$out/times.txt"
  grep -E "^best|^bandwidth|out_of_resources|^  \[" "$out/explore-$s.txt" | tail -12
done
