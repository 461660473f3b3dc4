#!/usr/bin/env bash
# `liftx explore --mpi` under `mpirun -np 3 --oversubscribe`, PoCL on every rank, against a
# single-process explore with the same options: with the static ranking (--strategy model) it
# runs the same variants in the same order, each verified (status ok) and recorded once, with
# several ranks measuring and the bandwidth reported; with the online strategy (batches of 4,
# re-ranked in between) it runs the budget, each verified and recorded once, its first batch the
# single process's; and when rank 1 dies under --enable-recovery, the others finish.
# Usage: test_mpi_explore.sh LIFTX [WORKDIR]
set -euo pipefail
liftx=$(realpath "$1")
cd "$(dirname "$0")/../.."
work=${2:-$(mktemp -d -t liftx-mpi-explore-test-XXXXXX)}
mkdir -p "$work"
keep=${2:-}
trap '[ -n "$keep" ] || rm -rf "$work"' EXIT

source tests/explore/mpi_test_common.sh
export LIFTX_CACHE_DIR=$work/cache
explore=(explore stencils/jacobi2d5pt.lift --device cpu --size 32 --budget 6 --repeat 2
         --warmup 1 --timeout-ms 20000 --quiet --format csv)
mpirun_=(mpirun --oversubscribe --bind-to none -np 3)
budget=6

# The CSV's runs: their rank in the ranked list (column 2), in the order they ran.
ranks_run() { tail -n +2 "$1" | cut -d, -f2; }

# Each run verified and recorded once: $budget runs, every one ok in the database, none twice.
check_runs() {
  local what=$1
  [ "$(tail -n +2 "$work/$what.csv" | wc -l)" -eq "$budget" ] || fail "$what: not $budget runs"
  rows "$work/$what.db" > "$work/$what.rows"
  [ "$(wc -l < "$work/$what.rows")" -eq "$budget" ] || fail "$what: not $budget rows"
  awk -F'|' '$(NF-1) != "ok" || $NF != 1 { bad = 1 } END { exit bad }' "$work/$what.rows" ||
    fail "$what: a run not verified (status not ok) or measured twice: $(cat "$work/$what.rows")"
}

run_single() {
  "$liftx" "${explore[@]}" "$@" --db "$work/$name.db" > "$work/$name.csv" 2> "$work/$name.err" ||
    fail "$name: $(cat "$work/$name.err")"
}
run_mpi() {
  "${mpirun_[@]}" "$@" "$liftx" "${explore[@]}" --mpi "${args[@]}" --db "$work/$name.db" \
    > "$work/$name.csv" 2> "$work/$name.err" || fail "$name: $(cat "$work/$name.err")"
}

# The ranking reads the device's copy roofline from the cache when it is there (the profile's
# memory bandwidth): measured once first (`liftx run` does), every explore below ranks alike.
"$liftx" run stencils/variants/jacobi2d5pt/global2d.lift --device cpu --size 32 > /dev/null ||
  fail "liftx run: the roofline"

# 1. The static ranking: the same runs in the same order; the report's rank lines add up.
name=single args=(--strategy model) && run_single "${args[@]}" && check_runs single
start=$(date +%s%N)
name=mpi args=(--strategy model) && run_mpi
echo "explore --mpi --strategy model, 3 ranks: $((($(date +%s%N) - start) / 1000000)) ms"
check_runs mpi
diff <(ranks_run "$work/single.csv") <(ranks_run "$work/mpi.csv") > /dev/null ||
  fail "mpi: other variants than the single process's: $(ranks_run "$work/mpi.csv" | xargs)"
diff "$work/single.rows" "$work/mpi.rows" > /dev/null || fail "mpi: other rows: $(cat "$work/mpi.rows")"
[ "$(grep -c '^rank ' "$work/mpi.err")" -eq 3 ] || fail "mpi: three rank lines expected"
# Either form of the line: a fraction of the roofline, or (a working set the caches serve) a ratio.
grep -Eq '^bandwidth .* GB/s(, .*x the| = .* of the) float4-copy roofline' "$work/mpi.err" ||
  fail "mpi: no bandwidth line: $(cat "$work/mpi.err")"
[ "$(grep '^rank ' "$work/mpi.err" | awk '{ n += $(NF-1) } END { print n }')" -eq "$budget" ] ||
  fail "mpi: the ranks' measurements do not add up: $(grep '^rank ' "$work/mpi.err")"
[ "$(grep -c '^rank .*: [1-9][0-9]* measured' "$work/mpi.err")" -ge 2 ] ||
  fail "mpi: fewer than two ranks measured: $(grep '^rank ' "$work/mpi.err")"
echo "ok: explore --mpi --strategy model"

# 2. Online: batches of 4 re-ranked in between; the first batch is chosen before any run.
name=single-online args=() && run_single && check_runs single-online
name=mpi-online args=() && run_mpi && check_runs mpi-online
diff <(ranks_run "$work/single-online.csv" | head -4) <(ranks_run "$work/mpi-online.csv" | head -4) \
  > /dev/null || fail "mpi-online: another first batch than the single process's"
echo "ok: explore --mpi (online)"

# 3. Rank 1 dies after its first result under --enable-recovery: given up after 3 s of silence,
#    the others measure the rest.
name=recovered args=(--strategy model --mpi-silence 3 --mpi-test-die 1:1) &&
  run_mpi --enable-recovery
check_runs recovered
diff "$work/single.rows" "$work/recovered.rows" > /dev/null ||
  fail "recovered: other rows: $(cat "$work/recovered.rows")"
grep -q "^rank 1 .*(lost: not heard from" "$work/recovered.err" ||
  fail "recovered: rank 1 not reported lost: $(cat "$work/recovered.err")"
echo "ok: explore --mpi with a rank lost"
