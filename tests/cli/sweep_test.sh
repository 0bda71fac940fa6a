#!/usr/bin/env bash
# Sweeps survive SIGKILL (no row lost, none run twice), shard over mpirun and batch arrays with
# the same rows as one process, and give bit-identical rows run after run.
set -u
T=${TRAINSIM:?}
S=${SCENARIOS:?}
SWEEP=$S/sweeps/small-gpt-1.7b.json
CAL=$(cd "$(dirname "$0")/../data/cpu" && pwd)/calibration_2ranks_pp2.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# Rows files start with a {"trainsim_sweep": ...} header line; rows are the lines with an index.
rows_of() { python3 -c "
import json,sys
lines=[json.loads(l) for l in open(sys.argv[1])]
assert 'trainsim_sweep' in lines[0], 'no sweep header'
rows=[r for r in lines if 'index' in r]
idx=[r['index'] for r in rows]
assert len(idx)==len(set(idx)), 'duplicate rows'
print(len(rows))" "$1"; }
canon() { python3 -c "
import json,sys
rows=sorted((r for r in map(json.loads, open(sys.argv[1])) if 'index' in r), key=lambda r: r['index'])
print(json.dumps(rows, sort_keys=True))" "$1"; }

"$T" sweep "$SWEEP" --out ref --quiet >ref.summary || bad "reference sweep failed"
total=$(rows_of ref.rows.jsonl)
[ "$total" -gt 50 ] && ok || bad "expected more than 50 rows, got $total"
[ "$(($(wc -l <ref.csv) - 1))" -eq "$total" ] && ok || bad "CSV rows != JSONL rows"
grep -q "Pareto front" ref.summary && grep -q "best plans" ref.summary && grep -q "why plans were rejected" ref.summary && ok || bad "summary sections missing"

# Infeasible rows are marked as such: no metrics to rank them by, never meets_constraints, a reason
# code from the table and the model's own message (numbers kept, not masked into "N").
python3 - ref.rows.jsonl ref.summary <<'PY' && ok || bad "infeasible rows or reasons"
import json, re, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if "index" in r]
bad = [r for r in rows if not r["feasible"]]
assert bad, "the sweep should have infeasible plans"
for r in bad:
    assert r["status"] == "infeasible" and r["meets_constraints"] is False and r["objective"] is None, r
    assert "tokens_per_s" not in r and "step_time_s" not in r, r
    assert r["reason_code"] not in ("", "other") and re.search(r"\d", r["reason"]), r
ok = [r for r in rows if r["feasible"]]
assert all(r["status"] in ("ok", "outside_constraints") and "tokens_per_s" in r for r in ok)
summary = open(sys.argv[2]).read()
assert not re.search(r"[A-Za-z]N-|: N |\(N\)", summary), "digit-masked reasons in the summary"
for r in bad:
    assert r["reason_code"] in summary
PY

# Determinism: the same sweep twice gives byte-identical rows.
"$T" sweep "$SWEEP" --out again --quiet >/dev/null
cmp -s ref.rows.jsonl again.rows.jsonl && ok || bad "rows differ between two identical runs"

# SIGKILL mid-way, then --resume: every plan once.
"$T" sweep "$SWEEP" --out killed --quiet --slow-ms 10 >/dev/null 2>&1 &
pid=$!
# Killed once its first rows are on disk, not after a fixed delay: an instrumented (sanitizer)
# build under load can take longer than any fixed delay to start, and the rest of the sweep
# (--slow-ms) then still takes over a second.
for _ in $(seq 1500); do
  [ "$(grep -c '"index"' killed.rows.jsonl 2>/dev/null || true)" -gt 0 ] 2>/dev/null && break
  sleep 0.02
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
partial=$(rows_of killed.rows.jsonl 2>/dev/null || echo 0)
{ [ "$partial" -gt 0 ] && [ "$partial" -lt "$total" ]; } && ok || bad "kill did not land mid-way ($partial of $total rows)"
printf '{"index": 99999, "trunc' >>killed.rows.jsonl  # a torn last row, as a kill mid-write leaves
"$T" sweep "$SWEEP" --out killed --quiet --resume >/dev/null || bad "resume failed"
[ "$(rows_of killed.rows.jsonl)" -eq "$total" ] && ok || bad "resume: expected $total rows"
[ "$(canon killed.rows.jsonl)" = "$(canon ref.rows.jsonl)" ] && ok || bad "resumed rows differ from a clean run"
# The CSV and summary of a resumed sweep come from the rows read back: the same as a clean run's.
cmp -s killed.csv ref.csv && cmp -s killed.summary.txt ref.summary.txt && ok || bad "resumed CSV or summary differ from a clean run"

# mpirun: ranks take disjoint shards, rank 0 merges.
if command -v mpirun >/dev/null; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    mpirun -np 2 --oversubscribe "$T" sweep "$SWEEP" --out mpi --quiet >/dev/null 2>mpi.err || { cat mpi.err; bad "mpirun sweep failed"; }
  [ "$(canon mpi.rows.jsonl)" = "$(canon ref.rows.jsonl)" ] && ok || bad "mpirun rows differ from one process"
  cmp -s mpi.csv ref.csv && cmp -s mpi.summary.txt ref.summary.txt && ok || bad "mpirun CSV or summary differ from one process"
  [ -f mpi.rank0of2.jsonl ] && [ -f mpi.rank1of2.jsonl ] && ok || bad "per-rank rows files missing"
else
  echo "mpirun not found: skipping the MPI check"
fi

# Batch array pieces + sweep-merge.
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2 "$T" sweep "$SWEEP" --out arr --quiet >/dev/null 2>&1
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 "$T" sweep "$SWEEP" --out arr --quiet >/dev/null 2>&1
"$T" sweep-merge arr >/dev/null || bad "sweep-merge failed"
[ "$(canon arr.rows.jsonl)" = "$(canon ref.rows.jsonl)" ] && ok || bad "array pieces merged differ from one process"

# A full disk (here: a 16 KiB file-size limit): a clear error, exit 2 (an output that cannot be
# written), the rows already written intact.
( ulimit -f 16; trap '' XFSZ; exec "$T" sweep "$SWEEP" --out full --quiet ) >/dev/null 2>full.err
rc=$?
[ $rc -eq 2 ] && grep -q "while writing a result row" full.err && ok || { cat full.err; bad "full disk: rc=$rc"; }
python3 -c "
import json,sys
lines=open('full.rows.jsonl').read().split('\n')
complete=[l for l in lines[:-1]]
for l in complete: json.loads(l)
assert len(complete) > 0
" && ok || bad "full disk: complete rows damaged"

# The simulate stage (child processes): the same rows whatever -j is.
if "$T" --help | grep -q collective; then
  "$T" sweep "$SWEEP" --out sim1 --quiet --simulate-top 4 -j 1 >/dev/null || bad "simulate stage -j 1 failed"
  "$T" sweep "$SWEEP" --out sim2 --quiet --simulate-top 4 -j 2 >/dev/null || bad "simulate stage -j 2 failed"
  [ "$(rows_of sim1.simulated.jsonl)" -eq 4 ] && ! grep -q '"error"' sim1.simulated.jsonl && ok || bad "simulate stage rows"
  [ "$(canon sim1.simulated.jsonl)" = "$(canon sim2.simulated.jsonl)" ] && ok || bad "simulated rows differ between -j 1 and -j 2"
  # After --simulate-top the summary ranks the simulated plans by the simulation's objective.
  "$T" sweep "$SWEEP" --out sim3 --quiet --simulate-top 4 >sim3.summary
  python3 - sim3.simulated.jsonl sim3.summary <<'PY' && ok || bad "summary not re-ranked by the simulation"
import json, re, sys
sims = [r for r in map(json.loads, open(sys.argv[1])) if "index" in r]
order = [r["index"] for r in sorted(sims, key=lambda r: (-r["objective"], r["index"]))]
text = open(sys.argv[2]).read()
best = text.split("best plans by")[1].split("\n\n")[0].splitlines()[1:]
listed = [int(l.split()[0]) for l in best if re.match(r"\s*\d+\s", l)]
assert listed[:len(order)] == order, (listed, order)
assert all("[simulated" in l for l in best[:len(order)])
PY
fi

# ZeRO-1 and ZeRO-2 twins (the same plan, the same step time) are one row of the ranking.
python3 - "$S/sweeps/small-gpt-1.7b.json" >zero.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["axes"] = [a for a in d["axes"] if a.get("path") != "plan.zero_stage"] + [{"path": "plan.zero_stage", "values": [0, 1, 2]}]
d["top_k"] = 10
json.dump(d, sys.stdout)
PY
"$T" sweep zero.json --out zero --quiet >zero.summary
python3 - zero.rows.jsonl zero.summary <<'PY' && ok || bad "ZeRO-1/2 twins not folded"
import json, re, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if "index" in r and r["feasible"]]
def key(r):
    p = dict(r["plan"]); p.pop("zero_stage"); return json.dumps(p, sort_keys=True)
twins = set()
by = {}
for r in rows:
    if r["plan"]["zero_stage"] in (1, 2): by.setdefault(key(r), []).append(r)
for k, rs in by.items():
    if len(rs) == 2 and abs(rs[0]["step_time_s"] - rs[1]["step_time_s"]) <= 1e-9 * rs[0]["step_time_s"]:
        twins.update(r["index"] for r in rs)
text = open(sys.argv[2]).read()
best = text.split("best plans by")[1].split("\n\n")[0].splitlines()[1:]
listed = [int(l.split()[0]) for l in best if re.match(r"\s*\d+\s", l)]
pairs = [i for i in listed if i in twins]
for k, rs in by.items():
    ids = [r["index"] for r in rs]
    assert not (len(ids) == 2 and ids[0] in listed and ids[1] in listed and ids[0] in twins), ("both twins listed", ids)
assert not pairs or "ZeRO-1/2" in text
PY

# Plans are made two ways (cli/sweep_plans.hpp): axes over plain plan fields change a parsed
# scenario in place; any other axis over the plan sends every plan through the loader (resolve
# and parse its JSON). An axis that sets plan.placement to its default changes no plan but takes
# the loader's route: the same sweep with it must give the same rows (but for that override),
# the same CSV and the same summary. The sweep mixes what the in-place route must get right:
# bad values (invalid rows naming the field), infeasible and out-of-memory plans, dp from the
# GPU count, expert_tp following tp, a model axis, constraints on the plan and the model.
for route in inplace loader; do
  extra=""
  [ $route = loader ] && extra=', {"path": "plan.placement", "values": ["tp-cp-dp-pp"]}'
  cat >route_$route.json <<JSON
{"schema_version": 1, "name": "routes",
 "base": {"schema_version": 1, "model": "gpt-1.7b", "cluster": {"base": "dgx-a100-superpod", "nodes": 4},
          "plan": {"global_batch": 512, "recompute": "full"}},
 "axes": [{"path": "model", "values": ["gpt-1.7b", "llama3-8b"]},
          {"path": "plan.tp", "values": [1, 2, 0, "x", 8, 64, 1.0]}, {"path": "plan.pp", "values": [1, 4, 3]},
          {"path": "plan.micro_batch", "values": [1, 8, 64]}, {"path": "plan.schedule", "values": ["1f1b", "zb-h1", "nope"]},
          {"path": "plan.zero_stage", "values": [0, 1, 2]}, {"path": "plan.sp", "values": [false, true]}$extra],
 "constraints": ["memory.peak_bytes < 0.5 * hbm", "plan.expert_tp <= 4", "model.layers >= 24"],
 "objective": {"minimize": "step_time_s * gpus / (1 + plan.tp)"}, "top_k": 8}
JSON
  "$T" sweep route_$route.json --out route_$route --quiet >route_$route.summary || bad "$route sweep failed"
done
cmp -s route_inplace.csv route_loader.csv && cmp -s route_inplace.summary route_loader.summary && ok ||
  bad "the in-place route and the loader's route give different CSV or summaries"
python3 - route_inplace.rows.jsonl route_loader.rows.jsonl <<'PY' && ok || bad "the in-place route and the loader's route give different rows"
import json, sys
def rows(path):
    out = []
    for r in map(json.loads, open(path)):
        if "index" in r:
            r["overrides"].pop("plan.placement", None)
            out.append(r)
    return out
a, b = rows(sys.argv[1]), rows(sys.argv[2])
assert a == b, next((x, y) for x, y in zip(a, b) if x != y)
kinds = {r["status"] for r in a}
assert kinds == {"ok", "outside_constraints", "infeasible", "invalid"}, kinds
assert any(r.get("reason_code") == "out_of_memory" and "memory" in r for r in a)
assert any("plan.tp" in r["reason"] and r["status"] == "invalid" for r in a)
PY

# Rows are written as text straight from the estimate (cli/sweep_row_text.hpp): each kind of row
# holds what `trainsim run --json` gives for the same plan, by the rules of cli/plan_row.hpp (a
# feasible row: the result without warnings and per-stage memory, plus the plan; an infeasible
# one: the plan and why, and the memory an out-of-memory plan would need), with its keys in
# sorted order as nlohmann writes them.
python3 - route_inplace.json route_inplace.rows.jsonl "$T" <<'PY' && ok || bad "sweep rows differ from trainsim run --json of the same plans"
import json, subprocess, sys, tempfile
sweep = json.load(open(sys.argv[1]))
lines = [l for l in open(sys.argv[2]) if '"index"' in l]
rows = [json.loads(l) for l in lines]
base = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
json.dump(sweep["base"], base)
base.close()
picked, seen = [], {}
for line, r in zip(lines, rows):
    kind = r["status"] + ("/oom" if r.get("reason_code") == "out_of_memory" else "")
    if r["status"] != "invalid" and seen.get(kind, 0) < 3:
        seen[kind] = seen.get(kind, 0) + 1
        picked.append((line, r))
assert set(seen) == {"ok", "outside_constraints", "infeasible", "infeasible/oom"}, seen
for line, r in picked:
    keys = [k for k, _ in json.loads(line, object_pairs_hook=lambda pairs: pairs)]
    assert keys == sorted(keys), keys
    sets = [a for path, v in r["overrides"].items() for a in ("--set", f"{path}={json.dumps(v)}")]
    out = subprocess.run([sys.argv[3], "run", base.name, "--fidelity", "estimate", "--json", *sets],
                         capture_output=True, text=True).stdout
    res = json.loads(out)
    sc = res.pop("scenario")
    p = sc["plan"]
    plan = {k: p[k] for k in ("tp", "pp", "dp", "cp", "ep", "sp", "vpp", "schedule", "micro_batch",
                              "global_batch", "zero_stage", "recompute", "precision")}
    plan["offload_optimizer"] = p["offload"]["optimizer"]
    common = {"index": r["index"], "overrides": r["overrides"], "model": sc["model"]["name"],
              "cluster": sc["cluster"]["name"], "gpu": sc["cluster"]["gpu"]["name"], "plan": plan,
              "gpus": res["gpus"], "fidelity": res["fidelity"], "feasible": res["feasible"], "reason": res["reason"]}
    if res["feasible"]:
        want = dict(res, **common)
        for k in ("warnings", "calibration", "trainsim_version"):
            want.pop(k, None)
        del want["memory"]["per_stage"]
        # The constraints and objective are the sweep's own (the in-place/loader test checks them).
        for k in ("meets_constraints", "violated", "status", "objective"):
            want[k] = r[k]
        assert r["status"] == ("ok" if r["meets_constraints"] else "outside_constraints"), r
    else:
        want = dict(common, status="infeasible", reason_code=r["reason_code"], meets_constraints=False,
                    violated=[], objective=None)
        if r["reason_code"] == "out_of_memory":
            want["memory"] = {k: res["memory"][k] for k in ("peak_bytes", "hbm_capacity_bytes")}
    assert r == want, (r, want)
PY

# With a calibration (it reads the plan's precision): calibrated once per precision in place,
# every plan on its own by the loader's route; the same CSV and summary.
for route in inplace loader; do
  python3 - "$SWEEP" $route >cal_$route.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["axes"].append({"path": "plan.precision", "values": ["bf16", "fp16", "fp32"]})
if sys.argv[2] == "loader":
    d["axes"].append({"path": "plan.placement", "values": ["tp-cp-dp-pp"]})
json.dump(d, sys.stdout)
PY
  "$T" sweep cal_$route.json --out cal_$route --quiet --calibration "$CAL" >/dev/null || bad "calibrated $route sweep failed"
done
cmp -s cal_inplace.csv cal_loader.csv && cmp -s cal_inplace.summary.txt cal_loader.summary.txt && ok ||
  bad "calibrated sweeps: the in-place route and the loader's route differ"

# ZeRO-3 sharded within a node as a sweep axis: the rows carry plan.dp_shard, the summary labels
# the plan ZeRO-3/8, and a shard group that does not divide dp is rejected under its own code.
cat >shard.json <<EOF
{"schema_version": 1,
 "base": {"schema_version": 1, "model": "gpt-1.7b", "cluster": {"base": "dgx-a100-superpod", "nodes": 4},
          "plan": {"tp": 1, "pp": 1, "dp": 32, "zero_stage": 3, "micro_batch": 4, "global_batch": 128}},
 "axes": [{"path": "plan.dp_shard", "values": [0, 8, 5]}],
 "objective": {"maximize": "tokens_per_s"}}
EOF
"$T" sweep shard.json --out shard --quiet >shard.summary || bad "dp_shard sweep failed"
grep -q "ZeRO-3/8 " shard.summary && grep -q "dp_shard " shard.summary && ok || bad "dp_shard sweep summary"
python3 - shard.rows.jsonl <<'PY' && ok || bad "dp_shard sweep rows"
import json, sys
rows = {r["overrides"]["plan.dp_shard"]: r for r in map(json.loads, open(sys.argv[1])) if "index" in r}
assert rows[8]["plan"]["dp_shard"] == 8 and rows[8]["feasible"], rows[8]
assert "dp_shard" not in rows[0]["plan"], rows[0]
assert rows[5]["reason_code"] == "dp_shard", rows[5]
PY

# Bad sweep files: exit 2 naming the path.
echo '{"schema_version": 1, "base": "nope.json", "axes": []}' >bad1.json
"$T" sweep bad1.json --out bad1 >/dev/null 2>err1; [ $? -eq 2 ] && grep -q "nope.json" err1 && ok || bad "missing base not reported"
printf '{"schema_version": 1, "base": "%s", "axes": [{"path": "plan.tp", "values": [1]}], "constraints": ["memory.peak_bytes <"]}' "$S/default.json" >bad2.json
"$T" sweep bad2.json --out bad2 >/dev/null 2>err2; [ $? -eq 2 ] && grep -q "constraints\[0\]" err2 && ok || bad "bad constraint not reported"
printf '{"schema_version": 1, "base": "%s", "axes": [{"path": "plan.tp", "values": [1], "typo": 1}]}' "$S/default.json" >bad3.json
"$T" sweep bad3.json --out bad3 >/dev/null 2>err3; [ $? -eq 2 ] && grep -q "axes\[0\].typo: unknown key" err3 && ok || bad "unknown axis key not reported"

# An objective with no number for some plans (a division by zero): those rows are counted as
# not ranked, so the summary's classes add up to the plans swept.
printf '{"schema_version": 1, "base": "%s", "axes": [{"path": "plan.micro_batch", "values": [1, 2]}], "objective": {"maximize": "tokens_per_s / (plan.micro_batch - 1)"}}' "$S/default.json" >div0.json
"$T" sweep div0.json --out div0 >div0.summary 2>/dev/null && grep -q "^2 plans: 1 feasible within constraints, 0 infeasible, 0 outside constraints, 1 with no number for the objective (not ranked)" div0.summary && ok || bad "a row without an objective value is not counted: $(head -1 div0.summary)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
