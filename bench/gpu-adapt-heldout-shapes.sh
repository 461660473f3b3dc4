#!/usr/bin/env bash
# Issue 25 on a host with several NVIDIA GPUs: `liftx adapt` per stencil, one at a time per GPU,
# trained on nine shapes (powers of two from 256^2 to 4096^2, aspect ratios 1, 4 and 1/4) and
# evaluated on 16 held-out shapes
# (384^2 to 8192^2: tall, wide, odd, non-powers of two) against a broad search at each.
#
#   bench/gpu-adapt-heldout-shapes.sh OUT STENCIL...   (dealt to the GPUs in turn; each GPU runs its share
#                                          one after another)
#   Environment: LIFTX (default build/liftx), GPUS (default "0 1 2 3"), DBDIR (where the
#   performance databases live, default OUT: a second call with the same DBDIR continues, the
#   variants measured before stand in), BUILD_JOBS (default 6), TIME_LIMIT (seconds per adapt,
#   default none; a stopped adapt loses nothing measured), HELD_OUT (the held-out shapes,
#   default the 16 below: a call of a device's 10 minutes fits about 8 of them for two
#   stencils per GPU, so a long evaluation is split into calls sharing DBDIR).
# Every variant is verified against the interpreter before it is timed (median of 10 after a
# warm-up of at least 20 ms; the fractions from a confirm pass of 3 interleaved rounds of 10 runs,
# paired within the rounds). OUT gets adapt-eval-<s>.txt (the report), adapt-<s>.json (the artifact) and
# held-out-<s>.svg (the plot). The NVIDIA ICD must be registered (scripts/nvidia-env.sh).
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
out=$(mkdir -p "$1" && realpath "$1")
shift
liftx=$(realpath "${LIFTX:-build/liftx}")
read -r -a gpus <<< "${GPUS:-0 1 2 3}"
dbdir=$(mkdir -p "${DBDIR:-$out}" && realpath "${DBDIR:-$out}")
train=(256x256 512x512 1024x1024 2048x2048 4096x4096 512x2048 2048x512 1024x4096 4096x1024)
held_out=(384x384 640x480 768x768 1000x1000 1280x720 1536x1536 1920x1080 2047x2049 3000x3000
          3072x1024 1024x3072 5000x3000 6144x6144 8192x8192 512x8192 8192x512)
[ -z "${HELD_OUT:-}" ] || read -r -a held_out <<< "$HELD_OUT"
limit=()
[ -z "${TIME_LIMIT:-}" ] || limit=(timeout -k 10 "$TIME_LIMIT")
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader >"$out/gpu.txt" || true
# One adapt at a time per GPU: two on one GPU would time each other's kernels.
run_share() {
  local gpu=$1 stencil failed=0
  shift
  for stencil in "$@"; do
    CUDA_VISIBLE_DEVICES=$gpu LIFTX_CACHE_DIR=/tmp/liftx-cache-gpu$gpu \
      "${limit[@]}" stdbuf -oL "$liftx" adapt "stencils/$stencil.lift" --device nvidia \
      --shapes "${train[@]}" --top 4 --portfolio 8 --evaluate "${held_out[@]}" --evaluate-top 8 \
      --typical 2048x2048 --build-jobs "${BUILD_JOBS:-6}" --db "$dbdir/$stencil.db" --quiet \
      -o "$out/adapt-$stencil.json" --plot "$out/held-out-$stencil.svg" \
      >"$out/adapt-eval-$stencil.txt" 2>&1 || failed=1
  done
  return $failed
}
stencils=("$@")
pids=()
for g in "${!gpus[@]}"; do
  share=()
  for k in "${!stencils[@]}"; do
    [ $((k % ${#gpus[@]})) -ne "$g" ] || share+=("${stencils[$k]}")
  done
  [ ${#share[@]} -eq 0 ] || { run_share "${gpus[$g]}" "${share[@]}" & pids+=($!); }
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
