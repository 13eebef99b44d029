#!/usr/bin/env bash
# Cases "wire/*": wire conformance of captured RoCEv2 frames, checked by
# independent oracles.
#   tests/integration/wire.sh capture   snic-emu --pcap, run snic_verbs_test
#                                       --only write,read,send and
#                                       snic_verbs_ext --only mw_ext_api
#                                       (SEND with Invalidate), stop
#   tests/integration/wire.sh scapy     tests/wire/check_roce.py on the capture
#                                       (ICRC recomputed, headers, opcodes)
#   tests/integration/wire.sh tshark    tests/wire/check_tshark.sh on it
#                                       (dissected as InfiniBand)
#   tests/integration/wire.sh xrc       its own capture of snic_verbs_ext
#                                       --only xrc,xrc_wrong_srq, checked
#                                       by both oracles (XRC opcodes, XRCETH)
# The capture is $SNIC_TEST_LOGS/wire/roce.pcap (override: SNIC_WIRE_PCAP).
# SNIC_WIRE_IP6=1: the same over IPv6 (GID index 1), into roce6.pcap, and
# the oracles require every RoCE frame to be IPv6.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ip6=${SNIC_WIRE_IP6:-0}
gid_args=()
family_args=()
suffix=
if [[ $ip6 == 1 ]]; then
	gid_args=(--gid-index 1)
	family_args=(--family 6)
	suffix=6
fi
pcap=${SNIC_WIRE_PCAP:-$SNIC_TEST_LOGS/wire/roce$suffix.pcap}

# RC BTH opcodes a WRITE, READ and SEND exchange at sizes 0, 1, 4095, 4096,
# 4097 and 1 MiB must produce (any path MTU from 256 to 4096 gives FIRST,
# MIDDLE, LAST and ONLY packets of each):
opcodes=(
	0x00 0x01 0x02 0x04     # SEND first, middle, last, only
	0x06 0x07 0x08 0x0a     # RDMA WRITE first, middle, last, only
	0x0c                    # RDMA READ request
	0x0d 0x0e 0x0f 0x10     # RDMA READ response first, middle, last, only
	0x11                    # ACKNOWLEDGE
	0x17                    # SEND only with Invalidate (memory windows)
)
# Lower bound on frames: one 1 MiB transfer at the largest MTU (4096) alone
# is 256 data packets.
min_frames=256

need_pcap() {
	[[ -s $pcap ]] || snic_fail "no capture at $pcap (it is made by the wire/capture case when that passes)"
}

case ${1:-} in
capture)
	bin=$SNIC_BUILD/tests/snic_verbs_test
	snic_need_exec "$bin"
	# Capture into the case folder; only a capture of a run that passed
	# becomes $pcap, the input of the oracle cases.
	mkdir -p "$(dirname "$pcap")"
	rm -f -- "$pcap"
	raw=$SNIC_CASE_DIR/roce.pcap
	rm -f -- "$raw"
	snic_emu_start --pcap "$raw"
	rc=0
	snic_run verbs-test 180 "$bin" --dev0 snic0 --dev1 snic1 --only write,read,send \
		"${gid_args[@]}" || rc=$?
	(( rc != 0 )) || snic_run verbs-ext-mw 120 "$SNIC_BUILD/tests/snic_verbs_ext" \
		--dev0 snic0 --dev1 snic1 --only mw_ext_api "${gid_args[@]}" || rc=$?
	snic_emu_stop || exit 1
	(( rc == 0 )) || snic_fail "snic_verbs_test --only write,read,send or snic_verbs_ext --only mw_ext_api failed (status $rc); partial capture (if any): $raw"
	[[ -s $raw ]] || snic_fail "snic-emu --pcap wrote no capture to $raw"
	mv -f -- "$raw" "$pcap"
	snic_log "captured $(stat -c %s "$pcap") bytes to $pcap"
	;;
scapy)
	need_pcap
	py=/usr/bin/python3 # Debian's python: the one that sees python3-scapy
	snic_need_exec "$py"
	[[ -f $SNIC_ROOT/tests/wire/check_roce.py ]] || snic_fail "tests/wire/check_roce.py is missing"
	list=$(IFS=,; echo "${opcodes[*]}")
	rc=0
	snic_run check-roce 100 "$py" "$SNIC_ROOT/tests/wire/check_roce.py" "$pcap" \
		--min-frames "$min_frames" --expect-opcodes "$list" "${family_args[@]}" || rc=$?
	(( rc == 0 )) || snic_fail "check_roce.py failed (status $rc)"
	snic_log "scapy oracle: capture conforms"
	;;
tshark)
	need_pcap
	snic_need_cmd tshark
	[[ -f $SNIC_ROOT/tests/wire/check_tshark.sh ]] || snic_fail "tests/wire/check_tshark.sh is missing"
	rc=0
	snic_run check-tshark 100 env SNIC_WIRE_IP6="$ip6" \
		bash "$SNIC_ROOT/tests/wire/check_tshark.sh" "$pcap" "${opcodes[@]}" || rc=$?
	(( rc == 0 )) || snic_fail "check_tshark.sh failed (status $rc)"
	# SEND with Invalidate: tshark reads the IETH's R_Key in every such frame
	inv=$(tshark -r "$pcap" -n -Y 'infiniband.bth.opcode == 0x17' -T fields \
		-E occurrence=f -e infiniband.ieth 2>/dev/null)
	[[ -n $inv ]] || snic_fail "no SEND with Invalidate frame dissected"
	! grep -qvE '^[0-9a-f]{8}$' <<<"$inv" ||
		snic_fail "a SEND with Invalidate frame without a 4-byte IETH: $(tr '\n' ' ' <<<"$inv")"
	snic_log "tshark: $(wc -l <<<"$inv") SEND with Invalidate frame(s), IETH R_Key $(head -1 <<<"$inv")"
	snic_log "tshark oracle: capture dissects as expected"
	;;
xrc)
	# XRC (Annex A14): SENDs of 1 to 6 packets at path MTU 1024 in the XRC
	# class with the XRCETH, the target's ACKs (0xb1) and NAKs.  tshark 4.0
	# names the XRC opcodes but dissects nothing after their BTH ("Vendor
	# Specific or Unknown Header Sequence", no expert info): the XRCETH,
	# AETH and ICRC of these frames are the scapy oracle's to check.
	bin=$SNIC_BUILD/tests/snic_verbs_ext
	snic_need_exec "$bin"
	snic_need_cmd tshark
	xpcap=$SNIC_CASE_DIR/xrc.pcap
	rm -f -- "$xpcap"
	snic_emu_start --pcap "$xpcap"
	rc=0
	snic_run verbs-ext 180 "$bin" --dev0 snic0 --dev1 snic1 --only xrc,xrc_wrong_srq || rc=$?
	snic_emu_stop || exit 1
	(( rc == 0 )) || snic_fail "snic_verbs_ext --only xrc,xrc_wrong_srq failed (status $rc)"
	[[ -s $xpcap ]] || snic_fail "snic-emu --pcap wrote no capture to $xpcap"
	xops=(0xa0 0xa1 0xa2 0xa4 0xb1)
	rc=0
	snic_run check-roce 100 /usr/bin/python3 "$SNIC_ROOT/tests/wire/check_roce.py" "$xpcap" \
		--min-frames 20 --expect-opcodes "$(IFS=,; echo "${xops[*]}")" || rc=$?
	(( rc == 0 )) || snic_fail "check_roce.py failed on the XRC capture (status $rc)"
	snic_run check-tshark 100 bash "$SNIC_ROOT/tests/wire/check_tshark.sh" "$xpcap" "${xops[@]}" || rc=$?
	(( rc == 0 )) || snic_fail "check_tshark.sh failed on the XRC capture (status $rc)"
	snic_log "XRC capture conforms (scapy: ICRC, XRCETH; tshark: dissected, agrees)"
	;;
*)
	snic_fail "usage: $0 capture | scapy | tshark | xrc"
	;;
esac
