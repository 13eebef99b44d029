#!/usr/bin/env bash
# Case "pingpong/ctxdeath": verbs processes killed with SIGKILL in the
# middle of traffic.  The NIC must reclaim everything they owned (their
# contexts, QPs, CQs, MRs; counted as ctx_reclaimed) and keep serving other
# processes: a fresh ibv_rc_pingpong and our verbs test must pass after it.
#   tests/integration/ctxdeath.sh PORT_BASE
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -eq 1 && $1 =~ ^[0-9]+$ ]] || snic_fail "usage: $0 PORT_BASE"
snic_private_netns "$0" "$@"
base=$1

snic_emu_start
snic_kill_midtraffic snic1 snic0 "$(snic_free_port "$base")" 1.5
sleep 0.5 # the emulator checks owner processes every 10 ms
kill -0 "$SNIC_EMU_PID" 2>/dev/null || snic_fail "snic-emu died with its clients"

snic_pingpong "$((base + 10))" || snic_fail "ibv_rc_pingpong after the kill failed"
snic_run verbs 120 "$SNIC_BUILD/tests/snic_verbs_test" --only write,read,send ||
	snic_fail "snic_verbs_test after the kill failed"
snic_emu_stop || exit 1
n=$(awk '$1 == "ctx_reclaimed" { s += $2 } END { print s + 0 }' "$SNIC_EMU_LOG")
(( n >= 2 )) || snic_fail "expected >= 2 reclaimed contexts (one per killed process), counters say $n"
snic_log "the NIC reclaimed $n contexts of killed processes and kept serving"
