#!/usr/bin/env bash
# `trainsim calibrate --from-torch-trace` on the generated trace in tests/data/torch:
# the fitted share and rates, the calibration file it writes is what `trainsim run
# --calibration` reads, and broken traces exit 2 naming the field.
set -u
T=${TRAINSIM:?}
D=${DATA:?}/torch
source "$(dirname "$0")/check_lib.sh"
trace=$D/gpt_small_a100_step.json
scen=$D/gpt_small_a100_dp8.json

# make_trace.py timed the GEMMs on a curve (0.70 w / (w + 300) of the peak) that is not the
# kernel model: the share that reproduces it best on the A100's tiles, and how far single
# shapes stay from it.
check fit 0 'GEMM sustained share \(bf16\): 0\.75[0-9] of peak, the kernel model fitted to 15 shapes \(FLOP-weighted error 9\.[0-9]%' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen" --out "$tmp/cal.json"
check step_row 0 'step ProfilerStep#7: measured 11\.297 ms' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
# The presets' kernel model (tile and wave quantised GEMMs at the training-loop tensor share,
# FlashAttention-2 tables, fp32 loss) against this synthetic trace's own kernel rates: +19.0%,
# the training-loop share (0.94: the trace's kernels run at their benchmark rates), the loss's
# fp32 passes as PyTorch's kernels move them (48 bytes a logit; the trace times fewer) and the
# optimizer's 28 bytes a parameter at the achieved streaming rate (the trace's 22 at peak).
check presets_row 0 'estimate with the GPU presets +13\.[0-9]{3} ms +\+1[89]\.[0-9]%' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
# The fitted GEMM share, FlashAttention-2 share and memory-bound share, no training-loop share on
# top of the loop's own rates: the GEMM class within 3% (the row below), the step +13.4% (the
# model's memory-bound ops, loss and optimizer bytes, which this synthetic trace does not follow,
# and the 8-GPU job's slowest GPU: its tensor-core ops 2.1% slower than the profiled rank's).
check kernel_fit_gemm 0 'gemm +51 +6\.716 +6\.9[0-9]{2} +3\.[0-9] +6\.8[0-9]{2} +2\.[0-9]' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
check kernel_fit_row 0 'estimate with the kernel fit +12\.[0-9]{3} ms +\+13\.[0-9]%' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
# Op rates measured from the trace's own ops: the GEMMs and attention come back exactly; the
# step +0.4%: the tied embedding's all-reduce exposed after the backward as the trace has it
# (its gradient is made last and reduced whole), unmodelled elementwise time (dropout,
# bias-gradient sums, cat) against the loss's two casts to and from fp32, which the model counts
# (PyTorch's path) and this synthetic trace's bf16 log_softmax does not run (see
# tests/models/interop/torch_trace_test.cpp).
check op_rates_row 0 'estimate with op rates +11\.[0-9]{3} ms +[-+]0\.[0-9]%' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
check op_rates_table 0 'residual_add +17 +3\.565e\+07 +0\.130 +3\.64[0-9]  trace' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
check unmodelled 0 'unmodelled elementwise: 0\.26[0-9] ms \(2\.3% of the step; .*sum 0\.095' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
check fallback_note 0 'op_rates: no fill_zero op in the trace: its rate is its minimum traffic' -- \
  "$T" calibrate --from-torch-trace "$trace" --scenario "$scen"
# Without the scenario there is no shape: no op_rates section.
check no_op_rates_without_scenario 0 '^op_rates sections: 0$' -- bash -c \
  'echo "op_rates sections: $("$0" calibrate --from-torch-trace "$1" --json | grep -c "\"op_rates\"")"' "$T" "$trace"
check alias 0 'elementwise: 1631\.[0-9] GB/s' -- "$T" import-torch-trace "$trace"
check help 0 'from-torch-trace' -- "$T" import-torch-trace --help
# The calibration file drives `trainsim run`, which predicts what calibrate printed: with its
# op_rates (prediction.step_time_s is the op-rates step, the 11.1xx ms of the op-rates row).
predicted=$(python3 -c "import json,sys; print('%.3f' % (1e3*json.load(open(sys.argv[1]))['torch_trace']['prediction']['step_time_s']))" "$tmp/cal.json" 2>/dev/null || echo none)
check run_uses_it 0 "step time +$predicted ms" -- "$T" run --fidelity estimate --calibration "$tmp/cal.json" "$scen"
check run_op_rates_step 0 'step time +11\.[0-9]{3} ms' -- "$T" run --fidelity estimate --calibration "$tmp/cal.json" "$scen"
check run_applies_op_rates 0 'per-op rates \(op_rates, measured at hidden 1024, seq 1024, micro-batch 2, tp 1\)' -- \
  "$T" run --fidelity estimate --calibration "$tmp/cal.json" "$scen" --json
check op_rates_in_file 0 '"softmax_xent": 7\.4[0-9]*e-12' -- cat "$tmp/cal.json"
check json 0 '"sustained_share": 0\.75[0-9]' -- "$T" calibrate --from-torch-trace "$trace" --json
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
check two_traces 2 'not expected: .*gpt_small_a100_step.json' -- "$T" calibrate --from-torch-trace "$trace" "$trace"
check bad_step 2 'no ProfilerStep#3 in' -- "$T" calibrate --from-torch-trace "$trace" --step 3
printf '\037\213rest' >"$tmp/t.json.gz"
check gzip 2 'gunzip' -- "$T" calibrate --from-torch-trace "$tmp/t.json.gz"

finish torch_trace_test
