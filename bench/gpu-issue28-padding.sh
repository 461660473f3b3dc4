#!/usr/bin/env bash
# Issue 28 on the lent GPU: each local-tile variant in VARIANTS/<stencil>/ (liftx variants --where
# strategy=workgroup2d_local --sample 30 --seed 5, 4096², nvidia profile) run with its own launch,
# as lowered and with --pad-local (seed 004's Algorithm 2 for the device), verified against the
# stencil's interpretation. One JSON report per run in OUT/<stencil>/<variant>.{plain,padded}.json.
#   bench/gpu-issue28-padding.sh VARIANTS OUT [LIFTX]
set -u
variants=$1 out=$2 liftx=${3:-build/liftx}
for dir in "$variants"/*/; do
  stencil=$(basename "$dir")
  mkdir -p "$out/$stencil"
  for lift in "$dir"*.lift; do
    name=$(basename "$lift" .lift)
    for mode in plain padded; do
      extra=()
      [[ $mode == padded ]] && extra=(--pad-local)
      "$liftx" run "$lift" --device nvidia --size M=4096,N=4096 --launch "${lift%.lift}.json" \
        --reference "stencils/$stencil.lift" --json "${extra[@]}" >"$out/$stencil/$name.$mode.json" \
        2>"$out/$stencil/$name.$mode.err" || true
    done
  done
done
