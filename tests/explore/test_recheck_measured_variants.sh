#!/usr/bin/env bash
# scripts/recheck-measured-variants.sh on a small collection: its variants pass again, a variant
# whose stored text was changed after it was measured fails, and the database is left
# byte-identical. Usage: test_recheck_measured_variants.sh LIFTX [WORKDIR]
set -euo pipefail
liftx=$(realpath "$1")
cd "$(dirname "$0")/../.."
work=${2:-$(mktemp -d -t liftx-recheck-test-XXXXXX)}
mkdir -p "$work"
trap '[ -n "${2:-}" ] || rm -rf "$work"' EXIT
export LIFTX_CACHE_DIR=$work/cache DEVICE=cpu
"$liftx" collect stencils/jacobi2d5pt.lift --device cpu --size 16 --sample 4 --seed 5 --repeat 1 \
  --warmup 0 --timeout-ms 20000 --quiet --db "$work/perf.db"
before=$(sha256sum <"$work/perf.db")
fail=0
out=$(scripts/recheck-measured-variants.sh "$work/perf.db" jacobi2d5pt stencils/jacobi2d5pt.lift \
  M=16,N=16 3 "$liftx") || { echo "FAIL: the collected variants did not pass again"; fail=1; }
echo "$out"
grep -q '^3 of 3 passed, 0 failed, 0 skipped' <<<"$out" || { echo "FAIL: expected 3 passes"; fail=1; }
[ "$(sha256sum <"$work/perf.db")" = "$before" ] || { echo "FAIL: the database changed"; fail=1; }
# The fastest variant's weights changed after it was measured: its check must fail now.
cp "$work/perf.db" "$work/changed.db"
sqlite3 "$work/changed.db" "UPDATE variants SET printed = replace(printed, '15.0f * c', '16.0f * c')
  WHERE id = (SELECT c.variant_id FROM measurements m JOIN configurations c
              ON c.id = m.configuration_id WHERE m.status = 'ok'
              ORDER BY m.median_ms LIMIT 1)"
if out=$(scripts/recheck-measured-variants.sh "$work/changed.db" jacobi2d5pt \
  stencils/jacobi2d5pt.lift M=16,N=16 3 "$liftx"); then
  echo "FAIL: a changed variant passed"
  fail=1
fi
echo "$out"
grep -q 'FAILED' <<<"$out" || { echo "FAIL: no variant reported FAILED"; fail=1; }
# Bad input: an unknown program is an error, not an empty table.
if scripts/recheck-measured-variants.sh "$work/perf.db" no_such_program stencils/jacobi2d5pt.lift \
  M=16,N=16 3 "$liftx" 2>/dev/null; then
  echo "FAIL: an unknown program passed"
  fail=1
fi
[ $fail = 0 ] && echo "recheck-measured-variants: passes, a changed variant fails, read-only"
exit $fail
