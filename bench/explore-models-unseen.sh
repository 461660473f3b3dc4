#!/usr/bin/env bash
# Cost models compared where it counts: `liftx explore` of programs none of them was trained on,
# three explores per program and model, each on a fresh database (so nothing measured earlier
# stands in), every run verified by explore against the interpreter. Per program and model: the
# best time of each explore, the worst of the three (what a user can count on), the untuned
# default lowering's time in the same explores (median of its three) and worst / untuned.
#
#   bench/explore-models-unseen.sh SIZE BUDGET DEVICE MODEL... -- PROGRAM.lift[:SIZE]...
#   e.g. bench/explore-models-unseen.sh 512 5 cpu old.json model/data/cpu-model.json -- \
#        examples/heat2d/heat2d.lift model/data/programs/star3d_r2.lift:64
#
# SIZE is every size variable's value (--size); PROGRAM.lift:SIZE gives one program its own.
# Set LIFTX (default build/liftx) and REPEAT (timed runs per variant, explore's default 10: more
# steadies the medians of short kernels on a shared CPU). Needs jq.
set -uo pipefail
size=$1 budget=$2 device=$3
shift 3
models=()
while [[ $# -gt 0 && $1 != -- ]]; do
  models+=("$1")
  shift
done
[[ $# -gt 0 ]] && shift
programs=("$@")
if [[ ${#models[@]} -eq 0 || ${#programs[@]} -eq 0 ]]; then
  echo "usage: $0 SIZE BUDGET DEVICE MODEL... -- PROGRAM.lift[:SIZE]..." >&2
  exit 2
fi
liftx=${LIFTX:-build/liftx}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

printf '%-22s %-28s %10s %10s %10s %10s %10s %9s\n' program model explore1 explore2 explore3 \
  worst_ms untuned_ms worst/unt
for entry in "${programs[@]}"; do
  program=${entry%%:*} program_size=$size
  [[ $entry == *:* ]] && program_size=${entry##*:}
  for model in "${models[@]}"; do
    bests=() untuned=()
    for round in 1 2 3; do
      rm -f "$scratch/perf.db"
      doc=$("$liftx" explore "$program" --size "$program_size" --budget "$budget" --device "$device" \
        --model "$model" --db "$scratch/perf.db" ${REPEAT:+--repeat "$REPEAT"} --format json --quiet \
        2>"$scratch/err")
      best=$(jq -r 'if .best == null then "-" else (.best as $b | .runs[] | select(.run == $b) |
        .median_ms) end' <<<"$doc" 2>/dev/null)
      [[ -z $best ]] && best=-
      [[ $best == - ]] && echo "  ($program, $model, explore $round: $(tail -1 "$scratch/err"))" >&2
      bests+=("$best")
      untuned+=("$(jq -r '.default_lowering.median_ms // "-"' <<<"$doc" 2>/dev/null || echo -)")
    done
    worst=$(printf '%s\n' "${bests[@]}" | grep -v '^-$' | sort -g | tail -1)
    unt=$(printf '%s\n' "${untuned[@]}" | grep -v '^-$' | sort -g |
      awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}') # the median of those that ran
    ratio=-
    [[ -n $worst && -n $unt ]] && ratio=$(awk -v w="$worst" -v u="$unt" 'BEGIN{printf "%.2f", w/u}')
    printf '%-22s %-28s %10s %10s %10s %10s %10s %9s\n' "$(basename "$program" .lift)" \
      "$(basename "$model")" "${bests[@]}" "${worst:--}" "${unt:--}" "$ratio"
  done
done
