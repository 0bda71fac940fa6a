#!/usr/bin/env bash
# The kernels-only trainsim (calibrate, train) and its GPU tests for Hopper (sm_90), linked
# against the CUDA runtime statically and cuBLAS alone, into build-gpu/: a binary that runs on a
# GPU machine which has the driver and cuBLAS but none of the build's other libraries
# (validate/gpu/session.sh runs it there). Needs the CUDA toolkit here; scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DTRAINSIM_KERNELS_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DTRAINSIM_BUILD_TESTS=ON \
  -DTRAINSIM_KERNELS_MPI=OFF -DTRAINSIM_KERNELS_BLAS=OFF -DTRAINSIM_KERNELS_NCCL=OFF >/dev/null
cmake --build build-gpu -j "$(nproc 2>/dev/null || echo 2)"
