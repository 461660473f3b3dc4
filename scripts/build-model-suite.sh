#!/usr/bin/env bash
# Assembles the cost model's regression suite (model/data/nvidia-suite.db.xz): H200 measurements
# of every kind of program the variant space makes, none of them in the shipped model's training
# data (scripts/train-nvidia-model.sh), each input with a broad measured search as its ground
# truth. What each part is, and the command that measured it: model/data/README.md.
# Usage: scripts/build-model-suite.sh [OUTPUT]   (default model/data/nvidia-suite.db.xz)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$here/model/data/nvidia-suite.db.xz}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
parts=()
# archive:path inside it (data/README.md names the command of each; h200-suite-breadth holds the
# originals of i22, w3d, suite-kinds, suite-mm-1024 and the j3d27pt search, each with the rows
# that brought its inputs to 500 variants or more)
for part in h200-broad-search-8192:h200-broad-search-8192/broad-8192.db.xz \
            h200-suite-breadth:h200-suite-breadth/i22-breadth.db.xz \
            h200-suite-breadth:h200-suite-breadth/w3d-breadth.db.xz \
            h200-d2q9-layouts:h200-d2q9-layouts/d2q9-layouts.db.xz \
            h200-suite-breadth:h200-suite-breadth/suite-kinds-breadth.db.xz \
            h200-model-suite-kinds:h200-model-suite-kinds/suite-kinds-2.db.xz \
            h200-model-suite-kinds:h200-model-suite-kinds/suite-kinds-3.db.xz; do
  archive=${part%%:*}
  inner=${part#*:}
  tar xJf "$here/data/$archive.tar.xz" -C "$work" "$inner"
  xz -d "$work/$inner"
  parts+=("$work/${inner%.xz}")
done
"$here/scripts/merge-perf-db.sh" "$work/suite.db" "${parts[@]}"
# Removes every measurement of one input (program name, sizes as the database writes them).
drop_input() {
  sqlite3 "$work/suite.db" <<SQL
DELETE FROM measurements WHERE configuration_id IN (
  SELECT c.id FROM configurations c JOIN variants v ON v.id = c.variant_id
  JOIN programs p ON p.id = v.program_id
  WHERE p.name = '$1' AND c.sizes_json = '$2');
SQL
}
# srad1 at 4096^2 (measured beside the multi-output suite) is in the training data
# (model/data/nvidia-h200.db.xz): a suite input's own rows may not be.
drop_input srad1 '{"M":4096,"N":4096}'
# mm at 1024^3 was measured (h200-model-suite-kinds) before its local tiles were fast, and with
# none of them: its kernels changed since, so it is measured again from scratch, local tiles
# included (h200-products-local-tiles).
drop_input mm '{"K":1024,"M":1024,"N":1024}'
tar xJf "$here/data/h200-suite-breadth.tar.xz" -C "$work" \
  h200-suite-breadth/suite-mm-1024-breadth.db.xz
xz -d "$work/h200-suite-breadth/suite-mm-1024-breadth.db.xz"
"$here/scripts/merge-perf-db.sh" "$work/suite.db" "$work/h200-suite-breadth/suite-mm-1024-breadth.db"
# The shipped model's own picks (its explores of heat3d and j3d7pt at 512^3, with and without the
# online batches spread over launch shapes, of j3d27pt at 512^3 and of jacobi2d9pt at 8192^2):
# the variants the broad searches did not draw, so that an offline judgement sees what the
# explores ran first. j3d27pt at 512^3 also gets its broad search here: 200 uniform windows and
# the shipped model's best 40.
for part in h200-3d-512-training:h200-3d-512-training/explore-heat3d-1.db.xz \
            h200-3d-512-training:h200-3d-512-training/explore-heat3d-2.db.xz \
            h200-3d-512-training:h200-3d-512-training/explore-j3d7pt-1.db.xz \
            h200-launch-spread:h200-launch-spread/explore-heat3d-1.db.xz \
            h200-launch-spread:h200-launch-spread/explore-heat3d-2.db.xz \
            h200-launch-spread:h200-launch-spread/explore-heat3d-3.db.xz \
            h200-launch-spread:h200-launch-spread/explore-j3d7pt-2.db.xz \
            h200-suite-breadth:h200-suite-breadth/j3d27pt-512-breadth.db.xz \
            h200-worst-of-three-explores:h200-worst-of-three-explores/explore-j3d27pt-1.db.xz \
            h200-worst-of-three-explores:h200-worst-of-three-explores/explore-j3d27pt-2.db.xz \
            h200-worst-of-three-explores:h200-worst-of-three-explores/explore-j3d27pt-3.db.xz \
            h200-worst-of-three-explores:h200-worst-of-three-explores/explore-jacobi2d9pt-1.db.xz \
            h200-worst-of-three-explores:h200-worst-of-three-explores/explore-jacobi2d9pt-2.db.xz \
            h200-worst-of-three-explores:h200-worst-of-three-explores/explore-jacobi2d9pt-3.db.xz; do
  archive=${part%%:*}
  inner=${part#*:}
  tar xJf "$here/data/$archive.tar.xz" -C "$work" "$inner"
  xz -d "$work/$inner"
  "$here/scripts/merge-perf-db.sh" "$work/suite.db" "$work/${inner%.xz}"
done
sqlite3 "$work/suite.db" 'VACUUM;'
xz -9 -c "$work/suite.db" > "$out.tmp"
mv "$out.tmp" "$out"
echo "written $out"
