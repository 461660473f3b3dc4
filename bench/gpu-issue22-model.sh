#!/bin/bash
# usage: bench/gpu-issue22-model.sh OUT STENCIL...   (explore each 3D stencil at 512^3 with the 3D-trained model)
out=$1; shift
export LD_LIBRARY_PATH=$PWD/.gpu/lib:$PWD/.gpu/ompi-lib
source bench/device-openmpi.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $out/gpu.txt
for s in "$@"; do
  start=$(date +%s)
  timeout 240 .gpu/liftx explore stencils/3d/$s.lift --device nvidia --size 512 --budget 10 \
    --model .gpu/m3d/nvidia-3d-model.json --db $out/e3d.db > $out/explore-$s.txt 2>&1
  echo "$s rc=$? $(( $(date +%s) - start )) s" >> $out/times.txt
  grep -E "^best|^bandwidth|out_of_resources|^  \[" $out/explore-$s.txt | tail -12
done
