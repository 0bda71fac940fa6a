#!/usr/bin/env bash
# Builds the libFuzzer target with clang and runs it.
#   fuzz/run.sh [SECONDS]        (default 60; CI runs a short smoke run)
# The seed corpus is every JSON file under scenarios/ plus fuzz/seeds/ (hostile inputs written by
# hand). Any crasher the fuzzer finds goes into fuzz/seeds/ once fixed, as a regression seed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=build-fuzz
mkdir -p "$out/obj" "$out/corpus"
cxx="clang++"
command -v ccache >/dev/null && cxx="ccache clang++"
flags="-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -I."
# Presets are found through $TRAINSIM_SCENARIOS at run time (no path baked into the objects).
export TRAINSIM_SCENARIOS=$PWD/scenarios
# One object per source, so ccache reuses what did not change.
{ find models -name '*.cpp'; echo fuzz/scenario_fuzzer.cpp; } | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} \
  sh -c "$cxx $flags -c {} -o $out/obj/\$(echo {} | tr / _ | sed 's/\.cpp\$//').o"
clang++ -fsanitize=fuzzer,address,undefined "$out"/obj/*.o -o "$out/scenario_fuzzer"
find scenarios -name '*.json' -exec cp {} "$out/corpus/" \;
if [ -d fuzz/seeds ]; then cp fuzz/seeds/* "$out/corpus/" 2>/dev/null || true; fi
cd "$out"
./scenario_fuzzer -max_total_time="$seconds" -max_len=8192 -timeout=5 -rss_limit_mb=2048 \
  -print_final_stats=1 corpus 2>&1 | tail -8
