#!/usr/bin/env bash
# Runs every liftx command the documentation shows as runnable: each line starting with
# `build/liftx` (joined with its `\` continuations) inside a fenced block whose info string is
# exactly `sh`, in README.md and docs/*.md. Blocks of commands that need a GPU, MPI, a long run
# or files the reader makes first are fenced as `sh no-ci` and left out. Each command runs with
# the liftx under test, in a scratch copy of the repository's sources (so that a file a command
# writes never lands in the tree), with its own database, cache and data folder, under a time
# limit; a command that fails fails the test, naming the file and line it came from.
#
# Usage: tests/docs/run-doc-commands.sh LIFTX_BINARY
set -euo pipefail
liftx=$(realpath "$1")
root=$(realpath "$(dirname "$0")/../..")
work=$(mktemp -d "${TMPDIR:-/tmp}/liftx-doc-commands.XXXXXX")
trap 'rm -rf "$work"' EXIT
for entry in "$root"/*; do
  case "$(basename "$entry")" in
  build* | data) continue ;; # build outputs; archives no command reads
  esac
  cp -r "$entry" "$work/"
done
mkdir -p "$work/build"
ln -s "$liftx" "$work/build/liftx"
export LIFTX_DB="$work/perf.db" LIFTX_CACHE_DIR="$work/cache" XDG_DATA_HOME="$work/data"
export LIFTX_TUNING_DB="$work/tuning.db"

# FILE:LINE<TAB>COMMAND, one per runnable command.
commands=$(cd "$root" && awk '
  FNR == 1 { fence = ""; pending = "" }
  /^```/ {
    if (fence == "") { fence = substr($0, 4); sub(/[ \t]+$/, "", fence); next }
    fence = ""; next
  }
  fence == "sh" {
    line = $0
    if (pending != "") { command = command " " line } else if (line ~ /^build\/liftx /) {
      command = line; start = FILENAME ":" FNR
    } else next
    if (command ~ /\\$/) { sub(/\\$/, "", command); pending = 1; next }
    pending = ""
    print start "\t" command
  }' README.md docs/*.md)

failed=0
count=0
while IFS=$'\t' read -r where command; do
  [[ -z "$where" ]] && continue
  count=$((count + 1))
  if ! output=$(cd "$work" && timeout 300 bash -c "$command" 2>&1); then
    echo "doc-commands: FAILED $where: $command"
    echo "$output" | tail -15 | sed 's/^/    /'
    failed=$((failed + 1))
  fi
done <<<"$commands"
echo "doc-commands: $count commands run, $failed failed"
[[ $count -gt 0 && $failed -eq 0 ]]
