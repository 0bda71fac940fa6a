#!/usr/bin/env bash
# Sweep wall time: a 10,560-plan sweep of GPT-3 175B on 1536 A100s, estimate
# tier for all, the best 100 simulated in child processes, -j 2. Prints the figures; not a test.
#   bench/bench_sweep.sh [build/cli/trainsim]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
T=${1:-$root/build/cli/trainsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/sweep.json" <<JSON
{"schema_version": 1, "name": "bench", "base": "$root/scenarios/default.json",
 "axes": [{"degrees": ["plan.tp", "plan.pp", "plan.dp"]},
          {"path": "plan.vpp", "values": [1]},
          {"path": "plan.micro_batch", "powers_of_two": [1, 8]},
          {"path": "plan.schedule", "values": ["1f1b", "zb-h1"]},
          {"path": "plan.zero_stage", "values": [0, 1]},
          {"path": "plan.recompute", "values": ["selective", "full"]},
          {"path": "plan.precision", "values": ["fp16", "bf16"]}],
 "constraints": ["memory.peak_bytes < 0.95 * hbm"],
 "objective": {"maximize": "tokens_per_s"}, "simulate_top": ${SIMULATE_TOP:-100}}
JSON
cd "$tmp"
start=$(date +%s.%N)
"$T" sweep sweep.json --out bench -j "${JOBS:-2}" --quiet >summary.txt
end=$(date +%s.%N)
# Rows files start with a header line; rows are the lines with an index.
plans=$(grep -c '"index"' bench.rows.jsonl)
simulated=$( [ -f bench.simulated.jsonl ] && grep -c '"index"' bench.simulated.jsonl || echo 0)
failed=$( [ -f bench.simulated.jsonl ] && grep -c '"error"' bench.simulated.jsonl || true)
printf 'bench_sweep: %d plans estimated, %d simulated (%s failed), -j %s, %s cores (%s)\n' \
  "$plans" "$simulated" "${failed:-0}" "${JOBS:-2}" "$(nproc)" "$(uname -m)"
python3 -c "print(f'  wall time {float($end) - float($start):.1f} s (goal <= 300 s)')"
