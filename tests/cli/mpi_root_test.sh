#!/usr/bin/env bash
# The measurement commands start their own mpiexec, and it works as root out of the box: no
# OMPI_ALLOW_RUN_AS_ROOT* in the environment (Open MPI refuses root without them), more ranks than
# cores (--oversubscribe).
set -u
T=${TRAINSIM:?}
source "$(dirname "$0")/check_lib.sh"
if ! command -v mpiexec >/dev/null || ! "$T" --help | grep -q '^  calibrate'; then
  echo "mpiexec or the measurement tools missing: skipping"
  exit 0
fi
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_rmaps_base_oversubscribe
check calibrate-2-ranks 0 '^wrote .*cal.json' -- "$T" calibrate --backend cpu --ranks 2 --quick --min-time 0.001 \
  --max-bytes 65536 --out "$tmp/cal.json"
check train-own-mpiexec 0 '"event": ?"done"' -- "$T" train --tp 2 --steps 2 --layers 2 --hidden 32 --heads 2 --seq 16
check train-more-ranks-than-cores 0 '"event": ?"done"' -- "$T" train --dp 4 --steps 2 --layers 2 --hidden 32 --heads 2 \
  --seq 16 --global-batch 8 --micro-batch 2
check help-says-so 0 'OMPI_ALLOW_RUN_AS_ROOT=1' -- "$T" help calibrate
finish mpi_root_test
