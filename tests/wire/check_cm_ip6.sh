#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The rdma_cm over RoCE v2 IPv6, as Wireshark's InfiniBand CM dissector
# reads a capture:
#
# Usage: check_cm_ip6.sh PCAP CLIENT_IP6 SERVER_IP6 MSG...
#   MSG: the CM messages that must appear (tshark's names: ConnectRequest,
#   ConnectReply, ReadyToUse, DisconnectRequest, DisconnectReply,
#   ServiceIDResReq, ServiceIDResReqResp)
#
# Checks that every QP1 frame (a CM MAD) is IPv6 between the two
# addresses, without expert info; that each MSG appears; that every
# ConnectRequest names the IPv6 addresses where the kernel's rdma_cm puts
# them (Linux cma.c: the primary path's local / remote GIDs are the
# client's / server's address, IBTA A17.4.5.1; the rdma_cm private-data
# header says IP version 6 with the same source and destination); and
# that no RoCE frame went over IPv4.
# Exit status: 0 good, 1 a check failed, 2 usage.
set -u

PCAP=${1:-}
CLI=${2:-}
SRV=${3:-}
if [ -z "$PCAP" ] || [ ! -r "$PCAP" ] || [ -z "$CLI" ] || [ -z "$SRV" ]; then
	echo "usage: $0 PCAP CLIENT_IP6 SERVER_IP6 MSG..." >&2
	exit 2
fi
shift 3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "check_cm_ip6: $*" >&2; exit 1; }
# tshark prints its "Running as user root" warning on stderr: dropped
ts() { tshark -r "$PCAP" -n -o udp.ignore_ipv6_zero_checksum:TRUE "$@" 2>/dev/null; }

# every CM frame: source, destination, message, expert info
ts -Y 'infiniband.bth.destqp == 1' -T fields -E separator=/t \
	-e ipv6.src -e ipv6.dst -e ip.src -e _ws.col.Info -e _ws.expert.message \
	>"$TMP/cm" || fail "tshark could not read $PCAP"
sed 's/^/  cm| /' "$TMP/cm"
[ -s "$TMP/cm" ] || fail "no CM frame (QP1) in the capture"
awk -F'\t' -v c="$CLI" -v s="$SRV" '
	$3 != "" { print "CM frame over IPv4: " $0; bad = 1; next }
	!(($1 == c && $2 == s) || ($1 == s && $2 == c)) {
		print "CM frame not between " c " and " s ": " $0; bad = 1 }
	$5 != "" { print "expert info: " $0; bad = 1 }
	END { exit bad }' "$TMP/cm" >&2 || fail "bad CM frames (above)"
for m in "$@"; do
	grep -q "CM: $m" "$TMP/cm" || fail "no CM $m in the capture"
done

# the REQs' addresses: primary path GIDs and the rdma_cm IP header
ts -Y 'infiniband.cm.req' -T fields -E separator=/t \
	-e infiniband.cm.req.prim_localgid -e infiniband.cm.req.prim_remotegid \
	-e infiniband.cm.req.ip_cm.ipv -e infiniband.cm.req.ip_cm.sip6 \
	-e infiniband.cm.req.ip_cm.dip6 -e ipv6.src >"$TMP/req" ||
	fail "tshark could not read the REQs"
sed 's/^/  req| /' "$TMP/req"
awk -F'\t' '
	# the REQ goes from its client: its path names the sender as local
	$1 != $6 || $4 != $6 || $3 != "0x06" || $2 != $5 || $2 == $1 {
		print "REQ addresses wrong: " $0; bad = 1 }
	END { exit bad }' "$TMP/req" >&2 || fail "bad REQ contents (above)"

# no RoCE frame over IPv4: the Ethernet type says it (a filter on "ip"
# also matches a payload tshark takes for IPoIB: ucmatose sends its
# buffers uninitialised, and heap bytes 08 00 read as EtherType IPv4)
n4=$(ts -Y 'eth.type == 0x0800 && udp.dstport == 4791' -T fields -e frame.number | wc -l)
[ "$n4" -eq 0 ] || fail "$n4 RoCE frames over IPv4"
n6=$(ts -Y 'ipv6 && udp.dstport == 4791' -T fields -e frame.number | wc -l)
echo "check_cm_ip6: $(wc -l <"$TMP/cm") CM frames, all IPv6 between $CLI and $SRV; $n6 RoCE frames over IPv6, none over IPv4"
exit 0
