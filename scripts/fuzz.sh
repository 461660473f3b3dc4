#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with AddressSanitizer and UndefinedBehaviorSanitizer)
# into build-fuzz/ and runs each for a while; docs/fuzzing.md says what each asserts.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET | --runs N] [TARGET...]     (default: 60 s, every target)
#
# Targets: lift arith userfun model launch db. Each runs with its seeds (fuzz/corpus/TARGET, and
# stencils/, the synthetic stencils and tests/space/programs/ for lift) and a scratch corpus
# that grows across runs (build-fuzz/fuzz-corpus/TARGET);
# a crash, a hang over 5 s or more than 2 GB of memory stops it and leaves the input in
# build-fuzz/fuzz-artifacts/TARGET/. Prints one line per target (executions, executions per
# second, crashes, time) and exits 1 if any target failed. LIFTX_FUZZ_BUILD_DIR: another build
# folder; LIFTX_FUZZ_ARGS: more libFuzzer options for every target (e.g. -jobs=4).
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(lift arith userfun model launch db)
seconds=60
runs=""
if [[ $# -gt 0 && $1 == --runs ]]; then
  runs=$2
  shift 2
elif [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz.sh: no target '$t' (${all_targets[*]})" >&2; exit 2; }
done

# Build: clang and its libFuzzer runtime come from apt like every other package (scripts/setup.sh).
build_dir=${LIFTX_FUZZ_BUILD_DIR:-build-fuzz}
launcher=""
command -v ccache >/dev/null && launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
build_targets=""
for t in "${targets[@]}"; do build_targets+="fuzz_$t "; done
if grep -qs '^LIFTX_FUZZ:BOOL=ON' "$build_dir/CMakeCache.txt"; then
  # A folder already configured for fuzzing (CI's sanitizer build, which also holds the test
  # suite): build the targets there as configured, leaving its other settings alone.
  # shellcheck disable=SC2086 # a target list
  cmake --build "$build_dir" -j "$(nproc)" --target $build_targets
else
  CC=clang CXX=clang++ LIFTX_BUILD_DIR="$build_dir" LIFTX_EXTRA_PACKAGES="clang libclang-rt-14-dev" \
    LIFTX_CMAKE_ARGS="-DLIFTX_FUZZ=ON -DLIFTX_BUILD_TESTS=OFF $launcher" \
    LIFTX_BUILD_TARGETS="$build_targets" scripts/setup.sh
fi

# Per target: extra seed folders and options. Index expressions are short; a long arithmetic
# input mostly multiplies sums out up to the simplifier's term budget, which under the sanitizers
# takes seconds (fuzz/regressions/arith/timeout-product-of-sums), so the campaign stays on short
# ones.
declare -A seeds=([lift]="stencils model/data/synth tests/space/programs")
declare -A options=([arith]="-max_len=100" [lift]="-max_len=8192")

status=0
rows=()
for t in "${targets[@]}"; do
  corpus="$build_dir/fuzz-corpus/$t"
  artifacts="$build_dir/fuzz-artifacts/$t"
  log="$build_dir/fuzz-logs/$t.log"
  scratch="$build_dir/fuzz-tmp/$t" # the db target's files (one per process: -fork makes many)
  rm -rf "$scratch"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")" "$scratch"
  limit=(-max_total_time="$seconds")
  [[ -n $runs ]] && limit=(-runs="$runs")
  dict=()
  [[ -f fuzz/dict/$t.dict ]] && dict=(-dict="fuzz/dict/$t.dict")
  seed_dirs=()
  [[ -d fuzz/corpus/$t ]] && seed_dirs=("fuzz/corpus/$t") # lift's seeds are stencils/ alone
  # Inputs that once failed (fuzz/regressions/TARGET/) are replayed first, whole (no -max_len):
  # each must pass. (The 146-byte product of sums takes about 10 s under the sanitizers, hence
  # 30 s here.)
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    if ! TMPDIR="$scratch" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$build_dir/fuzz/fuzz_$t" -timeout=30 \
      -rss_limit_mb=2048 fuzz/regressions/"$t"/* >"$log.regressions" 2>&1; then
      status=1
      echo "fuzz.sh: $t fails on an input in fuzz/regressions/$t/; its log: $log.regressions" >&2
      grep -E "ERROR|fuzz property broken|internal error|Running:" "$log.regressions" | tail -5 >&2 || true
    fi
  fi
  before=$(find "$artifacts" -type f | wc -l)
  start=$(date +%s)
  echo "fuzz.sh: $t ..." >&2
  rc=0
  # shellcheck disable=SC2086 # option lists split on purpose
  TMPDIR="$scratch" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build_dir/fuzz/fuzz_$t" "${limit[@]}" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "${dict[@]}" ${options[$t]:-} ${LIFTX_FUZZ_ARGS:-} \
    "$corpus" "${seed_dirs[@]}" ${seeds[$t]:-} >"$log" 2>&1 || rc=$?
  elapsed=$(($(date +%s) - start))
  rm -rf "$scratch"
  crashes=$(($(find "$artifacts" -type f | wc -l) - before))
  [[ $rc -ne 0 && $crashes -eq 0 ]] && crashes=1 # e.g. killed before it wrote an artifact
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [[ -z $executions ]]; then # -fork=N: its last status line, "#N: cov: ... exec/s N ..."
    executions=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$log" | tail -1)
    [[ -n $executions ]] && per_second=$((executions / (elapsed > 0 ? elapsed : 1)))
  fi
  rows+=("$(printf '%-8s %12s %8s %8s %6ss' "$t" "${executions:-?}" "${per_second:-?}" "$crashes" "$elapsed")")
  if [[ $crashes -ne 0 ]]; then
    status=1
    echo "fuzz.sh: $t failed (exit $rc); its log: $log; inputs: $artifacts/" >&2
    grep -E "ERROR|fuzz property broken|internal error|terminate|SUMMARY" "$log" | head -5 >&2 || true
    # The failing input travels with the log (CI keeps only what it prints): its property's
    # detail, and the input itself in base64 (`base64 -d > input` gives it back).
    grep -A3 "fuzz property broken" "$log" | head -4 | cut -c1-2000 >&2 || true
    newest=$(find "$artifacts" -type f -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
    if [[ -n $newest ]]; then
      echo "fuzz.sh: the input ($newest, $(wc -c <"$newest") bytes) in base64:" >&2
      head -c 8192 "$newest" | base64 -w 0 >&2
      echo >&2
    fi
  fi
done

printf '%-8s %12s %8s %8s %7s\n' target executions exec/s crashes time
printf '%s\n' "${rows[@]}"
exit $status
