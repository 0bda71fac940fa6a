# Sourced by the CLI test scripts: `check NAME RC PATTERN -- COMMAND...` runs COMMAND and counts a
# pass when it exits RC and its output (stdout + stderr) matches the extended regex PATTERN;
# `finish LABEL` prints the counts and fails the script if anything failed. A temporary folder
# $tmp is removed on exit.
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
finish() {  # label
  echo "${1:+$1: }$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
