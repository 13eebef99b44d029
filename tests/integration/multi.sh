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
#   tests/integration/multi.sh mpi-memif
#       the memif pair, each NIC process its own host: a 2-rank Open MPI
#       job over UCX (one rank per NIC) checks every byte of 1 B .. 4 MiB
#       messages and an MPI_Allreduce; both NICs' counters show the payload
#   tests/integration/multi.sh snicctl
#       the same namespaces: snicctl list/show/reset, counters equal what
#       ibv_rc_pingpong sent (frames and bytes, exactly), per-QP state and
#       counters during traffic (with the peer's address, over IPv4 and
#       IPv6), and a frame with a bad ICRC sent into the
#       veth is dropped and counted
# Everything runs in a private network namespace (TCP for the pingpong QP
# exchange stays on its loopback); every process, namespace, veth and file
# made here is removed on exit, whatever happens.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode=${1:-}
case $mode in
memif-server-first | memif-client-first | memif-restart | afpacket | snicctl | mpi-memif | memif-rping) ;;
*) snic_fail "usage: $0 memif-server-first | memif-client-first | memif-restart | afpacket | snicctl | mpi-memif | memif-rping" ;;
esac
snic_private_netns "$0" "$@"

# shellcheck source=tests/integration/nics.sh
. "$(dirname "${BASH_SOURCE[0]}")/nics.sh"

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

case_mpi_memif() {
	# shellcheck source=tests/integration/engines-lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/engines-lib.sh"
	memif_nic nic1 snic1 server
	memif_nic nic0 snic0 client
	nic_wait_ready 40 nic0 nic1
	run_ompi
	check_crossed "$(mpi_payload_each_way "$SNIC_CASE_DIR/ompi.out")" snic0 snic1
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
	long_pingpong "$port"
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
	for (( i = 0; i < $(snic_secs 15) * 10; i++ )); do
		link_back && break
		sleep 0.1
	done
	link_back || snic_fail "nic0's port did not come back up (within $(snic_secs 15) s)"
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

# The address a QP of NIC (snic0/snic1, the default addresses) has as its
# peer over GID index GID (0 = IPv4, 1 = IPv6).
peer_of() { # NIC GID
	local other=2
	[[ $1 == snic1 ]] && other=1
	if (( $2 == 0 )); then echo "198.18.0.$other"; else echo "fd00:5e1c::c612:$other"; fi
}

# Per QP, during an ibv_rc_pingpong over GID index GID: both QPs RTS,
# pointing at each other (QPN, and the peer's IPv4 or IPv6 address in
# snicctl's text and JSON), counters moving.
snicctl_qps() { # GID
	local gid=$1 j=$SNIC_CASE_DIR/counters.json port pps ppc
	port=$(snic_free_port $(( 20215 + 100 * gid )))
	long_pingpong "$port" "$gid"
	ctl_json "$j.qp$gid"
	snic_run "qp$gid" 10 "$CTL" qp snic0 || snic_fail "snicctl qp failed"
	grep -q " peer $(peer_of snic0 "$gid") " "$SNIC_CASE_DIR/qp$gid.out" ||
		snic_fail "snicctl qp snic0 does not show peer $(peer_of snic0 "$gid")"
	snic_run "check-qps$gid" 10 "$PY" - "$j.qp$gid" "$(peer_of snic0 "$gid")" "$(peer_of snic1 "$gid")" <<'PYEOF' || snic_fail "per-QP state and counters wrong"
import json, sys
d = json.load(open(sys.argv[1]))
q = {x["name"]: x["qps"] for x in d["nics"]}
peer = {"snic0": sys.argv[2], "snic1": sys.argv[3]}
bad = 0
for a, b in (("snic0", "snic1"), ("snic1", "snic0")):
    if len(q[a]) != 1:
        print("FAIL %s has %d QPs, want 1" % (a, len(q[a]))); bad = 1; continue
    x, y = q[a][0], q[b][0] if q[b] else {}
    print("%s qp 0x%06x %s dest 0x%06x sq_psn 0x%06x epsn 0x%06x counters %s" % (
        a, x["qpn"], x["state"], x["dest_qpn"], x["sq_psn"], x["epsn"],
        {k: v for k, v in x["counters"].items() if v}))
    print("%s peer %s" % (a, x["peer"]))
    for what, ok in (("state RTS", x["state"] == "RTS"),
                     ("dest_qpn is the peer's QP", x["dest_qpn"] == y.get("qpn")),
                     ("peer is " + peer[a], x["peer"] == peer[a]),
                     ("frames sent and received", x["counters"]["tx_frames"] > 10 and x["counters"]["rx_frames"] > 10),
                     ("send WQEs counted", x["counters"]["send_wqes"] > 5)):
        print(("ok   " if ok else "FAIL ") + a + " " + what); bad |= not ok
sys.exit(bad)
PYEOF
	for pid in "$ppc" "$pps"; do snic__kill_wait "$pid" 3; snic__untrack "$pid"; done
	sleep 0.5   # the killed programs' QPs leave the table
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

	# Per QP, during traffic, over IPv4 (GID 0) and IPv6 (GID 1).
	snicctl_qps 0
	snicctl_qps 1

	# A bad frame: dropped, counted by reason, nothing else disturbed.
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
mpi-memif) case_mpi_memif ;;
afpacket) case_afpacket ;;
snicctl) case_snicctl ;;
esac
snic_log "multi/$mode: passed"
