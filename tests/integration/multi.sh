#!/usr/bin/env bash
# Cases "multi/*": NICs as separate snic-emu processes (each its own host,
# with its own host-memory file) on real DPDK port types.
#   tests/integration/multi.sh memif-server-first | memif-client-first
#       snic1 (memif server) and snic0 (memif client) started in that
#       order; Debian's ibv_rc_pingpong and snic_verbs_test between them
#   tests/integration/multi.sh memif-restart
#       traffic, SIGKILL of the memif server's NIC process mid-traffic (the
#       client NIC must survive), immediate restart with the same arguments
#       (stale socket, BAR and host-memory files are cleaned), the client's
#       port reconnects, then pingpong and snic_verbs_test on new QPs
#   tests/integration/multi.sh afpacket
#       two network namespaces joined by a veth pair (created and removed
#       here), one NIC in each over net_af_packet; pingpong, snic_verbs_test,
#       and snic1's capture checked by check_roce.py and check_tshark.sh
#       while the NIC still runs
#   tests/integration/multi.sh snicctl
#       the same namespaces: snicctl list/show/reset, counters equal what
#       ibv_rc_pingpong sent (frames and bytes, exactly), per-QP state and
#       counters during traffic, and a frame with a bad ICRC sent into the
#       veth is dropped and counted
# Everything runs in a private network namespace (TCP for the pingpong QP
# exchange stays on its loopback); every process, namespace, veth and file
# made here is removed on exit, whatever happens.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode=${1:-}
case $mode in
memif-server-first | memif-client-first | memif-restart | afpacket | snicctl | memif-rping) ;;
*) snic_fail "usage: $0 memif-server-first | memif-client-first | memif-restart | afpacket | snicctl | memif-rping" ;;
esac
snic_private_netns "$0" "$@"

EMU=$SNIC_BUILD/bin/snic-emu
CTL=$SNIC_BUILD/bin/snicctl
VT=$SNIC_BUILD/tests/snic_verbs_test
PY=/usr/bin/python3
snic_need_exec "$EMU" "$CTL" "$VT"

declare -A NIC_PID=() NIC_LOG=() NIC_CMD=()
NETNS=()
RUN_DIR=$(mktemp -d /dev/shm/snic-test.XXXXXX)
SOCK_DIR=$SNIC_CASE_DIR/sock
mkdir -p "$SOCK_DIR"
export SNIC_RUN_DIR=$RUN_DIR
export LD_LIBRARY_PATH=$SNIC_BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

multi_cleanup() {
	local rc=$? tag ns
	for tag in "${!NIC_PID[@]}"; do
		[[ -n ${NIC_PID[$tag]} ]] || continue
		echo "cleanup: NIC process $tag (pid ${NIC_PID[$tag]}) still running" >&2
		snic__kill_wait "${NIC_PID[$tag]}" 10
	done
	for ns in "${NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	rm -rf -- "$RUN_DIR"
	(exit "$rc")
	snic__cleanup
}
trap multi_cleanup EXIT

# ------------------------------------------------------------- NIC processes

# nic_spawn TAG [ip netns exec NS] -- snic-emu arguments: start in the
# background, output in $SNIC_CASE_DIR/emu-TAG.log (the log of an earlier
# run of TAG is kept as emu-TAG.N.log).
nic_spawn() { # TAG [WRAPPER...] -- ARGS...
	local tag=$1 wrap=() n=1
	shift
	while [[ $1 != -- ]]; do wrap+=("$1"); shift; done
	shift
	local log=$SNIC_CASE_DIR/emu-$tag.log
	while [[ -e $SNIC_CASE_DIR/emu-$tag.$n.log ]]; do n=$(( n + 1 )); done
	[[ -e $log ]] && mv -- "$log" "$SNIC_CASE_DIR/emu-$tag.$n.log"
	NIC_CMD[$tag]="${wrap[*]} $EMU --run-dir $RUN_DIR $*"
	snic_log "start $tag: ${NIC_CMD[$tag]}"
	"${wrap[@]}" env -u LD_LIBRARY_PATH "$EMU" --run-dir "$RUN_DIR" "$@" \
		>"$log" 2>&1 </dev/null &
	NIC_PID[$tag]=$!
	NIC_LOG[$tag]=$log
}

# Wait until every TAG printed "ready"; fail if one exits first.
nic_wait_ready() { # SECS TAG...
	local secs tag i rc
	secs=$(snic_secs "$1")
	shift
	for (( i = 0; i < secs * 10; i++ )); do
		local all=1
		for tag in "$@"; do
			grep -q '^ready' "${NIC_LOG[$tag]}" && continue
			all=0
			if ! kill -0 "${NIC_PID[$tag]}" 2>/dev/null; then
				rc=0
				wait "${NIC_PID[$tag]}" || rc=$?
				NIC_PID[$tag]=
				snic_tail "${NIC_LOG[$tag]}" 30
				snic_fail "NIC process $tag exited (status $rc) before 'ready'"
			fi
		done
		if (( all )); then
			snic_log "ready: $* after ~$(( i / 10 )).$(( i % 10 ))s"
			return 0
		fi
		sleep 0.1
	done
	for tag in "$@"; do snic_tail "${NIC_LOG[$tag]}" 20; done
	snic_fail "NIC processes $* not ready within ${secs}s"
}

# SIGTERM; must exit 0 within 20 s having removed its BAR and host memory.
nic_stop() { # TAG NAME
	local tag=$1 name=$2 pid=${NIC_PID[$1]} i rc=0
	kill -TERM "$pid" 2>/dev/null || true
	for (( i = 0; i < $(snic_secs 20) * 10; i++ )); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		snic_tail "${NIC_LOG[$tag]}" 20
		snic_fail "NIC process $tag ignored SIGTERM for 20 s"
	fi
	wait "$pid" || rc=$?
	NIC_PID[$tag]=
	if (( rc != 0 )); then
		snic_tail "${NIC_LOG[$tag]}" 30
		snic_fail "NIC process $tag exited with status $rc after SIGTERM (want 0)"
	fi
	[[ ! -e $RUN_DIR/$name.bar && ! -e $RUN_DIR/$name.mem ]] ||
		snic_fail "NIC process $tag left $name.bar or $name.mem in $RUN_DIR: $(snic__ls "$RUN_DIR")"
	snic_log "$tag stopped: exit 0, runtime files removed"
}

nic_alive() { # TAG
	[[ -n ${NIC_PID[$1]} ]] && kill -0 "${NIC_PID[$1]}" 2>/dev/null
}

# ------------------------------------------------------------- port set-ups

MEMIF_SOCK=$SOCK_DIR/memif.sock
memif_nic() { # TAG NAME ROLE
	nic_spawn "$1" -- --nic "$2,port=net_memif0" -- \
		"--vdev=net_memif0,role=$3,socket=$MEMIF_SOCK,socket-abstract=no"
}

# Two namespaces and a veth pair between them; names unique to this run.
NS_A=snic-a-$$ NS_B=snic-b-$$ VETH_A=sva$$ VETH_B=svb$$
veth_setup() {
	command -v ip >/dev/null || snic_fail "'ip' not found (iproute2)"
	ip netns add "$NS_A" || snic_fail "cannot create network namespace $NS_A"
	NETNS+=("$NS_A")
	ip netns add "$NS_B" || snic_fail "cannot create network namespace $NS_B"
	NETNS+=("$NS_B")
	ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B" ||
		snic_fail "cannot create veth pair $VETH_A/$VETH_B"
	local ns v
	for ns in "$NS_A:$VETH_A" "$NS_B:$VETH_B"; do
		v=${ns#*:} ns=${ns%%:*}
		# Only our NICs' frames on the wire: no IPv6 autoconfiguration.
		ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$v.disable_ipv6=1" || true
		# af_packet carries an IP MTU of 1500: RoCE path MTU 1024.
		ip -n "$ns" link set "$v" mtu 1500 up
	done
	snic_log "veth $VETH_A ($NS_A) <-> $VETH_B ($NS_B), MTU 1500"
}

afpacket_nics() { # [snic1 extra --nic keys, e.g. ,pcap=FILE]
	veth_setup
	nic_spawn nic0 ip netns exec "$NS_A" -- --nic snic0,port=net_af_packet0 -- \
		"--vdev=net_af_packet0,iface=$VETH_A,framecnt=4096"
	nic_spawn nic1 ip netns exec "$NS_B" -- --nic "snic1,port=net_af_packet0${1:-}" -- \
		"--vdev=net_af_packet0,iface=$VETH_B,framecnt=4096"
	nic_wait_ready 40 nic0 nic1
}

# ------------------------------------------------------------- traffic

pingpong() { # BASE [options]
	snic_pingpong "$@" || snic_fail "ibv_rc_pingpong $* failed"
}

verbs() { # NAME [snic_verbs_test options]
	local name=$1
	shift
	snic_run "$name" 300 "$VT" --dev0 snic0 --dev1 snic1 "$@" ||
		snic_fail "snic_verbs_test $* failed"
}

# snicctl --json show, to a file.
ctl_json() { # FILE
	"$CTL" --json show >"$1" || snic_fail "snicctl --json show failed"
}

# ------------------------------------------------------------- cases

case_memif_order() { # FIRST_TAG
	if [[ $1 == server ]]; then
		memif_nic nic1 snic1 server
		sleep 1
		memif_nic nic0 snic0 client
	else
		memif_nic nic0 snic0 client
		sleep 1
		memif_nic nic1 snic1 server
	fi
	nic_wait_ready 40 nic0 nic1
	snic_run snicctl-list 10 "$CTL" list || snic_fail "snicctl list failed"
	grep -Eq '^snic0 +up .*link up .*host-mem snic0\.mem' "$SNIC_CASE_DIR/snicctl-list.out" &&
		grep -Eq '^snic1 +up .*link up .*host-mem snic1\.mem' "$SNIC_CASE_DIR/snicctl-list.out" ||
		snic_fail "snicctl list: want snic0 and snic1 up, link up, each with its own host memory"
	pingpong 19515
	pingpong 19615 -s 65536 -n 200
	verbs verbs-test
	nic_stop nic0 snic0
	nic_stop nic1 snic1
}

case_memif_restart() {
	local t0 t1 ppc pps i
	memif_nic nic1 snic1 server
	memif_nic nic0 snic0 client
	nic_wait_ready 40 nic0 nic1
	pingpong 19715

	# Traffic, then the server's NIC process dies (SIGKILL) mid-way.
	local port
	port=$(snic_free_port 19815)
	timeout 60 ibv_rc_pingpong -d snic1 -g 0 -p "$port" -n 1000000 \
		>"$SNIC_CASE_DIR/long-server.out" 2>&1 </dev/null &
	pps=$!
	SNIC_BG_PIDS+=("$pps")
	snic_wait_listen "$port" 30 "$pps" || snic_fail "long pingpong server did not listen"
	timeout 60 ibv_rc_pingpong -d snic0 -g 0 -p "$port" -n 1000000 127.0.0.1 \
		>"$SNIC_CASE_DIR/long-client.out" 2>&1 </dev/null &
	ppc=$!
	SNIC_BG_PIDS+=("$ppc")
	sleep 1
	local before
	before=$("$CTL" --json show snic0 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["nics"][0]["port"]["counters"]["rx_frames"])')
	(( before > 100 )) || snic_fail "no traffic before the kill (snic0 rx_frames $before)"
	snic_log "traffic flowing (snic0 rx_frames $before); SIGKILL to nic1 (pid ${NIC_PID[nic1]})"
	kill -KILL "${NIC_PID[nic1]}"
	wait "${NIC_PID[nic1]}" 2>/dev/null || true
	NIC_PID[nic1]=
	sleep 2
	nic_alive nic0 || { snic_tail "${NIC_LOG[nic0]}" 30; snic_fail "nic0 died when its peer was killed"; }
	grep -q 'link down' "${NIC_LOG[nic0]}" || snic_fail "nic0 did not notice its link went down"
	snic_log "nic0 survived and saw the link go down"
	# The verbs programs of the dead NIC are stuck; end them.
	for i in "$ppc" "$pps"; do snic__kill_wait "$i" 3; snic__untrack "$i"; done
	[[ -e $MEMIF_SOCK && -e $RUN_DIR/snic1.bar && -e $RUN_DIR/snic1.mem ]] ||
		snic_log "note: some stale files were already gone: $(snic__ls "$RUN_DIR")"

	# Immediate restart with the same arguments: stale files are cleaned.
	ups=$(grep -c 'link up$' "${NIC_LOG[nic0]}" || true)
	t0=$(date +%s%N)
	memif_nic nic1 snic1 server
	nic_wait_ready 40 nic1
	t1=$(date +%s%N)
	grep -q 'removed stale memif socket' "${NIC_LOG[nic1]}" ||
		snic_fail "the restarted server did not report the stale memif socket"
	grep -q 'removed stale' "${NIC_LOG[nic1]}" || snic_fail "no stale BAR reported"
	# Up again, and still up: a memif handshake can fail once and be
	# retried by the link watch (a restart every second while down).
	link_back() {
		local last
		last=$(grep -E 'link (up|down)$' "${NIC_LOG[nic0]}" | tail -n 1)
		(( $(grep -c 'link up$' "${NIC_LOG[nic0]}" || true) > ups )) &&
			[[ $last == *'link up' ]]
	}
	for (( i = 0; i < 150; i++ )); do
		link_back && break
		sleep 0.1
	done
	link_back || snic_fail "nic0's port did not come back up (within 15 s)"
	snic_log "restarted server ready and client reconnected in $(( (t1 - t0) / 1000000 )) ms"
	(( (t1 - t0) / 1000000 <= 5000 * SNIC_TIMEOUT_SCALE )) ||
		snic_fail "reconnection took more than 5 s"
	pingpong 19915
	verbs verbs-after-restart --only write,read,send
	nic_stop nic0 snic0
	nic_stop nic1 snic1
}

case_afpacket() {
	local pcap=$SNIC_CASE_DIR/afpacket.pcap
	afpacket_nics ",pcap=$pcap"
	pingpong 20015
	verbs verbs-data --only write,read,send
	# The capture as it is now, taken while the NIC runs (the file is
	# written out every 100 ms, in whole records); the error cases run
	# meanwhile and only grow the live file.
	sleep 0.5
	nic_alive nic1 || snic_fail "nic1 is gone"
	cp -- "$pcap" "$pcap.snapshot"
	verbs verbs-errors --only errors
	snic_run check-roce 300 "$PY" "$SNIC_ROOT/tests/wire/check_roce.py" "$pcap.snapshot" \
		--min-frames 1024 --expect-opcodes 0x00,0x01,0x02,0x04,0x06,0x07,0x08,0x0a,0x0c,0x0d,0x0e,0x0f,0x10,0x11 ||
		snic_fail "check_roce.py rejected the capture"
	snic_run check-tshark 300 bash "$SNIC_ROOT/tests/wire/check_tshark.sh" "$pcap.snapshot" \
		0x04 0x0a 0x0c 0x10 0x11 || snic_fail "check_tshark.sh rejected the capture"
	nic_stop nic0 snic0
	nic_stop nic1 snic1
}

# A RoCEv2 SEND ONLY frame from snic1's addresses to snic0 whose ICRC is
# wrong, sent into the veth from namespace B with a raw socket.
inject_bad_icrc() {
	ip netns exec "$NS_B" "$PY" - "$VETH_B" <<'PYEOF'
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
payload = bytes(range(64))
bth = struct.pack("!BBHII", 0x04, 0x40, 0xffff, 0x000402, 0)  # SEND ONLY, QP 0x402, PSN 0
icrc = b"\xde\xad\xbe\xef"                                   # wrong on purpose
udp_len = 8 + len(bth) + len(payload) + 4
udp = struct.pack("!HHHH", 0xc000, 4791, udp_len, 0)
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                 socket.inet_aton("198.18.0.2"), socket.inet_aton("198.18.0.1"))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
eth = bytes.fromhex("0200c6120001" "0200c6120002" "0800")
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(eth + ip + udp + bth + payload + icrc)
PYEOF
}

case_snicctl() {
	local n=200 size=3000 j=$SNIC_CASE_DIR/counters.json
	afpacket_nics
	snic_run list 10 "$CTL" list || snic_fail "snicctl list failed"
	snic_run reset 10 "$CTL" reset snic0 snic1 || snic_fail "snicctl reset failed"
	pingpong 20115 -n "$n" -s "$size"
	sleep 0.2   # published every ms; the table sweeps in ~8 ms
	ctl_json "$j"
	snic_run show 10 "$CTL" show || snic_fail "snicctl show failed"
	# Frames and bytes: what each NIC sent is what the other received,
	# and it is n messages of size bytes at path MTU 1024 (3 packets: two
	# of 1024 and one of 952 payload bytes, 58 bytes of Ethernet, IPv4,
	# UDP, BTH and ICRC each), plus ACKs (62 bytes) and ARP (60 bytes).
	snic_run check-counters 10 "$PY" - "$j" "$n" "$size" <<'PYEOF' || snic_fail "counters do not match the traffic"
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); size = int(sys.argv[3])
c = {x["name"]: x["port"]["counters"] for x in d["nics"]}
mtu, hdr = 1024, 58
pkts = -(-size // mtu)
msg_bytes = size + pkts * hdr
bad = 0
def check(what, got, want):
    global bad
    ok = got == want
    bad += not ok
    print("%-4s %-44s %d%s" % ("ok" if ok else "FAIL", what, got, "" if ok else " (want %d)" % want))
for a, b in (("snic0", "snic1"), ("snic1", "snic0")):
    arp = c[a]["arp_requests_sent"] + c[a]["arp_replies_sent"]
    check(a + " send_wqes", c[a]["send_wqes"], n)
    check(a + " recv_wqes", c[a]["recv_wqes"], n)
    check(a + " tx_frames = data + ACKs + ARP", c[a]["tx_frames"], n * pkts + c[a]["acks_sent"] + arp)
    check(a + " tx_bytes = data + ACKs + ARP", c[a]["tx_bytes"], n * msg_bytes + 62 * c[a]["acks_sent"] + 60 * arp)
    check(b + " rx_frames = " + a + " tx_frames", c[b]["rx_frames"], c[a]["tx_frames"])
    check(b + " rx_bytes = " + a + " tx_bytes", c[b]["rx_bytes"], c[a]["tx_bytes"])
    check(b + " acks_recv = " + a + " acks_sent", c[b]["acks_recv"], c[a]["acks_sent"])
    drops = sum(v for k, v in c[a].items() if k.startswith("rx_drop"))
    check(a + " rx_drop_* (none)", drops, 0)
sys.exit(1 if bad else 0)
PYEOF

	# Per QP, during traffic: both QPs RTS, pointing at each other.
	local port pps ppc
	port=$(snic_free_port 20215)
	timeout 60 ibv_rc_pingpong -d snic1 -g 0 -p "$port" -n 1000000 \
		>"$SNIC_CASE_DIR/long-server.out" 2>&1 </dev/null &
	pps=$!
	SNIC_BG_PIDS+=("$pps")
	snic_wait_listen "$port" 30 "$pps" || snic_fail "long pingpong server did not listen"
	timeout 60 ibv_rc_pingpong -d snic0 -g 0 -p "$port" -n 1000000 127.0.0.1 \
		>"$SNIC_CASE_DIR/long-client.out" 2>&1 </dev/null &
	ppc=$!
	SNIC_BG_PIDS+=("$ppc")
	sleep 1
	ctl_json "$j.qp"
	snic_run qp 10 "$CTL" qp snic0 || snic_fail "snicctl qp failed"
	snic_run check-qps 10 "$PY" - "$j.qp" <<'PYEOF' || snic_fail "per-QP state and counters wrong"
import json, sys
d = json.load(open(sys.argv[1]))
q = {x["name"]: x["qps"] for x in d["nics"]}
bad = 0
for a, b in (("snic0", "snic1"), ("snic1", "snic0")):
    if len(q[a]) != 1:
        print("FAIL %s has %d QPs, want 1" % (a, len(q[a]))); bad = 1; continue
    x, y = q[a][0], q[b][0] if q[b] else {}
    print("%s qp 0x%06x %s dest 0x%06x sq_psn 0x%06x epsn 0x%06x counters %s" % (
        a, x["qpn"], x["state"], x["dest_qpn"], x["sq_psn"], x["epsn"],
        {k: v for k, v in x["counters"].items() if v}))
    for what, ok in (("state RTS", x["state"] == "RTS"),
                     ("dest_qpn is the peer's QP", x["dest_qpn"] == y.get("qpn")),
                     ("frames sent and received", x["counters"]["tx_frames"] > 10 and x["counters"]["rx_frames"] > 10),
                     ("send WQEs counted", x["counters"]["send_wqes"] > 5)):
        print(("ok   " if ok else "FAIL ") + a + " " + what); bad |= not ok
sys.exit(bad)
PYEOF
	for pid in "$ppc" "$pps"; do snic__kill_wait "$pid" 3; snic__untrack "$pid"; done

	# A bad frame: dropped, counted by reason, nothing else disturbed.
	sleep 0.5
	snic_run reset2 10 "$CTL" reset snic0 || snic_fail "snicctl reset failed"
	inject_bad_icrc || snic_fail "could not send the raw frame"
	sleep 0.2
	ctl_json "$j.bad"
	snic_run show-bad 10 "$CTL" show snic0 || true
	snic_run check-bad 10 "$PY" - "$j.bad" <<'PYEOF' || snic_fail "the bad frame was not counted"
import json, sys
c = {x["name"]: x["port"]["counters"] for x in json.load(open(sys.argv[1]))["nics"]}["snic0"]
print("snic0 rx_frames %d rx_drop_icrc %d" % (c["rx_frames"], c["rx_drop_icrc"]))
sys.exit(0 if c["rx_drop_icrc"] == 1 and c["rx_frames"] >= 1 else 1)
PYEOF
	nic_stop nic0 snic0
	nic_stop nic1 snic1
}

# The rdma_cm across two NIC processes: cm.sh's rping case on these NICs.
case_memif_rping() {
	memif_nic nic1 snic1 server
	memif_nic nic0 snic0 client
	nic_wait_ready 40 nic0 nic1
	SNIC_CM_EXTERNAL_NICS=1 bash "$(dirname "${BASH_SOURCE[0]}")/cm.sh" rping ||
		snic_fail "rping over memif failed"
	nic_stop nic0 snic0
	nic_stop nic1 snic1
}

case $mode in
memif-rping) case_memif_rping ;;
memif-server-first) case_memif_order server ;;
memif-client-first) case_memif_order client ;;
memif-restart) case_memif_restart ;;
afpacket) case_afpacket ;;
snicctl) case_snicctl ;;
esac
snic_log "multi/$mode: passed"
