#!/usr/bin/env bash
# The same variant files generated and run by two liftx builds, alternately (A, B, A, B, ...
# per file and round): every DIR/*.lift with its .json launch sidecar, at SIZE, each run checked
# against REFERENCE by the interpreter (cached on disk after the first) and timed (median of
# REPEAT after 3 warm-ups). One row per file and round with both medians and B / A.
#
#   bench/ab_runs.sh DIR REFERENCE SIZE LIFTX_A LIFTX_B [ROUNDS] [DEVICE] [REPEAT]
#   e.g. bench/ab_runs.sh .gpu/wrap/heat3d stencils/3d/heat3d.lift 512 .gpu/liftx-before .gpu/liftx
set -uo pipefail
dir=$1 reference=$2 size=$3 liftx_a=$4 liftx_b=$5 rounds=${6:-2} device=${7:-nvidia}
repeat=${8:-20}

run_one() { # liftx file -> "median roofline status"
  local out median roof status
  out=$("$1" run "$2" --launch "${2%.lift}.json" --device "$device" --size "$size" \
    --reference "$reference" --repeat "$repeat" 2>&1)
  median=$(sed -n 's/^time *\([0-9.e+-]*\) ms median.*/\1/p' <<<"$out")
  roof=$(sed -n 's/^bandwidth.* = \([0-9.]*%\) of.*/\1/p' <<<"$out")
  status=$(sed -n 's/^status *//p' <<<"$out")
  [[ -z $status ]] && status="error:$(tail -1 <<<"$out" | tr ' ' '_')"
  echo "${median:--} ${roof:--} $status"
}

printf '%-40s %5s %10s %8s %10s %8s %7s %s\n' variant round A_ms A_roof B_ms B_roof B/A status
for round in $(seq 1 "$rounds"); do
  for f in "$dir"/*.lift; do
    read -r a_ms a_roof a_status <<<"$(run_one "$liftx_a" "$f")"
    read -r b_ms b_roof b_status <<<"$(run_one "$liftx_b" "$f")"
    ratio=-
    [[ $a_ms != - && $b_ms != - ]] && ratio=$(awk -v a="$a_ms" -v b="$b_ms" 'BEGIN{printf "%.3f", b/a}')
    printf '%-40s %5s %10s %8s %10s %8s %7s %s\n' "$(basename "$f" .lift)" "$round" "$a_ms" \
      "$a_roof" "$b_ms" "$b_roof" "$ratio" "$a_status/$b_status"
  done
done
