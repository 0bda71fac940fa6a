#!/usr/bin/env bash
# `trainsim calibrate --from-torch-trace` (issue 10) on the generated trace in tests/data/torch:
# the fitted curve is the generator's, the calibration file it writes is what `trainsim run
# --calibration` reads, and broken traces exit 2 naming the field.
set -u
T=${TRAINSIM:?}
D=${DATA:?}/torch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() {  # name expected_rc pattern -- command...
  local name=$1 want=$2 pattern=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: rc=$rc (want $want), pattern '$pattern' in:"
    echo "$out" | head -5
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}
trace=$D/gpt_small_a100_step.json
scen=$D/gpt_small_a100_dp8.json

# make_trace.py timed the GEMMs with gemm_max 0.70, half width 300.
check fit 0 'gemm_max 0\.(69|70)[0-9], gemm_half_width (29[0-9]|30[0-9])  ' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen" --out "$tmp/cal.json"
check step_row 0 'step ProfilerStep#7: measured 11\.297 ms; estimate with this calibration' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
check alias 0 'elementwise: 1631\.[0-9] GB/s' -- "$T" import-torch-trace "$trace"
check help 0 'from-torch-trace' -- "$T" import-torch-trace --help
# The calibration file drives `trainsim run`, which predicts what calibrate printed.
predicted=$(python3 -c "import json,sys; print('%.3f' % (1e3*json.load(open(sys.argv[1]))['torch_trace']['prediction']['step_time_s']))" "$tmp/cal.json" 2>/dev/null || echo none)
check run_uses_it 0 "step time +$predicted ms" -- "$T" run --fidelity estimate --calibration "$tmp/cal.json" "$scen"
check json 0 '"gemm_half_width": (29[0-9]|30[0-9])\.' -- "$T" calibrate --from-torch-trace "$trace" --json
check unknown_gpu 2 '^trainsim calibrate: error: --gpu: unknown GPU preset "NoSuchGPU"; available: .*A100' -- \
  "$T" calibrate --from-torch-trace "$trace" --gpu NoSuchGPU

# Broken traces: exit 2, the message names the field or line.
check missing_events 2 'traceEvents: missing' -- "$T" calibrate --from-torch-trace "$D/bad_no_trace_events.json"
check missing_dur 2 'traceEvents\[3\]\.dur: missing' -- "$T" calibrate --from-torch-trace "$D/bad_missing_dur.json"
check input_dims 2 'traceEvents\[1\]\.args\.Input Dims\[0\]\[1\]' -- "$T" calibrate --from-torch-trace "$D/bad_input_dims.json"
check inner_dims 2 'inner dimensions differ' -- "$T" calibrate --from-torch-trace "$D/bad_inner_dims.json"
check no_gemm 2 'no GEMM kernels' -- "$T" calibrate --from-torch-trace "$D/bad_no_gemm.json"
check truncated 2 'bad_truncated\.json:[0-9]+:[0-9]+: the JSON ends early' -- "$T" calibrate --from-torch-trace "$D/bad_truncated.json"
check missing_file 2 'cannot open' -- "$T" calibrate --from-torch-trace "$tmp/none.json"
check no_trace 2 'TRACE: missing' -- "$T" calibrate --from-torch-trace
check two_traces 2 'only one trace' -- "$T" calibrate --from-torch-trace "$trace" "$trace"
check bad_step 2 'no ProfilerStep#3 in' -- "$T" calibrate --from-torch-trace "$trace" --step 3
printf '\037\213rest' >"$tmp/t.json.gz"
check gzip 2 'gunzip' -- "$T" calibrate --from-torch-trace "$tmp/t.json.gz"

echo "torch_trace_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
