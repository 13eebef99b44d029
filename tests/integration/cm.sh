#!/usr/bin/env bash
# Cases "cm/*": the rdma_cm (our librdmacm.so.1, the firmware's QP1) with
# Debian's unmodified programs and our own, between snic0 (198.18.0.1,
# client) and snic1 (198.18.0.2, server) of one snic-emu, in a private
# network namespace.  A server counts as started once snicctl shows its
# listener on the NIC (the firmware's listen table), so no client races it.
#   tests/integration/cm.sh rping|rdma_server|udaddy|ucmatose|ucmatose-bind|
#       rping-ipv6|udaddy-ipv6|ucmatose-ipv6|errors-ipv6 (the same over the
#       NICs' IPv6 addresses, RoCE v2 over IPv6; errors-ipv6: an IPv6
#       address no NIC has, one nobody answers, a family mix)|
#       ucmatose-migrate|abandon|timeout|last-recv|
#       cmtime|write_bw|read_lat|send_bw|ours|server-death|reject|
#       unreachable|errors|wire (the CM exchange captured: check_roce.py and
#       tshark, which must dissect REQ/REP/RTU/DREQ/DREP/REJ as InfiniBand CM)
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 1 ]] || snic_fail "usage: $0 CASE"
snic_private_netns "$0" "$@"
what=$1
SRV=198.18.0.2
# the NICs' IPv6 addresses (their GID 1): snic-emu's default fd00:5e1c::
# with the IPv4 address in the last 32 bits
SRV6=fd00:5e1c::c612:2
CLI6=fd00:5e1c::c612:1
T=$SNIC_BUILD/tests/snic_cm_test
CTL=$SNIC_BUILD/bin/snicctl
SPID=

# Wait until snicctl shows a listener on PORT at snic1; fail if PID died.
cm_wait_listen() { # PORT SECS PID
	local port=$1 secs pid=$3 i
	secs=$(snic_secs "$2")
	for (( i = 0; i < secs * 10; i++ )); do
		"$CTL" -d "$SNIC_RUN_DIR" show snic1 | grep -q "listen sid .* port $port " && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Start a server in the background (output in $SNIC_CASE_DIR/NAME.out)
# and wait for its listener.
server() { # NAME PORT CMD...
	local name=$1 port=$2
	shift 2
	snic_log "server: $*"
	"$@" >"$SNIC_CASE_DIR/$name.out" 2>&1 </dev/null &
	SPID=$!
	SNIC_BG_PIDS+=("$SPID") # lib.sh's cleanup stops it if we fail
	cm_wait_listen "$port" 30 "$SPID" || {
		sed "s/^/  $name| /" "$SNIC_CASE_DIR/$name.out"
		snic_fail "$name: no listener on port $port"
	}
}

# A Debian program pair: server CMD on port PORT, then the client.
pair() { # NAME PORT "SERVER CMD" "CLIENT CMD"
	local name=$1 port=$2 rc=0
	# shellcheck disable=SC2086 # the commands are word lists
	server "$name-server" "$port" $3
	# shellcheck disable=SC2086
	snic_run "$name-client" 120 $4 || rc=$?
	(( rc == 0 )) || snic_fail "$name client: exit status $rc"
	snic_server_done "$name-server"
}

counters() {
	"$CTL" -d "$SNIC_RUN_DIR" show | grep -E '^[a-z]|cm_|cm:' | sed 's/^/  snicctl| /'
}

# The MADs of an IPv6 case went over IPv6: the IPv4 CM counters of NIC
# stay as they were (none over IPv4 is asked by these programs), and the
# firmware dropped none as malformed.
cm_ipv6_only() { # NIC
	local out
	out=$("$CTL" -d "$SNIC_RUN_DIR" show "$1")
	grep -Eq 'cm_mads_sent +[1-9]' <<<"$out" || snic_fail "$1 sent no CM MAD"
	grep -Eq 'cm_mads_recv +[1-9]' <<<"$out" || snic_fail "$1 received no CM MAD"
	! grep -Eq 'cm_drop_bad_mad +[1-9]' <<<"$out" || snic_fail "$1 dropped CM MADs as bad"
}

# The capture of an IPv6 case through the oracles: every frame's IPv6
# ICRC and headers (scapy), tshark's dissection, and the CM messages
# IPv6 between the NICs' addresses with the addresses where a kernel
# peer expects them (check_cm_ip6.sh).
cm_wire_ipv6() { # PCAP
	local rc=0 msgs
	snic_need_cmd tshark
	snic_run check-roce 100 /usr/bin/python3 "$SNIC_ROOT/tests/wire/check_roce.py" "$1" \
		--family 6 --expect-opcodes 0x64 || rc=$?
	(( rc == 0 )) || snic_fail "check_roce.py failed on the IPv6 CM capture"
	snic_run check-tshark 100 env SNIC_WIRE_IP6=1 bash "$SNIC_ROOT/tests/wire/check_tshark.sh" \
		"$1" 0x64 || rc=$?
	(( rc == 0 )) || snic_fail "check_tshark.sh failed on the IPv6 CM capture"
	if [[ $what == udaddy-ipv6 ]]; then
		msgs="ServiceIDResReq ServiceIDResReqResp"
	else
		msgs="ConnectRequest ConnectReply ReadyToUse DisconnectRequest DisconnectReply"
	fi
	# shellcheck disable=SC2086 # the messages are words
	snic_run check-cm-ip6 100 bash "$SNIC_ROOT/tests/wire/check_cm_ip6.sh" "$1" \
		"$CLI6" "$SRV6" $msgs || rc=$?
	(( rc == 0 )) || snic_fail "the CM exchange over IPv6 is not what a kernel peer expects"
}

# cm/errors-ipv6: what rdma-core gives for IPv6 addresses it cannot use.
errors_ipv6() {
	local rc
	# an address no NIC has: rdma_bind_addr fails with EADDRNOTAVAIL
	rc=0
	snic_run bind-none 30 rping -s -a fd00:99::1 -p 7471 -C 1 || rc=$?
	(( rc != 0 )) || snic_fail "rping -s bound an address no NIC has"
	grep -q 'rdma_bind_addr: Cannot assign requested address' \
		"$SNIC_CASE_DIR/bind-none.out" || snic_fail "bind: not EADDRNOTAVAIL"
	# on the NICs' /64, nobody answers neighbour discovery: ADDR_ERROR
	rc=0
	snic_run resolve-none 30 rping -c -a fd00:5e1c::99 -p 7471 -C 1 || rc=$?
	(( rc != 0 )) || snic_fail "rping -c reached an address nobody has"
	grep -q 'RDMA_CM_EVENT_ADDR_ERROR' "$SNIC_CASE_DIR/resolve-none.out" ||
		snic_fail "resolve: no RDMA_CM_EVENT_ADDR_ERROR"
	# an IPv4 source for an IPv6 destination: EINVAL, as the kernel's
	rc=0
	snic_run family-mix 30 ucmatose -s "$SRV6" -b 198.18.0.1 -c 1 || rc=$?
	(( rc != 0 )) || snic_fail "ucmatose connected an IPv4 source to an IPv6 peer"
	# (cmatose's perror after rdma_resolve_addr says "getting addr")
	grep -q 'cmatose: failure getting addr: Invalid argument' "$SNIC_CASE_DIR/family-mix.out" ||
		snic_fail "family mix: rdma_resolve_addr not EINVAL"
	# our own: IPv6, AF_IB and family mixes, each errno checked
	snic_run errors6 30 "$T" errors6 198.18.0.1 "$CLI6" ||
		snic_fail "an IPv6 or AF_IB call got the wrong errno"
}

# cm/wire: the CM exchange on the wire, checked by both oracles.
cm_wire() {
	local pcap=$SNIC_CASE_DIR/cm.pcap py=/usr/bin/python3 attrs a rc=0
	server ours-server 7600 "$T" server "$SRV" 7600
	snic_run ours-client 60 "$T" client "$SRV" 7600 || snic_fail "snic_cm_test client failed"
	snic_server_done ours-server
	snic_run reject 30 "$T" reject "$SRV" 7602 || snic_fail "no prompt REJECTED"
	snic_emu_stop || exit 1
	snic_need_cmd tshark
	# every frame's ICRC, headers and PSNs (scapy); UD SEND_ONLY = the MADs
	snic_run check-roce 100 "$py" "$SNIC_ROOT/tests/wire/check_roce.py" "$pcap" \
		--expect-opcodes 0x64,0x04,0x06,0x07,0x08,0x0c,0x11 || rc=$?
	(( rc == 0 )) || snic_fail "check_roce.py failed on the CM capture"
	snic_run check-tshark 100 bash "$SNIC_ROOT/tests/wire/check_tshark.sh" "$pcap" 0x64 || rc=$?
	(( rc == 0 )) || snic_fail "check_tshark.sh failed on the CM capture"
	# QP1 frames dissected as InfiniBand CM, every message of the exchange
	tshark -r "$pcap" -n -Y 'infiniband.bth.destqp == 1' -T fields \
		-e frame.number -e _ws.col.Info -e _ws.expert.message \
		>"$SNIC_CASE_DIR/cm-frames.txt" 2>/dev/null || snic_fail "tshark failed"
	sed 's/^/  cm-frames| /' "$SNIC_CASE_DIR/cm-frames.txt"
	for a in ConnectRequest ConnectReply ReadyToUse DisconnectRequest \
		 DisconnectReply ConnectReject; do
		grep -q "CM: $a" "$SNIC_CASE_DIR/cm-frames.txt" ||
			snic_fail "no CM $a dissected in the capture"
	done
	attrs=$(awk -F'\t' '$3 != ""' "$SNIC_CASE_DIR/cm-frames.txt")
	[[ -z $attrs ]] || snic_fail "tshark expert info on CM frames: $attrs"
	snic_log "cm/wire passed"
	exit 0
}

if [[ $what == wire ]]; then
	snic_emu_start --pcap "$SNIC_CASE_DIR/cm.pcap"
	cm_wire
fi
# SNIC_CM_EXTERNAL_NICS=1: the NICs are already up in $SNIC_RUN_DIR
# (multi.sh memif-rping: two NIC processes over memif).
ext=${SNIC_CM_EXTERNAL_NICS:-}
CAP6=
if [[ -z $ext && $what == *-ipv6 && $what != errors-ipv6 ]]; then
	CAP6=$SNIC_CASE_DIR/cm6.pcap
	snic_emu_start --pcap "$CAP6"
elif [[ -z $ext ]]; then
	snic_emu_start
fi
if [[ $what == *-ipv6 ]]; then
	# getaddrinfo's default AI_ADDRCONFIG (rping passes no hints) returns
	# IPv6 addresses only on a host with an IPv6 address other than ::1;
	# the NICs' interfaces carry none (README), this private namespace
	# only lo: give lo a documentation address (RFC 3849), as any host
	# with IPv6 has one
	ip -6 addr add 2001:db8::1/128 dev lo || snic_fail "no IPv6 address for lo"
fi
case $what in
rping)
	snic_need_cmd rping
	pair rping 7471 "rping -s -a $SRV -p 7471 -C 1000" \
		"rping -c -a $SRV -p 7471 -C 1000 -v -V"
	# (stdout and stderr share the file: count the distinct pings)
	n=$(grep -o 'rdma-ping-[0-9]*:' "$SNIC_CASE_DIR/rping-client.out" | sort -u | wc -l)
	(( n == 1000 )) || snic_fail "rping client printed $n verified pings, want 1000"
	;;
rping-ipv6)
	snic_need_cmd rping
	pair rping 7471 "rping -s -a $SRV6 -p 7471 -C 200" \
		"rping -c -a $SRV6 -p 7471 -C 200 -v -V"
	n=$(grep -o 'rdma-ping-[0-9]*:' "$SNIC_CASE_DIR/rping-client.out" | sort -u | wc -l)
	(( n == 200 )) || snic_fail "rping client printed $n verified pings, want 200"
	cm_ipv6_only snic0
	;;
udaddy-ipv6)
	# the server listens on the wildcard (0.0.0.0 without AFONLY takes
	# both families, as in the kernel); the client's SIDR goes over IPv6
	pair udaddy 7174 "udaddy" "udaddy -s $SRV6"
	grep -q 'data transfers complete' "$SNIC_CASE_DIR/udaddy-client.out" ||
		snic_fail "udaddy client did not complete its transfers"
	cm_ipv6_only snic0
	;;
ucmatose-ipv6)
	pair ucmatose 7471 "ucmatose -b $SRV6 -c 10" "ucmatose -s $SRV6 -b $CLI6 -c 10"
	cm_ipv6_only snic0
	;;
errors-ipv6)
	errors_ipv6
	;;
rdma_server)
	pair rdma_server 7471 "rdma_server -p 7471" "rdma_client -s $SRV -p 7471"
	grep -q 'rdma_client: end 0' "$SNIC_CASE_DIR/rdma_server-client.out" ||
		snic_fail "rdma_client did not end 0"
	;;
udaddy)
	pair udaddy 7174 "udaddy" "udaddy -s $SRV"
	grep -q 'data transfers complete' "$SNIC_CASE_DIR/udaddy-client.out" ||
		snic_fail "udaddy client did not complete its transfers"
	;;
ucmatose)
	pair ucmatose 7471 "ucmatose -c 10" "ucmatose -s $SRV -c 10"
	;;
ucmatose-bind)
	pair ucmatose 7471 "ucmatose -b $SRV" "ucmatose -s $SRV -b 198.18.0.1"
	;;
ucmatose-migrate)
	pair ucmatose 7471 "ucmatose -m" "ucmatose -s $SRV -m"
	grep -q 'migrating to new event channel' "$SNIC_CASE_DIR/ucmatose-client.out" ||
		snic_fail "ucmatose -m did not migrate"
	;;
cmtime)
	# rdma-core 44's cmtime server serves until it is killed
	server cmtime-server 7471 cmtime -c 100
	snic_run cmtime-client 120 cmtime -s "$SRV" -c 100 || snic_fail "cmtime client failed"
	kill -TERM "$SPID"
	wait "$SPID" 2>/dev/null || true
	snic__untrack "$SPID"
	SPID=
	grep -q '^connect ' "$SNIC_CASE_DIR/cmtime-client.out" ||
		snic_fail "cmtime printed no connect figures"
	;;
write_bw|read_lat|send_bw)
	prog=ib_$what
	snic_need_cmd "$prog"
	# perftest -R connects twice on one port: a control connection, then,
	# after the server listens again, the test QPs.  A client that comes
	# back before that second listen is refused (REJ "invalid ServiceID",
	# as a Linux peer answers too); perftest itself retries this since
	# 4.5-0.20 (retry_rdma_connect), Debian's 4.5-0.17 does not: the test
	# does, for that one signature only (perftest reports the REJ, event
	# 8, from two places: "RDMA_CM_EVENT_REJECTED; error: 8" and
	# "Unexpected CM event ... 8"), at most four times.
	for (( try = 1; ; try++ )); do
		server "$prog-server" 18515 "$prog" -R -d snic1 -p 18515 -n 200
		rc=0
		snic_run "$prog-client" 120 "$prog" -R -d snic0 -p 18515 -n 200 "$SRV" || rc=$?
		(( rc != 0 )) || break
		if ! grep -Eq 'RDMA_CM_EVENT_REJECTED; error: 8|Unexpected CM event .* 8$' \
			"$SNIC_CASE_DIR/$prog-client.out" || (( try >= 5 )); then
			snic_fail "$prog client: exit status $rc"
		fi
		snic_log "the client came before the second listen (perftest's race): again"
		kill -KILL "$SPID" 2>/dev/null || true
		wait "$SPID" 2>/dev/null || true
		snic__untrack "$SPID"
	done
	snic_server_done "$prog-server"
	;;
ours)
	server ours-server 7600 "$T" server "$SRV" 7600
	snic_run ours-client 60 "$T" client "$SRV" 7600 || snic_fail "snic_cm_test client failed"
	snic_server_done ours-server
	;;
last-recv)
	# the receive completions of SENDs acknowledged before the client's
	# DREQ are in the server's CQ when it reads DISCONNECTED
	server last-server 7604 "$T" last-server "$SRV" 7604
	snic_run last-client 60 "$T" last-client "$SRV" 7604 || snic_fail "last-client failed"
	snic_server_done last-server
	;;
server-death)
	server death-server 7601 "$T" server "$SRV" 7601 --hang
	"$T" client "$SRV" 7601 --expect-death >"$SNIC_CASE_DIR/death-client.out" 2>&1 &
	cpid=$!
	for (( i = 0; i < 300; i++ )); do
		grep -q 'server wrote' "$SNIC_CASE_DIR/death-server.out" && break
		sleep 0.1
	done
	grep -q 'server wrote' "$SNIC_CASE_DIR/death-server.out" || snic_fail "the server never wrote"
	snic_log "SIGKILL to the server (pid $SPID) mid-transfer"
	kill -KILL "$SPID"
	wait "$SPID" 2>/dev/null || true
	snic__untrack "$SPID"
	SPID=
	rc=0
	timeout "$(snic_secs 30)" tail --pid="$cpid" -f /dev/null || rc=$?
	(( rc == 0 )) || { kill -KILL "$cpid"; snic_fail "the client hung after the server died"; }
	wait "$cpid" || rc=$?
	sed 's/^/  death-client| /' "$SNIC_CASE_DIR/death-client.out"
	(( rc == 0 )) || snic_fail "the client did not see the server's death (status $rc)"
	;;
reject)
	snic_run reject 30 "$T" reject "$SRV" 7602 || snic_fail "no prompt REJECTED"
	;;
abandon)
	snic_run abandon 30 "$T" abandon "$SRV" 7604 ||
		snic_fail "a listener destroyed with an unread request"
	;;
timeout)
	# a listener that never answers (stopped): REQ retried, then UNREACHABLE
	server stopped-server 7603 "$T" server "$SRV" 7603
	kill -STOP "$SPID"
	rc=0
	snic_run timeout 60 "$T" timeout "$SRV" 7603 || rc=$?
	kill -KILL "$SPID"
	wait "$SPID" 2>/dev/null || true
	snic__untrack "$SPID"
	SPID=
	(( rc == 0 )) || snic_fail "no UNREACHABLE after the CM's retries"
	"$CTL" -d "$SNIC_RUN_DIR" show snic0 | grep -Eq 'cm_mads_retried +[1-9]' ||
		snic_fail "snicctl shows no retried MAD"
	"$CTL" -d "$SNIC_RUN_DIR" show snic0 | grep -Eq 'cm_timeouts +1$' ||
		snic_fail "snicctl shows no CM timeout"
	;;
unreachable)
	# 198.18.0.99: in the NICs' subnet, nobody answers its ARP
	snic_run unreachable 30 "$T" unreachable 198.18.0.99 1000 || snic_fail "no ADDR_ERROR in time"
	;;
errors)
	snic_run errors 30 "$T" errors "$SRV" || snic_fail "an invalid call got the wrong errno"
	;;
*)
	snic_fail "unknown case $what"
	;;
esac
counters
[[ -n $ext ]] || snic_emu_stop || exit 1
[[ -z $CAP6 ]] || cm_wire_ipv6 "$CAP6"
snic_log "cm/$what passed"
