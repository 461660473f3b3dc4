#!/usr/bin/env bash
# Runs every variant DIR/*.lift (with its .json launch sidecar) on a device with `liftx run`
# (checked against the interpreter, timed) and prints one table row per file: the same kernels
# with their grids apart (soa), as AoS and as AoSoA(32), side by side when the files are named
# STENCIL-RANK-INDEX-STRATEGY-LAYOUT.lift (issue 24; bench/RESULTS.md "Data layouts").
#
#   bench/layout_runs.sh DIR DEVICE SIZE [LIFTX]      e.g. bench/layout_runs.sh .gpu/layouts nvidia 4096
set -uo pipefail
dir=$1 device=$2 size=$3 liftx=${4:-build/liftx}
printf '%-48s %-9s %10s %10s %8s %s\n' variant layout median_ms GB/s roofline status
for f in "$dir"/*.lift; do
  name=$(basename "$f" .lift)
  out=$("$liftx" run "$f" --launch "${f%.lift}.json" --device "$device" --size "$size" 2>&1)
  median=$(sed -n 's/^time *\([0-9.e+-]*\) ms median.*/\1/p' <<<"$out")
  gbs=$(sed -n 's/^bandwidth *\([0-9.]*\) GB\/s.*/\1/p' <<<"$out")
  roof=$(sed -n 's/^bandwidth.* = \([0-9.]*%\) of.*/\1/p' <<<"$out")
  status=$(sed -n 's/^status *//p' <<<"$out")
  [[ -z $status ]] && status="error: $(tail -1 <<<"$out")"
  printf '%-48s %-9s %10s %10s %8s %s\n' "${name%-*}" "${name##*-}" "${median:--}" "${gbs:--}" \
    "${roof:--}" "$status"
done
