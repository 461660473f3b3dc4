# Sourced on a lent GPU machine (no Open MPI there, nothing can be installed): Debian 12's Open MPI
# carried in .gpu/ and unpacked at its own absolute paths, the liftx libraries, and the NVIDIA
# OpenCL driver registered. Made on the development machine by:
#   dpkg -L libopenmpi3 openmpi-bin openmpi-common libpmix2 | grep -v share/doc | ... > files.txt
#   tar -czPf .gpu/ompi.tgz -T files.txt
#   cp -L libhwloc.so.15 libevent*-2.1.so.7 libmpi.so.40 libopen-{rte,pal}.so.40 libpmix.so.2
#         libudev.so.1 libreadline.so.8 libtinfo.so.6 .gpu/ompi-lib/   (and /usr/bin/sqlite3 .gpu/)
# Issue 27's calls: `source bench/device-openmpi.sh; DEVICE=nvidia ... bench/mpi-collect.sh ...`.
tar -xzPf .gpu/ompi.tgz 2>/dev/null || echo "device-openmpi: cannot unpack .gpu/ompi.tgz" >&2
export LD_LIBRARY_PATH=$PWD/.gpu/lib:$PWD/.gpu/ompi-lib:/usr/lib/x86_64-linux-gnu/openmpi/lib
export PATH=$PWD/.gpu:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared memory between the ranks of one host; the fabric components Debian builds (OFI, UCX)
# need libraries that are not carried.
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^ofi OMPI_MCA_osc=^ucx
export OMPI_MCA_btl_base_warn_component_unused=0
source scripts/nvidia-env.sh
mkdir -p /tmp/ompi-bin && ln -sf /usr/bin/orterun /tmp/ompi-bin/mpirun && export PATH=/tmp/ompi-bin:$PATH
