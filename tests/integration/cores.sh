#!/usr/bin/env bash
# Cases "cores/*": real programs through two firmware cores per NIC
# (snic-emu --cores 2, through SNIC_EMU_CORES): core 1 of every NIC runs
# in a thread of its own beside core 0, so the frames steered to it, the
# doorbells, CQEs and events handed across the rings and the parking of
# the cores for commands all run on real threads (the unit suites `cores`
# and `unit/cores2` poll the cores in turn, in one thread).  QP slot i
# runs on core i % 2 (objects/qp_core.c).
#
#   cores.sh case SCRIPT [ARGS...]  another suite's case (a script in
#       tests/integration) with its own data checks; for programs with
#       several QPs, which alternate between the cores.
#   cores.sh pingpong PORT_BASE [ibv_rc_pingpong options...]
#   cores.sh lossy PORT_BASE [ibv_rc_pingpong options...]
#       ibv_rc_pingpong -c (received data checked) on core 1: a waiting
#       ibv_rc_pingpong server on each NIC holds the first QP slot (core
#       0), so the pair's one QP per NIC takes the next (core 1).  lossy:
#       through ports that lose 5 % of the frames and duplicate, reorder
#       and corrupt some (as pingpong/lossy; SNIC_FAULT_SEED=N replays).
#
# Every mode also requires the last snic-emu log to show 2 cores per NIC
# and frames steered to core 1 (xcore_rx_steered > 0): QPs on core 1
# carried the traffic.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

export SNIC_EMU_CORES=2

# A server ibv_rc_pingpong on each NIC that creates its QP, then waits for
# a client that never comes (it listens only once its QP exists).
hold_first_slots() { # PORT_BASE
	local dev port pid
	for dev in snic0 snic1; do
		port=$(snic_free_port "$1") || snic_fail "no free TCP port from $1"
		ibv_rc_pingpong -d "$dev" -g 0 -p "$port" \
			>"$SNIC_CASE_DIR/holder-$dev.out" 2>&1 </dev/null &
		pid=$!
		SNIC_BG_PIDS+=("$pid")
		HOLDERS+=("$pid")
		snic_wait_listen "$port" 30 "$pid" ||
			snic_fail "the slot holder on $dev never listened: $(cat "$SNIC_CASE_DIR/holder-$dev.out")"
	done
	snic_log "a waiting ibv_rc_pingpong server on snic0 and snic1 holds QP slot 2 (core 0)"
}

release_slots() {
	local pid
	kill -TERM "${HOLDERS[@]}" 2>/dev/null || true
	for pid in "${HOLDERS[@]}"; do
		wait "$pid" 2>/dev/null || true
		snic__untrack "$pid"
	done
	HOLDERS=()
}

check_core1() { # the last snic-emu log ran 2 cores and steered to core 1
	local log=$SNIC_CASE_DIR/snic-emu.log steered
	[[ -f $log ]] || snic_fail "no snic-emu log in $SNIC_CASE_DIR"
	grep -q '^firmware cores per NIC: 2 ' "$log" ||
		snic_fail "snic-emu did not run 2 cores per NIC (see $log)"
	steered=$(awk '$1 == "xcore_rx_steered" { s += $2 } END { print s + 0 }' "$log")
	(( steered > 0 )) ||
		snic_fail "snic-emu steered no frame to core 1 (xcore_rx_steered 0): no QP of core 1 carried traffic"
	snic_log "2 cores per NIC; frames steered to core 1: $steered"
}

[[ $# -ge 1 ]] || snic_fail "usage: $0 case SCRIPT [ARGS] | pingpong|lossy PORT_BASE [options]"
mode=$1
shift
case $mode in
case)
	[[ $# -ge 1 && -f $here/$1 ]] || snic_fail "usage: $0 case SCRIPT [ARGS...] (a script in $here)"
	script=$1
	shift
	bash "$here/$script" "$@" || snic_fail "$script $* failed with 2 cores per NIC"
	;;
pingpong | lossy)
	[[ $# -ge 1 && $1 =~ ^[0-9]+$ ]] || snic_fail "usage: $0 $mode PORT_BASE [ibv_rc_pingpong options]"
	snic_private_netns "$0" "$mode" "$@"
	base=$1
	shift
	HOLDERS=()
	emu_opts=()
	if [[ $mode == lossy ]]; then
		spec="loss=0.05,dup=0.01,reorder=0.01,corrupt=0.001,seed=${SNIC_FAULT_SEED:-5}"
		snic_log "faults on every port's receive path: $spec"
		emu_opts=(--fault "$spec")
	fi
	snic_emu_start "${emu_opts[@]}"
	hold_first_slots $((base + 40))
	snic_pingpong "$base" -c "$@" || snic_fail "ibv_rc_pingpong -c $* failed on core 1"
	grep -q 'QPN 0x[0-9a-f]*[13579bdf]\b' "$SNIC_CASE_DIR/pingpong-client.out" ||
		snic_fail "the pair's QP is not on an odd slot (core 1): $(grep QPN "$SNIC_CASE_DIR/pingpong-client.out")"
	release_slots
	snic_emu_stop || exit 1
	if [[ $mode == lossy ]]; then
		dropped=$(sed -n 's/.*faults seed [0-9]*: seen [0-9]* dropped \([0-9]*\).*/\1/p' \
			"$SNIC_EMU_LOG" | awk '{ s += $1 } END { print s + 0 }')
		(( dropped > 0 )) || snic_fail "snic-emu reports no dropped frame (was --fault applied?)"
		snic_log "frames dropped by the faulty ports: $dropped"
	fi
	;;
*)
	snic_fail "unknown mode $mode (case, pingpong, lossy)"
	;;
esac
check_core1
snic_log "cores $mode $*: passed with 2 cores per NIC"
