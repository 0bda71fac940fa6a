#!/usr/bin/env bash
# `trainsim validate --backend cpu` on 2 ranks, one thread each, in one command. It
# calibrates (with the job's op rates, on the same ranks and threads) immediately before the run
# so both see the same machine load, then fails if the predicted step time is off by more than
# 25% (the CI threshold; the goal is 5%). A few seconds in all.
set -u
T=${TRAINSIM:?set TRAINSIM to the trainsim executable}
if ! command -v mpirun >/dev/null; then
  echo "mpirun not found: skipping"
  exit 0
fi
if [ ! -x "$(dirname "$T")/trainsim-kernels" ]; then
  echo "trainsim-kernels not built: skipping"
  exit 0
fi
# No OMPI_ALLOW_RUN_AS_ROOT*: trainsim sets what mpiexec needs when it runs as root.
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
"$T" validate --backend cpu --ranks 2 --pp 2 --layers 4 --hidden 128 --heads 4 --seq 64 \
  --micro-batch 2 --micro-batches 4 --steps 8 --max-error 25 --attempts 2
