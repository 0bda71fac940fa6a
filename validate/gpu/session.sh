#!/usr/bin/env bash
# validate/gpu/session.sh OUT — every GPU measurement trainsim takes, in one bounded run (about
# 7-9 minutes on an H200), for a machine lent for a short while:
#   1. the device as the driver reports it (nvidia-smi)
#   2. kernel facts through PyTorch (kernel_facts.py): the GEMM clock under the power limit, alone
#      and beside copies, GEMM shapes, fp8, attention, streaming kernels, launch and optimizer
#      costs                                                                 -> OUT/kernel_facts.jsonl
#   3. end-to-end GPT training steps in PyTorch (torch_training.py)          -> OUT/torch_training.jsonl
#   4. trainsim's own measurement side (validate/gpu_check.sh): op checks, GPU tests, calibrate,
#      the small GPT trained on cuda and cpu                                 -> OUT/gpu_check.tgz
# Each step writes as it goes and has its own time limit, so a run cut short keeps what it
# measured. A session that measures part of this again names it: SECTIONS (kernel_facts.py
# sections), RUNS (torch_training.py runs), PROFILE_RUNS (runs profiled afterwards, one step each,
# into OUT/traces), GPU_CHECK=0 to leave out step 4.
# The trainsim binary is a kernels-only build made beforehand (scripts/build-gpu.sh)
# under build-gpu/, because the GPU machine lacks the build's header libraries: carry build-gpu
# there with the working tree.
set -uo pipefail
OUT=${1:?usage: validate/gpu/session.sh OUT}
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[session $(( $(date +%s) - START ))s] $*" | tee -a "$OUT/session.log"; }
mkdir -p "$OUT"

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,memory.total \
  --format=csv >> "$OUT/nvidia-smi.txt" 2>&1
log "$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1)"

timeout "${KERNEL_FACTS_TIMEOUT_S:-190}" python3 validate/gpu/kernel_facts.py --budget-s "${KERNEL_FACTS_BUDGET_S:-160}" \
  ${SECTIONS:+--sections "$SECTIONS"} --out "$OUT/kernel_facts.jsonl" > "$OUT/kernel_facts.log" 2>&1
log "kernel facts rc=$? ($(wc -l < "$OUT/kernel_facts.jsonl") records)"

timeout "${TRAINING_TIMEOUT_S:-190}" python3 validate/gpu/torch_training.py --budget-s "${TRAINING_BUDGET_S:-160}" \
  ${RUNS:+--runs "$RUNS"} --out "$OUT/torch_training.jsonl" > "$OUT/torch_training.log" 2>&1
log "torch training rc=$? ($(wc -l < "$OUT/torch_training.jsonl") runs)"
python3 - "$OUT/torch_training.jsonl" <<'PY' | tee -a "$OUT/session.log"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "step_s" in r:
        print("  %-18s %.4f s/step  %6.1f TFLOP/s  peak %.1f GiB" % (
            r["run"], r["step_s"], r["model_flop_per_s"] / 1e12, r.get("peak_allocated_bytes", 0) / 2**30))
    else:
        print("  ", r)
PY
if [ -n "${PROFILE_RUNS:-}" ]; then
  mkdir -p "$OUT/traces"
  timeout "${PROFILE_TIMEOUT_S:-120}" python3 validate/gpu/torch_training.py --runs "$PROFILE_RUNS" \
    --profile "$OUT/traces" > "$OUT/traces/profile.log" 2>&1
  log "profiles rc=$? ($(ls "$OUT/traces" | grep -c trace) traces)"
fi
[ "${GPU_CHECK:-1}" = 0 ] && { log "done (no gpu_check)"; exit 0; }

# cuBLAS for the carried binary: the toolkit's, else the one PyTorch ships.
CUBLAS_DIR=$(dirname "$(find /usr/local/cuda*/ /opt -name 'libcublas.so.13*' 2>/dev/null | head -1)" 2>/dev/null)
export LD_LIBRARY_PATH=${CUBLAS_DIR}:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/gpu_check"
OUTDIR="$OUT/gpu_check" TRAINSIM_BIN="$ROOT/build-gpu/kernels/trainsim" \
  GTEST_BIN="$ROOT/build-gpu/tests/kernels/kernels_gpu_test" \
  CHECKS_TIMEOUT_S=45 CALIBRATE_TIMEOUT_S=130 TRAIN_TIMEOUT_S=30 TRAIN_CPU_TIMEOUT_S=30 TORCH_TIMEOUT_S=30 \
  timeout "${GPU_CHECK_TIMEOUT_S:-200}" bash validate/gpu_check.sh > "$OUT/gpu_check/gpu_check.log" 2>&1
log "gpu_check rc=$?"
tail -15 "$OUT/gpu_check/gpu_check.log" | tee -a "$OUT/session.log"
tar -C "$OUT" -czf "$OUT/gpu_check.tgz" gpu_check && rm -rf "$OUT/gpu_check"
log "done"
