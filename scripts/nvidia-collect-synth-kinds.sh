#!/usr/bin/env bash
# Training data of every kind of program on the first NVIDIA GPU: `liftx synth --kind K` writes
# COUNT programs per kind (seed 2101; docs/synth.md), and each is measured three ways, each stage
# time-limited so that every program gets its share: a stratified sample (every strategy of its
# space reached), a uniform sample, and the shipped model's top of the space (`--ranked-by`), so
# that the data holds the variants a ranking must order at the top as well as the rest. Every
# measurement is verified against the interpreter (at CHECK sizes, then timed at the size below).
# Resumable: a second run measures what the database lacks.
# Usage: scripts/nvidia-collect-synth-kinds.sh DB [LIFTX] [COUNT]
# (default build/liftx, 2 programs per kind). KINDS: the kinds (default every kind but stencil2d,
# which model/data/synth covers); STRATIFIED, UNIFORM, TOP: variants asked per program and stage
# (default 120, 120, 40); STAGE_SECONDS: each stage's limit, planning included (default 30: at
# most 6 kinds x 2 programs x 3 stages x 30 s = 18 minutes; a first stage may spend its limit
# enumerating the space, which the later stages and a second run read from the database); OUT:
# the programs' folder (default DB's folder/synth-kinds). DEVICE=cpu (profile cpu, sizes M=64,N=64 or 16³,
# checked at half) tries the whole script on PoCL first. PLAN_ONLY=1 only enumerates every
# stage's sample into DB (`collect --plan-only`, no device, no time limit): run it on the
# development machine first and carry DB, so that the device's stages measure from the first
# second (on 2026-12-07 the products' and a 32-step program's stages spent all their time
# enumerating on the device and measured nothing; data/h100-synth-kinds).
set -euo pipefail
db=$1
liftx=${2:-build/liftx}
count=${3:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
device=${DEVICE:-nvidia}
out=${OUT:-$(dirname "$db")/synth-kinds}
if [[ ${PLAN_ONLY:-0} == 1 ]]; then
  common=(--plan-only --profile "$device" --quiet --db "$db" --resume)
else
  [[ $device == nvidia ]] && source "$here/scripts/nvidia-env.sh"
  builders=$(($(nproc) > 3 ? $(nproc) - 2 : 1))
  common=(--device "$device" --profile "$device" --build-jobs "$builders" --quiet --db "$db"
          --resume --time-limit "${STAGE_SECONDS:-30}")
fi
# The sizes each kind is timed at (the regression suite's for its kind; 3D and products at the
# sizes of their training programs) and the smaller sizes its variants are checked at (every
# step of an iterated program).
declare -A size=([stencil3d]="M=256,N=256,O=256" [time_steps]="M=4096,N=4096"
                 [multi_output]="M=4096,N=4096" [layout]="M=4096,N=4096" [reduction]="M=8192,N=8192"
                 [product]="M=1024,N=1024,K=1024")
declare -A check=([stencil3d]="M=64,N=64,O=64" [time_steps]="M=512,N=512"
                  [multi_output]="M=512,N=512" [layout]="M=512,N=512" [reduction]="M=1024,N=1024"
                  [product]="M=128,N=128,K=128")
if [[ $device == cpu ]]; then
  for kind in "${!size[@]}"; do
    case $kind in
    stencil3d) size[$kind]="M=16,N=16,O=16" check[$kind]="M=8,N=8,O=8" ;;
    product) size[$kind]="M=32,N=32,K=32" check[$kind]="M=16,N=16,K=16" ;;
    *) size[$kind]="M=64,N=64" check[$kind]="M=32,N=32" ;;
    esac
  done
fi
for kind in ${KINDS:-stencil3d time_steps multi_output layout reduction product}; do
  [[ -n ${size[$kind]:-} ]] || { echo "unknown kind $kind" >&2; exit 2; }
  "$liftx" synth --kind "$kind" --count "$count" --seed 2101 --out "$out/$kind"
  for program in "$out/$kind"/*.lift; do
    sizes=(--size "${size[$kind]}" --check-size "${check[$kind]}")
    start=$(date +%s)
    "$liftx" collect "$program" "${common[@]}" "${sizes[@]}" --stratify \
      --sample "${STRATIFIED:-120}" --seed 41
    "$liftx" collect "$program" "${common[@]}" "${sizes[@]}" --sample "${UNIFORM:-120}" --seed 42
    "$liftx" collect "$program" "${common[@]}" "${sizes[@]}" --sample "${TOP:-40}" \
      --ranked-by "$here/model/data/$device-model.json"
    echo "$(basename "$program" .lift): $(($(date +%s) - start)) s"
  done
done
