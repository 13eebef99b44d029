#!/usr/bin/env bash
# Cases "cores/*": another suite's case (a script in tests/integration,
# with its own data checks) through two firmware cores per NIC (snic-emu
# --cores 2, through SNIC_EMU_CORES): core 1 of every NIC runs in a
# thread of its own beside core 0, so the frames steered to it, the
# doorbells, CQEs and events handed across the rings and the parking of
# the cores for commands all run on real threads (the unit suites `cores`
# and `unit/cores2` poll the cores in turn, in one thread).  QP slot i
# runs on core i % 2 (objects/qp_core.c): programs with several QPs use
# both cores; an ibv_rc_pingpong pair (one QP per NIC) is put on core 1
# by SNIC_PP_HOLD_SLOT (lib.sh snic_pingpong: the first slot held), and
# its QPN must then be odd.
# Passes when the case passes and its last snic-emu log shows 2 cores per
# NIC, frames core 1 took off its own RX queue (hal_rx_queue1_frames > 0:
# the pair's ports steer by destination QPN; the lossy case's --fault
# injects on each queue) or, where the ports keep one queue, frames core
# 0 steered to it in software (xcore_rx_steered > 0), none on the wrong queue
# (xcore_rx_misrouted 0), and frames core 1 sent on its own TX queue
# (hal_tx_queue1_frames > 0): QPs on core 1 carried the traffic both
# ways; and no doorbell handed from core 0 to core 1 (xcore_doorbells 0:
# the host rings core 1's words).
#   tests/integration/cores.sh SCRIPT [ARGS...]
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

[[ $# -ge 1 && -f $here/$1 ]] || snic_fail "usage: $0 SCRIPT [ARGS...] (a script in $here)"
script=$1
shift
export SNIC_EMU_CORES=2 SNIC_PP_HOLD_SLOT=1
bash "$here/$script" "$@" || snic_fail "$script $* failed with 2 cores per NIC"

pp=$SNIC_CASE_DIR/pingpong-client.out
if [[ -f $pp ]]; then
	grep -q 'QPN 0x[0-9a-f]*[13579bdf]\b' "$pp" ||
		snic_fail "the pingpong pair's QP is not on an odd slot (core 1): $(grep QPN "$pp")"
fi
log=$SNIC_CASE_DIR/snic-emu.log
[[ -f $log ]] || snic_fail "no snic-emu log in $SNIC_CASE_DIR"
grep -q '^firmware cores per NIC: 2 ' "$log" ||
	snic_fail "snic-emu did not run 2 cores per NIC (see $log)"
# core 1's thread is a DPDK lcore: its frame buffers come from a pool
# cache of its own, not the pools' shared rings (boards/emu core_loop)
! grep -q 'no DPDK lcore id' "$log" ||
	snic_fail "core 1's thread got no DPDK lcore id: $(grep 'no DPDK lcore id' "$log")"
sum() { awk -v n="$1" '$1 == n { s += $2 } END { print s + 0 }' "$log"; }
steered=$(sum xcore_rx_steered)
took1=$(sum hal_rx_queue1_frames)
misrouted=$(sum xcore_rx_misrouted)
# The default pair's ring ports give each core a TX queue and an RX
# queue: core 1 sends its own frames
# (hal_tx_queue1_frames) and takes its own (hal_rx_queue1_frames); core
# 0 relays and steers only those to the NIC's own MAC (xcore_tx_relayed,
# xcore_rx_steered; hostile/slots talks to itself only).
[[ $(grep -c '^snic[01]: 2 TX queues, one per core;' "$log") == 2 ]] ||
	snic_fail "snic-emu did not give each core a TX queue (see $log)"
(( misrouted == 0 )) ||
	snic_fail "$misrouted frames reached a core on the wrong RX queue (xcore_rx_misrouted)"
sent1=$(sum hal_tx_queue1_frames)
wire=$(( $(sum hal_tx_queue0_frames) + sent1 ))
relayed=$(sum xcore_tx_relayed)
if ! grep -q '2 RX queues, one per core' "$log"; then
	(( steered > 0 )) ||
		snic_fail "core 0 steered no frame to core 1 (xcore_rx_steered 0): no QP of core 1 carried traffic"
elif (( wire > 0 )); then
	(( took1 > 0 )) ||
		snic_fail "core 1 took no frame off its own RX queue (hal_rx_queue1_frames 0): no QP of core 1 carried traffic"
else
	(( steered > 0 )) ||
		snic_fail "nothing on the wire, and core 0 steered no frame of the NIC itself to core 1"
fi
if (( wire > 0 )); then
	(( sent1 > 0 )) ||
		snic_fail "core 1 sent no frame on its own TX queue (hal_tx_queue1_frames 0)"
else
	(( relayed > 0 )) ||
		snic_fail "nothing on the wire, and core 0 relayed no frame of core 1 to the NIC itself"
fi
# Core 1 takes its QPs' doorbells from the context pages itself: core 0
# hands none over (only a ring in the NIC page's bitmap would be).
handed=$(sum xcore_doorbells)
(( handed == 0 )) ||
	snic_fail "core 0 handed $handed doorbells to core 1 (xcore_doorbells): the host rang core 0's words"
snic_log "$script $*: passed with 2 cores per NIC; frames core 1 took off its RX queue: $took1, steered to it by core 0: $steered, sent on its TX queue: $sent1, relayed by core 0: $relayed, doorbells handed over: $handed"
