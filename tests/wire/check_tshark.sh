#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Second RoCEv2 wire oracle: Wireshark's InfiniBand dissector.
#
# Usage: check_tshark.sh PCAP [OPCODE...]     (OPCODE: 0x06, 12, "0x0c,0x0d")
#
# Checks that every UDP/4791 frame is dissected as InfiniBand (BTH) without
# warnings or malformed-packet expert info, that each expected BTH opcode
# appears, and that per frame the opcode, destination QP and PSN tshark
# reads equal what check_roce.py (scapy) reads from the same bytes.
# tshark does not verify the ICRC; check_roce.py does.
#
# tshark 4.0 binds UDP port 4791 to InfiniBand by default ("tshark -G
# decodes" lists "udp.port 4791 infiniband"), so no -d is passed; frames it
# does not dissect as InfiniBand fail instead.  The protocols that guess at
# the RDMA payload (iSER, NVMe-oF, SMB Direct...) are disabled: the payload
# is arbitrary bytes, and their guesses must not count as malformed RoCE.
# RoCEv2 leaves the UDP checksum 0 over IPv6 too (Linux rxe and ConnectX
# do; RFC 6935/6936 allow it for tunnels, the ICRC covers the packet), so
# tshark is told not to flag zero IPv6 UDP checksums; any other expert
# error still fails.  SNIC_WIRE_IP6=1: every RoCE frame must be IPv6.
# Exit status: 0 agree, 1 mismatch or dissection problem, 2 usage/tooling.
set -u

PCAP=${1:-}
if [ -z "$PCAP" ] || [ ! -r "$PCAP" ]; then
	echo "usage: $0 PCAP [OPCODE...]" >&2
	exit 2
fi
shift
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# tshark prints 'Running as user "root" ... dangerous.' on stderr when run
# as root; drop that line, treat any other stderr output as a failure.
tshark_quiet() {
	tshark "$@" 2>"$TMP/stderr"
	local rc=$?
	grep -v '^Running as user "root" and group "root"' "$TMP/stderr" >&2 &&
		return 1
	return $rc
}

# RDMA payload is opaque bytes: turn off every heuristic that guesses at
# what it carries, or random payload is dissected as a malformed upper
# protocol (seen: RPCoRDMA, and "EtherType encapsulated" -> bogus IPv4).
# These are the heuristics' short names in tshark 4.0 (bookworm); `tshark
# -G heuristic-decodes` lists their protocols, not these names.
disable=(--disable-protocol nvme-rdma -o udp.ignore_ipv6_zero_checksum:TRUE)
for h in eth_over_ib mellanox_eoib fc_infiniband sdp_infiniband \
	 iser_infiniband lnet_ib rpcrdma_infiniband smb_direct_infiniband \
	 smcr_infiniband; do
	disable+=(--disable-heuristic "$h")
done

# Expert severity: PI_WARN = 0x00600000; PI_ERROR (malformed) above it.
tshark_quiet -r "$PCAP" -n "${disable[@]}" -T fields -E separator=/t \
	-E occurrence=a -E aggregator=, \
	-e frame.number -e udp.dstport -e frame.protocols \
	-e infiniband.bth.opcode -e infiniband.bth.destqp \
	-e infiniband.bth.psn -e _ws.expert.severity -e _ws.expert.message \
	>"$TMP/tshark.tsv" || { echo "tshark failed on $PCAP" >&2; exit 2; }

fail=0
awk -F'\t' -v out="$TMP/ts.fields" -v ip6="${SNIC_WIRE_IP6:-0}" '
	# dstport may list several (ICMP quoting UDP); ours are plain.
	$2 != "4791" { next }
	{
		n++
		if ($3 !~ /:infiniband/) {
			printf "frame %s: UDP/4791 not dissected as " \
			       "InfiniBand (%s)\n", $1, $3
			bad++
		}
		if (ip6 == 1 && $3 !~ /:ipv6:/) {
			printf "frame %s: not over IPv6 (%s)\n", $1, $3
			bad++
		}
		k = split($7, sev, ",")
		for (i = 1; i <= k; i++)
			if (sev[i] + 0 >= 6291456) {
				printf "frame %s: tshark expert: %s\n", $1, $8
				bad++
				break
			}
		print $1 "\t" $4 "\t" $5 "\t" $6 > out
	}
	END {
		if (n == 0) { print "no UDP/4791 frames"; bad++ }
		exit bad > 0
	}' "$TMP/tshark.tsv" || fail=1
touch "$TMP/ts.fields"

# Expected opcodes (decimal, as tshark prints them).
for arg in "$@"; do
	for op in ${arg//,/ }; do
		if ! dec=$((op)) 2>/dev/null; then
			echo "bad opcode argument: $op" >&2
			exit 2
		fi
		if ! cut -f2 "$TMP/ts.fields" | grep -qx "$dec"; then
			printf 'expected opcode 0x%02x not seen\n' "$dec"
			fail=1
		fi
	done
done

# Cross-check with scapy: same frames, opcode, destination QP, PSN.
/usr/bin/python3 "$HERE/check_roce.py" --dump --quiet --min-frames 0 \
	"$PCAP" 2>/dev/null >"$TMP/scapy.out"
[ $? -eq 2 ] && { echo "check_roce.py could not read $PCAP" >&2; exit 2; }
grep -P '^\d+\t' "$TMP/scapy.out" >"$TMP/scapy.fields"
if ! diff -u --label scapy --label tshark "$TMP/scapy.fields" \
	"$TMP/ts.fields" >"$TMP/diff"; then
	echo "scapy and tshark disagree (frame, opcode, destqp, psn):"
	cat "$TMP/diff"
	fail=1
fi

n=$(wc -l <"$TMP/ts.fields")
if [ $fail -eq 0 ]; then
	echo "tshark: $n RoCEv2 frames dissected cleanly, agree with scapy"
else
	echo "tshark: FAILED ($n RoCEv2 frames)"
fi
exit $fail
