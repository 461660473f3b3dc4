#!/usr/bin/env bash
# Issue 23, temporal blocking on an NVIDIA GPU: the fused (temporal2d) variants of Jacobi 2D
# 5-point and 9-point (clamp: two steps per launch) and of heat 2D (wrap: 2, 4 or 8 steps per
# launch) at SIZE^2 (default 8192) x STEPS (default 64), next to the hand-lowered single-step
# kernels (naive global2d, register window) launched STEPS times. THREADS=tied (default): every
# variant with work-group tiles and threads tied to the points of each step's region;
# THREADS=free: free-thread launches (each work-item loops over several points of a region) with
# the largest global size, local sizes LOCALS (default 32x4|32x8|64x4|32x16) and tiles TILES_X
# (32|64) x TILES_Y (8|16|32); THREADS=registers: the register-tile variants (a work-item per
# tile, its steps in registers) with local sizes LOCALS (default 32x4|32x8|64x4|16x16) and tiles
# TILES_X (default all) x TILES_Y (default all); THREADS=stream: the streamed pipelines (a
# work-item per column of TILES_Y rows, default all, x TILES_X, marching down the grid with a
# register window per fused step) with local sizes LOCALS (default 64x1|32x2) and loops along
# the stream unrolled by UNROLLS (default 1|3|6), checked at CHECK_SIZE M=256,N=512;
# THREADS=shared: the pipelines streamed by a work-group (a column TILES_X wide, default
# 64|128|256, TILES_Y rows long, default 128|256, each step's last rows in local memory shared by
# the group), steps per launch DEGREES (default all), tied launches and work-groups of TILES_X x 1,
# unrolled by UNROLLS (default 1), checked at CHECK_SIZE M=512,N=1024; THREADS=warp: the warp
# streams (a work-group of 24 to 32 lanes per column, each owning adjacent columns of every
# fused step's rows, held in registers and exchanged by shfl.sync on NVIDIA), tiles TILES_X
# (default all) x TILES_Y (default all), unrolled by UNROLLS (default 1|4; on a device that
# shuffles, where the rows are registers, the space plans only 4), checked at CHECK_SIZE
# M=512,N=1024.
# Each variant is first verified with all its launches at CHECK_SIZE (default M=96,N=128, every
# tile divides it) against the interpreter's iterate of the unfused step (the kernel source does
# not depend on the sizes); the timed runs at SIZE^2 then skip the check (64 interpreted steps at
# 8192^2 take minutes). A variant that fails the check is not timed. One JSON report per run
# under OUT; OUT/summary.tsv: stencil, variant, steps per launch, remainder steps (STEPS mod steps
# per launch: one more launch computes them), tile, staged input, register tile, work-group size,
# check status, median ms of the STEPS steps, the stream's unroll (empty for other variants).
# LIFTX (default build/liftx) is the executable; the NVIDIA ICD must be registered
# (scripts/nvidia-env.sh); DEVICE (default nvidia) picks another. JOBS (default 8) checks run at
# once. BASELINES=0 leaves out the single-step baselines; STENCILS (default: all three) picks;
# DEGREES (e.g. '3|4') keeps only those steps per launch. PROFILE (default nvidia) is the
# variant space's device profile: PROFILE=cpu lifts the GPU's private-memory budget (1 KB per
# work-item), to time the deeper pipelines it refuses. OUT/roofline.txt: the float4 copy
# at SIZE^2 measured first in the same call (`liftx run` prints it).
set -euo pipefail
liftx=${LIFTX:-build/liftx}
out=$1
size=${SIZE:-8192}
steps=${STEPS:-64}
jobs=${JOBS:-8}
device=${DEVICE:-nvidia}
threads=${THREADS:-tied}
# Every tile of the space divides the check's grid, wide enough for a 64-wide work-group of
# columns up to 8 wide (a stream's columns are 16 to 128 rows long).
if [ "$threads" = stream ]; then
  check_size=${CHECK_SIZE:-M=256,N=512}
elif [ "$threads" = shared ] || [ "$threads" = warp ]; then
  check_size=${CHECK_SIZE:-M=512,N=1024}
else
  check_size=${CHECK_SIZE:-M=96,N=128}
fi
if [ "$threads" = stream ]; then
  select=(--where stream=1 --where "local=${LOCALS:-64x1|32x2}" --where "unroll=${UNROLLS:-1|3|6}"
    --where "tile_x=${TILES_X:-1|2|4|8}" --where "tile_y=${TILES_Y:-16|32|64|128}")
elif [ "$threads" = shared ]; then
  # (The work-group size follows the column's width: one `variants` call per width below.)
  select=(--shared-streams --where shared=1 --where "unroll=${UNROLLS:-1}")
elif [ "$threads" = warp ]; then
  select=(--warp-streams --where warp=1 --where "unroll=${UNROLLS:-1|4}"
    --where "tile_x=${TILES_X:-32|64|128|256}" --where "tile_y=${TILES_Y:-64|128|256}")
elif [ "$threads" = tied ]; then
  select=(--where tied=true --where registers=0)
elif [ "$threads" = registers ]; then
  select=(--where registers=1 --where "local=${LOCALS:-32x4|32x8|64x4|16x16}"
    --where "tile_x=${TILES_X:-1|2|4|8}" --where "tile_y=${TILES_Y:-1|2|4|8|16|32}")
else
  select=(--where tied=false --where "global=${size}x$size"
    --where "local=${LOCALS:-32x4|32x8|64x4|32x16}" --where "tile_x=${TILES_X:-32|64}"
    --where "tile_y=${TILES_Y:-8|16|32}")
fi
[ -z "${DEGREES:-}" ] || select+=(--where "steps_per_launch=$DEGREES")
mkdir -p "$out"
"$liftx" run stencils/variants/jacobi2d5pt/global2d.lift --device "$device" --size "$size" \
  --repeat 20 >"$out/roofline.txt" 2>&1 || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" || true

# The stencils as STEPS-step programs: the step files with --steps, heat 2D with its count.
heat="$out/heat2d-$steps.lift"
sed "s/iterate(6,/iterate($steps,/" stencils/iterated/heat2d.lift >"$heat"
declare -A source=([jacobi2d5pt]=stencils/jacobi2d5pt.lift [jacobi2d9pt]=stencils/jacobi2d9pt.lift
  [heat2d]="$heat")
declare -A steps_option=([jacobi2d5pt]="--steps $steps" [jacobi2d9pt]="--steps $steps" [heat2d]="")

for stencil in ${STENCILS:-jacobi2d5pt jacobi2d9pt heat2d}; do
  if [ "$threads" = shared ]; then
    # One work-group per column: TILES_X x 1 work-items, SIZE / TILES_Y groups along y.
    for tx in $(echo "${TILES_X:-64|128|256}" | tr '|' ' '); do
      for ty in $(echo "${TILES_Y:-128|256}" | tr '|' ' '); do
        # shellcheck disable=SC2086
        "$liftx" variants "${source[$stencil]}" ${steps_option[$stencil]} --size "$size" \
          --profile "${PROFILE:-nvidia}" --where strategy=temporal2d "${select[@]}" \
          --where "tile_x=$tx" --where "tile_y=$ty" --where "local=${tx}x1" \
          --where "global=${size}x$((size / ty))" --out "$out/$stencil" --quiet \
          >>"$out/$stencil-variants.txt"
      done
    done
    continue
  fi
  # shellcheck disable=SC2086
  "$liftx" variants "${source[$stencil]}" ${steps_option[$stencil]} --size "$size" \
    --profile "${PROFILE:-nvidia}" --where strategy=temporal2d "${select[@]}" --out "$out/$stencil" --quiet \
    >"$out/$stencil-variants.txt"
done

# Checks (CPU-bound interpreter, tiny kernels) in parallel.
find "$out" -mindepth 2 -name '*-temporal2d.lift' | sort >"$out/variants.list"
# Free-thread variants are checked with their work-group size and four work-groups, which loop
# over the tiles of the small grid; register tiles with their work-group size.
xargs -P "$jobs" -I{} sh -c 'sidecar=${1%.lift}.json
  group=$(tr -d "\n " <"$sidecar" | sed -n "s/.*\"local\":\[\([0-9,]*\)\].*/\1/p")
  launch=""
  if grep -q "\"registers\": 1" "$sidecar"; then
    launch="--local $group"
  elif grep -q "\"tied\": false" "$sidecar"; then
    launch="--local $group --global $((2 * ${group%,*})),$((2 * ${group#*,}))"
  fi
  "$0" run "$1" --device "$3" --size "$2" $launch --repeat 1 --format json \
    >"${1%.lift}.check.json" 2>"${1%.lift}.check.err" || true' "$liftx" {} "$check_size" "$device" \
  <"$out/variants.list"

# Timings one at a time.
printf 'stencil\tvariant\tsteps_per_launch\tremainder_steps\ttile\tstage\tregisters\tlocal\tcheck\tmedian_ms\tunroll\n' >"$out/summary.tsv"
while read -r file; do
  stencil=$(basename "$(dirname "$file")")
  base=${file%.lift}
  status=$(tr -d '\n ' <"$base.check.json" | grep -o '"status":"[a-z_]*"' | cut -d'"' -f4 || true)
  params=$(tr -d '\n ' <"$base.json" | grep -o '"parameters":{[^}]*}')
  t=$(echo "$params" | grep -o '"steps_per_launch":[0-9]*' | cut -d: -f2)
  rest=$(echo "$params" | grep -o '"remainder_steps":[0-9]*' | cut -d: -f2 || true)
  tx=$(echo "$params" | grep -o '"tile_x":[0-9]*' | cut -d: -f2)
  ty=$(echo "$params" | grep -o '"tile_y":[0-9]*' | cut -d: -f2)
  stage=$(echo "$params" | grep -o '"stage":[0-9]*' | cut -d: -f2)
  registers=$(echo "$params" | grep -o '"registers":[0-9]*' | cut -d: -f2)
  unroll=$(echo "$params" | grep -o '"unroll":[0-9]*' | cut -d: -f2 || true)
  local_size=$(tr -d '\n ' <"$base.json" | grep -o '"local":\[[0-9,]*' | cut -d[ -f2 | tr , x)
  median=""
  if [ "$status" = ok ]; then
    "$liftx" run "$file" --device "$device" --size "$size" --launch "$base.json" --no-check \
      --repeat 10 --format json >"$base.time.json" 2>"$base.time.err" || true
    median=$(tr -d '\n ' <"$base.time.json" | grep -o '"time_ms":{[^}]*}' |
      grep -o '"median":[0-9.e+-]*' | cut -d: -f2 || true)
  fi
  printf '%s\t%s\t%s\t%s\t%sx%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$stencil" "$(basename "$file")" \
    "$t" "${rest:-0}" "$tx" "$ty" "$stage" "$registers" "$local_size" "$status" "$median" \
    "$unroll" >>"$out/summary.tsv"
done <"$out/variants.list"

# Single-step baselines, STEPS launches of one step (verified with two launches first).
[ "${BASELINES:-1}" = 1 ] || exit 0
for stencil in jacobi2d5pt jacobi2d9pt; do
  for variant in global2d window; do
    file=stencils/variants/$stencil/$variant.lift
    "$liftx" run "$file" --device "$device" --size "$size" --steps 2 --repeat 3 --format json \
      >"$out/baseline-$stencil-$variant-check2.json" || true
    "$liftx" run "$file" --device "$device" --size "$size" --steps "$steps" --no-check --repeat 10 \
      --format json >"$out/baseline-$stencil-$variant-$steps.json" || true
  done
done
