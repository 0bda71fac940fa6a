#!/usr/bin/env bash
# Sweep rate: `trainsim sweep` over 1,013,760 plans of GPT-3 175B on 1536 A100s (every TP x PP x
# DP x CP factorisation of the GPUs, micro-batch 1-32, vpp 1-2, four schedules, ZeRO 0-3, three
# recompute policies, sequence parallelism on and off), estimate tier for all, pinned to one
# core (taskset), rows, CSV, summary and Pareto front included. Prints the figures; not a test.
#   bench/bench_sweep.sh [build/cli/trainsim]
# SIMULATE_TOP=K also simulates the best K plans in child processes (-j JOBS, default 2; not
# pinned, and not part of the one-core figure). REPEAT=N runs the sweep N times.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
T=${1:-$root/build/cli/trainsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/sweep.json" <<JSON
{"schema_version": 1, "name": "bench", "base": "$root/scenarios/default.json",
 "axes": [{"degrees": ["plan.tp", "plan.pp", "plan.dp", "plan.cp"]},
          {"path": "plan.micro_batch", "powers_of_two": [1, 32]},
          {"path": "plan.vpp", "values": [1, 2]},
          {"path": "plan.schedule", "values": ["1f1b", "interleaved", "zb-h1", "gpipe"]},
          {"path": "plan.zero_stage", "values": [0, 1, 2, 3]},
          {"path": "plan.recompute", "values": ["none", "selective", "full"]},
          {"path": "plan.sp", "values": [false, true]}],
 "constraints": ["memory.peak_bytes < 0.95 * hbm"],
 "objective": {"maximize": "tokens_per_s"}}
JSON
cd "$tmp"
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
[ -x /usr/bin/time ] && pin=(/usr/bin/time -o rss.txt -f "%M %U %S" "${pin[@]}")
for run in $(seq "${REPEAT:-1}"); do
  rm -f bench.*
  start=$(date +%s.%N)
  "${pin[@]}" "$T" sweep sweep.json --out bench --quiet --simulate-top 0 >summary.txt
  end=$(date +%s.%N)
  # Rows files start with a header line; every other line is a row.
  plans=$(($(wc -l <bench.rows.jsonl) - 1))
  csv=$(($(wc -l <bench.csv) - 1))
  front=$(sed -n 's/^Pareto front.*: \([0-9]*\) plans$/\1/p' summary.txt)
  feasible=$(sed -n 's/^[0-9]* plans: \([0-9]*\) feasible within constraints.*/\1/p' summary.txt)
  read -r rss user sys_s <rss.txt 2>/dev/null || { rss=0; user=0; sys_s=0; }
  python3 - "$start" "$end" "$plans" "$csv" "$front" "$feasible" "$(stat -c %s bench.rows.jsonl)" "$rss" "$user" "$sys_s" <<'PY'
import sys
start, end, plans, csv, front, feasible, size, rss, user, sys_s = sys.argv[1:]
s = float(end) - float(start)
print(f"bench_sweep: {int(plans):,} plans ({int(csv):,} CSV rows, {int(feasible):,} feasible within "
      f"constraints), Pareto front {front} plans, rows file {int(size) / 1e9:.2f} GB")
print(f"  one core: {s:.2f} s, {int(plans) / s:,.0f} plans/s (goal: >= 1,000,000 plans in <= 10 s)"
      + (f", peak memory {int(rss) / 1e6:.2f} GB" if int(rss) else ""))
if int(rss):
    # On a shared machine the wall time includes waiting for the core; the CPU time does not.
    print(f"  CPU time {float(user) + float(sys_s):.2f} s (user {float(user):.2f} s, system {float(sys_s):.2f} s)")
PY
done
if [ "${SIMULATE_TOP:-0}" -gt 0 ]; then
  start=$(date +%s.%N)
  "$T" sweep sweep.json --out bench --quiet --resume --simulate-top "$SIMULATE_TOP" -j "${JOBS:-2}" >/dev/null
  end=$(date +%s.%N)
  python3 -c "print(f'  simulate stage: best $SIMULATE_TOP plans, -j ${JOBS:-2}: {float($end) - float($start):.1f} s (rows read back included)')"
fi
printf '  %s cores (%s)\n' "$(nproc)" "$(uname -m)"
