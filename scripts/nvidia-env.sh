# Sourced: makes the NVIDIA OpenCL driver visible to the ICD loader on machines that ship
# libnvidia-opencl but no /etc/OpenCL/vendors entry (see docs/results.md, "Measuring").
nvidia_opencl=$(find / -xdev -name 'libnvidia-opencl.so*' 2>/dev/null | sort | head -n 1)
if [ -z "$nvidia_opencl" ]; then
  echo "nvidia-env: no libnvidia-opencl.so found" >&2
  return 1 2>/dev/null || exit 1
fi
mkdir -p /tmp/ocl-vendors
echo "$nvidia_opencl" >/tmp/ocl-vendors/nvidia.icd
export OCL_ICD_VENDORS=/tmp/ocl-vendors OCL_ICD_FILENAMES=$nvidia_opencl
export LIFTX_CACHE_DIR=${LIFTX_CACHE_DIR:-/tmp/liftx-cache}
