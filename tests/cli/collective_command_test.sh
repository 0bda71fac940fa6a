#!/usr/bin/env bash
# trainsim collective and calibrate --from-nccl-tests: size validation, the nccl-tests text
# format (read back by the importer), forced protocols, the rail-optimised cross-rail send.
source "$(dirname "$0")/check_lib.sh"
T=${TRAINSIM:?}
C=dgx-h100-superpod

check size_1e30 2 'exceeds 1 TiB' -- "$T" collective --cluster $C --ranks 8 --sizes 1e30B
check size_1e20 2 'exceeds 1 TiB' -- "$T" collective --cluster $C --ranks 8 --sizes 1e20B
check size_zero 2 'below 1 byte' -- "$T" collective --cluster $C --ranks 8 --sizes 0
check size_rows 2 'more than 4096 sizes' -- "$T" collective --cluster $C --ranks 8 --sizes 8B:1GiB:+1
check size_bad_factor 2 'multiplier must be a number > 1' -- "$T" collective --cluster $C --ranks 8 --sizes 8B:1GiB:x1
check protocol_bad 2 'unknown NCCL protocol' -- "$T" collective --cluster $C --ranks 8 --protocol LL64
check protocol_ll 0 ' ring +LL ' -- "$T" collective --cluster $C --ranks 8 --algo ring --protocol LL --sizes 1MiB
check nvls_auto 0 '134217728 +nvls +Simple' -- "$T" collective --cluster $C --ranks 8 --sizes 128MiB

# nccl-tests' own table: header, rows of 13 columns, footer; the importer reads it back.
"$T" collective --cluster $C --ranks 16 --sizes 8B:1GiB:x4 --format nccl-tests > "$tmp/sim.log"
check nccl_header 0 '^#       size         count      type   redop    root     time   algbw   busbw  #wrong' -- cat "$tmp/sim.log"
check nccl_footer 0 '^# Avg bus bandwidth    : ' -- cat "$tmp/sim.log"
check nccl_rows 0 '^ +536870912 +134217728 +float +sum +-1 ' -- cat "$tmp/sim.log"
check nccl_roundtrip 0 'allreduce, 16 ranks on 2 node\(s\)' -- "$T" import-nccl-tests "$tmp/sim.log"

# Fitting the simulated log back onto the cluster it came from changes nothing much.
check nccl_refit 0 '"efficiency":0\.8[5-9]' -- "$T" calibrate --from-nccl-tests "$tmp/sim.log" --cluster $C

# Absurd logs: no bandwidth term, or algbw that is not size / time.
sed -E 's/^( +[0-9]+ +[0-9]+ +float +sum +-1) +[0-9.]+ +[0-9.]+ +[0-9.]+/\1     20.00    0.00    0.00/' "$tmp/sim.log" > "$tmp/flat.log"
check flat_log 2 'time: does not grow with the message size' -- "$T" calibrate --from-nccl-tests "$tmp/flat.log"

# Rail-optimised, 2 nodes: a send from rail 7 to rail 0 costs what a rail-aligned one does.
a=$("$T" collective --cluster dgx-a100-superpod --set nodes=2 --group 7,8 --op sendrecv --sizes 10MiB --json | grep -oE '"time_s": [0-9.e-]+')
b=$("$T" collective --cluster dgx-a100-superpod --set nodes=2 --group 0,8 --op sendrecv --sizes 10MiB --json | grep -oE '"time_s": [0-9.e-]+')
check rail_cross 0 "^${b}\$" -- echo "$a"

finish collective_command
