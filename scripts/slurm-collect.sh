#!/usr/bin/env bash
# A liftx collection across the GPUs of a Slurm allocation, one MPI rank per GPU; rank 0 writes
# the database. Resumable: submit it again (or let --requeue do it) and it goes on where it
# stopped. Adapt the #SBATCH lines to your cluster (partition, account, GPUs per node).
#
#   sbatch scripts/slurm-collect.sh DB STENCIL.lift... 
#   Environment: LIFTX (default: build/liftx of the submit folder), SIZE (default 4096),
#   SAMPLE (variants per stencil, default 1000), DEVICE (default nvidia), PROFILE (default
#   nvidia), MARGIN_S (seconds of the slot kept to stop cleanly, default 600).
#
#SBATCH --job-name=liftx-collect
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --output=liftx-collect-%j.log
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: sbatch $0 DB STENCIL.lift..." >&2; exit 2; }
db=$(realpath "$1")
shift
liftx=$(realpath "${LIFTX:-${SLURM_SUBMIT_DIR:-.}/build/liftx}")

# The stencil files and liftx must be at the same paths on every node (a shared file system);
# the database is written by rank 0 only, on its node. Kernels and reference results are cached
# per node.
export LIFTX_CACHE_DIR=${TMPDIR:-/tmp}/liftx-cache-${SLURM_JOB_ID:-0}

# Stop measuring MARGIN_S before the slot ends: what is not measured is left for the next run.
time_limit=0
if end=$(squeue -h -j "${SLURM_JOB_ID:-0}" -o %e 2>/dev/null) && [ -n "$end" ]; then
  time_limit=$(( $(date -d "$end" +%s) - $(date +%s) - ${MARGIN_S:-600} ))
  [ "$time_limit" -gt 60 ] || time_limit=60
fi

# One rank per task (= per GPU): each rank takes the GPU of its local rank among those --device
# matches (or the only one it sees when Slurm binds one GPU per task). --enable-recovery: when
# a rank dies the others take over its batch instead of Open MPI ending the job.
mpirun -np "${SLURM_NTASKS:-1}" --map-by "ppr:${SLURM_NTASKS_PER_NODE:-1}:node" --bind-to none \
  --enable-recovery -x LIFTX_CACHE_DIR \
  "$liftx" collect "$@" --device "${DEVICE:-nvidia}" --profile "${PROFILE:-nvidia}" \
  --size "${SIZE:-4096}" --sample "${SAMPLE:-1000}" --seed 1 \
  --resume --time-limit "$time_limit" --mpi --db "$db"
