#!/usr/bin/env bash
# The simulate tier over the published runs (every STRIDE-th; default all): each training run
# must be simulated (a child that crashed or was stopped by a sanitizer leaves its estimate and
# says so; that fails here), and with MAX_MAPE the tokens/s MAPE must stay within it. A sanitizer
# build samples (STRIDE 8): every run plays the same code paths, and the instrumented flow engine
# takes minutes for all of them; the accuracy gate needs every run.
set -euo pipefail
T=${TRAINSIM:?}
DATA=${DATA:?}
STRIDE=${STRIDE:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$DATA" "$STRIDE" "$tmp/sample.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
json.dump(runs[::int(sys.argv[2])], open(sys.argv[3], "w"))
PY
gate=()
[ -n "${MAX_MAPE:-}" ] && gate=(--max-mape "tokens_per_s=$MAX_MAPE")
rc=0
"$T" validate --published "$tmp/sample.json" --fidelity simulate -j 2 --json --quiet "${gate[@]}" >"$tmp/out.json" || rc=$?
python3 - "$tmp/out.json" "$tmp/sample.json" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
sample = json.load(open(sys.argv[2]))
runs = out["runs"]
assert len(runs) == len(sample), f"{len(runs)} results for {len(sample)} records"
training = [r for r in runs if r.get("predicted") and r.get("kind") == "training"]
# A run the simulate tier did not answer, with the note saying why ("simulate failed, ...").
unsimulated = [(r["id"], [a for a in r["assumptions"] if a.startswith("simulate failed")])
               for r in training if "simulate tier" not in r["assumptions"]]
assert not unsimulated, f"not simulated: {unsimulated[:3]}"
assert training, "no training run in the sample"
print(f"simulated {len(training)} training runs of {len(sample)} records; MAPE {out['mape']}")
PY
exit "$rc"
