#!/bin/bash
# Scratch: the 2.5D local-memory stream by hand against liftx's best register tile, same machine.
export LD_LIBRARY_PATH=$PWD/.gpu/lib; source scripts/nvidia-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
.gpu/liftx roofline --device nvidia 2>&1 | tail -3
.gpu/liftx run .gpu/hand/best-register-tile.lift --device nvidia --size 512 --local 64,2,1 --no-check --no-roofline --repeat 10 2>&1 | grep -i "time"
cd .gpu/hand
S=""
for stage in 0 1; do for zc in 512 128 64; do
  for t in "32 16 32 8" "32 32 32 8" "32 32 32 16" "64 16 64 4" "64 16 64 8" "32 8 32 8" "64 32 64 8" "128 8 128 2" "64 8 64 4" "128 16 128 4"; do
    S="$S $t $zc $stage"; done; done; done
timeout 400 ./harness H 512 512 512 10 $S
cd ../..
.gpu/liftx run .gpu/hand/best-register-tile.lift --device nvidia --size 512 --local 64,2,1 --no-check --no-roofline --repeat 10 2>&1 | grep -i "time"
