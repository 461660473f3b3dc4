#!/usr/bin/env bash
# Issue 28 on the lent GPU: mm at 4096³ with its products fused (long-reduce-map-fusion), against
# CLBlast's Sgemm on the same buffers. VARIANTS holds folders of the variants written on the
# development machine (the first run: ranked/, sample/ and where/ of data/mm4096.tar.xz, the
# shipped model's 12 best, 12 sampled with --seed 3, and 2 per thread mapping with --where, all at
# 4096³ for the nvidia profile); each is verified against the interpreter at n = 128 and against
# CLBlast at n = 4096 before it is timed.
#   bench/gpu-mm-vs-clblast.sh VARIANTS OUT [BENCH]
# VARIANTS may be a folder or ARCHIVE.tar.xz[:FOLDER] (an archive of data/, unpacked into a
# temporary folder first; without FOLDER, every folder the archive holds).
set -u
variants=$1 out=$2 bench=${3:-build/linalg_bench}
source "$(dirname "$0")/data-folder.sh"
resolve_data_folder "$variants"
variants=$data_folder
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
"$bench" --device nvidia --size 8192 --mm-size 4096 --mm-check-size 128 --batches 5 --batch 4 \
  "$variants"/*/*.lift >"$out/mm.txt" 2>&1
echo "exit $?" >>"$out/mm.txt"
