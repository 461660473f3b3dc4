#!/usr/bin/env bash
# Installs the liftx build into a temporary prefix, builds examples/heat2d against the installed
# package (find_package(liftx) through CMAKE_PREFIX_PATH, nothing from the source tree), and runs
# it on PoCL for a few steps on a small grid: tuned at its first run, the winner reused at the
# second, verified against a plain C++ loop both times. Then examples/adaptive: the installed
# `liftx adapt` tunes its stencil at two small shapes on PoCL, and the application runs it through
# liftx::AdaptiveProgram on several shapes, each checked against a plain C++ loop. Then
# examples/lbm (a Boost.Hana cell struct through <liftx/cells.hpp>).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${LIFTX_BUILD_DIR:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/liftx-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log"
echo "test-install: installed into $prefix"
# The source tree's headers must not be needed: only the public set is installed.
test -f "$prefix/include/liftx/liftx.hpp"
test -f "$prefix/include/liftx/ir/dsl.hpp"
test ! -e "$prefix/include/liftx/codegen"
test -f "$prefix/share/liftx/model/cpu-model.json"
test -x "$prefix/bin/liftx"
# Installed without debug information (LIFTX_INSTALL_DEBUG_INFO=OFF): well under 60 MB.
installed_mb=$(du -sm "$prefix" | cut -f1)
echo "test-install: the installed prefix holds $installed_mb MB"
if ((installed_mb >= 60)); then
  echo "test-install: the installed prefix is $installed_mb MB, over the 60 MB it should stay under" >&2
  exit 1
fi

cmake -S examples/heat2d -B "$work/heat2d-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/heat2d-build" -j "$(nproc)" > "$work/build.log" || { cat "$work/build.log"; exit 1; }

# A tuning database of its own (so the first run tunes), and no LIFTX_MODEL_DIR: the model must
# be the installed one (share/liftx/model, which the package tells the library about).
export LIFTX_TUNING_DB=$work/tuning.db
unset LIFTX_MODEL_DIR
run=("$work/heat2d-build/heat2d" --size 48 --steps 20 --budget 2 --max-variants 300)
"${run[@]}" | tee "$work/first.txt"
grep -q "^tuned " "$work/first.txt"
grep -q "$prefix/share/liftx/model/cpu-model.json" "$work/first.txt"
"${run[@]}" | tee "$work/second.txt"
grep -q "^reused " "$work/second.txt"
"$prefix/bin/liftx" devices > /dev/null

# The adaptive example: the application prints its stencil, the installed liftx adapts it (a
# performance database of its own; short timings: the test is that the chosen kernels verify,
# not which is fastest), and the application runs the artifact at training, held-out and
# unfitting shapes.
cmake -S examples/adaptive -B "$work/adaptive-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/configure-adaptive.log" || { cat "$work/configure-adaptive.log"; exit 1; }
cmake --build "$work/adaptive-build" -j "$(nproc)" > "$work/build-adaptive.log" \
  || { cat "$work/build-adaptive.log"; exit 1; }
adaptive=$work/adaptive-build/adaptive
"$adaptive" --print-stencil > "$work/jacobi.lift"
"$prefix/bin/liftx" adapt "$work/jacobi.lift" --device cpu --shapes 32x64 64x32 --top 2 \
  --portfolio 2 --repeat 2 --warmup 1 --quiet --db "$work/adapt.db" -o "$work/adaptive.json" \
  > "$work/adapt.log" || { cat "$work/adapt.log"; exit 1; }
"$adaptive" "$work/adaptive.json" --shapes 32x64,64x32,128x128,64x256,40x72 --steps 3 \
  | tee "$work/adaptive.txt"
test "$(grep -c '^ok ' "$work/adaptive.txt")" -eq 5
grep -q "member #" "$work/adaptive.txt"
# The lbm example: its nodes are a Boost.Hana struct, stepped by the installed package in every
# storage layout (apart, AoS, AoSoA(32)); it checks mass conservation and that the layouts agree.
cmake -S examples/lbm -B "$work/lbm-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/configure-lbm.log" || { cat "$work/configure-lbm.log"; exit 1; }
cmake --build "$work/lbm-build" -j "$(nproc)" > "$work/build-lbm.log" \
  || { cat "$work/build-lbm.log"; exit 1; }
"$work/lbm-build/lbm" stencils/d2q9.lift --size 48 --steps 5 | tee "$work/lbm.txt"
grep -q "^layouts  agree" "$work/lbm.txt"
echo "test-install: OK"
