#!/bin/bash
# Issue 18: the "best known" variant of each of the eight 2D stencils at 8192^2, from a broad
# measured search: 500 register-window variants and 500 uniformly sampled variants per stencil
# (fixed seeds), planned on the development machine with
#   liftx collect FILES --size M=8192,N=8192 --sample 500 --seed 21 --where strategy=window \
#     --profile nvidia --plan-only --db DB
#   liftx collect FILES --size M=8192,N=8192 --sample 500 --seed 22 --profile nvidia --plan-only --db DB
# and measured here, resumably: each call measures what DB lacks for TIME_LIMIT seconds (windows
# first), then leaves the database in OUT. Every variant is verified against the interpreter on
# all 67 million outputs before it is timed (median of 10 after 3 warm-ups).
# usage: [LIFTX=.gpu/liftx] [STENCILS="gaussian ..."] bench/gpu-broad-search-8192.sh DB.xz OUT TIME_LIMIT
# STENCILS (default all eight) limits a call to some of them: each target's interpreted reference
# at 8192^2 costs up to 600 CPU-seconds, paid again by every call on a fresh machine.
set -u
db=$1
out=$2
limit=$3
liftx=${LIFTX:-.gpu/liftx}
mkdir -p "$out"
# A database that cannot be read stops the call: collect would plan afresh into an empty one.
xz -dc "$db" >"$out/broad.db" || { echo "gpu-broad-search-8192: cannot read $db" >&2; exit 2; }
export LD_LIBRARY_PATH=$PWD/.gpu/lib:$PWD/.gpu/ompi-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# shellcheck disable=SC1091
source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$out/gpu.txt"
files=()
for s in ${STENCILS:-gaussian gradient hotspot2d jacobi2d5pt jacobi2d9pt srad1 srad2 stencil2d}; do
  files+=("stencils/$s.lift")
done
builders=$(($(nproc) > 3 ? $(nproc) - 2 : 1))
start=$(date +%s)
for selection in "--seed 21 --where strategy=window" "--seed 22"; do
  left=$((limit - ($(date +%s) - start)))
  ((left > 20)) || break
  # shellcheck disable=SC2086
  "$liftx" collect "${files[@]}" --size M=8192,N=8192 --sample 500 $selection \
    --device nvidia --profile nvidia --repeat 10 --warmup 3 --timeout-ms 20000 \
    --build-jobs "$builders" --time-limit "$left" --resume --quiet --db "$out/broad.db" \
    >>"$out/collect.txt" 2>&1
  echo "selection '$selection' rc=$? at $(($(date +%s) - start)) s" >>"$out/times.txt"
done
cat "$out/times.txt"
tail -20 "$out/collect.txt"
xz -T0 -6 "$out/broad.db"
