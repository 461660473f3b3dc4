#!/usr/bin/env bash
# scripts/merge-perf-db.sh on two collections of the same two stencils planned in opposite orders
# (so each program has another row id in each database, and so has each variant's hash): the
# merged database holds each variant and configuration once, with both collections'
# measurements. Usage: test_merge_perf_db.sh LIFTX [WORKDIR]
set -euo pipefail
liftx=$(realpath "$1")
cd "$(dirname "$0")/../.."
work=${2:-$(mktemp -d -t liftx-merge-test-XXXXXX)}
mkdir -p "$work"
trap '[ -n "${2:-}" ] || rm -rf "$work"' EXIT
export LIFTX_CACHE_DIR=$work/cache
common=(--device cpu --size 16 --sample 4 --seed 5 --repeat 1 --warmup 0 --timeout-ms 20000 --quiet)
"$liftx" collect stencils/jacobi2d5pt.lift stencils/gradient.lift "${common[@]}" --db "$work/one.db"
"$liftx" collect stencils/gradient.lift stencils/jacobi2d5pt.lift "${common[@]}" --db "$work/two.db"
count() { sqlite3 "$1" "$2"; }
first_program=$(count "$work/one.db" "SELECT name FROM programs WHERE id = 1")
other_first=$(count "$work/two.db" "SELECT name FROM programs WHERE id = 1")
[ "$first_program" != "$other_first" ] || { echo "FAIL: both databases numbered the programs alike"; exit 1; }
scripts/merge-perf-db.sh "$work/merged.db" "$work/one.db" "$work/two.db"
fail=0
for table in programs variants configurations; do
  want=$(count "$work/one.db" "SELECT count(*) FROM $table")
  got=$(count "$work/merged.db" "SELECT count(*) FROM $table")
  if [ "$want" != "$got" ]; then
    echo "FAIL: $table: $got rows merged, $want distinct"
    fail=1
  fi
done
want=$(($(count "$work/one.db" "SELECT count(*) FROM measurements") + $(count "$work/two.db" "SELECT count(*) FROM measurements")))
got=$(count "$work/merged.db" "SELECT count(*) FROM measurements")
[ "$want" = "$got" ] || { echo "FAIL: measurements: $got merged, $want in the two"; fail=1; }
# Every measurement of the second database sits on the configuration of the same stencil, text
# and launch in the merged one.
stray=$(sqlite3 "$work/merged.db" "ATTACH '$work/two.db' AS o;
  SELECT count(*) FROM o.measurements om
  JOIN o.configurations oc ON oc.id = om.configuration_id JOIN o.variants ov ON ov.id = oc.variant_id
  JOIN o.programs op ON op.id = ov.program_id
  WHERE NOT EXISTS (SELECT 1 FROM measurements m JOIN configurations c ON c.id = m.configuration_id
    JOIN variants v ON v.id = c.variant_id JOIN programs p ON p.id = v.program_id
    WHERE p.source_hash = op.source_hash AND v.printed = ov.printed AND c.sizes_json = oc.sizes_json
      AND c.global_json = oc.global_json AND c.local_json = oc.local_json
      AND m.timestamp = om.timestamp AND m.median_ms IS om.median_ms)")
[ "$stray" = 0 ] || { echo "FAIL: $stray measurements of the second database not found merged"; fail=1; }
[ $fail = 0 ] && echo "merge-perf-db: $got measurements, each variant once"
exit $fail
