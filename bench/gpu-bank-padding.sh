#!/usr/bin/env bash
# Issue 28 on the lent GPU: each local-tile variant in VARIANTS/<stencil>/ (liftx variants --where
# strategy=workgroup2d_local --sample 30 --seed 5, 4096², nvidia profile) run with its own launch,
# as lowered and with --pad-local (seed 004's Algorithm 2 for the device), verified against the
# stencil's interpretation. One JSON report per run in OUT/<stencil>/<variant>.{plain,padded}.json.
#   bench/gpu-bank-padding.sh VARIANTS OUT [LIFTX]
# VARIANTS may be a folder or ARCHIVE.tar.xz:FOLDER, a folder inside an archive of data/ (e.g.
# data/h200-bank-padding.tar.xz:variants, the variants of the run in bench/RESULTS.md).
set -u
variants=$1 out=$2 liftx=${3:-build/liftx}
source "$(dirname "$0")/data-folder.sh"
resolve_data_folder "$variants"
variants=$data_folder
for dir in "$variants"/*/; do
  stencil=$(basename "$dir")
  mkdir -p "$out/$stencil"
  for lift in "$dir"*.lift; do
    name=$(basename "$lift" .lift)
    for mode in plain padded; do
      extra=()
      [[ $mode == padded ]] && extra=(--pad-local)
      "$liftx" run "$lift" --device nvidia --size M=4096,N=4096 --launch "${lift%.lift}.json" \
        --reference "stencils/$stencil.lift" --format json "${extra[@]}" >"$out/$stencil/$name.$mode.json" \
        2>"$out/$stencil/$name.$mode.err" || true
    done
  done
done
