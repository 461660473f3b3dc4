#!/usr/bin/env bash
# One fixed-seed collection plan measured by `liftx collect --mpi` with several rank counts, one
# rank per GPU, in time-limited segments that resume (a lent machine runs a command for at most
# 10 minutes, and the 1-rank run of a large plan takes longer). Runs on disjoint GPUs can go at
# the same time (`run` in the background), e.g. 1 rank on GPU 0 while 2 ranks use GPUs 1 and 2.
#
#   bench/mpi-scaling.sh plan   OUT                    the plan (once; later calls keep it)
#   bench/mpi-scaling.sh run    OUT RANKS GPUS LIMIT_S  measure (or resume) RANKS ranks on the
#                                                      GPUs GPUS (e.g. 1,2: CUDA_VISIBLE_DEVICES)
#                                                      for at most LIMIT_S seconds
#   bench/mpi-scaling.sh report OUT                    the scaling table (results.md)
#   Environment (plan): LIFTX (default build/liftx), PLAN_SIZE (default 4000), SIZE (default
#   "512 1024"), STENCILS (default jacobi2d5pt jacobi2d9pt gradient hotspot2d), PROFILE (nvidia).
#   Environment (run): DEVICE (default nvidia), BATCH (--mpi-batch, default 16), REPEAT (10).
#
# Each run has its own kernel and reference cache (OUT/cache-RANKS), kept between its segments,
# and the drivers' caches are off (CUDA_CACHE_DISABLE=1, POCL_KERNEL_CACHE=0), so every kernel is
# built once per run.
# A run's wall time is the sum of its segments' (each includes its start and the resume scan).
# The report checks that every planned configuration was measured exactly once in each run and
# compares the medians of the same configuration between runs (so between the GPUs that
# measured it).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
action=$1
out=$(mkdir -p "$2" && realpath "$2")
cd "$(dirname "$0")/.."
liftx=$(realpath "${LIFTX:-build/liftx}")
source bench/plan-check.sh
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The collect arguments of the plan, stored with it so that every segment uses the same ones.
if [ "$action" = plan ]; then
  [ $# -eq 2 ] || usage
  if [ -f "$out/plan.db" ]; then echo "plan: $out/plan.db exists, kept" >&2; exit 0; fi
  read -r -a sizes <<< "${SIZE:-512 1024}"
  read -r -a stencils <<< "${STENCILS:-jacobi2d5pt jacobi2d9pt gradient hotspot2d}"
  files=()
  for s in "${stencils[@]}"; do files+=("stencils/$s.lift"); done
  plan_size=${PLAN_SIZE:-4000}
  per_target=$(( (plan_size + ${#files[@]} * ${#sizes[@]} - 1) / (${#files[@]} * ${#sizes[@]}) ))
  printf '%s\n' "${files[@]}" --profile "${PROFILE:-nvidia}" --size "${sizes[@]}" \
    --sample "$per_target" --seed 1 > "$out/plan.args"
  mapfile -t args < "$out/plan.args"
  "$liftx" collect "${args[@]}" --plan-only --db "$out/plan.tmp.db" > "$out/plan.log"
  mv "$out/plan.tmp.db" "$out/plan.db"
  echo "plan: $(sqlite3 "$out/plan.db" "SELECT COUNT(*) FROM plan_configurations")" \
    "configurations ($per_target per stencil and size)" >&2
  exit 0
fi

[ -f "$out/plan.db" ] || { echo "no plan in $out: run '$0 plan $out' first" >&2; exit 2; }
planned=$(sqlite3 "$out/plan.db" "SELECT COUNT(*) FROM plan_configurations")

if [ "$action" = run ]; then
  [ $# -eq 5 ] || usage
  ranks=$3 gpus=$4 limit=$5
  db=$out/ranks-$ranks.db
  [ -f "$db" ] || cp "$out/plan.db" "$db"
  mapfile -t args < "$out/plan.args"
  segment=1
  [ ! -f "$out/ranks-$ranks.walls" ] || segment=$(( $(wc -l < "$out/ranks-$ranks.walls") + 1 ))
  start=$(date +%s.%N)
  status=0
  CUDA_VISIBLE_DEVICES=$gpus LIFTX_CACHE_DIR=$out/cache-$ranks CUDA_CACHE_DISABLE=1 \
    POCL_KERNEL_CACHE=0 mpirun --oversubscribe --bind-to none -np "$ranks" \
    -x CUDA_VISIBLE_DEVICES -x LIFTX_CACHE_DIR -x CUDA_CACHE_DISABLE -x POCL_KERNEL_CACHE \
    "$liftx" collect "${args[@]}" --device "${DEVICE:-nvidia}" --resume \
    --repeat "${REPEAT:-10}" --quiet --time-limit "$limit" --mpi --mpi-batch "${BATCH:-16}" \
    --db "$db" > "$out/ranks-$ranks.segment-$segment.log" 2>&1 || status=$?
  wall=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
  measured=$(sqlite3 "$db" "SELECT COUNT(*) FROM measurements")
  echo "$wall $measured" >> "$out/ranks-$ranks.walls"
  echo "ranks $ranks on GPUs $gpus, segment $segment: $wall s, $measured/$planned measured" \
    "(mpirun status $status)" >&2
  exit $status
fi

[ "$action" = report ] || usage
{
  echo "| ranks (GPUs) | segments | wall s | measurements/s | speed-up | efficiency |" \
    "every configuration once | ok / failed |"
  echo "|---|---:|---:|---:|---:|---:|---|---|"
  base_wall="" base_ranks=""
  for walls in $(ls "$out"/ranks-*.walls | sort -t- -k2 -n); do
    ranks=$(basename "$walls" .walls | cut -d- -f2)
    db=$out/ranks-$ranks.db
    wall=$(awk '{ s += $1 } END { printf "%.1f", s }' "$walls")
    segments=$(wc -l < "$walls")
    [ -n "$base_wall" ] || { base_wall=$wall; base_ranks=$ranks; }
    outcome=$(sqlite3 "$db" \
      "SELECT SUM(status = 'ok') || ' / ' || SUM(status != 'ok') FROM measurements")
    awk -v r="$ranks" -v s="$segments" -v w="$wall" -v n="$planned" -v bw="$base_wall" \
      -v br="$base_ranks" -v c="$(measured_once "$db" "$planned")" -v o="$outcome" \
      'BEGIN { printf "| %s | %s | %.1f | %.2f | %.2f | %.2f | %s | %s |\n", r, s, w, n / w,
               bw / w, bw * br / (w * r), c, o }'
  done
  echo
  echo "$planned planned configurations. Same configuration, two runs (so two GPUs or two"
  echo "processes of the same GPU), both ok: the ratio of medians (second / first):"
  echo
  echo "| runs | pairs | median ratio | mean abs difference | within 5% | largest difference |"
  echo "|---|---:|---:|---:|---:|---:|"
  dbs=($(ls "$out"/ranks-*.db | sort -t- -k2 -n))
  for ((i = 0; i < ${#dbs[@]}; ++i)); do
    for ((j = i + 1; j < ${#dbs[@]}; ++j)); do
      a=${dbs[i]} b=${dbs[j]}
      sqlite3 "$a" "ATTACH '$b' AS other;
        SELECT m.median_ms, o.median_ms FROM measurements m
        JOIN other.measurements o ON o.configuration_id = m.configuration_id
        WHERE m.status = 'ok' AND o.status = 'ok' AND m.median_ms > 0 AND o.median_ms > 0;" |
        awk -F'|' '{ print $2 / $1 }' | sort -g |
        awk -v name="$(basename "$a" .db) vs $(basename "$b" .db)" '
          { r[NR] = $1; d = ($1 > 1 ? $1 - 1 : 1 / $1 - 1); s += d;
            if (d <= 0.05) ++w; if (d > m) m = d }
          END { if (NR == 0) { printf "| %s | 0 | | | | |\n", name; exit }
                med = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2;
                printf "| %s | %d | %.4f | %.1f%% | %d of %d | %.1f%% |\n", name, NR, med,
                       100 * s / NR, w, NR, 100 * m }'
    done
  done
} | tee "$out/results.md"
