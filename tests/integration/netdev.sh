#!/usr/bin/env bash
# Cases "netdev/*": each NIC's kernel network interface (the exception
# path: what is not RoCE goes between the interface and the NIC's port)
# and what it makes possible, with Debian's unmodified programs, on
# snic0 (198.18.0.1) and snic1 (198.18.0.2) of one snic-emu in a private
# network namespace:
#   ping        snic1's interface moved into a second namespace (made and
#               removed here): ping both ways crosses the NICs' ports;
#               the interfaces go when snic-emu stops; --no-netdev: none
#   fi_info     libfabric's verbs provider lists snic0 and snic1
#   fi_msg|fi_rdm|fi_dgram   fi_pingpong -p verbs with data checks, server
#               on snic1, client on snic0, frames counted on both ports
#   fi_rdm_race libfabric 1.17 ofi_rxm's teardown race (which hung fi_rdm
#               now and then) made to happen, see case_rdm_race; not in
#               make test: passes while the race is there
#   ompi_ofi    a 2-rank Open MPI job over libfabric (pml cm, mtl ofi,
#               provider verbs;ofi_rxm), one rank per NIC, our mpi_check
#               program; its payload counted on both NICs
#   tests/integration/netdev.sh CASE
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/integration/engines-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/engines-lib.sh"

[[ $# -ge 1 ]] || snic_fail "usage: $0 CASE"
snic_private_netns "$0" "$@"
what=$1
CTL=$SNIC_BUILD/bin/snicctl
NS_B=snic-nd-$$

# The second namespace goes whatever happens (lib.sh's cleanup keeps the
# exit status it finds in $?).
# shellcheck disable=SC2154 # nd_rc is set inside the trap
trap 'nd_rc=$?; set +e; ip netns del "$NS_B" 2>/dev/null; (exit $nd_rc); snic__cleanup' EXIT

counter() { # NIC NAME
	"$CTL" -d "$SNIC_RUN_DIR" show -a "$1" |
		awk -v n="$2" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'
}

# Interface NAME exists here with ADDR/24 and MAC.
check_iface() { # NAME ADDR MAC
	local out
	out=$(ip -o -4 addr show dev "$1" 2>&1) || snic_fail "no interface $1: $out"
	[[ $out == *" $2/24 "* ]] || snic_fail "$1 does not carry $2/24: $out"
	out=$(ip -o link show dev "$1")
	[[ $out == *"link/ether $3 "* ]] || snic_fail "$1 has not MAC $3: $out"
	snic_log "interface $1: $2/24, MAC $3"
}

case_ping() {
	local n0 tx0 rx0 tx1 rx1
	check_iface snic0 198.18.0.1 02:00:c6:12:00:01
	check_iface snic1 198.18.0.2 02:00:c6:12:00:02
	# what UCX and libfabric read: the GID's network device
	n0=$(cat "$SNIC_RUN_DIR/sys/class/infiniband/snic0/ports/1/gid_attrs/ndevs/0")
	[[ $n0 == snic0 ]] || snic_fail "gid_attrs/ndevs/0 of snic0 is '$n0', want snic0"
	# both addresses local in one namespace would go through lo: snic1's
	# interface to a namespace of its own (moving drops its address)
	ip netns add "$NS_B" || snic_fail "cannot create network namespace $NS_B"
	ip -n "$NS_B" link set lo up
	ip link set snic1 netns "$NS_B" || snic_fail "cannot move snic1 to $NS_B"
	ip -n "$NS_B" addr add 198.18.0.2/24 dev snic1
	ip -n "$NS_B" link set snic1 up
	snic_run ping-a 60 ping -c 20 -i 0.05 -W 5 198.18.0.2 ||
		snic_fail "ping 198.18.0.2 from snic0's namespace failed"
	snic_run ping-b 60 ip netns exec "$NS_B" ping -c 20 -i 0.05 -W 5 198.18.0.1 ||
		snic_fail "ping 198.18.0.1 from snic1's namespace failed"
	grep -q ' 0% packet loss' "$SNIC_CASE_DIR/ping-a.out" || snic_fail "ping-a lost packets"
	grep -q ' 0% packet loss' "$SNIC_CASE_DIR/ping-b.out" || snic_fail "ping-b lost packets"
	# 40 requests and 40 replies each way went through both ports
	tx0=$(counter snic0 netdev_tx_frames) rx0=$(counter snic0 netdev_rx_frames)
	tx1=$(counter snic1 netdev_tx_frames) rx1=$(counter snic1 netdev_rx_frames)
	snic_log "netdev frames: snic0 tx $tx0 rx $rx0, snic1 tx $tx1 rx $rx1"
	(( tx0 >= 40 && rx0 >= 40 && tx1 >= 40 && rx1 >= 40 )) ||
		snic_fail "fewer than 40 frames each way on the NICs' exception path"
	snic_emu_stop || exit 1
	! ip link show snic0 >/dev/null 2>&1 || snic_fail "snic0's interface outlived snic-emu"
	! ip -n "$NS_B" link show snic1 >/dev/null 2>&1 ||
		snic_fail "snic1's interface outlived snic-emu"
	# (the first log aside: snic_emu_start waits for "ready" in it)
	mv "$SNIC_EMU_LOG" "$SNIC_CASE_DIR/snic-emu-netdev.log"
	snic_emu_start --no-netdev
	! ip link show snic0 >/dev/null 2>&1 || snic_fail "--no-netdev: snic0 has an interface"
	[[ ! -e $SNIC_RUN_DIR/sys/class/infiniband/snic0/ports/1/gid_attrs/ndevs/0 ]] ||
		snic_fail "--no-netdev: gid_attrs/ndevs/0 names an interface"
	snic_emu_stop || exit 1
}

case_fi_info() {
	local out
	snic_run fi_info 60 fi_info -p verbs || snic_fail "fi_info -p verbs failed"
	out=$SNIC_CASE_DIR/fi_info.out
	for d in snic0 snic1 snic0-dgram snic1-dgram; do
		grep -q "domain: $d\$" "$out" || snic_fail "fi_info -p verbs lists no domain $d"
	done
	grep -q 'FI_PROTO_RDMA_CM_IB_RC' "$out" || snic_fail "no verbs MSG endpoint (rdma_cm RC)"
}

# fi_pingpong -p verbs -e EP with data checks: server on snic1 (DOM1),
# client on snic0 (DOM0) to snic1's address.
case_pingpong() { # EP DOM0 DOM1
	local ep=$1 d0=$2 d1=$3 port tx0 tx1 rc=0
	port=$(snic_free_port 47600)
	snic_log "server: fi_pingpong -p verbs -e $ep -d $d1 -B $port"
	fi_pingpong -p verbs -e "$ep" -d "$d1" -B "$port" -I 200 -c \
		>"$SNIC_CASE_DIR/server.out" 2>&1 </dev/null &
	SPID=$!
	SNIC_BG_PIDS+=("$SPID")
	snic_wait_listen "$port" 30 "$SPID" || {
		sed 's/^/  server| /' "$SNIC_CASE_DIR/server.out"
		snic_fail "fi_pingpong server is not listening on $port"
	}
	tx0=$(counter snic0 tx_frames) tx1=$(counter snic1 tx_frames)
	snic_run client 120 fi_pingpong -p verbs -e "$ep" -d "$d0" -P "$port" -I 200 -c \
		198.18.0.2 || rc=$?
	wait "$SPID" || { sed 's/^/  server| /' "$SNIC_CASE_DIR/server.out"; rc=1; }
	snic__untrack "$SPID"
	(( rc == 0 )) || snic_fail "fi_pingpong -e $ep failed"
	sed 's/^/  server| /' "$SNIC_CASE_DIR/server.out"
	grep -Eq '^1k +200 +=200 ' "$SNIC_CASE_DIR/client.out" ||
		snic_fail "no 1k line with 200 transfers acknowledged"
	# 200 iterations of each size: at least that many frames on each port
	tx0=$(( $(counter snic0 tx_frames) - tx0 )) tx1=$(( $(counter snic1 tx_frames) - tx1 ))
	snic_log "frames sent during the run: snic0 $tx0, snic1 $tx1"
	(( tx0 >= 200 && tx1 >= 200 )) || snic_fail "the traffic did not cross the NICs"
}

# libfabric 1.17 ofi_rxm's teardown race, on demand (not in make test: it
# passes while the race is there): the server's reads of the CM event
# channel are delayed (cm_event_delay.so, as if the scheduler took the CPU
# between its last CQ poll and its next event read), so the client
# finishes and disconnects while the server's last completions (its "fin"
# sent, the client's "fin" received) wait unpolled in its CQ.  Reproduced
# when ofi_rxm, on the disconnect, destroys the QP first (SNIC_DEBUG:
# "unpolled receive CQE dropped", as mlx5 drops them) and the server then
# waits for a message it had received: it hangs, or, when its own send was
# still outstanding, fails with that send flushed.
case_rdm_race() {
	local so=$SNIC_CASE_DIR/cm_event_delay.so port i rc=0 out=$SNIC_CASE_DIR/server.out
	cc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$so" \
		"$SNIC_ROOT/tests/integration/cm_event_delay.c" -ldl ||
		snic_fail "cannot build cm_event_delay.so"
	port=$(snic_free_port 47600)
	SNIC_DEBUG=1 SNIC_CM_DEBUG=1 FI_LOG_LEVEL=info FI_LOG_PROV=ofi_rxm \
		LD_PRELOAD=$so SNIC_CM_EVENT_DELAY_MS=100 \
		fi_pingpong -p verbs -e rdm -d snic1 -B "$port" -S 64 -I 10 -c \
		>"$out" 2>&1 </dev/null &
	SPID=$!
	SNIC_BG_PIDS+=("$SPID")
	snic_wait_listen "$port" 30 "$SPID" || snic_fail "fi_pingpong server is not listening"
	snic_run client 60 fi_pingpong -p verbs -e rdm -d snic0 -P "$port" -S 64 -I 10 -c \
		198.18.0.2 || snic_fail "the client failed"
	for (( i = 0; i < 50; i++ )); do
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SPID" 2>/dev/null; then
		"$CTL" -d "$SNIC_RUN_DIR" show snic1 >"$SNIC_CASE_DIR/snicctl-snic1.txt"
		kill -TERM "$SPID" 2>/dev/null || true
		wait "$SPID" 2>/dev/null || true
		snic_log "the server still polled 5 s after the client finished (killed)"
	else
		wait "$SPID" || rc=$?
		snic_log "the server exited with status $rc"
	fi
	snic__untrack "$SPID"
	grep -E 'shutdown conn|DISCONNECTED|DESTROY_QP|unpolled|\[error\]' "$out" | tail -8 |
		sed 's/^/  server| /'
	# rxm's "shutdown conn", then the destroy that drops the client's fin
	awk '/shutdown conn/ { s = 1 }
	     s && /unpolled receive CQE dropped \(status 0, opcode 128/ { f = 1 }
	     END { exit !f }' "$out" ||
		snic_fail "not reproduced: no receive completion dropped after ofi_rxm's shutdown" \
			"(server status $rc; a libfabric that polls before it closes?)"
	snic_log "reproduced: on the client's disconnect ofi_rxm destroyed the QP with the" \
		"client's last message unpolled in the CQ"
}

# Open MPI over libfabric's verbs provider: rank r on snic<r>.
case_ompi_ofi() {
	local w=$SNIC_CASE_DIR/rank-dev.sh
	snic_need_cmd mpirun.openmpi
	snic_need_exec "$MPI_DIR/mpi_check_ompi"
	cat >"$w" <<'EOW'
#!/bin/sh
export FI_VERBS_DEVICE_NAME=snic${OMPI_COMM_WORLD_RANK:-0}
exec "$@"
EOW
	chmod +x "$w"
	snic_run ompi 120 mpirun.openmpi --allow-run-as-root --oversubscribe \
		-np 2 --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include 'verbs;ofi_rxm' \
		-x LD_LIBRARY_PATH -x SNIC_RUN_DIR \
		"$w" "$MPI_DIR/mpi_check_ompi" "${MPI_ARGS[@]}" ||
		snic_fail "Open MPI job over libfabric failed"
	check_crossed "$(mpi_payload_each_way "$SNIC_CASE_DIR/ompi.out")" snic0 snic1
}

snic_need_cmd ping fi_info fi_pingpong
snic_emu_start
for n in snic0 snic1; do
	grep -q "^$n: .* netdev $n " "$SNIC_EMU_LOG" ||
		snic_fail "snic-emu made no interface for $n (see $SNIC_EMU_LOG)"
done
case $what in
ping) case_ping ;;
fi_info) case_fi_info ;;
fi_msg) case_pingpong msg snic0 snic1 ;;
fi_rdm) case_pingpong rdm snic0 snic1 ;;
fi_dgram) case_pingpong dgram snic0-dgram snic1-dgram ;;
fi_rdm_race) case_rdm_race ;;
ompi_ofi) case_ompi_ofi ;;
*) snic_fail "unknown case '$what'" ;;
esac
[[ -z $SNIC_EMU_PID ]] || snic_emu_stop || exit 1
snic_log "netdev/$what passed"
