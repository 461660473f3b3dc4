#!/bin/bash
# Call 2, on call 1's machine right after it: the same exploration with the default acquisition
# (posterior mean), into a fresh database, then the best known variant re-timed again.
export LD_LIBRARY_PATH=$PWD/.gpu/lib; source scripts/nvidia-env.sh
STENCILS="jacobi2d9pt" EXPLORE_TIMEOUT=175 EXPLORE_ARGS="--timeout-ms 20000" scripts/nvidia-explore.sh $OUT/explore-mean.db model/data/nvidia-model.json M=8192,N=8192 10 .gpu/liftx > $OUT/explore-mean.txt 2>&1
xz -T0 $OUT/explore-mean.db
.gpu/liftx run docs/results/carry/h200-issue18-broad/c8/j9-4x2v4.lift --device nvidia --size M=8192,N=8192 --global 2048,4096 --local 128,4 --repeat 10 --no-check 2>&1 | grep -E "^(time|bandwidth)" > $OUT/retime2.txt
