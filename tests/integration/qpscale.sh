#!/usr/bin/env bash
# Case "verbs/qp-scale": the QP-scaling configuration of `make bench`
# (build/bin/snic-qpbench) checked for correctness: N RC QP pairs between
# snic0 and snic1 (default 1,000), each WRITEs its own pattern into its own
# 4 KiB of the peer in 8 messages, every byte compared, while IDLE more QPs
# (default 10,000) exist on each NIC.  Then the connection-set limit: QPs
# leave RESET until ibv_modify_qp fails with ENOMEM, and the refused QP
# leaves RESET once another QP went back.  Its speed is only measured by
# make bench.
# With `tight`: N pairs (default 100) keep 4 WRITEs per list in flight
# for SECS (default 8) on a CQ of N entries, so the NIC finds it nearly
# full all the time and reads the host's consumer index again and again
# (snic-qpbench tight); passes when no completion failed and none
# stalled.  Through 2 cores per NIC (cores/cq-tight) the cores claim the
# CQ's slots concurrently: a claim once took an index the host had moved
# on meanwhile for an overrun, and every QP went to error.
#   tests/integration/qpscale.sh [N [IDLE]]
#   tests/integration/qpscale.sh tight [N [SECS]]
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin=$SNIC_BUILD/bin/snic-qpbench
snic_need_exec "$bin"
if [[ ${1:-} == tight ]]; then
	n=${2:-100}
	secs=${3:-8}
	snic_emu_start
	rc=0
	snic_run qpbench-tight 120 "$bin" tight "$n" "$secs" || rc=$?
	snic_emu_stop || exit 1
	(( rc == 0 )) || snic_fail "snic-qpbench tight $n $secs failed (status $rc): $(tail -2 "$SNIC_CASE_DIR/qpbench-tight.out")"
	grep -q "^tight $n ok " "$SNIC_CASE_DIR/qpbench-tight.out" ||
		snic_fail "snic-qpbench tight $n: no 'tight $n ok' line"
	snic_log "$n QPs wrote for $secs s on a CQ of $n entries: $(cat "$SNIC_CASE_DIR/qpbench-tight.out")"
	exit 0
fi
n=${1:-1000}
idle=${2:-10000}
snic_emu_start
rc=0 rc2=0
snic_run qpbench-check 150 "$bin" check "$n" "$idle" || rc=$?
snic_run qpbench-conns 150 "$bin" conns 1100 || rc2=$?
snic_emu_stop || exit 1
(( rc == 0 )) || snic_fail "snic-qpbench check $n $idle failed (status $rc)"
grep -qx "check $n ok" "$SNIC_CASE_DIR/qpbench-check.out" ||
	snic_fail "snic-qpbench check $n: no 'check $n ok' line"
(( rc2 == 0 )) || snic_fail "snic-qpbench conns 1100 failed (status $rc2)"
# one context: SNIC_CTX_MAX_QP_CONN = 1,024 - 16 connection sets
grep -qx "conns 1008 ok" "$SNIC_CASE_DIR/qpbench-conns.out" ||
	snic_fail "snic-qpbench conns: not 'conns 1008 ok': $(cat "$SNIC_CASE_DIR/qpbench-conns.out")"
snic_log "$n QPs each moved verified data next to $idle idle QPs per NIC;" \
	"the 1,009th QP out of RESET got ENOMEM, then a set once one was freed"
