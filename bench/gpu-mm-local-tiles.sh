#!/usr/bin/env bash
# The matrix product's local-memory tiles (space strategy local_tiles) against CLBlast's Sgemm on
# the lent GPU, in two stages:
#   1. screen: every variant of TILES (a folder written by `liftx variants stencils/linalg/mm.lift
#      --size 4096 --profile nvidia --where strategy=local_tiles --out TILES`) verified (interpreter
#      at n = 128, CLBlast at n = SIZE) and timed briefly, CHUNK variants per linalg_bench call, for
#      at most SCREEN_SECONDS;
#   2. confirm: the TOP fastest of the screen and the variants of BASELINE (e.g. the best register
#      block) timed in CALLS separate linalg_bench calls at each size of SIZES (5 batches of 4
#      launches each, CLBlast in the same process); per variant, the median over the calls of the
#      per-call ratio CLBlast ms / variant ms.
#   bench/gpu-mm-local-tiles.sh TILES BASELINE OUT [BENCH]
# Environment: DEVICE (nvidia), SIZE (4096), SIZES ("4096"), TOP (6), CALLS (5), CHUNK (96), SCREEN_SECONDS (420),
# SKIP_SCREEN (1: confirm the variants listed in OUT/top.txt from an earlier screen).
set -u
tiles=$1 baseline=$2 out=$3 bench=${4:-build/linalg_bench}
size=${SIZE:-4096} sizes=${SIZES:-4096} top=${TOP:-6} calls=${CALLS:-5} chunk=${CHUNK:-96}
screen_seconds=${SCREEN_SECONDS:-420} device=${DEVICE:-nvidia}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1

if [ "${SKIP_SCREEN:-0}" != 1 ]; then
  mapfile -t all < <(ls "$tiles"/*.lift)
  start=$SECONDS
  for ((i = 0; i < ${#all[@]}; i += chunk)); do
    left=$((screen_seconds - (SECONDS - start)))
    if [ "$left" -le 20 ]; then
      echo "screen stopped after $i of ${#all[@]} variants (time)" >>"$out/screen-summary.txt"
      break
    fi
    timeout "$left" "$bench" --device "$device" --size 1024 --mm-size "$size" --mm-check-size 128 \
      --batches 1 --batch 2 "${all[@]:i:chunk}" >"$out/screen-$i.txt" 2>&1
    echo "exit $? for variants $i.." >>"$out/screen-summary.txt"
  done
  # Rows of timed variants: "| mm NAME | n | ms | ...": the TOP smallest ms.
  cat "$out"/screen-*.txt | awk -F'|' '$2 ~ /^ mm / && $4+0 > 0 {
      name = $2; sub(/^ mm /, "", name); sub(/ $/, "", name); print $4 + 0, name }' |
    sort -g | tee "$out/screen-sorted.txt" | head -n "$top" | awk '{print $2}' >"$out/top.txt"
fi

picked=()
while read -r name; do picked+=("$tiles/$name.lift"); done <"$out/top.txt"
picked+=("$baseline"/*.lift)
for n in $sizes; do
  for ((c = 1; c <= calls; ++c)); do
    "$bench" --device "$device" --size 1024 --mm-size "$n" --mm-check-size 128 --batches 5 --batch 4 \
      "${picked[@]}" >"$out/confirm-$n-$c.txt" 2>&1
  done
  # Per call: CLBlast's ms over each variant's; then the median over calls per variant.
  for ((c = 1; c <= calls; ++c)); do
    awk -F'|' '$2 ~ /CLBlast Sgemm/ { blas = $4 + 0 }
      $2 ~ /^ mm / && $4 + 0 > 0 { name = $2; sub(/^ mm /, "", name); sub(/ $/, "", name);
        print name, $4 + 0, $7 + 0, blas / ($4 + 0) }' "$out/confirm-$n-$c.txt"
  done | sort -k1,1 -k4,4g | awk -v n="$n" -v calls="$calls" '
    { names[$1] = 1; k = ++count[$1]; ratio[$1, k] = $4; tflops[$1, k] = $3 }
    END {
      print "| variant | n | calls | median ratio to CLBlast | min | max | GFLOP/s (call of the median) |"
      print "|---|---:|---:|---:|---:|---:|---:|"
      for (v in names) {
        m = int((count[v] + 1) / 2)
        printf "| %s | %d | %d | %.3f | %.3f | %.3f | %.0f |\n", v, n, count[v], ratio[v, m],
               ratio[v, 1], ratio[v, count[v]], tflops[v, m]
      }
    }' >"$out/ratios-$n.md"
done
cat "$out"/ratios-*.md
