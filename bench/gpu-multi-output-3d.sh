#!/usr/bin/env bash
# Issue 22 on an NVIDIA GPU, in two parts (each fits one lent-device call):
#   bench/gpu-multi-output-3d.sh sample DB OUT   the float4-copy roofline, the multi-output stencils at
#                                        4096^2 and the 3D suite at 256^3: the fixed-seed samples
#                                        planned beforehand into DB (`liftx collect ... --plan-only
#                                        --profile nvidia`, see docs/results.md), every variant
#                                        verified against the interpreter
#   bench/gpu-multi-output-3d.sh files DIR OUT   every variant file DIR/<stencil>--<what>--<id>.lift (from
#                                        `liftx variants --where ... --out`, with its .json launch)
#                                        run at 512^3 (or SIZE, e.g. M=256,N=512,O=768) against
#                                        stencils/3d/<stencil>.lift, one JSON report each,
#                                        OUT/<same name>.json
# LIFTX (default build/liftx) is the executable; the NVIDIA ICD must be registered
# (scripts/nvidia-env.sh).
set -euo pipefail
liftx=${LIFTX:-build/liftx}
mode=$1
out=$3
mkdir -p "$out"
case "$mode" in
sample)
  db=$2
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" || true
  "$liftx" run stencils/variants/jacobi2d5pt/global2d.lift --device nvidia --size 4096 \
    --repeat 20 >"$out/roofline.txt"
  "$liftx" collect stencils/srad1.lift stencils/srad1full.lift stencils/shallow_water.lift \
    --size M=4096,N=4096 --sample 100 --seed 1 --profile nvidia --device nvidia --db "$db" \
    --resume --build-jobs 12 --time-limit 200 --quiet 2>&1 | tail -n 4 >"$out/collect-2d.txt"
  "$liftx" collect stencils/3d/*.lift --size M=256,N=256,O=256 --sample 100 --seed 1 \
    --profile nvidia --device nvidia --db "$db" --resume --build-jobs 12 --time-limit 300 \
    --quiet 2>&1 | tail -n 4 >"$out/collect-3d.txt"
  "$liftx" db --db "$db" --csv "$out/measurements.csv"
  ;;
files)
  dir=$2
  for file in "$dir"/*.lift; do
    name=$(basename "${file%.lift}")
    "$liftx" run "$file" --launch "${file%.lift}.json" --device nvidia --size "${SIZE:-512}" \
      --reference "stencils/3d/${name%%--*}.lift" --format json >"$out/$name.json" || true
  done
  ;;
*)
  echo "usage: $0 sample DB OUT | files DIR OUT" >&2
  exit 2
  ;;
esac
