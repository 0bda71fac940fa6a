#!/usr/bin/env bash
# Configures once (Ninja, ccache) and builds everything the tests need into build/.
# Extra arguments go to CMake's configure step, e.g. scripts/build.sh -DTRAINSIM_BUILD_GUI=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f build/build.ninja ] || [ $# -gt 0 ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build build -j "$jobs"
