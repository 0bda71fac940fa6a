#!/usr/bin/env bash
# Sweeps survive SIGKILL (no row lost, none run twice), shard over mpirun and batch arrays with
# the same rows as one process, and give bit-identical rows run after run.
set -u
T=${TRAINSIM:?}
S=${SCENARIOS:?}
SWEEP=$S/sweeps/small-gpt-1.7b.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
rows_of() { python3 -c "
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
idx=[r['index'] for r in rows]
assert len(idx)==len(set(idx)), 'duplicate rows'
print(len(rows))" "$1"; }
canon() { python3 -c "
import json,sys
rows=sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r['index'])
print(json.dumps(rows, sort_keys=True))" "$1"; }

"$T" sweep "$SWEEP" --out ref --quiet >ref.summary || bad "reference sweep failed"
total=$(rows_of ref.rows.jsonl)
[ "$total" -gt 50 ] && ok || bad "expected more than 50 rows, got $total"
[ "$(($(wc -l <ref.csv) - 1))" -eq "$total" ] && ok || bad "CSV rows != JSONL rows"
grep -q "Pareto front" ref.summary && grep -q "best plans" ref.summary && grep -q "why plans were rejected" ref.summary && ok || bad "summary sections missing"

# Determinism: the same sweep twice gives byte-identical rows.
"$T" sweep "$SWEEP" --out again --quiet >/dev/null
cmp -s ref.rows.jsonl again.rows.jsonl && ok || bad "rows differ between two identical runs"

# SIGKILL mid-way, then --resume: every plan once.
"$T" sweep "$SWEEP" --out killed --quiet --slow-ms 10 >/dev/null 2>&1 &
pid=$!
sleep 0.6
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
partial=$(rows_of killed.rows.jsonl 2>/dev/null || echo 0)
{ [ "$partial" -gt 0 ] && [ "$partial" -lt "$total" ]; } && ok || bad "kill did not land mid-way ($partial of $total rows)"
printf '{"index": 99999, "trunc' >>killed.rows.jsonl  # a torn last row, as a kill mid-write leaves
"$T" sweep "$SWEEP" --out killed --quiet --resume >/dev/null || bad "resume failed"
[ "$(rows_of killed.rows.jsonl)" -eq "$total" ] && ok || bad "resume: expected $total rows"
[ "$(canon killed.rows.jsonl)" = "$(canon ref.rows.jsonl)" ] && ok || bad "resumed rows differ from a clean run"

# mpirun: ranks take disjoint shards, rank 0 merges.
if command -v mpirun >/dev/null; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    mpirun -np 2 --oversubscribe "$T" sweep "$SWEEP" --out mpi --quiet >/dev/null 2>mpi.err || { cat mpi.err; bad "mpirun sweep failed"; }
  [ "$(canon mpi.rows.jsonl)" = "$(canon ref.rows.jsonl)" ] && ok || bad "mpirun rows differ from one process"
  [ -f mpi.rank0of2.jsonl ] && [ -f mpi.rank1of2.jsonl ] && ok || bad "per-rank rows files missing"
else
  echo "mpirun not found: skipping the MPI check"
fi

# Batch array pieces + sweep-merge.
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2 "$T" sweep "$SWEEP" --out arr --quiet >/dev/null 2>&1
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 "$T" sweep "$SWEEP" --out arr --quiet >/dev/null 2>&1
"$T" sweep-merge arr >/dev/null || bad "sweep-merge failed"
[ "$(canon arr.rows.jsonl)" = "$(canon ref.rows.jsonl)" ] && ok || bad "array pieces merged differ from one process"

# A full disk (here: a 16 KiB file-size limit): a clear error, exit 1, the rows already written intact.
( ulimit -f 16; trap '' XFSZ; exec "$T" sweep "$SWEEP" --out full --quiet ) >/dev/null 2>full.err
rc=$?
[ $rc -eq 1 ] && grep -q "cannot write a result row" full.err && ok || { cat full.err; bad "full disk: rc=$rc"; }
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
fi

# Bad sweep files: exit 2 naming the path.
echo '{"schema_version": 1, "base": "nope.json", "axes": []}' >bad1.json
"$T" sweep bad1.json >/dev/null 2>err1; [ $? -eq 2 ] && grep -q "nope.json" err1 && ok || bad "missing base not reported"
printf '{"schema_version": 1, "base": "%s", "axes": [{"path": "plan.tp", "values": [1]}], "constraints": ["memory.peak_bytes <"]}' "$S/default.json" >bad2.json
"$T" sweep bad2.json >/dev/null 2>err2; [ $? -eq 2 ] && grep -q "constraints\[0\]" err2 && ok || bad "bad constraint not reported"
printf '{"schema_version": 1, "base": "%s", "axes": [{"path": "plan.tp", "values": [1], "typo": 1}]}' "$S/default.json" >bad3.json
"$T" sweep bad3.json >/dev/null 2>err3; [ $? -eq 2 ] && grep -q "axes\[0\].typo: unknown key" err3 && ok || bad "unknown axis key not reported"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
