#!/usr/bin/env bash
# Runs every hand-lowered variant in stencils/variants/ on an OpenCL device at square sizes: each
# kernel is verified against the reference interpreter's result for the high-level stencil
# stencils/<stencil>.lift (every element, random inputs; computed once per stencil and size and
# cached), then timed
# with profiling events (median of 20 runs after 3 warm-ups), and compared with the device's
# float4-copy roofline. Prints a markdown table; the full report of each run goes to LOG.
#
#   bench/variants.sh DEVICE SIZE...        e.g.  bench/variants.sh nvidia 4096 8192
#
# Environment: LIFTX (the liftx binary, default build/liftx), LOG (default bench/variants.log),
# VARIANTS (a glob, default stencils/variants/*/*.lift).
set -uo pipefail
cd "$(dirname "$0")/.."
device=${1:?usage: bench/variants.sh DEVICE SIZE...}
shift
[ $# -gt 0 ] || { echo "usage: bench/variants.sh DEVICE SIZE..." >&2; exit 2; }
liftx=${LIFTX:-build/liftx}
log=${LOG:-bench/variants.log}
: >"$log"

"$liftx" roofline --device "$device" | tee -a "$log"
echo
echo "| stencil | variant | size | check | median ms | IQR ms | GB/s | % of float4 copy | status |"
echo "|---|---|---|---|---|---|---|---|---|"
for size in "$@"; do
  for file in ${VARIANTS:-stencils/variants/*/*.lift}; do
    stencil=$(basename "$(dirname "$file")")
    variant=$(basename "$file" .lift)
    report=$("$liftx" run "$file" --device "$device" --size "$size" --repeat 20 --warmup 3 \
               --reference "stencils/$stencil.lift" --timeout-ms 600000 2>&1)
    { echo "== $file $size"; echo "$report"; } >>"$log"
    echo "$report" | awk -v stencil="$stencil" -v variant="$variant" -v size="${size}x${size}" '
      /^check/     { check = $2; sub(/:$/, "", check) }
      /^time/      { median = $2; iqr = $NF; sub(/\)$/, "", iqr) }
      /^bandwidth/ { gbs = $2; for (i = 1; i <= NF; i++) if ($i ~ /%$/) pct = $i }
      /^status/    { status = $2; sub(/:$/, "", status) }
      /error:/     { status = "error"; check = "-" }
      END {
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", stencil, variant, size,
               check ? check : "-", median ? median : "-", iqr ? iqr : "-", gbs ? gbs : "-",
               pct ? pct : "-", status ? status : "error"
      }'
  done
done
