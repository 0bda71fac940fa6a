#!/usr/bin/env bash
# Builds the libFuzzer targets (one per input format) with clang, ASan and UBSan, and runs them.
#   fuzz/run.sh [SECONDS] [TARGET...]
# SECONDS is per target (default 60); targets run FUZZ_JOBS at a time (default 2), so CI's
# `fuzz/run.sh 30` fuzzes the 8 formats for ~2 minutes on two cores. TARGET: scenario, sweep,
# hf_config, megatron_args, nccl_tests, torch_trace, calibration, published_runs (default: all).
#
# Seeds: fuzz/corpus/<target>/ (committed, small), plus the format's test data (tests/data/hf,
# megatron, nccl, torch/bad_*; every JSON under scenarios/ for scenario and sweep). Each run starts its working corpus (build-fuzz/corpus/<target>/, not committed)
# from the seeds, or keeps growing it with FUZZ_KEEP=1. A crasher lands in
# build-fuzz/artifacts/<target>/; once fixed it goes into fuzz/corpus/<target>/ as a regression
# seed. One line per target (executions, seconds, crashes) is printed and written to
# build-fuzz/summary.txt; the exit status is non-zero when any target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario sweep hf_config megatron_args nccl_tests torch_trace calibration published_runs)
jobs=${FUZZ_JOBS:-2}
out=build-fuzz
mkdir -p "$out/obj/models" "$out/obj/validate" "$out/obj/fuzz" "$out/corpus" "$out/artifacts" "$out/logs"
cxx="clang++"
command -v ccache >/dev/null && cxx="ccache clang++"
flags="-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -I."
# Presets are found through $TRAINSIM_SCENARIOS at run time (no path baked into the objects).
export TRAINSIM_SCENARIOS=$PWD/scenarios
# One object per source, so ccache reuses what did not change.
compile() {  # source object
  $cxx $flags -c "$1" -o "$2"
}
export -f compile
export cxx flags
find models -name '*.cpp' | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} \
  bash -c 'compile {} '"$out"'/obj/models/$(echo {} | tr / _ | sed "s/\.cpp\$//").o'
# The published-run records' reader (validate/, on models/ only) for the published_runs target.
validate_sources=(validate/record_scenario.cpp validate/published_runs.cpp)
# (the shipped records' folder is baked into the CLI; the fuzzer never reads it)
for f in "${validate_sources[@]}"; do
  $cxx $flags -DTRAINSIM_SOURCE_DATA_DIR='""' -c "$f" -o "$out/obj/validate/$(basename "$f" .cpp).o"
done
for t in "${targets[@]}"; do
  [ -f "fuzz/${t}_fuzzer.cpp" ] || { echo "fuzz/run.sh: no target $t" >&2; exit 2; }
  compile "fuzz/${t}_fuzzer.cpp" "$out/obj/fuzz/$t.o"
  extra=()
  [ "$t" = published_runs ] && extra=("$out"/obj/validate/*.o)
  clang++ -fsanitize=fuzzer,address,undefined "$out/obj/fuzz/$t.o" "${extra[@]}" "$out"/obj/models/*.o -o "$out/${t}_fuzzer"
done

max_len() {
  case $1 in
    torch_trace|nccl_tests) echo 16384 ;;
    hf_config|megatron_args) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

run_one() {  # target
  local t=$1 corpus="$out/corpus/$1" art="$out/artifacts/$1/"
  [ "${FUZZ_KEEP:-0}" = 1 ] || rm -rf "$corpus"
  rm -rf "$art"
  mkdir -p "$corpus" "$art"
  cp fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  # The test data of each format seeds it too (not copied into fuzz/corpus/).
  local data=()
  case $t in
    scenario|sweep) mapfile -t data < <(find scenarios -name '*.json') ;;
    hf_config) data=(tests/data/hf/*.json) ;;
    megatron_args) data=(tests/data/megatron/*) ;;
    nccl_tests) data=(tests/data/nccl/*) ;;
    torch_trace) data=(tests/data/torch/bad_*.json) ;;
  esac
  for f in "${data[@]}"; do cp "$f" "$corpus/$(echo "$f" | tr / _)"; done
  local dict=()
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  local log="$out/logs/$t.log"
  local start=$SECONDS
  set +e
  "$out/${t}_fuzzer" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art" \
    "${dict[@]}" "$corpus" >"$log" 2>&1
  local rc=$?
  set -e
  local wall=$((SECONDS - start))
  local execs crashes
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "$art" -type f | wc -l)
  printf '%-14s executions %-10s seconds %-6s crashes %s (exit %d; corpus %d files)\n' "$t" "${execs:-?}" \
    "$wall" "$crashes" "$rc" "$(find "$corpus" -type f | wc -l)"
  if [ "$rc" -ne 0 ]; then grep -m5 -E "ERROR|SUMMARY|==[0-9]+==" "$log" | sed 's/^/    /' || true; fi
}
export -f run_one max_len
export out seconds
export UBSAN_OPTIONS=print_stacktrace=1

printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}' | tee "$out/summary.txt"
! grep -qE 'crashes [1-9]|exit [1-9]' "$out/summary.txt"
