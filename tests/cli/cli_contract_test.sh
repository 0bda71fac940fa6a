#!/usr/bin/env bash
# The CLI contract of the foundation issue: exit codes 0/2/3, messages naming the JSON path,
# the --json keys, --help everywhere. Runs the real executable on real files.
set -u
T=${TRAINSIM:?}
S=${SCENARIOS:?}
source "$(dirname "$0")/check_lib.sh"
scenario() {  # name json -> file path
  printf '%s' "$2" >"$tmp/$1.json"
  echo "$tmp/$1.json"
}
base='"schema_version": 1, "model": "gpt-1.7b", "cluster": {"base": "dgx-a100-superpod", "nodes": 4}'
good=$(scenario good "{$base, \"plan\": {\"dp\": 32, \"micro_batch\": 4, \"global_batch\": 512}}")

check default-report 0 'step time' -- "$T" run "$S/default.json"
check json-keys 0 '^ok$' -- bash -c "'$T' run '$S/default.json' --json | python3 -c '
import json,sys
d=json.load(sys.stdin)
need=[\"feasible\",\"reason\",\"step_time_s\",\"tokens_per_s\",\"model_flops_per_step\",\"hardware_flops_per_step\",
\"model_tflops_per_gpu\",\"hardware_tflops_per_gpu\",\"mfu\",\"hfu\",\"bubble_fraction\",\"exposed_comm_s\",\"fidelity\",\"scenario\"]
assert all(k in d for k in need), [k for k in need if k not in d]
m=d[\"memory\"]; assert \"peak_bytes\" in m and len(m[\"per_stage\"])==8
assert set(m[\"breakdown\"])>={\"params_bytes\",\"grads_bytes\",\"optimizer_bytes\",\"activations_bytes\",\"other_bytes\"}
assert set(d[\"breakdown_s\"])>={\"compute\",\"tp_comm\",\"pp_comm\",\"dp_comm\",\"ep_comm\",\"cp_comm\",\"bubble\",\"optimizer\"}
assert d[\"scenario\"][\"plan\"][\"tp\"]==8
print(\"ok\")'"
check set-override 0 'TP2 PP1 DP16' -- "$T" run "$good" --set plan.tp=2 --set plan.dp=16
check good-80GB 0 'step time' -- "$T" run "$(scenario gb "{$base, \"plan\": {\"dp\": 32, \"global_batch\": 512}}")" --set 'cluster.gpu={"base":"A100-SXM4-80GB","hbm_capacity":"80GB"}'
check duplicate-key 2 'plan.dp: the key appears twice' -- "$T" run "$(scenario dup "{$base, \"plan\": {\"dp\": 32, \"dp\": 16, \"global_batch\": 512}}")"

# A model from a Hugging Face config.json, relative to the scenario file.
check hf-config 0 'llama|hidden 4096' -- "$T" run "$(dirname "$S")/tests/data/scenarios/hf_llama2_7b.json" --fidelity estimate
check hf-config-missing 2 'model.hf_config' -- "$T" run "$good" --set 'model={"hf_config":"nope/config.json"}'

# Bad input: exit 2 and the JSON path in the message.
check missing-key 2 'plan: missing' -- "$T" run "$(scenario missing "{$base}")"
check unknown-key 2 'plan.tensor_parallel: unknown key' -- "$T" run "$(scenario unknown "{$base, \"plan\": {\"tensor_parallel\": 2, \"global_batch\": 8}}")"
check negative-degree 2 'plan.tp: expected an integer' -- "$T" run "$(scenario neg "{$base, \"plan\": {\"tp\": -8, \"global_batch\": 8}}")"
check bits-not-bytes 2 'cluster.gpu.hbm_capacity: "80Gb" is not a size in bytes: that is bits' -- "$T" run "$good" --set 'cluster.gpu={"base":"A100-SXM4-80GB","hbm_capacity":"80Gb"}'
check malformed-json 2 'malformed JSON at line 1' -- "$T" run "$(scenario malformed '{"schema_version": 1,, }')"
check missing-preset 2 'unknown model preset "gpt-9000"; available: .*gpt3-175b' -- "$T" run "$good" --set model=gpt-9000
check missing-file 2 'not found' -- "$T" run "$tmp/nope.json"
# A scenario from standard input: the same report as from its file; nothing piped in is a
# JSON error, not a wait.
check stdin-scenario 0 'TP2 PP1 DP16' -- bash -c "'$T' run - --set plan.tp=2 --set plan.dp=16 < '$good'"
check stdin-empty 2 'standard input.*malformed JSON' -- bash -c "'$T' run - < /dev/null"
# A part named by a file beside the scenario (ending in .json) is read from there.
printf '{"base": "gpt-1.7b", "layers": 12, "name": "my-model"}' > "$tmp/my-model.json"
check model-file 0 'my-model: 12 layers' -- "$T" run "$good" --set model=my-model.json
check model-file-missing 2 'model: .*/none.json: cannot open the model file: not found' -- "$T" run "$good" --set model=none.json
# A field the plan does not use is named in a warning.
check unused-field-warned 0 'warning: plan.recompute_modules is unused' -- "$T" run "$good" --set plan.recompute=full --set 'plan.recompute_modules=["mlp"]'
check bad-set 2 'expected path=value' -- "$T" run "$good" --set plan.tp
check bad-fidelity 2 'fidelity' -- "$T" run "$good" --fidelity magic

# training.faults: the goodput section, in text and JSON, and its closed forms.
check goodput-text 0 'goodput over a long run' -- "$T" run "$S/examples/llama3-405b-16k-goodput.json" --fidelity estimate
check goodput-json 0 '^ok$' -- bash -c "'$T' run '$S/examples/llama3-405b-16k-goodput.json' --fidelity estimate --json | python3 -c '
import json,math,sys
g=json.load(sys.stdin)[\"goodput\"]
c=g[\"checkpoint\"]
M=g[\"system_mtbf_s\"]
assert abs(c[\"young_interval_s\"]-math.sqrt(2*c[\"blocking_s\"]*M))<1e-6*M, c
assert 0.5<g[\"goodput_fraction\"]<1
assert abs(g[\"goodput_tokens_per_s\"]-g[\"goodput_fraction\"]*g[\"tokens_per_s_nominal\"])<1e-6*g[\"tokens_per_s_nominal\"]
assert set(g[\"lost_hours\"])>={\"checkpoint\",\"lost_work\",\"restart\",\"repair_wait\",\"stragglers\",\"degraded_links\"}
print(\"ok\")'"
# A pinned straggler: both tiers give the same straggler and rebalanced steps (the simulate tier
# measures the first and, with rebalancing off, adds the estimate's rebalance to its own nominal
# step), for 1F1B and for DualPipe, whose devices hold two stages.
for sched in 1f1b dualpipe; do
check "straggler-tiers-$sched" 0 '^ok$' -- bash -c "for f in estimate simulate; do '$T' run '$S/faults/straggler_rebalance.json' --set plan.schedule=$sched --set training.faults.rebalance=false --set training.faults.stragglers.speed_factor=0.05 --set training.faults.stragglers.stage=0 --fidelity \$f --json; done | python3 -c '
import json,sys
d=json.JSONDecoder(); t=sys.stdin.read().strip(); e,i=d.raw_decode(t); s,_=d.raw_decode(t[i:].strip())
a=e[\"goodput\"][\"slow_parts\"]; b=s[\"goodput\"][\"slow_parts\"]
assert a[\"straggler_step_time_s\"]>2*a[\"nominal_step_time_s\"], a
for k in (\"nominal_step_time_s\",\"straggler_step_time_s\",\"rebalanced_step_time_s\"):
  if k in a or k in b: assert abs(a[k]-b[k])<0.1*a[k], (k,a.get(k),b.get(k))
assert abs(e[\"goodput\"][\"goodput_fraction\"]-s[\"goodput\"][\"goodput_fraction\"])<0.05
print(\"ok\")'"
done
check goodput-bad-mtbf 2 'training.faults.gpu_mtbf' -- "$T" run "$S/examples/llama3-405b-16k-goodput.json" --set training.faults.gpu_mtbf=soon

# Examples are tests: every shipped example scenario runs (estimate; the fault examples simulated
# too, where the simulate tier is built).
for f in "$S"/examples/*.json "$S"/faults/*.json; do
  check "example-$(basename "$f")" 0 'step time' -- "$T" run "$f" --fidelity estimate
done
if "$T" run --help | grep -q 'simulate (SimGrid'; then
  for f in "$S"/faults/*.json; do
    check "example-sim-$(basename "$f")" 0 'step time' -- "$T" run "$f" --fidelity simulate
  done
fi
check unknown-command 2 'unknown command' -- "$T" fly
check binary-garbage 2 'malformed JSON' -- bash -c "head -c 4096 /dev/urandom > '$tmp/garbage.json'; '$T' run '$tmp/garbage.json'"
check not-an-object 2 'must be a JSON object' -- "$T" run "$(scenario list '[1, 2, 3]')"

printf '{"format": "trainsim-calibration", "version": 2}' >"$tmp/cal.json"
check bad-calibration 2 'calibration.version' -- "$T" run "$good" --fidelity estimate --calibration "$tmp/cal.json"

# Well-formed plans that cannot run: exit 3, feasible false, the reason.
check tp-heads 3 'plan.tp: 16 does not divide model.heads \(24\)' -- "$T" run "$good" --set plan.tp=16 --set plan.dp=2
check degrees 3 'but the cluster has 32' -- "$T" run "$good" --set plan.dp=8
check dp-shard-divides 3 'plan.dp_shard: 12 does not divide plan.dp \(32\)' -- "$T" run "$good" --set plan.zero_stage=3 --set plan.dp_shard=12
check dp-shard-zero0 3 'plan.dp_shard: ZeRO-0 shards nothing' -- "$T" run "$good" --set plan.dp_shard=8
check dp-shard-negative 2 'plan.dp_shard: expected an integer' -- "$T" run "$good" --set plan.zero_stage=3 --set plan.dp_shard=-8
check dp-shard-hybrid 0 'step time' -- "$T" run "$good" --set plan.zero_stage=3 --set plan.dp_shard=8
check zeropp 0 'step time' -- "$T" run "$good" --set plan.zero_stage=3 --set plan.zero_hpz_partition_size=8 --set plan.zero_quantized_weights=true
check zeropp-zero1 3 "ZeRO\+\+'s, for plan.zero_stage 3" -- "$T" run "$good" --set plan.zero_stage=1 --set plan.zero_quantized_weights=true
check zeropp-bool 2 'plan.zero_quantized_weights: expected' -- "$T" run "$good" --set plan.zero_stage=3 --set plan.zero_quantized_weights=1
check oom 3 'INFEASIBLE: out of memory' -- "$T" run "$good" --set model=gpt3-175b --set plan.dp=32 --set plan.global_batch=32 --set plan.micro_batch=1
check oom-json 3 '"feasible": false' -- "$T" run "$good" --set model=gpt3-175b --set plan.global_batch=32 --set plan.micro_batch=1 --json

# Determinism: the same scenario gives byte-identical JSON.
check deterministic 0 '^same$' -- bash -c "a=\$('$T' run '$S/default.json' --json --fidelity estimate); b=\$('$T' run '$S/default.json' --json --fidelity estimate); [ \"\$a\" = \"\$b\" ] && echo same"

for cmd in $("$T" --help | awk '/^commands:/{on=1; next} on && !NF {exit} on {print $1}'); do
  check "help-$cmd" 0 'usage' -- "$T" "$cmd" --help
done
check help-top 0 'commands:' -- "$T" --help

# Conventions: --opt=value as well as --opt value; `trainsim help CMD` is CMD's help, in the one
# layout every command shares; exit codes listed on every page.
check fidelity-equals 0 'trainsim estimate' -- "$T" run "$S/default.json" --fidelity=estimate
check set-equals 0 'TP2 PP1 DP16' -- "$T" run "$good" --set=plan.tp=2 --set plan.dp=16 --fidelity=estimate
check help-cmd 0 '^usage: trainsim run SCENARIO \[options\]' -- "$T" help run
check help-same-as-flag 0 '^same$' -- bash -c "[ \"\$('$T' help plan)\" = \"\$('$T' plan --help)\" ] && echo same"
for cmd in run plan sweep validate export-chakra import-model import-megatron import-torch-trace share; do
  check "help-layout-$cmd" 0 'exit codes: 0 ok, 2 bad input' -- "$T" help "$cmd"
done
check help-unknown 2 'unknown command "fly"' -- "$T" help fly
check unknown-option 2 'not expected: --bogus' -- "$T" run "$good" --bogus
check completion 0 'complete -o filenames -F _trainsim trainsim' -- "$T" completion bash
# The report names what it ran after --set, and states memory and throughput as people read them.
check header-after-set 0 'trainsim estimate: .*, with --set plan.tp=2 plan.dp=16' -- "$T" run "$good" --set plan.tp=2 --set plan.dp=16 --fidelity estimate
check hbm-as-driver 0 'memory per GPU \(HBM 80 GiB\)' -- "$T" run "$S/default.json" --fidelity estimate
check throughput-separators 0 'throughput +[0-9]{1,3}(,[0-9]{3})+ tokens/s' -- "$T" run "$S/default.json" --fidelity estimate

# Imports ask for what their input does not hold: the training sequence length (a config.json has
# only the longest context) and the world size (not a Megatron flag).
check hf-needs-seq 2 'seq_len: the training sequence length is not in a config.json \(its 8192 is the longest context' -- \
  "$T" import-model "$DATA/hf/llama3-8b.json"
check hf-with-seq 0 '"seq_len": 4096' -- "$T" import-model "$DATA/hf/llama3-8b.json" --seq-len 4096
check hf-scenario-needs-seq 2 'model.hf_config .*: seq_len: the training sequence length' -- \
  "$T" run "$good" --fidelity estimate --set "model={\"hf_config\":\"$DATA/hf/llama3-8b.json\"}"
megatron='--num-layers 2 --hidden-size 1024 --num-attention-heads 8 --seq-length 512 --vocab-size 1000 --tensor-model-parallel-size 2'
check megatron-needs-world 2 '--gpus: missing: the command line has no world size' -- "$T" import-megatron "$megatron"
check megatron-with-world 0 '"dp": 4' -- "$T" import-megatron "$megatron" --gpus 8
check megatron-torchrun 0 '"dp": 8' -- "$T" import-megatron "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py $megatron"

# validate --published needs no path: the published runs ship in data/.
check validate-default 0 'tokens_per_s +[0-9.]+% +over [0-9]+ runs' -- "$T" validate --published
# The scenario a record is predicted from, ready to run; an unknown id names the flag.
rec=megatron_sc21_t1_1.7B
check validate-scenario-of 0 '"schedule": "1f1b"|"dp": 32' -- "$T" validate --published --scenario-of "$rec"
check validate-scenario-of-runs 0 'step time' -- bash -c "'$T' validate --published --scenario-of $rec >$tmp/sc_of.json && '$T' run $tmp/sc_of.json --fidelity estimate"
check validate-scenario-of-unknown 2 'scenario-of: no record with id "nope"' -- "$T" validate --published --scenario-of nope

# Progress on stderr: forced with --progress (rate and ETA), silent when stderr is no terminal.
plan_args=(plan --model gpt-1.7b --cluster dgx-a100-superpod --gpus 32 --global-batch 512 --top 1)
check plan-progress-forced 0 'plan search: +100%  done in' -- bash -c "'$T' ${plan_args[*]} --progress 2>&1 >/dev/null"
check plan-progress-quiet 0 '^silent$' -- bash -c "[ -z \"\$('$T' ${plan_args[*]} 2>&1 >/dev/null)\" ] && echo silent"

# The search tries ZeRO-3 with ZeRO++ where the DP group spans nodes: with one 100 Gb/s NIC a
# node, data parallelism over 32 GPUs ranks ZeRO-3++ plans among the best (with their footnote).
echo '{"base": "dgx-a100-superpod", "network": {"nics_per_node": 1, "nic_bandwidth": "100Gbps"}}' >"$tmp/slow.json"
# One GPU: ZeRO has nothing to shard, so each plan is tried at ZeRO-0 and, with the optimizer
# offloaded, at ZeRO-1: no ZeRO-1/2/3 row repeats a ZeRO-0 one.
check plan-unsharded-zero-once 0 '^ok$' -- bash -c "'$T' plan --model gpt-1.7b --cluster dgx-a100-superpod --gpus 1 --global-batch 16 --top 100 --json | python3 -c '
import json,sys
j=json.load(sys.stdin); rows=[b[\"scenario\"][\"plan\"] for b in j[\"best\"]]
assert rows and j[\"searched\"]==30, j[\"searched\"]
for p in rows:
  off=p.get(\"offload\",{}).get(\"optimizer\",False)
  assert (p[\"zero_stage\"],off) in ((0,False),(1,True)), p
print(\"ok\")'"
check plan-zero-plus-plus 0 'DP32 .* ZeRO-3\+\+ .*\(ZeRO-3\+\+: ZeRO\+\+' -- bash -c \
  "'$T' plan --model gpt-1.7b --cluster $tmp/slow.json --gpus 32 --global-batch 512 --top 10 | tr '\n' ' '"

# Two jobs that do not fit the first one's cluster: infeasible (3), and the reason says how to
# size the shared fabric.
check share-too-few-nodes 3 'need 4 nodes but the fabric has 2 \(--nodes 4 ' -- "$T" share \
  "$S/faults/share_job_a.json" "$S/faults/share_job_b.json"

finish
