#!/usr/bin/env bash
# Wall time of one collection plan measured by `liftx collect --mpi` with different rank counts,
# e.g. 2-4 ranks sharing one GPU (builds and reference checks of some ranks overlap with the runs
# of others) or one rank per GPU.
#
#   bench/mpi-collect.sh RANKS PLAN_SIZE OUT_DIR
#     RANKS      comma-separated rank counts, e.g. 1,2,3,4 (the first is the baseline)
#     PLAN_SIZE  variants in the plan, shared evenly by the stencils (e.g. 2000)
#     OUT_DIR    where the databases, logs and results.md go (created)
#   Environment: LIFTX (default build/liftx), DEVICE (default cpu), PROFILE (default: nvidia for
#   DEVICE nvidia or gpu, else cpu), SIZE (default 2048 on a GPU, 64 on a CPU; several sizes
#   separated by spaces share the plan), STENCILS (default jacobi2d5pt jacobi2d9pt gradient
#   hotspot2d), MPIRUN_ARGS (more mpirun options, e.g. "--map-by ppr:4:node"), BATCH (--mpi-batch,
#   default 16), REPEAT (default 10), BUILD_JOBS (--build-jobs of every rank, default 0),
#   CORES_PER_RANK (run N ranks on the first N x CORES_PER_RANK cores only, so that each rank has
#   the same share of the host whatever the rank count; default: every core).
#
# The plan is made once (--plan-only) and copied for each run, so every run measures the same
# configurations; each run has a fresh kernel and reference cache (LIFTX_CACHE_DIR), and the
# drivers' own kernel caches are off (POCL_KERNEL_CACHE=0, CUDA_CACHE_DISABLE=1), so builds count. Afterwards each database is checked: every planned configuration measured exactly once.
# Prints a table: ranks, wall s, measurements/s, speedup and efficiency (speedup / ranks, against
# the first rank count).
set -euo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
IFS=, read -r -a rank_counts <<< "$1"
plan_size=$2
out=$(mkdir -p "$3" && realpath "$3")
cd "$(dirname "$0")/.."
liftx=$(realpath "${LIFTX:-build/liftx}")
source bench/plan-check.sh
device=${DEVICE:-cpu}
case "$device" in nvidia | gpu) default_profile=nvidia default_size=2048 ;;
                  *) default_profile=cpu default_size=64 ;; esac
profile=${PROFILE:-$default_profile}
read -r -a sizes <<< "${SIZE:-$default_size}"
read -r -a stencils <<< "${STENCILS:-jacobi2d5pt jacobi2d9pt gradient hotspot2d}"
files=()
for s in "${stencils[@]}"; do files+=("stencils/$s.lift"); done
per_stencil=$(( (plan_size + ${#files[@]} * ${#sizes[@]} - 1) / (${#files[@]} * ${#sizes[@]}) ))
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

collect=(collect "${files[@]}" --device "$device" --profile "$profile" --size "${sizes[@]}"
         --sample "$per_stencil" --seed 1 --repeat "${REPEAT:-10}" --quiet
         --build-jobs "${BUILD_JOBS:-0}")

echo "planning ${#files[@]} stencils x ${#sizes[@]} sizes (${sizes[*]}) x $per_stencil variants" \
  "(profile $profile)" >&2
rm -f "$out/plan.db"
"$liftx" "${collect[@]}" --plan-only --db "$out/plan.db" > "$out/plan.log"
planned=$(sqlite3 "$out/plan.db" "SELECT COUNT(*) FROM plan_configurations")


printf '%-6s %9s %15s %8s %11s %6s %s\n' ranks "wall s" measurements/s speedup efficiency check \
  "ok/failed" | tee "$out/results.txt"
baseline=""
status=0
for ranks in "${rank_counts[@]}"; do
  db=$out/ranks-$ranks.db
  cp "$out/plan.db" "$db"
  rm -rf "$out/cache-$ranks"
  cores=()
  [ -z "${CORES_PER_RANK:-}" ] || cores=(taskset -c "0-$((ranks * CORES_PER_RANK - 1))")
  start=$(date +%s.%N)
  LIFTX_CACHE_DIR=$out/cache-$ranks POCL_KERNEL_CACHE=0 CUDA_CACHE_DISABLE=1 \
    "${cores[@]}" mpirun --oversubscribe --bind-to none -np "$ranks" -x LIFTX_CACHE_DIR -x POCL_KERNEL_CACHE \
    -x CUDA_CACHE_DISABLE ${MPIRUN_ARGS:-} "$liftx" "${collect[@]}" --mpi \
    --mpi-batch "${BATCH:-16}" --db "$db" > "$out/ranks-$ranks.log" 2>&1 ||
    { echo "ranks $ranks: mpirun failed, see $out/ranks-$ranks.log" >&2; status=1; continue; }
  wall=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
  [ -n "$baseline" ] || baseline="$ranks $wall"
  read -r base_ranks base_wall <<< "$baseline"
  check=$(measured_once "$db" "$planned")
  [ "$check" = ok ] || status=1
  outcome=$(sqlite3 "$db" "SELECT SUM(status = 'ok') || '/' || SUM(status != 'ok') FROM measurements")
  awk -v r="$ranks" -v w="$wall" -v n="$planned" -v bw="$base_wall" -v br="$base_ranks" \
    -v c="$check" -v o="$outcome" \
    'BEGIN { printf "%-6s %9.1f %15.2f %8.2f %11.2f %6s %s\n", r, w, n / w, bw / w,
             bw * br / (w * r), c, o }' | tee -a "$out/results.txt"
done
echo "($planned configurations; device $device; $(hostname); logs and databases in $out)" |
  tee -a "$out/results.txt"
exit $status
