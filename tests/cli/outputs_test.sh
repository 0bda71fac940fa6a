#!/usr/bin/env bash
# Outputs and shared files: every output path checked before any work (exit 2), failed writes
# never exit 0, sweeps locked and tied to their sweep by a fingerprint, children folders gone on
# every exit, the sweep size capped before it starts, typos in sweep expressions stopped.
set -u
T=${TRAINSIM:?}
S=${SCENARIOS:?}
source "$(dirname "$0")/check_lib.sh"
SWEEP=$S/sweeps/small-gpt-1.7b.json
cd "$tmp"
: >afile  # a regular file: paths under it cannot be created
mkdir -p typo res lock huge  # (the new trainsim creates --out folders; older ones needed them)

# Output paths checked before the work: exit 2 naming the option.
check trace-unwritable 2 '--trace: cannot write' -- "$T" run "$S/default.json" --trace "$tmp/afile/t.json"
check sweep-out-unwritable 2 '--out: cannot write' -- "$T" sweep "$SWEEP" --out "$tmp/afile/x"
check sweep-out-required 2 '--out: missing' -- "$T" sweep "$SWEEP"
check sweep-no-litter 0 '^clean$' -- bash -c "mkdir -p '$tmp/empty' && cd '$tmp/empty' && '$T' sweep '$SWEEP' >/dev/null 2>&1; [ -z \"\$(ls -A)\" ] && echo clean"
check chakra-out-unwritable 2 '--out: cannot write' -- "$T" export-chakra "$S/default.json" --out "$tmp/afile/et"
mkdir -p merge && : >merge/m.rank0of2.jsonl && mkdir -p merge/m.rows.jsonl
check merge-target-unwritable 2 'cannot write "merge/m.rows.jsonl": it is a folder' -- "$T" sweep-merge merge/m
if "$T" --help | grep -q '^  calibrate'; then
  check calibrate-out-unwritable 2 '--out: cannot write' -- "$T" calibrate --backend cpu --quick --out "$tmp/afile/c.json"
  check train-log-unwritable 2 '--log: cannot write' -- "$T" train --steps 2 --log "$tmp/afile/log.jsonl"
fi

# A failed write is never a success: a full device for stdout or the trace.
check stdout-full 2 'cannot write the standard output' -- bash -c "'$T' run '$S/default.json' --fidelity estimate >/dev/full"
check json-stdout-full 2 'cannot write the standard output' -- bash -c "'$T' validate --published --json >/dev/full"
if "$T" run --help | grep -q 'simulate: SimGrid'; then
  check trace-full 2 '--trace: "/dev/full": cannot write' -- "$T" run "$S/default.json" --trace /dev/full
fi

# Exit codes: a failed accuracy gate is 4, not 1.
check gate-exit-4 4 'MAPE .* exceeds the limit' -- "$T" validate --published --max-mape tokens_per_s=0.001

# The sweep size is checked before it starts: six axes of 1000 values are 1e18 plans.
python3 - "$S/default.json" >huge.json <<'PY'
import json, sys
axes = [{"path": p, "values": list(range(1, 1001))} for p in
        ["plan.micro_batch", "plan.global_batch", "plan.vpp", "training.steps", "plan.tp", "plan.pp"]]
json.dump({"schema_version": 1, "name": "huge", "base": sys.argv[1], "axes": axes}, sys.stdout)
PY
# A 4 GB address-space cap proves the plans are never materialised; a sanitizer build reserves
# terabytes of shadow address space up front, so there the 20 s timeout alone bounds the run.
vm_cap="ulimit -v 4000000;"
if ldd "$T" 2>/dev/null | grep -q 'libasan'; then vm_cap=""; fi
check sweep-size-cap 2 'axes: the sweep has 1,000 x 1,000 x 1,000 x 1,000 x 1,000 x 1,000 = 1,000,000,000,000,000,000 plans, above the cap of 2,000,000' -- \
  bash -c "$vm_cap timeout 20 '$T' sweep huge.json --out huge/h"

# A typo in a constraint stops the sweep (exit 2, naming it), not every plan "invalid".
python3 - "$SWEEP" >typo.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["constraints"] = ["memory.peak_byte < 0.9 * hbm"]; json.dump(d, sys.stdout)
PY
check constraint-typo 2 'constraints\[0\]: unknown name "memory.peak_byte"' -- "$T" sweep typo.json --out typo/t
python3 - "$SWEEP" >objtypo.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["objective"] = {"maximize": "token_per_s"}; json.dump(d, sys.stdout)
PY
check objective-typo 2 'objective.maximize: unknown name "token_per_s"' -- "$T" sweep objtypo.json --out typo/o

# --resume refuses the rows of another sweep.
"$T" sweep "$SWEEP" --out res/a --quiet >/dev/null
python3 - "$SWEEP" >other.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["axes"][1] = {"path": "plan.micro_batch", "values": [1, 2]}; json.dump(d, sys.stdout)
PY
check resume-foreign 2 '--resume: .*holds rows of another sweep' -- "$T" sweep other.json --out res/a --resume --quiet
printf '{"index": 0, "feasible": true}\n' >res/plain.rows.jsonl
check resume-no-header 2 '--resume: .*has no sweep header' -- "$T" sweep "$SWEEP" --out res/plain --resume --quiet
check resume-same 0 'plans:' -- "$T" sweep "$SWEEP" --out res/a --resume --quiet

# Two sweeps on one --out: the second is refused while the first runs; the first's rows are whole.
"$T" sweep "$SWEEP" --out lock/l --quiet --slow-ms 20 >/dev/null 2>lock.err &
first=$!
for _ in $(seq 100); do [ -s lock/l.rows.jsonl ] && break; sleep 0.05; done
check lock-refused 2 'another trainsim sweep \(pid [0-9]+\) is writing to these outputs' -- "$T" sweep "$SWEEP" --out lock/l --quiet
wait $first
check lock-first-intact 0 '^168 rows$' -- python3 -c "
import json
rows=[r for r in map(json.loads, open('lock/l.rows.jsonl')) if 'index' in r]
assert len(rows)==len({r['index'] for r in rows})
print(len(rows), 'rows')"

# Children folders: removed when the sweep is stopped by a signal, and not left behind by a
# SIGKILL (the children die with the parent; the next run reaps the folder).
# (Only the sweep's own --out folder is looked at: other tests' children may be in /tmp.)
children_of() { ls -d "$1"/trainsim-children-* 2>/dev/null; }
for sig in TERM INT KILL; do
  mkdir -p "sig$sig"
  "$T" sweep "$SWEEP" --out "sig$sig/s" --quiet --all -j 1 >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 200); do [ -n "$(children_of "sig$sig")" ] && break; sleep 0.05; done
  seen=$(children_of "sig$sig")
  kill -s "$sig" $pid
  wait $pid 2>/dev/null
  sleep 0.3
  if [ "$sig" = KILL ]; then
    # Its children are gone with it, and the next sweep in that folder reaps what it left.
    check "children-died-$sig" 0 '^none$' -- bash -c "ps -eo args | grep -F -- \"$seen\" | grep -v grep | grep -q . && echo running || echo none"
    "$T" sweep "$SWEEP" --out "sig$sig/next" --quiet --simulate-top 1 >/dev/null 2>&1
  fi
  check "children-folder-$sig" 0 '^gone$' -- bash -c "[ -n '$seen' ] && [ -z \"\$(ls -d $seen 2>/dev/null)\" ] && echo gone || echo 'left: $seen'"
done

finish outputs_test
