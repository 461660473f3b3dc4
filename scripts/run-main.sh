#!/usr/bin/env bash
# The main job: set up, build, then evaluate the Jacobi 2D 5-point stencil with the reference
# interpreter on a random 1024 x 768 grid and print a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/liftx eval stencils/jacobi2d5pt.lift --size N=1024,M=768 --seed 1
