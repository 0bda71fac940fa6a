#!/usr/bin/env bash
# Installs every Debian package the build and tests need. Idempotent and quiet when everything
# is already there; safe to run on every build.
set -euo pipefail
packages=(
  cmake ninja-build g++ ccache pkg-config python3
  libsimgrid-dev            # sim/: flow-level network simulation (SimGrid 3.32)
  libboost-graph-dev        # sim/: topology graphs, routes, bisection
  libjemalloc-dev           # the simulating executables' allocator (SimGrid allocates per transfer)
  nlohmann-json3-dev        # scenario files, results, calibration
  libcli11-dev              # cli/: the subcommands' option tables, help, completion
  libgtest-dev              # tests
  libopenmpi-dev openmpi-bin  # kernels/: CPU collectives and sweep sharding
  libopenblas-dev           # kernels/: CPU GEMM
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev qt6-l10n-tools qt6-tools-dev qt6-tools-dev-tools  # gui/
  fonts-noto-cjk            # gui/: Simplified Chinese text
  xvfb                      # gui/: screenshots without a display (offscreen also works)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null || echo "setup: apt-get update failed; trying the install anyway" >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
