#!/usr/bin/env bash
# Cases "engines/*": communication engines users already run, unmodified
# (Debian's UCX 1.13, Open MPI 4.1 over pml ucx, MPICH 4.0 ch4:ucx), over
# two snic NICs.  UCX may use only the verbs transports (UCX_TLS=rc_verbs,
# ud_verbs,self), each rank or perftest side one NIC (UCX_NET_DEVICES), and
# the NICs' counters must show the payload crossed them: no shared memory,
# no TCP for the data.
#
#   tests/integration/engines.sh ucx-info
#   tests/integration/engines.sh ucx-perftest PORT_BASE
#   tests/integration/engines.sh ompi|mpich       (one snic-emu, two NICs)
#   tests/integration/engines.sh ompi-memif       (two snic-emu processes)
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 1 ]] || snic_fail "usage: $0 CASE [PORT_BASE]"
snic_private_netns "$0" "$@"
case_name=$1
shift

# shellcheck source=tests/integration/engines-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/engines-lib.sh"

# ucx_info -d lists both NICs with the verbs transports, through the
# device nodes and the sysfs view snic-emu made.
case_ucx_info() {
	local out=$SNIC_CASE_DIR/ucx_info.out dev view
	snic_need_cmd ucx_info
	snic_emu_start
	view=$SNIC_RUN_DIR/sys/class/infiniband
	for dev in snic0 snic1; do
		[[ $(cat "$view/$dev/ports/1/gid_attrs/types/0") == "RoCE v2" ]] ||
			snic_fail "$view/$dev: GID 0 is not RoCE v2"
		[[ $(cat "$view/$dev/ports/1/state") == "4: ACTIVE" ]] ||
			snic_fail "$view/$dev: port not ACTIVE"
	done
	snic_run ucx_info 30 ucx_info -d || snic_fail "ucx_info -d failed"
	for dev in snic0:1 snic1:1; do
		for tl in rc_verbs ud_verbs; do
			awk -v tl="$tl" -v dev="$dev" '
				/Transport:/ { t = $3 } /Device:/ && t == tl && $3 == dev { f = 1 }
				END { exit !f }' "$out" ||
				snic_fail "ucx_info -d does not list $tl on $dev"
		done
	done
	# The nodes UCX found: the class/infiniband_verbs entries name them.
	local nodes=() n
	for n in "$SNIC_RUN_DIR"/sys/class/infiniband_verbs/uverbs-*; do
		nodes+=("/dev/infiniband/${n##*/}")
	done
	(( ${#nodes[@]} == 2 )) || snic_fail "want 2 verbs devices in the view, have ${#nodes[@]}"
	for n in "${nodes[@]}"; do
		[[ -c $n ]] || snic_fail "$n is not a character device"
	done
	snic_emu_stop || exit 1
	for n in "${nodes[@]}"; do
		[[ ! -e $n ]] || snic_fail "$n left after snic-emu stopped"
	done
	snic_log "ucx_info lists rc_verbs and ud_verbs on snic0:1 and snic1:1"
}

# ucx_perftest: server on snic1, client on snic0, over TCP on loopback
# for the out-of-band exchange.
perftest_one() { # PORT TEST SIZE ITERS
	local port=$1 test=$2 size=$3 iters=$4 spid src=0 crc=0
	local sout=$SNIC_CASE_DIR/ucx-$test-server.out
	UCX_NET_DEVICES=snic1:1 timeout --foreground -k 5 "$(snic_secs 60)" \
		ucx_perftest -p "$port" >"$sout" 2>&1 </dev/null &
	spid=$!
	SNIC_BG_PIDS+=("$spid")
	snic_wait_listen "$port" 30 "$spid" ||
		{ cat "$sout"; snic_fail "ucx_perftest server never listened"; }
	UCX_NET_DEVICES=snic0:1 snic_run "ucx-$test" 60 ucx_perftest 127.0.0.1 \
		-p "$port" -t "$test" -s "$size" -n "$iters" || crc=$?
	wait "$spid" || src=$?
	snic__untrack "$spid"
	sed 's/^/  server| /' "$sout"
	(( crc == 0 && src == 0 )) ||
		snic_fail "ucx_perftest -t $test: client status $crc, server status $src"
	grep -q '^Final:' "$SNIC_CASE_DIR/ucx-$test.out" ||
		snic_fail "ucx_perftest -t $test printed no Final line"
}

case_ucx_perftest() {
	local base=${1:-23515} port
	snic_need_cmd ucx_perftest
	snic_emu_start
	port=$(snic_free_port "$base")
	perftest_one "$port" tag_lat 8 2000
	perftest_one "$port" tag_bw 65536 500
	perftest_one "$port" ucp_put_bw 1048576 100
	# put_bw alone moved 100 MiB from snic0 to snic1
	local tx
	tx=$(nic_counter snic0 tx_bytes)
	(( tx >= 100 * 1048576 )) ||
		snic_fail "snic0 sent $tx bytes, less than ucp_put_bw's 100 MiB"
	snic_emu_stop || exit 1
	snic_log "ucx_perftest tag_lat, tag_bw, ucp_put_bw across snic0 -> snic1"
}

case_ompi() {
	snic_emu_start
	run_ompi
	check_crossed "$(mpi_payload_each_way "$SNIC_CASE_DIR/ompi.out")" snic0 snic1
	snic_emu_stop || exit 1
}

case_mpich() {
	local w
	snic_need_cmd mpiexec.hydra
	snic_need_exec "$MPI_DIR/mpi_check_mpich"
	snic_emu_start
	w=$(rank_wrapper)
	snic_run mpich 120 mpiexec.hydra -n 2 -genv UCX_TLS "$UCX_TLS" \
		"$w" "$MPI_DIR/mpi_check_mpich" "${MPI_ARGS[@]}" ||
		snic_fail "MPICH job failed"
	check_crossed "$(mpi_payload_each_way "$SNIC_CASE_DIR/mpich.out")" snic0 snic1
	snic_emu_stop || exit 1
}

case "$case_name" in
ucx-info) case_ucx_info ;;
ucx-perftest) case_ucx_perftest "$@" ;;
ompi) case_ompi ;;
mpich) case_mpich ;;
*) snic_fail "unknown case $case_name" ;;
esac
