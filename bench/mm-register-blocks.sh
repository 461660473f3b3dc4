#!/usr/bin/env bash
# Writes hand-lowered register-blocked variants of stencils/linalg/mm.lift (issue 28) for linalg_bench:
# each work-item computes a ROWS x COLS block of C, its sums in a private accumulator (a
# reduceSeq over an array); the loop over k is unrolled UNROLL times (1: not split); with
# PRIVATE=1 each step first copies its values of A and B to private memory. One VARIANT.lift and
# its launch sidecar VARIANT.json (n = 4096, global = (n / COLS, n / ROWS)) per line of CONFIGS:
#   bench/mm-register-blocks.sh OUT_DIR PREFIX "ROWS COLS UNROLL PRIVATE LOCAL_X LOCAL_Y" ...
# The folders mm4096/blocked* of data/mm4096.tar.xz were written by it (the commands are in
# bench/RESULTS.md).
set -eu
out=$1 prefix=$2
shift 2
n=4096
mkdir -p "$out"
for config in "$@"; do
  read -r rows cols unroll private lx ly <<<"$config"
  if [ "$private" = 1 ]; then
    step="(acc, x) =>
               ((as, bs) => mapSeq((acc_row, a) => mapSeq((c, b) => madd(c, a, b), zip(acc_row, bs)),
                                   zip(acc, as)))(
                  toPrivate(mapSeq(id))(get(0, x)), toPrivate(mapSeq(id))(get(1, x)))"
    reads="each step first copies its $rows values of A and $cols of B to private memory"
  else
    step="(acc, x) => mapSeq((acc_row, a) => mapSeq((c, b) => madd(c, a, b),
                                                              zip(acc_row, get(1, x))),
                                        zip(acc, get(0, x)))"
    reads="each step reads $rows values of A's column and $cols consecutive values of B's row"
  fi
  init="array($rows, (i, n) => array($cols, zero))"
  pairs="zip(transpose(rows), transpose(columns))"
  if [ "$unroll" = 1 ]; then
    reduce="reduceSeq($step,
                     $init,
                     $pairs)"
  else
    reduce="reduceSeq((outer, chunk) => join(reduceSeq($step, outer, chunk)),
                     $init,
                     split($unroll, $pairs))"
  fi
  name="$out/$prefix${rows}x${cols}-unroll$unroll-local${lx}x$ly"
  cat >"$name.lift" <<EOF
// Register blocking by hand (issue 28): each work-item computes a ${rows}x$cols block of C in a
// private accumulator (a reduceSeq over an array, in registers); $reads;
// the loop over k is unrolled $unroll times.
userfun madd(acc: float, a: float, b: float): float { return acc + a * b; }
userfun zero(i: int, n: int): float { return 0.0f; }
def mm(A: [[float]K]M, B: [[float]N]K) =
  join(mapGlb1(rows => map(join, transpose(mapGlb0(columns =>
      join($reduce),
    split($cols, transpose(B))))), split($rows, A)))
EOF
  cat >"$name.json" <<EOF
{
  "sizes": {"K": $n, "M": $n, "N": $n},
  "dims": 2,
  "global": [$((n / cols)), $((n / rows))],
  "local": [$lx, $ly],
  "tied": false,
  "strategy": "register_block_${rows}x$cols",
  "parameters": {"rows": $rows, "columns": $cols, "unroll": $unroll, "private_loads": $private}
}
EOF
done
