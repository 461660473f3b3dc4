#!/bin/bash
export LD_LIBRARY_PATH=$PWD/.gpu/lib; source scripts/nvidia-env.sh
.gpu/liftx roofline --device nvidia 2>&1 | tail -1
.gpu/liftx run .gpu/hand/best-register-tile.lift --device nvidia --size 512 --local 64,2,1 --no-check --no-roofline --repeat 10 2>&1 | grep -i "^time"
cd .gpu/hand
S=""
for zc in 128 64 32; do
  for t in "32 32" "64 16" "32 16" "32 24" "64 12" "32 20" "64 8"; do
    S="$S 0 0 $t $zc 1 0 0 $t $zc 0"; done; done
KFILE=j3d7pt_regz.cl KNAME=j3d7pt_regz timeout 300 ./harness H 512 512 512 10 $S; echo harness rc $?
cd ../..
.gpu/liftx run .gpu/hand/best-register-tile.lift --device nvidia --size 512 --local 64,2,1 --no-check --no-roofline --repeat 10 2>&1 | grep -i "^time"
