#!/usr/bin/env bash
# The README's five-minute tour: runs each command of it and prints the command with its output.
#   scripts/readme-tour.sh           print the tour (build/ must be built)
#   scripts/readme-tour.sh --update  write the outputs into README.md (the block after each
#                                    <!-- tour:NAME --> marker)
#   scripts/readme-tour.sh --check   exit 1 when README.md shows other output than the commands
#                                    give now (wall-clock figures such as "in 3.90 s" masked)
# Every command is estimate tier or a sub-second simulation, so the whole tour takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-print}
bin=${TRAINSIM_BIN:-build/cli}
[ -x "$bin/trainsim" ] || { echo "readme-tour: $bin/trainsim is not built (scripts/build.sh)" >&2; exit 2; }
export PATH="$PWD/$bin:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name|command, in README order. Commands run from the repository root; outputs go under runs/.
steps=(
  "run|trainsim run scenarios/default.json --fidelity estimate"
  "whatif|trainsim run scenarios/default.json --fidelity estimate --set plan.pp=16 --set plan.dp=12 | head -11"
  "oom|trainsim run scenarios/default.json --fidelity estimate --set plan.recompute=none | head -6"
  "simulate|trainsim run scenarios/default.json | tail -7 | head -4"
  "plan|trainsim plan --model gpt3-175b --cluster dgx-a100-superpod --gpus 1024 --global-batch 1536 --top 2"
  "sweep|trainsim sweep scenarios/sweeps/small-gpt-1.7b.json --out runs/small --quiet | head -6"
  "validate|trainsim validate --published 2>/dev/null | tail -9"
  "goodput|trainsim run scenarios/examples/llama3-405b-16k-goodput.json --fidelity estimate | tail -18 | head -7"
)

for step in "${steps[@]}"; do
  name=${step%%|*}
  cmd=${step#*|}
  {
    echo "\$ $cmd"
    bash -c "$cmd" 2>&1 || true
  } >"$work/$name.out"
  [ "$mode" = print ] && { cat "$work/$name.out"; echo; }
done
[ "$mode" = print ] && exit 0

python3 - "$mode" "$work" README.md <<'PY'
import os, re, sys
mode, work, readme = sys.argv[1:4]
text = open(readme).read()
mask = lambda s: re.sub(r"\b[0-9][0-9.,]* (s|plans/s)\b", "T", s)
out, stale, pos = [], [], 0
for m in re.finditer(r"<!-- tour:([a-z]+) -->\n```console\n(.*?)```\n", text, re.S):
    name, shown = m.group(1), m.group(2)
    path = os.path.join(work, name + ".out")
    if not os.path.exists(path):
        sys.exit(f"readme-tour: README.md has a tour block {name!r} the script does not run")
    now = open(path).read()
    if mask(now) != mask(shown):
        stale.append(name)
    out.append(text[pos:m.start(2)] + now)
    pos = m.end(2)
out.append(text[pos:])
if mode == "--check":
    if stale:
        sys.exit("readme-tour: README.md shows stale output for: " + ", ".join(stale) +
                 " (run scripts/readme-tour.sh --update)")
    print("readme-tour: README.md matches the tour")
elif mode == "--update":
    open(readme, "w").write("".join(out))
    print("readme-tour: updated " + (", ".join(stale) if stale else "nothing (already current)"))
else:
    sys.exit("usage: scripts/readme-tour.sh [--update|--check]")
PY
