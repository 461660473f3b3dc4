#!/usr/bin/env bash
# Checks again, with this build's verification, the fastest variants a performance database
# holds as measured `ok` for one program: each variant's lowered program and launch are written
# out of the database and run at CHECK_SIZE on DEVICE (default pocl) against REFERENCE's
# interpretation. For measurements taken under an older, weaker check (before the tolerance's
# floor followed the output's magnitude, 64 steps of jacobi2d5pt matched any small values).
# The database is only read. One row per variant: configuration, its measured median, verdict.
#   scripts/recheck-measured-variants.sh DB PROGRAM REFERENCE.lift CHECK_SIZE [TOP] [LIFTX]
#   e.g. scripts/recheck-measured-variants.sh suite.db jacobi2d5pt_x64 \
#          stencils/iterated/jacobi2d5pt_x64.lift M=512,N=512 10
# Each runs with its measured local size and the global size its launch rule gives at
# CHECK_SIZE; a free-thread launch, whose global size was chosen for the measured sizes, runs
# only where CHECK_SIZE is those sizes (skipped elsewhere). DEVICE=... picks another OpenCL
# device; TIMEOUT_MS=... limits each run (default 15 minutes: PoCL compiles a 32-lane stream
# slowly).
set -euo pipefail
if [[ $# -lt 4 ]]; then
  echo "usage: $0 DB PROGRAM REFERENCE.lift CHECK_SIZE [TOP] [LIFTX]" >&2
  exit 2
fi
db=$1 program=$2 reference=$3 check_size=$4 top=${5:-10}
liftx=${6:-build/liftx}
[[ -r $db ]] || { echo "recheck: cannot read $db" >&2; exit 2; }
[[ -r $reference ]] || { echo "recheck: cannot read $reference" >&2; exit 2; }
[[ $top =~ ^[0-9]+$ ]] || { echo "recheck: TOP must be a number, not '$top'" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The fastest `ok` measurement of each configuration, fastest first.
query="SELECT c.id, min(m.median_ms) FROM measurements m
  JOIN configurations c ON c.id = m.configuration_id JOIN variants v ON v.id = c.variant_id
  JOIN programs p ON p.id = v.program_id
  WHERE p.name = '${program//\'/\'\'}' AND m.status = 'ok'
  GROUP BY c.id ORDER BY min(m.median_ms) LIMIT $top"
mapfile -t rows < <(sqlite3 -readonly -separator ' ' "file:$db?immutable=1" "$query")
if [[ ${#rows[@]} -eq 0 ]]; then
  echo "recheck: no ok measurement of $program in $db" >&2
  exit 1
fi
# NAME=VALUE,... in one order, to compare sizes however they were written.
sorted_sizes() { tr ',' '\n' <<<"$1" | sort | paste -sd, -; }
printf '%-14s %-12s %-8s %s\n' configuration median_ms verdict detail
failed=0 skipped=0
for row in "${rows[@]}"; do
  read -r id median <<<"$row"
  sqlite3 -readonly "file:$db?immutable=1" \
    "SELECT v.printed FROM configurations c JOIN variants v ON v.id = c.variant_id
     WHERE c.id = $id" >"$work/$id.lift"
  read -r tied local global sizes < <(sqlite3 -readonly -separator ' ' "file:$db?immutable=1" \
    "SELECT tied, replace(replace(replace(local_json, '[', ''), ']', ''), ' ', ''),
       replace(replace(replace(global_json, '[', ''), ']', ''), ' ', ''),
       (SELECT group_concat(key || '=' || value, ',') FROM json_each(sizes_json))
     FROM configurations WHERE id = $id")
  # A tied launch: its launch rule gives the global size at CHECK_SIZE.
  launch=()
  [[ $local =~ ^[0,]*$ ]] || launch=(--local "$local") # none: the kernel's or the runtime's
  if [[ $tied != 1 ]]; then
    # A free-thread launch's global size was chosen for the measured sizes: checked there only.
    if [[ $(sorted_sizes "$sizes") != $(sorted_sizes "$check_size") ]]; then
      printf '%-14s %-12s %-8s %s\n' "$id" "$median" skipped "free-thread launch made for $sizes"
      skipped=$((skipped + 1))
      continue
    fi
    launch+=(--global "$global")
  fi
  if out=$("$liftx" run "$work/$id.lift" "${launch[@]}" --device "${DEVICE:-pocl}" \
    --size "$check_size" --reference "$reference" --repeat 1 --warmup 0 --no-roofline \
    --timeout-ms "${TIMEOUT_MS:-900000}" 2>&1); then
    verdict=passed
  else
    verdict=FAILED
    failed=$((failed + 1))
  fi
  detail=$(grep -m1 '^check' <<<"$out" | sed 's/^check *//' || true)
  [[ -n $detail ]] || detail=$(tail -1 <<<"$out")
  printf '%-14s %-12s %-8s %s\n' "$id" "$median" "$verdict" "$detail"
done
echo "$((${#rows[@]} - failed - skipped)) of ${#rows[@]} passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 ]]
