#!/usr/bin/env bash
# Issue 23, temporal blocking of 3D stencils on an NVIDIA GPU: the fused (temporal3d) variants
# of Jacobi 3D 7-point (clamp) and heat 3D (wrap, a 7-point star) at SIZE^3 (default 512) x
# STEPS (default 64), next to single-step register-window (window3d) variants launched STEPS
# times. The space is sampled, per stencil: every tied work-group variant, SAMPLE_REGISTERS
# (default 60) register-tile variants and SAMPLE_FREE (default 80) free-thread work-group
# variants, both with x-major work-groups (LOCALS), and SAMPLE_WINDOWS (default 16) single-step
# window3d variants; seed SEED (default 1).
# Each variant's kernels are first verified at CHECK_SIZE (default M=64,N=64,O=128: every tile
# divides it) against the interpreter, the variant's launches cut to two of each (the Jacobi
# weights' magnitudes sum past 1: 64 steps of random data grow to 1e21, where float rounding
# differs; the kernel source does not depend on the sizes or the count); the timed runs at
# SIZE^3 then skip the check. A variant
# that fails the check is not timed. OUT/summary.tsv: stencil, variant, strategy, steps per
# launch, tile (x*y*z), staged input, register tile, streamed column, work-group size, check
# status, median ms of the STEPS steps. OUT/roofline.txt: the float4 copy at SIZE^3, measured first in the same call
# (`liftx run` of a single-step variant prints it).
# LIFTX (default build/liftx); the NVIDIA ICD must be registered (scripts/nvidia-env.sh); DEVICE
# (default nvidia); JOBS (default 8) checks at once; STENCILS (default: j3d7pt heat3d); a sample
# size of 0 leaves that kind out; DEADLINE (seconds since the start): variants not timed by then
# are listed as not_timed, so a call with a time limit still returns its table. PREGENERATED: a
# folder of variants already written by `liftx variants` (STENCIL/KIND/*.lift and *.json, e.g. on
# a machine without the GPU, --profile nvidia): copied into OUT instead of enumerating here.
set -euo pipefail
liftx=${LIFTX:-build/liftx}
out=$1
size=${SIZE:-512}
steps=${STEPS:-64}
check_size=${CHECK_SIZE:-M=64,N=64,O=128}
jobs=${JOBS:-8}
device=${DEVICE:-nvidia}
seed=${SEED:-1}
deadline=${DEADLINE:-100000}
locals=${LOCALS:-32x4x1|32x8x1|64x4x1|64x2x1|128x1x1|32x4x2|64x2x2|32x2x4|128x2x1|32x16x1}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" || true

if [ -n "${PREGENERATED:-}" ]; then
  cp -r "$PREGENERATED"/. "$out"/
fi
for stencil in ${STENCILS:-j3d7pt heat3d}; do
  [ -z "${PREGENERATED:-}" ] || break
  src=stencils/3d/$stencil.lift
  gen() { # name, sample size (0: none, all: every one), then --where options
    local name=$1 sample=$2
    shift 2
    [ "$sample" != 0 ] || return 0
    [ "$sample" = all ] || set -- "$@" --sample "$sample"
    "$liftx" variants "$src" --steps "$steps" --size "$size" --profile nvidia --seed "$seed" \
      "$@" --out "$out/$stencil/$name" --quiet >"$out/$stencil-$name-variants.txt" 2>&1 || true
  }
  gen tied "${SAMPLE_TIED:-all}" --where strategy=temporal3d --where registers=0 --where tied=true
  gen registers "${SAMPLE_REGISTERS:-60}" --where strategy=temporal3d --where registers=1 \
    --where stream=0 --where "local=$locals"
  gen stream "${SAMPLE_STREAM:-60}" --where strategy=temporal3d --where stream=1 \
    --where "local=$locals"
  gen free "${SAMPLE_FREE:-80}" --where strategy=temporal3d --where registers=0 --where tied=false \
    --where "local=$locals"
  gen windows "${SAMPLE_WINDOWS:-16}" --where strategy=window3d --where "local=$locals"
done

find "$out" -mindepth 3 -name '*.lift' ! -name '*.check.lift' | sort >"$out/variants.list"

# The copy roofline at SIZE^3: any variant's run prints it (a window3d variant's as one step).
first=$(grep windows "$out/variants.list" | head -1 || true)
[ -n "$first" ] || first=$(head -1 "$out/variants.list")
if [ -n "$first" ]; then
  single="$out/single-step.lift"
  sed "s/iterate($steps,/iterate(1,/" "$first" >"$single"
  "$liftx" run "$single" --device "$device" --size "$size" --launch "${first%.lift}.json" \
    --no-check --repeat 20 >"$out/roofline.txt" 2>&1 || true
fi
# Tied variants are checked with their work-group size (the grid follows the lengths), free-thread
# ones with it and two work-groups per dimension, which loop over the tiles of the small grid.
xargs -P "$jobs" -I{} sh -c 'sidecar=${1%.lift}.json
  group=$(tr -d "\n " <"$sidecar" | sed -n "s/.*\"local\":\[\([0-9,]*\)\].*/\1/p")
  launch="--local $group"
  if grep -q "\"tied\": false" "$sidecar"; then
    launch="$launch --global $(echo "$group" | awk -F, "{print 2*\$1\",\"2*\$2\",\"2*\$3}")"
  fi
  sed -E "s/iterate\(([0-9]+),/iterate(2,/g" "$1" >"${1%.lift}.check.lift"
  "$0" run "${1%.lift}.check.lift" --device "$3" --size "$2" $launch --repeat 1 --format json \
    >"${1%.lift}.check.json" 2>"${1%.lift}.check.err" || true' "$liftx" {} "$check_size" "$device" \
  <"$out/variants.list"

printf 'stencil\tvariant\tstrategy\tsteps_per_launch\ttile\tstage\tregisters\tstream\tlocal\tcheck\tmedian_ms\n' \
  >"$out/summary.tsv"
while read -r file; do
  stencil=$(basename "$(dirname "$(dirname "$file")")")
  base=${file%.lift}
  status=$(tr -d '\n ' <"$base.check.json" | grep -o '"status":"[a-z_]*"' | cut -d'"' -f4 || true)
  params=$(tr -d '\n ' <"$base.json" | grep -o '"parameters":{[^}]*}')
  field() { echo "$params" | grep -o "\"$1\":[0-9]*" | cut -d: -f2 || true; }
  strategy=$(tr -d '\n ' <"$base.json" | grep -o '"strategy":"[a-z0-9_]*"' | cut -d'"' -f4)
  local_size=$(tr -d '\n ' <"$base.json" | grep -o '"local":\[[0-9,]*' | cut -d[ -f2 | tr , x)
  median=""
  if [ "$status" = ok ] && [ "$SECONDS" -ge "$deadline" ]; then
    status=not_timed # past DEADLINE
  elif [ "$status" = ok ]; then
    "$liftx" run "$file" --device "$device" --size "$size" --launch "$base.json" --no-check \
      --repeat 10 --format json >"$base.time.json" 2>"$base.time.err" || true
    median=$(tr -d '\n ' <"$base.time.json" | grep -o '"time_ms":{[^}]*}' |
      grep -o '"median":[0-9.e+-]*' | cut -d: -f2 || true)
  fi
  printf '%s\t%s\t%s\t%s\t%sx%sx%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$stencil" "$(basename "$file")" \
    "$strategy" "$(field steps_per_launch)" "$(field tile_x)" "$(field tile_y)" "$(field tile_z)" \
    "$(field stage)" "$(field registers)" "$(field stream)" "$local_size" "$status" "$median" \
    >>"$out/summary.tsv"
done <"$out/variants.list"
