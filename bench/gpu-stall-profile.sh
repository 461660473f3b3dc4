#!/usr/bin/env bash
# Where an OpenCL kernel's time goes on an NVIDIA GPU: Nsight Compute's counters and stall samples
# for kernels that only OpenCL runs. Run on the GPU machine (it needs nvcc's CUDA headers, the
# CUDA driver and ncu; the development machine has none of them).
#
#   bench/gpu-stall-profile.sh MANIFEST OUT
#
# MANIFEST: one kernel per line, `NAME FILE.cl KERNEL GLOBAL LOCAL [--arg ...] [--prepend FILE.cl]
# [--build-option WORD]...` (bench/cuda/opencl_kernel_under_cuda.cpp's arguments; `#` starts a
# comment). For each kernel:
# the OpenCL launch and the CUDA launch of the same PTX are compared bit for bit on random inputs
# and timed (median of 20); only a kernel whose launches agree is profiled. OUT/NAME/ then holds
# the PTX, ptxas's resource usage, the SASS, ncu's report and its details and per-instruction
# source pages as text. Clocks are left as they are (--clock-control none).
set -euo pipefail
manifest=$1
out=$2
mkdir -p "$out"
cd "$(dirname "$0")/.."
# shellcheck source=/dev/null
source scripts/nvidia-env.sh

cuda_home=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
library_folder() { ldconfig -p | awk -v lib="$1" '$1 == lib { print $NF; exit }' | xargs -r dirname; }
opencl_dir=$(library_folder libOpenCL.so.1)
cuda_driver_dir=$(library_folder libcuda.so.1)
harness=$out/opencl_kernel_under_cuda
g++ -O2 -std=c++17 -I"$cuda_home/include" bench/cuda/opencl_kernel_under_cuda.cpp -o "$harness" \
  ${opencl_dir:+-L"$opencl_dir"} ${cuda_driver_dir:+-L"$cuda_driver_dir"} -l:libOpenCL.so.1 -l:libcuda.so.1

sections=(SpeedOfLight LaunchStats Occupancy SchedulerStats WarpStateStats ComputeWorkloadAnalysis
  MemoryWorkloadAnalysis MemoryWorkloadAnalysis_Tables InstructionStats SourceCounters)
available=$(ncu --list-sections 2>/dev/null || true)
section_args=()
for s in "${sections[@]}"; do
  if grep -qw -- "$s" <<<"$available"; then section_args+=(--section "$s"); else echo "ncu lacks section $s"; fi
done

while read -r name source kernel global local rest; do
  [ -z "${name:-}" ] && continue
  case $name in \#*) continue ;; esac
  dir=$out/$name
  mkdir -p "$dir"
  # shellcheck disable=SC2086  # the harness options are words
  if ! "$harness" "$source" "$kernel" "$global" "$local" $rest --ptx-out "$dir/kernel.ptx" \
    >"$dir/check.txt" 2>&1; then
    echo "$name: the OpenCL and CUDA launches disagree or failed; not profiled" | tee -a "$dir/check.txt"
    continue
  fi
  cat "$dir/check.txt"
  ptxas -arch=sm_90 -v "$dir/kernel.ptx" -o "$dir/kernel.cubin" >"$dir/ptxas.txt" 2>&1 || true
  cuobjdump --dump-sass "$dir/kernel.cubin" >"$dir/kernel.sass" 2>&1 || true
  # shellcheck disable=SC2086
  ncu --clock-control none "${section_args[@]}" --import-source no --kernel-name "$kernel" \
    --launch-skip 1 --launch-count 1 -f -o "$dir/report" \
    "$harness" "$source" "$kernel" "$global" "$local" $rest --cuda-only --repeat 3 \
    >"$dir/ncu.log" 2>&1 || echo "$name: ncu failed (see ncu.log)"
  if [ -f "$dir/report.ncu-rep" ]; then
    ncu --import "$dir/report.ncu-rep" --page details >"$dir/details.txt" 2>&1 || true
    ncu --import "$dir/report.ncu-rep" --page source --print-source sass --csv \
      >"$dir/source-sass.csv" 2>&1 || true
    ncu --import "$dir/report.ncu-rep" --page raw --csv >"$dir/raw.csv" 2>&1 || true
    grep -E "Duration|Issue Slots Busy|Achieved Occupancy|Theoretical Occupancy|Registers Per|L1/TEX Hit|Memory Throughput|Compute \(SM\)|No Eligible|Warp Cycles Per Issued" \
      "$dir/details.txt" | sed "s/^/$name: /" || true
  fi
done <"$manifest"
