#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, in
# build-asan/. The GUI is left out (Qt's own allocations drown the reports) and so is the CUDA
# backend (nvcc does not take -fsanitize). Leak detection is off: OpenMPI and SimGrid keep
# process-lifetime allocations by design.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINSIM_SANITIZE=ON \
  -DTRAINSIM_BUILD_GUI=OFF -DTRAINSIM_BUILD_BENCH=OFF -DTRAINSIM_KERNELS_CUDA=OFF >/dev/null
cmake --build build-asan -j "$jobs"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build-asan --output-on-failure -j "$jobs" "$@"
