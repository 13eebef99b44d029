#!/usr/bin/env bash
# Cases "route/*": RoCE v2 through an IP router.  snic0 (198.18.1.1/24)
# and snic1 (198.18.2.1/24), one snic-emu, each NIC's port on a veth
# (af_packet) whose other end is in a router namespace made here
# (198.18.1.254 and 198.18.2.254, ip_forward=1): the NICs reach each
# other only through the router's plain IP forwarding (the ICRC leaves
# out the TTL and checksum it rewrites).  snic1's interface moves to a
# namespace of its own, so each side's kernel has its own routes:
#   kernel   the routes are the kernels' (ip route add ... via the router
#            on the NICs' interfaces): rping -C 100 -v -V, ib_write_bw
#            -R, ib_send_bw without rdma_cm (the verbs path: modify-QP's
#            next hop from the kernel) across the router, frames counted
#            on both NICs and on the router's interfaces
#   nic-gw   no kernel routes: the NICs' own gw= (snic-emu --nic) carry
#            rping and ib_send_bw across the router
#   unreachable  a destination behind no router: rdma_resolve_addr gives
#            ADDR_ERROR within its timeout
#   tests/integration/route.sh CASE
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 1 ]] || snic_fail "usage: $0 CASE"
snic_private_netns "$0" "$@"
what=$1
CTL=$SNIC_BUILD/bin/snicctl
T=$SNIC_BUILD/tests/snic_cm_test
NS_R=snic-rt-r-$$   # the router
NS_B=snic-rt-b-$$   # snic1's interface and its programs
FAR=198.18.2.1
SPID=

# shellcheck disable=SC2154 # rt_rc is set inside the trap
trap 'rt_rc=$?; set +e; ip netns del "$NS_B" 2>/dev/null; ip netns del "$NS_R" 2>/dev/null;
      ip link del rt0h 2>/dev/null; ip link del rt1h 2>/dev/null; (exit $rt_rc); snic__cleanup' EXIT

counter() { # NIC NAME
	"$CTL" -d "$SNIC_RUN_DIR" show -a "$1" |
		awk -v n="$2" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'
}

# Packets the router forwarded out of IFACE.
router_tx() { # IFACE
	ip -n "$NS_R" -s -j link show dev "$1" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])'
}

# veth rtNh (here, the NIC's port) <-> rtNr (router) for N = 0, 1.
wire_up() {
	local n
	ip netns add "$NS_R" || snic_fail "cannot create network namespace $NS_R"
	ip -n "$NS_R" link set lo up
	for n in 0 1; do
		ip link add "rt${n}h" type veth peer name "rt${n}r" netns "$NS_R" ||
			snic_fail "cannot create veth rt${n}h/rt${n}r"
		sysctl -qw "net.ipv6.conf.rt${n}h.disable_ipv6=1" || true
		ip netns exec "$NS_R" sysctl -qw "net.ipv6.conf.rt${n}r.disable_ipv6=1" || true
		ip link set "rt${n}h" mtu 1500 up
		ip -n "$NS_R" link set "rt${n}r" mtu 1500 up
		ip -n "$NS_R" addr add "198.18.$(( n + 1 )).254/24" dev "rt${n}r"
	done
	ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1 ||
		snic_fail "cannot enable forwarding in $NS_R"
	snic_log "router $NS_R: rt0r 198.18.1.254/24, rt1r 198.18.2.254/24, forwarding"
}

# snic-emu with both NICs on the veths; EXTRA0/EXTRA1: more --nic keys.
nics_up() { # EXTRA0 EXTRA1
	snic_emu_start \
		--nic "snic0,port=net_af_packet0,ip=198.18.1.1,netdev=on$1" \
		--nic "snic1,port=net_af_packet1,ip=198.18.2.1,netdev=on$2" -- \
		--vdev=net_af_packet0,iface=rt0h,framecnt=4096 \
		--vdev=net_af_packet1,iface=rt1h,framecnt=4096
	ip link show snic0 >/dev/null 2>&1 && ip link show snic1 >/dev/null 2>&1 ||
		snic_fail "snic-emu made no interfaces for the NICs (see $SNIC_EMU_LOG)"
	# snic1's kernel side apart, so that each side routes for itself
	ip netns add "$NS_B" || snic_fail "cannot create network namespace $NS_B"
	ip -n "$NS_B" link set lo up
	ip link set snic1 netns "$NS_B" || snic_fail "cannot move snic1 to $NS_B"
	ip -n "$NS_B" addr add 198.18.2.1/24 dev snic1
	ip -n "$NS_B" link set snic1 up
}

kernel_routes() {
	ip route add 198.18.2.0/24 via 198.18.1.254 dev snic0 ||
		snic_fail "cannot add the route to 198.18.2.0/24"
	ip -n "$NS_B" route add 198.18.1.0/24 via 198.18.2.254 dev snic1 ||
		snic_fail "cannot add the route to 198.18.1.0/24"
	snic_log "routes: $(ip route get $FAR | head -1); in $NS_B:" \
		"$(ip -n "$NS_B" route get 198.18.1.1 | head -1)"
}

# A server in NS_B (output in NAME.out), once snicctl shows its listener.
server() { # NAME PORT CMD...
	local name=$1 port=$2 i secs
	shift 2
	snic_log "server (in $NS_B): $*"
	ip netns exec "$NS_B" "$@" >"$SNIC_CASE_DIR/$name.out" 2>&1 </dev/null &
	SPID=$!
	SNIC_BG_PIDS+=("$SPID")
	secs=$(snic_secs 30)
	for (( i = 0; i < secs * 10; i++ )); do
		"$CTL" -d "$SNIC_RUN_DIR" show snic1 | grep -q "listen sid .* port $port " && return 0
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	sed "s/^/  $name| /" "$SNIC_CASE_DIR/$name.out"
	snic_fail "$name: no listener on port $port"
}

# Frames each NIC sent, and the router forwarded each way, since MARK.
mark() {
	M_TX0=$(counter snic0 tx_frames) M_TX1=$(counter snic1 tx_frames)
	M_R0=$(router_tx rt0r) M_R1=$(router_tx rt1r)
}
crossed() { # WHAT MIN
	local tx0 tx1 r0 r1
	tx0=$(( $(counter snic0 tx_frames) - M_TX0 )) tx1=$(( $(counter snic1 tx_frames) - M_TX1 ))
	r0=$(( $(router_tx rt0r) - M_R0 )) r1=$(( $(router_tx rt1r) - M_R1 ))
	snic_log "$1: snic0 sent $tx0, snic1 sent $tx1 frames; the router forwarded" \
		"$r1 to snic1, $r0 to snic0"
	(( tx0 >= $2 && tx1 >= $2 && r0 >= $2 && r1 >= $2 )) ||
		snic_fail "$1: fewer than $2 frames each way through the router"
}

rping_across() {
	snic_need_cmd rping
	mark
	server rping-server 7471 rping -s -a $FAR -p 7471 -C 100
	snic_run rping-client 120 rping -c -a $FAR -p 7471 -C 100 -v -V ||
		snic_fail "rping client failed"
	snic_server_done rping-server
	n=$(grep -o 'rdma-ping-[0-9]*:' "$SNIC_CASE_DIR/rping-client.out" | sort -u | wc -l)
	(( n == 100 )) || snic_fail "rping client printed $n verified pings, want 100"
	crossed rping 100
}

write_bw_across() {
	local try rc
	snic_need_cmd ib_write_bw
	mark
	# Debian's perftest 4.5-0.17 does not retry a connect refused while
	# its server listens again between its two connections (cm.sh).
	for (( try = 1; ; try++ )); do
		server write_bw-server 18515 ib_write_bw -R -d snic1 -p 18515 -n 200
		rc=0
		snic_run write_bw-client 120 ib_write_bw -R -d snic0 -p 18515 -n 200 $FAR || rc=$?
		(( rc != 0 )) || break
		kill -TERM "$SPID" 2>/dev/null || true
		wait "$SPID" 2>/dev/null || true
		snic__untrack "$SPID"
		grep -Eq 'RDMA_CM_EVENT_REJECTED; error: 8|Unexpected CM event .* 8' \
			"$SNIC_CASE_DIR/write_bw-client.out" && (( try < 4 )) ||
			snic_fail "ib_write_bw -R across the router failed"
		snic_log "ib_write_bw -R: refused between the server's two listens; again"
	done
	snic_server_done write_bw-server
	grep -Eq '^ *65536 +200 ' "$SNIC_CASE_DIR/write_bw-client.out" ||
		snic_fail "ib_write_bw printed no result line for 200 iterations"
	crossed ib_write_bw 200
}

# The verbs path without rdma_cm: ib_send_bw exchanging QPNs and GIDs
# over TCP (to ADDR: through the NICs' interfaces and the router too when
# ADDR is the far NIC's), each side's modify-QP given the next hop by
# libibverbs (the kernel's route) or the NIC's gw=.  The server runs in
# namespace NS ("" = here).  (ibv_rc_pingpong cannot cross a router, on
# any RoCE NIC: it sets the GRH hop limit, the IP TTL, to 1.)
verbs_across() { # NS ADDR
	local port=18600 wrap=() i
	[[ -z $1 ]] || wrap=(ip netns exec "$1")
	snic_need_cmd ib_send_bw
	mark
	snic_log "server (in ${1:-this namespace}): ib_send_bw -d snic1 -x 0 -p $port -n 200"
	"${wrap[@]}" ib_send_bw -d snic1 -x 0 -p $port -n 200 \
		>"$SNIC_CASE_DIR/send_bw-server.out" 2>&1 </dev/null &
	SPID=$!
	SNIC_BG_PIDS+=("$SPID")
	for (( i = 0; i < 100; i++ )); do
		"${wrap[@]}" ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.1
	done
	snic_run send_bw-client 60 ib_send_bw -d snic0 -x 0 -p $port -n 200 "$2" ||
		snic_fail "ib_send_bw client failed"
	snic_server_done send_bw-server
	grep -Eq '^ *65536 +200 ' "$SNIC_CASE_DIR/send_bw-client.out" ||
		snic_fail "ib_send_bw printed no result line for 200 iterations"
	crossed ib_send_bw 200
}

wire_up
case $what in
kernel)
	nics_up "" ""
	kernel_routes
	rping_across
	write_bw_across
	verbs_across "$NS_B" $FAR
	;;
nic-gw)
	nics_up ",gw=198.18.1.254" ",gw=198.18.2.254"
	ip route get $FAR >/dev/null 2>&1 && snic_fail "a kernel route to $FAR exists"
	rping_across
	# no kernel route for the TCP exchange: both programs here, over lo
	verbs_across "" 127.0.0.1
	;;
unreachable)
	nics_up "" ""
	kernel_routes
	# 198.18.3.0/24 is behind no router: the route points into nowhere
	ip route add 198.18.3.0/24 via 198.18.1.253 dev snic0
	snic_run unreachable 30 "$T" unreachable 198.18.3.1 1000 ||
		snic_fail "no ADDR_ERROR in time"
	;;
*) snic_fail "unknown case '$what'" ;;
esac
"$CTL" -d "$SNIC_RUN_DIR" show -a snic0 | grep -E '^ *(arp_|neigh_|tx_drop_no_neigh|rx_drop)' |
	sed 's/^/  snic0| /' || true
snic_emu_stop || exit 1
snic_log "route/$what passed"
