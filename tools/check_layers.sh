#!/usr/bin/env bash
# Layering check (ARCHITECTURE.md "Layers and the direction of dependencies"): fails when a
# lower layer includes a higher layer's headers or a library it must not know.
#   models/   standard library + nlohmann/json only
#   sim/      + SimGrid, Boost.Graph; never Qt or CUDA
#   kernels/  + CUDA, NCCL, MPI, BLAS; never SimGrid, Qt, or the simulator
#   validate/ never Qt, the GUI or the CLI
#   gui/      never SimGrid, CUDA or the CLI (it runs simulations as child processes)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
forbid() {  # layer regex why
  local layer=$1 regex=$2 why=$3
  [ -d "$root/$layer" ] || return 0
  local hits
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($regex)" "$root/$layer" \
           --include='*.hpp' --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layering violation: $layer/ $why:"
    echo "$hits" | sed "s|$root/||"
    status=1
  fi
}
forbid models 'simgrid|xbt|Q[A-Z]|qt|cuda|cublas|nccl|mpi\.h|boost/graph|sim/|kernels/|validate/|gui/|cli/' \
  'must depend on the standard library and nlohmann/json only'
forbid sim 'Q[A-Z]|qt|cuda|cublas|nccl|kernels/|validate/|gui/|cli/' 'must not include Qt, CUDA or higher layers'
forbid kernels 'simgrid|xbt|Q[A-Z]|qt|sim/|validate/|gui/|cli/|models/' 'must not know the simulator, the models or Qt'
forbid validate 'Q[A-Z]|qt|gui/|cli/' 'must not include Qt, the GUI or the CLI'
forbid gui 'simgrid|xbt|cuda|cublas|nccl|cli/|sim/|kernels/' 'must not include SimGrid, CUDA or the CLI'
[ "$status" -eq 0 ] && echo "layering: ok"
exit $status
