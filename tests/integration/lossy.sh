#!/usr/bin/env bash
# Case "pingpong/lossy": Debian's unmodified ibv_rc_pingpong between snic0
# (client) and snic1 (server) through ports that lose 5 % of the frames
# they receive, and duplicate, reorder and corrupt some more (snic-emu
# --fault).  The RC transport must recover from every loss: both ends exit
# 0 and the received data is checked (-c).  The fault seed is printed;
# SNIC_FAULT_SEED=N replays a run.
#   tests/integration/lossy.sh PORT_BASE [ibv_rc_pingpong options...]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 1 && $1 =~ ^[0-9]+$ ]] || snic_fail "usage: $0 PORT_BASE [ibv_rc_pingpong options]"
snic_private_netns "$0" "$@"
base=$1
shift

seed=${SNIC_FAULT_SEED:-5}
spec="loss=0.05,dup=0.01,reorder=0.01,corrupt=0.001,seed=$seed"
snic_log "faults on every port's receive path: $spec"
snic_emu_start --fault "$spec"
snic_pingpong "$base" -c "$@" || snic_fail "ibv_rc_pingpong -c $* failed with $spec"
snic_emu_stop || exit 1

# The faults happened, and the transport recovered from them.
dropped=$(sed -n 's/.*faults seed [0-9]*: seen [0-9]* dropped \([0-9]*\).*/\1/p' \
	"$SNIC_EMU_LOG" | awk '{ s += $1 } END { print s + 0 }')
(( dropped > 0 )) || snic_fail "snic-emu reports no dropped frame (was --fault applied?)"
grep -E 'faults seed|^ *(retransmits|timeouts|linger_acks) ' "$SNIC_EMU_LOG" | sed 's/^/  /' || true
snic_log "ibv_rc_pingpong -c $* through $dropped dropped frames: server and client exited 0"
