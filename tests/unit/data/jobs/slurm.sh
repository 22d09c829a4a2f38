#!/bin/bash
# sdnbench-r1-pox-vs-ryu: 'experiments/r1 wired.yaml' in 8 shards, one Slurm array task per shard
# (written by `sdnbench jobs 'experiments/r1 wired.yaml' --shards 8 --slurm`).
#
# Submit from the directory that holds 'experiments/r1 wired.yaml', on storage every node sees:
#   sbatch runs/r1/slurm.sh
# Each task owns its node (--exclusive) and runs the groups dealt to its shard;
# at most 3 run at once. A task that failed or was cut off resumes
# where it stopped when submitted again:  sbatch --array=I runs/r1/slurm.sh
# Once every task has ended, combine the shards:
#   sdnbench merge runs/r1/shard-* --out runs/r1/merged
# sdnbench needs root on the node (network namespaces, Open vSwitch): set
# SDNBENCH="sudo -E sdnbench" when the job does not run as root.
#SBATCH --job-name=sdnbench-r1-pox-vs-ryu
#SBATCH --array=0-7%3
#SBATCH --exclusive
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --output=runs/r1/slurm-%A_%a.out
#SBATCH --time=04:00:00
#SBATCH --partition=bench

set -euo pipefail
SDNBENCH=${SDNBENCH:-sdnbench}
exec $SDNBENCH run 'experiments/r1 wired.yaml' --shard auto/8 --shard-index-env SLURM_ARRAY_TASK_ID \
    --out runs/r1/shard-$SLURM_ARRAY_TASK_ID --resume
