#!/usr/bin/env bash
# `liftx collect --mpi` under `mpirun -np 3 --oversubscribe`, PoCL on every rank: the database it
# writes holds the same configurations with the same statuses as a single-process collection of
# the same plan, each measured once; so does one where rank 1 is killed mid-run (Open MPI then ends
# the whole job) followed by `--resume`, and one run with --enable-recovery, where the survivors
# take over the dead rank's batch. Usage: test_mpi_collect.sh LIFTX [WORKDIR]
set -euo pipefail
liftx=$(realpath "$1")
cd "$(dirname "$0")/../.."
work=${2:-$(mktemp -d -t liftx-mpi-test-XXXXXX)}
mkdir -p "$work"
trap '[ -n "${2:-}" ] || rm -rf "$work"' EXIT

source tests/explore/mpi_test_common.sh
# Kernels built once into a cache of this test's own (the runs below share it: the test is about
# where results go, not about build times).
export LIFTX_CACHE_DIR=$work/cache
# Two stencils, 24 variants, small grids; --timeout-ms bounds a kernel that hangs.
collect=(collect stencils/jacobi2d5pt.lift stencils/gradient.lift --device cpu --size 48
         --sample 12 --seed 3 --repeat 2 --warmup 1 --timeout-ms 20000 --quiet)
mpirun_=(mpirun --oversubscribe --bind-to none -np 3)
planned=24

check_same_as_single() {
  local db=$1 what=$2
  rows "$db" > "$work/$what.rows"
  diff "$work/single.rows" "$work/$what.rows" > "$work/$what.diff" ||
    fail "$what: the rows differ from the single-process collection: $(head -20 "$work/$what.diff")"
  [ "$(wc -l < "$work/$what.rows")" -eq "$planned" ] || fail "$what: not $planned rows"
  awk -F'|' '$NF != 1 { bad = 1 } END { exit bad }' "$work/$what.rows" ||
    fail "$what: a configuration measured more than once"
  echo "ok: $what"
}

"$liftx" "${collect[@]}" --db "$work/single.db" > "$work/single.out"
rows "$work/single.db" > "$work/single.rows"
[ "$(wc -l < "$work/single.rows")" -eq "$planned" ] || fail "single: not $planned rows"

# 1. Three ranks, to the end.
"${mpirun_[@]}" "$liftx" "${collect[@]}" --mpi --mpi-batch 3 --db "$work/mpi.db" \
  > "$work/mpi.out" 2> "$work/mpi.err" || fail "mpirun: $(cat "$work/mpi.err")"
grep -q "^variants  $planned planned, $planned measured" "$work/mpi.out" ||
  fail "mpi: report: $(cat "$work/mpi.out")"
[ "$(grep -c '^rank ' "$work/mpi.out")" -eq 3 ] || fail "mpi: three rank lines expected"
check_same_as_single "$work/mpi.db" mpi

# 2. Rank 1 dies after 2 results: Open MPI ends the job; what rank 0 recorded stays, and a
#    resumed run measures the rest once.
#    Kernels built afresh (no liftx or PoCL cache): slow enough that much is left to resume.
if LIFTX_CACHE_DIR=$work/cache-killed POCL_KERNEL_CACHE=0 "${mpirun_[@]}" "$liftx" "${collect[@]}" --mpi \
     --mpi-batch 3 --mpi-test-die 1:2 --db "$work/killed.db" > "$work/killed.out" \
     2> "$work/killed.err"; then
  fail "killed: mpirun succeeded although rank 1 died"
fi
recorded=$(sqlite3 "$work/killed.db" "SELECT COUNT(*) FROM measurements")
[ "$recorded" -lt "$planned" ] || fail "killed: everything was measured before the kill"
echo "killed: $recorded of $planned recorded before Open MPI ended the job"
"${mpirun_[@]}" "$liftx" "${collect[@]}" --mpi --mpi-batch 3 --resume --db "$work/killed.db" \
  > "$work/resumed.out" 2> "$work/resumed.err" || fail "resume: $(cat "$work/resumed.err")"
grep -q "already measured (skipped)" "$work/resumed.out" || fail "resume: $(cat "$work/resumed.out")"
check_same_as_single "$work/killed.db" "killed-and-resumed ($recorded recorded before the kill)"

# 3. The same death under --enable-recovery: the job goes on, rank 0 gives rank 1 up after the
#    silence limit and the others measure its batch.
"${mpirun_[@]}" --enable-recovery "$liftx" "${collect[@]}" --mpi --mpi-batch 3 --mpi-silence 3 \
  --mpi-test-die 1:2 --db "$work/recovered.db" > "$work/recovered.out" 2> "$work/recovered.err" ||
  fail "recovery: $(cat "$work/recovered.err")"
grep -q "rank 1 .*(lost: not heard from" "$work/recovered.out" ||
  fail "recovery: rank 1 not reported lost: $(cat "$work/recovered.out")"
check_same_as_single "$work/recovered.db" recovered
