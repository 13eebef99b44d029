#!/usr/bin/env bash
# Interoperability with Linux's own RoCE: a snic NIC against rdma_rxe
# (soft-RoCE) in a Debian 12 VM, with Debian's unmodified programs on both
# sides.
#
#   tests/interop/interop.sh prepare        build (or find) the cached VM
#                                           (tools/build-rxe-vm.sh)
#   tests/interop/interop.sh run LIST [CASE...]
#       boot the VM once, put a snic NIC on the same tap, run every case of
#       LIST (or only the named ones), each with the VM as server and as
#       client, and check every captured frame with the scapy and tshark
#       oracles.  LIST is
#         lossless  pingpong (RC 4 KiB and 64 KiB, UD, SRQ, UC) and perftest
#                   (write/read/send/atomic, bw and lat) on a clean link
#         lossy     the RC cases with netem loss or reordering (seeded
#                   per case: bookworm-backports' kernel and tc), or every
#                   20th RoCE frame duplicated (act_gact determ: the same
#                   frames in every run), in the VM, both ways, a fresh VM
#                   per configuration
#         cm        rping between snic's rdma_cm and the kernel's
#         ipv6      RC 4 KiB and UD pingpong, write/read/send bw and the
#                   _lat programs over RoCE v2 IPv6 GIDs (VM fd00:77::2,
#                   snic fd00:77::3), rping between snic's rdma_cm and the
#                   kernel's over those addresses, RC under netem on a
#                   second VM; an IPv6 address nobody has refused as
#                   rdma-core does
#         bench     perftest figures for make bench: snic<->rxe, then
#                   rxe<->rxe between two more VMs
#
# Wiring (all inside a private network namespace this script creates, so
# nothing here is reachable from outside and everything goes with it):
#
#   VM eth0 10.77.0.2 (rxe0) --virtio-net-- tap snictap0 --af_packet-- snic0 10.77.0.3
#                                              | 10.77.0.1 (the programs' TCP exchange)
#   (list ipv6: also fd00:77::2 on eth0, rxe's GID read from sysfs;
#    snic0 ip6=fd00:77::3, its GID 1)
#
# Exit status 0 when every case passed; the per-case verdicts are in
# $SNIC_CASE_DIR/results.txt, each case's outputs and capture slice in
# $SNIC_CASE_DIR/<case>/.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

USAGE="usage: $0 prepare | run LIST [CASE...] | scapy LIST | tshark LIST  (LIST: lossless, lossy, cm, ipv6 or bench)"
mode=${1:-} list=${2:-}
PY=/usr/bin/python3 # Debian's python: the one that sees python3-scapy
# Every BTH opcode each list must put on the wire.  lossless: RC SEND,
# WRITE, READ, ACK, atomics; UC SEND; UD SEND ONLY.
LOSSLESS_OPCODES=0x00,0x01,0x02,0x04,0x06,0x07,0x08,0x0a,0x0c,0x0d,0x0e,0x0f,0x10,0x11,0x12,0x13,0x14,0x20,0x21,0x22,0x64
LOSSY_OPCODES=0x00,0x01,0x02,0x06,0x07,0x08,0x0c,0x0d,0x0e,0x0f,0x11
# cm: the CM MADs (UD SEND ONLY on QP1) and rping's RC SEND.
CM_OPCODES=0x04,0x64
# ipv6: RC SEND (4 KiB and 3 KiB: FIRST, MIDDLE, LAST; 64 B: ONLY),
# WRITE, READ, ACK, FETCH_AND_ADD and its ACK; UD SEND ONLY.  Its
# impaired part (netem, after IPV6_IMPAIRED_FROM): RC SEND, WRITE, ACK.
IPV6_OPCODES=0x00,0x01,0x02,0x04,0x06,0x07,0x08,0x0a,0x0c,0x0d,0x0e,0x0f,0x10,0x11,0x12,0x14,0x64
IPV6_IMPAIRED_OPCODES=0x00,0x01,0x02,0x06,0x07,0x08,0x11
# The capture of the last "run LIST", input of the oracle modes.
SAVED_PCAP=$SNIC_TEST_LOGS/interop/$list.pcap
# ipv6: when its impaired cases began (epoch seconds): netem drops frames
# on both sides of snic's capture point, so PSNs skip from there on.
IPV6_IMPAIRED_FROM=$SAVED_PCAP.impaired-from
# The oracles take ~1-4 ms per frame here: a retransmission flood (the
# known failures of the lossy list make millions of frames) is reported as
# such instead of being read for hours.
FLOOD_FRAMES=300000
# The lossy list moves ~0.8 M frames when all is well (rxe's own go-back-N
# resends whole 64-packet messages); a flood is several millions.  Its
# oracles read the first SAMPLE_FRAMES frames of each program run (all
# 30, ~18,000 frames), not all of them: hours of CPU here otherwise.
[[ ${2:-} == lossy ]] && FLOOD_FRAMES=2000000
SAMPLE_FRAMES=600
HOST_IP=10.77.0.1 VM_IP=10.77.0.2 SNIC_IP=10.77.0.3
# The ipv6 list: RoCE v2 over these (the programs' TCP exchange stays on
# IPv4).  snic's is its GID 1; rxe's GID index is looked up in the VM.
VM_IP6=fd00:77::2 SNIC_IP6=fd00:77::3
VM_GID6_HEX=fd00:0077:0000:0000:0000:0000:0000:0002
# The ipv6 list's neighbour discovery, both ways, as captured at snic's
# port: rxe's solicitation for snic's address to its solicited-node
# multicast group (ff02::1:ff00:3, MAC 33:33:ff:00:00:03: the af_packet
# port must take that group in) answered by snic's solicited
# advertisement, and snic's solicitation for the VM's address answered.
ipv6_nd_check() {
	local nd=$SNIC_CASE_DIR/nd-frames.txt
	tshark -r "$SAVED_PCAP" -n -Y 'icmpv6.type == 135 || icmpv6.type == 136' -T fields \
		-e eth.src -e eth.dst -e ipv6.dst -e icmpv6.type -e icmpv6.nd.ns.target_address \
		-e icmpv6.nd.na.target_address -e icmpv6.nd.na.flag.s >"$nd" 2>/dev/null || snic_fail "tshark failed"
	sed 's/^/  nd| /' "$nd"
	awk -F'\t' -v t="$SNIC_IP6" '$2 == "33:33:ff:00:00:03" && $3 == "ff02::1:ff00:3" && $4 == 135 && $5 == t' "$nd" |
		grep -q . || snic_fail "no solicitation from rxe for $SNIC_IP6 to 33:33:ff:00:00:03 in the capture"
	awk -F'\t' -v t="$SNIC_IP6" '$4 == 136 && $6 == t && $7 == 1' "$nd" |
		grep -q . || snic_fail "no solicited advertisement from snic for $SNIC_IP6"
	awk -F'\t' -v t="$VM_IP6" '$2 == "33:33:ff:00:00:02" && $4 == 135 && $5 == t' "$nd" |
		grep -q . || snic_fail "no solicitation from snic for $VM_IP6 to 33:33:ff:00:00:02"
	awk -F'\t' -v t="$VM_IP6" '$4 == 136 && $6 == t && $7 == 1' "$nd" |
		grep -q . || snic_fail "no solicited advertisement from rxe for $VM_IP6"
	snic_log "neighbour discovery both ways in the capture (solicited-node multicast received)"
}
case $mode in
prepare)
	# Both VMs: Debian 12's kernel (clean links) and bookworm-backports'
	# (impaired links: netem with a seed).
	for k in stable backports; do
		out=$(bash "$SNIC_ROOT/tools/build-rxe-vm.sh" --kernel "$k") ||
			snic_fail "tools/build-rxe-vm.sh --kernel $k failed"
		snic_log "VM ($k kernel) in $out:"
		sed 's/^/  /' "$out/manifest.txt"
	done
	exit 0
	;;
run | scapy | tshark) ;;
*) snic_fail "$USAGE" ;;
esac
[[ $list == lossless || $list == lossy || $list == cm || $list == ipv6 || $list == bench ]] || snic_fail "$USAGE"
case $list in
lossless) opcodes=$LOSSLESS_OPCODES ;;
lossy) opcodes=$LOSSY_OPCODES ;;
cm) opcodes=$CM_OPCODES ;;
ipv6) opcodes=$IPV6_OPCODES ;;
bench) [[ $mode == run ]] || snic_fail "bench: figures only (run)" ;;
esac
if [[ $mode != run ]]; then
	[[ ! -f $SAVED_PCAP.flood ]] ||
		snic_fail "the last run's capture held $(cat "$SAVED_PCAP.flood") frames (a retransmission flood: see the run case's results); not checked"
	[[ -s $SAVED_PCAP ]] || snic_fail "no capture at $SAVED_PCAP (the interop run case makes it)"
	rc=0 min_frames=5000 gaps='' family=() ip6=0
	[[ $list == cm ]] && min_frames=10
	# ipv6: every RoCE frame must be IPv6 (both oracles check it)
	[[ $list == ipv6 ]] && min_frames=3000 family=(--family 6) ip6=1
	# lossy: a sample of each case (SAMPLE_FRAMES below), so PSNs skip
	[[ $list == lossy ]] && gaps=--allow-psn-gaps
	if [[ $mode == scapy && $list == ipv6 && -s $IPV6_IMPAIRED_FROM ]]; then
		# The clean part with PSNs in order, the impaired part (rxe's
		# frames lost before snic's capture point) with gaps allowed.
		t=$(cat "$IPV6_IMPAIRED_FROM")
		if ! editcap -B "$t" "$SAVED_PCAP" "$SNIC_CASE_DIR/clean.pcap" >/dev/null ||
			! editcap -A "$t" "$SAVED_PCAP" "$SNIC_CASE_DIR/impaired.pcap" >/dev/null; then
			snic_fail "editcap could not split $SAVED_PCAP at $t"
		fi
		snic_run check-roce 1000 "$PY" "$SNIC_ROOT/tests/wire/check_roce.py" "$SNIC_CASE_DIR/clean.pcap" \
			--quiet --min-frames "$min_frames" --expect-opcodes "$opcodes" "${family[@]}" || rc=$?
		(( rc == 0 )) || snic_fail "check_roce.py rejected the clean part of $SAVED_PCAP (status $rc)"
		snic_run check-roce-impaired 1000 "$PY" "$SNIC_ROOT/tests/wire/check_roce.py" "$SNIC_CASE_DIR/impaired.pcap" \
			--quiet --min-frames 1000 --allow-psn-gaps --expect-opcodes "$IPV6_IMPAIRED_OPCODES" "${family[@]}" || rc=$?
		(( rc == 0 )) || snic_fail "check_roce.py rejected the impaired part of $SAVED_PCAP (status $rc)"
	elif [[ $mode == scapy ]]; then
		# netem drops after snic's capture point: retransmissions show as
		# PSNs going back (warnings), never as gaps.
		snic_run check-roce 1000 "$PY" "$SNIC_ROOT/tests/wire/check_roce.py" "$SAVED_PCAP" \
			--quiet --min-frames "$min_frames" $gaps --expect-opcodes "$opcodes" "${family[@]}" || rc=$?
		(( rc == 0 )) || snic_fail "check_roce.py rejected $SAVED_PCAP (status $rc)"
	else
		snic_need_cmd tshark
		# shellcheck disable=SC2046 # one opcode per word
		snic_run check-tshark 1000 env SNIC_WIRE_IP6="$ip6" bash "$SNIC_ROOT/tests/wire/check_tshark.sh" "$SAVED_PCAP" \
			$(tr , ' ' <<<"$opcodes") || rc=$?
		(( rc == 0 )) || snic_fail "check_tshark.sh rejected $SAVED_PCAP (status $rc)"
		if [[ $list == cm ]]; then
			# rping's CM exchange with the kernel's rdma_cm, both ways:
			# every message dissected as InfiniBand CM, no expert info
			tshark -r "$SAVED_PCAP" -n -Y 'infiniband.bth.destqp == 1' -T fields \
				-e frame.number -e ip.src -e _ws.col.Info -e _ws.expert.message \
				>"$SNIC_CASE_DIR/cm-frames.txt" 2>/dev/null || snic_fail "tshark failed"
			sed 's/^/  cm-frames| /' "$SNIC_CASE_DIR/cm-frames.txt"
			for a in ConnectRequest ConnectReply ReadyToUse DisconnectRequest DisconnectReply; do
				for ip in "$SNIC_IP" "$VM_IP"; do
					awk -F'\t' -v ip="$ip" '$2 == ip' "$SNIC_CASE_DIR/cm-frames.txt" |
						grep -q "CM: $a" || snic_fail "no CM $a from $ip dissected in the capture"
				done
			done
			attrs=$(awk -F'\t' '$4 != ""' "$SNIC_CASE_DIR/cm-frames.txt")
			[[ -z $attrs ]] || snic_fail "tshark expert info on CM frames: $attrs"
		fi
		if [[ $list == ipv6 ]]; then
			ipv6_nd_check
			# rping's CM exchange over IPv6, both ways
			snic_run check-cm-ip6 300 bash "$SNIC_ROOT/tests/wire/check_cm_ip6.sh" "$SAVED_PCAP" \
				"$SNIC_IP6" "$VM_IP6" ConnectRequest ConnectReply ReadyToUse \
				DisconnectRequest DisconnectReply || snic_fail "the IPv6 CM exchange (check_cm_ip6.sh)"
		fi
	fi
	snic_log "$mode oracle: every RoCE frame of $SAVED_PCAP conforms"
	exit 0
fi
snic_private_netns "$0" "$@"
[[ ${SNIC_IN_NETNS:-} == 1 ]] || snic_fail "needs a private network namespace (run as root)"
shift 2
ONLY=("$@")
if [[ $list == ipv6 ]]; then
	# rping resolves its address with getaddrinfo's default AI_ADDRCONFIG,
	# which returns IPv6 addresses only on a host with an IPv6 address
	# other than ::1; this namespace's tap carries IPv4 only: lo gets a
	# documentation address (RFC 3849), as any host with IPv6 has one
	ip -6 addr add 2001:db8::1/128 dev lo || snic_fail "no IPv6 address for lo"
fi

EMU=$SNIC_BUILD/bin/snic-emu
CTL=$SNIC_BUILD/bin/snicctl
VMCTL=$SNIC_ROOT/tests/interop/vmctl.py
snic_need_exec "$EMU" "$CTL" "$PY"
snic_need_cmd qemu-system-x86_64 ip editcap capinfos tshark ibv_rc_pingpong ib_write_bw
VM_STABLE=$(bash "$SNIC_ROOT/tools/build-rxe-vm.sh" --print-dir) ||
	snic_fail "the VM is not built: run 'tests/interop/interop.sh prepare' (tools/build-rxe-vm.sh)"
# Impaired links (the lossy list, the ipv6 list's impaired cases) run on
# bookworm-backports' kernel and tc, whose netem takes a seed; clean links
# on Debian 12's own kernel.
VM_BPO=
if [[ $list == lossy || $list == ipv6 ]]; then
	VM_BPO=$(bash "$SNIC_ROOT/tools/build-rxe-vm.sh" --kernel backports --print-dir) ||
		snic_fail "the backports VM is not built: run 'tests/interop/interop.sh prepare' (tools/build-rxe-vm.sh --kernel backports)"
fi
VM=$VM_STABLE

TAP=snictap0
VM_GID4=1  # rxe: index 0 is the IPv6 link-local GID, 1 the RoCE v2 IPv4 one
VM_GID=$VM_GID4 # the one the programs use (the ipv6 list: vm_ipv6_up)
SNIC_GID=0
NIC_IP6=
if [[ $list == ipv6 ]]; then
	SNIC_GID=1 # snic: GID 1 is its ip6= address
	NIC_IP6=,ip6=$SNIC_IP6
fi
D=$SNIC_CASE_DIR
PCAP=$D/snic.pcap
RESULTS=$D/results.txt
: >"$RESULTS"
rm -f -- "$SAVED_PCAP" "$SAVED_PCAP.flood" "$IPV6_IMPAIRED_FROM"
QEMU_PID='' QEMU_PID2=''
RUN_DIR=$(mktemp -d /dev/shm/snic-interop.XXXXXX)

interop_cleanup() {
	local rc=$?
	if [[ -n $SNIC_EMU_PID ]]; then
		snic__kill_wait "$SNIC_EMU_PID" 10
		SNIC_EMU_PID=
	fi
	local q
	for q in "$QEMU_PID" "$QEMU_PID2"; do
		[[ -z $q ]] || snic__kill_wait "$q" 5
	done
	QEMU_PID='' QEMU_PID2=''
	ip link del "$TAP" 2>/dev/null || true
	rm -rf -- "$RUN_DIR"
	(exit "$rc")
	snic__cleanup
}
trap interop_cleanup EXIT

# ------------------------------------------------------------------ the VM

# The VM vm() talks to and vm_boot boots: its control socket, network
# back end, MAC and IPv4 address.  The tap VM by default; make bench's
# rxe<->rxe pair two others (bench_rxe_pair).
VM_SOCK=$D/ctl.sock VM_NET="tap,id=n0,ifname=$TAP,script=no,downscript=no"
VM_MAC=52:54:00:4d:00:02 VM_ADDR=$VM_IP

# vm CMD...: run one shell line in the VM (limit: SECS from $VM_SECS, 60).
vm() {
	local c=$*
	c=${c//$'\n'/ }
	timeout -k 5 $(( $(snic_secs "${VM_SECS:-60}") + 10 )) \
		"$PY" "$VMCTL" "$VM_SOCK" "$(snic_secs "${VM_SECS:-60}")" "$c"
}

accel=tcg
# KVM only where the CPU really has it: /dev/kvm alone is not enough here
# (kvm_pvm without vmx/svm; a Debian kernel hangs at boot under it).
if [[ -w /dev/kvm ]] && grep -Eqw 'vmx|svm' /proc/cpuinfo; then
	accel=kvm
fi
accel=${SNIC_VM_ACCEL:-$accel}

tap_up() {
	ip tuntap add dev "$TAP" mode tap || snic_fail "cannot create tap $TAP"
	# Only the programs' frames on the tap: no IPv6 autoconfiguration here.
	sysctl -qw "net.ipv6.conf.$TAP.disable_ipv6=1" || true
	# The default 1000-frame queue drops snic's bursts (PLATFORM-NOTES).
	ip link set "$TAP" mtu 1500 txqueuelen 10000 up
	ip addr add "$HOST_IP/24" dev "$TAP"
}

# Each boot's console in its own file (the guest's kernel warnings: the
# fault check below reads it).
VM_BOOTS=0 VM_CONSOLE= VM_SHOWN=
vm_boot() {
	local t0=$SECONDS
	VM_BOOTS=$(( VM_BOOTS + 1 ))
	VM_CONSOLE=$D/vm-console-$VM_BOOTS.log
	rm -f -- "$VM_SOCK"
	snic_log "boot $VM_BOOTS: Debian kernel + rxe initramfs from $VM ($accel)"
	[[ $VM == "$VM_SHOWN" ]] || sed 's/^/  vm| /' "$VM/manifest.txt"
	VM_SHOWN=$VM
	# no_timer_check: under TCG on a loaded machine the kernel's check
	# that the IO-APIC timer ticks can miss its window and panic the boot
	# ("IO-APIC + timer doesn't work!", seen once at load ~8).
	qemu-system-x86_64 -M pc -accel "$accel" -cpu max -m 768 -smp 1 \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$VM/vmlinux" -initrd "$VM/initrd.cpio.gz" \
		-append "console=ttyS0 panic=-1 quiet no_timer_check" \
		-serial "file:$VM_CONSOLE" \
		-device virtio-serial-pci \
		-chardev "socket,id=ctl,path=$VM_SOCK,server=on,wait=off" \
		-device virtserialport,chardev=ctl,name=snic.ctl \
		-netdev "$VM_NET" -device virtio-net-pci,netdev=n0,mac="$VM_MAC" \
		>"$D/qemu.log" 2>&1 </dev/null &
	QEMU_PID=$!
	local out gid4 a b c e
	IFS=. read -r a b c e <<<"$VM_ADDR"
	gid4=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$e")
	out=$(VM_SECS=90 vm "ip link set eth0 mtu 1500 up && ip addr add $VM_ADDR/24 dev eth0 &&
		rdma link add rxe0 type rxe netdev eth0 && cat /sys/class/infiniband/rxe0/ports/1/gids/$VM_GID4 &&
		uname -r") || {
		snic_tail "$VM_CONSOLE" 30
		snic_tail "$D/qemu.log" 10
		snic_fail "the VM ($VM_ADDR) did not come up with rxe0 (output: $out)"
	}
	[[ $out == *"$gid4"* ]] ||
		snic_fail "rxe0 GID $VM_GID4 is not $VM_ADDR's IPv4-mapped GID: $out"
	snic_log "VM up with rxe0 after $(( SECONDS - t0 ))s (kernel $(tail -n 1 <<<"$out"))"
	(( VM_BOOTS > 1 )) ||
		vm "ibv_devinfo -v -d rxe0 | grep -E 'fw_ver|max_qp_rd_atom|max_qp_init_rd_atom|active_mtu'" |
		sed 's/^/  vm| /'
}

vm_stop() {
	[[ -n $QEMU_PID ]] || return 0
	snic__kill_wait "$QEMU_PID" 5
	QEMU_PID=
}

# The guest kernel's own faults: from its console, the virtio-net
# transmit watchdog, an oops; from the case's VM side (DIR/vm.out), the
# guest frozen: its control channel silent past the limit of a command
# that `timeout` inside the guest ends 30 s (x scale) earlier (seen at
# load 25: the whole guest still for ~4 min, no frame sent, then back).
# Status 0 (and the evidence on stdout) when there is one.
GUEST_FAULT='NETDEV WATCHDOG|BUG:|Oops|general protection fault|Call Trace|Kernel panic'
guest_fault() { # DIR
	local rc=1
	[[ -n $VM_CONSOLE ]] && grep -E "$GUEST_FAULT" "$VM_CONSOLE" && rc=0
	grep -h '^vmctl: no answer within' "$1/vm.out" 2>/dev/null && rc=0
	return "$rc"
}

# One VM per link configuration (SPEC: netem parameters, empty for a clean
# link): a fresh guest, its netem set before any RoCE traffic and never
# changed while it runs.  Changing netem under rxe's traffic is what
# crashed Debian's 6.1.192 guest (rxe_skb_tx_dtor on skbs the qdisc
# released after their QP had gone), and the reboot is 3-11 s.
CUR_NETEM='unset'
vm_config() { # SPEC
	vm_stop
	VM=$VM_STABLE
	[[ -n $1 ]] && VM=$VM_BPO
	vm_boot
	[[ $list == ipv6 ]] && vm_ipv6_up
	if [[ $1 == determ* ]]; then
		determ_setup "$1"
	elif [[ -n $1 ]]; then
		netem_setup "$1"
	fi
	if [[ -n $1 && $list == ipv6 && ! -s $IPV6_IMPAIRED_FROM ]]; then
		mkdir -p "$(dirname "$IPV6_IMPAIRED_FROM")"
		date +%s.%N >"$IPV6_IMPAIRED_FROM"
	fi
	CUR_NETEM=$1
}

# The ipv6 list: an IPv6 address on the VM's eth0 (IPv6 stays enabled in
# the VM); rxe adds a RoCE v2 GID for it (ib_core's roce_gid_mgmt, from a
# work queue), whose index is read from sysfs rather than assumed.
vm_ipv6_up() {
	local out p=/sys/class/infiniband/rxe0/ports/1
	# No duplicate address detection (busybox's ip has no "nodad"): the
	# address is usable, and its GID added, at once.  The table fills
	# from index 0; the first 16 entries are plenty for three addresses.
	out=$(vm "echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad && ip -6 addr add $VM_IP6/64 dev eth0 &&
		for t in \$(seq 100); do for i in \$(seq 0 15); do
		[ \"\$(cat $p/gids/\$i)\" = $VM_GID6_HEX ] && [ \"\$(cat $p/gid_attrs/types/\$i 2>/dev/null)\" = 'RoCE v2' ] &&
		echo gid-index \$i && exit 0; done; sleep 0.1; done;
		echo 'no RoCE v2 GID for $VM_IP6:'; grep -v ':0000:0000:0000:0000:0000:0000:0000:0000\$' $p/gids/*; exit 1") ||
		snic_fail "rxe0 has no RoCE v2 GID for $VM_IP6 within 10 s: $out"
	VM_GID=$(awk '/^gid-index/ { print $2 }' <<<"$out")
	[[ $VM_GID =~ ^[0-9]+$ ]] || snic_fail "no GID index read from the VM: $out"
	snic_log "rxe0: $VM_IP6 is RoCE v2 GID index $VM_GID; snic0: $SNIC_IP6 is GID $SNIC_GID"
	# The kernel sends no neighbour solicitation while eth0's link-local
	# address is tentative (ndisc_send_ns: no source address), and rxe's
	# modify to RTR waits only 1 s for the peer's MAC
	# (rdma_addr_find_l2_eth_by_grh): the first case would fail with
	# "Failed to modify QP to RTR".  Wait for the link-local address's
	# duplicate address detection (IFA_F_TENTATIVE 0x40) to end.
	out=$(vm "for t in \$(seq 100); do n=0; while read -r a i l s f d; do
		[ \$d = eth0 ] && [ \$(( 0x\$f & 0x40 )) -ne 0 ] && n=1; done </proc/net/if_inet6;
		[ \$n = 0 ] && exit 0; sleep 0.1; done; cat /proc/net/if_inet6; exit 1") ||
		snic_fail "eth0 in the VM still has tentative IPv6 addresses after 10 s: $out"
}

# The ipv6 list: rxe reached snic's address through neighbour discovery
# (its solicitation goes to 33:33:ff:00:00:03, which snic's af_packet port
# must receive, and snic's advertisement answers it): the VM's neighbour
# entry for it must hold snic's MAC.
vm_ipv6_neigh_check() {
	local out mac
	# snic-emu's start-up line: "snic0: MAC 02:.. IPv4 ..."
	mac=$(awk '$1 == "snic0:" && $2 == "MAC" { print $3; exit }' "$NIC_LOG")
	[[ -n $mac ]] || snic_fail "no MAC of snic0 in $NIC_LOG"
	out=$(vm "ip -6 neigh show $SNIC_IP6 dev eth0") || true
	snic_log "VM's neighbour entry for $SNIC_IP6: $out (snic0's MAC: $mac)"
	[[ $out == *lladdr* && $out != *FAILED* ]] ||
		snic_fail "the VM never resolved $SNIC_IP6 by neighbour discovery: $out"
	[[ $out == *"lladdr $mac"* ]] ||
		snic_fail "the VM's neighbour entry for $SNIC_IP6 is not snic0's MAC $mac: $out"
}

# The ipv6 list: what rdma-core gives for IPv6 addresses snic's rdma_cm
# cannot use: binding one no NIC has (rdma_bind_addr: EADDRNOTAVAIL), and
# resolving one on the link that nobody answers neighbour discovery for
# (RDMA_CM_EVENT_ADDR_ERROR); the NIC unharmed.
CM6_NOBODY=fd00:77::99
# rping ROLE must fail at once (not time out) printing WANT.
rping_must_fail() { # "ROLE ARGS" WANT
	local out rc=0
	# shellcheck disable=SC2086 # words by design
	out=$(timeout -k 5 "$(snic_secs 20)" rping $1 -p 18998 -C 1 2>&1 </dev/null) || rc=$?
	snic_log "  snic: rping $1 -> exit $rc: $(tr '\n' ' ' <<<"$out")"
	(( rc != 0 && rc != 124 )) || snic_fail "rping $1 did not fail at once (exit $rc)"
	[[ $out == *"$2"* ]] || snic_fail "rping $1: no '$2': $out"
}
cm_ipv6_negative_check() {
	rping_must_fail "-s -a $CM6_NOBODY" "rdma_bind_addr: Cannot assign requested address"
	rping_must_fail "-c -a $CM6_NOBODY" "RDMA_CM_EVENT_ADDR_ERROR"
	kill -0 "$SNIC_EMU_PID" 2>/dev/null || snic_fail "snic-emu died after the IPv6 rping errors"
	snic_log "IPv6 addresses nobody has: EADDRNOTAVAIL (bind) and ADDR_ERROR (resolve), as rdma-core gives"
}

NIC_LOG=$D/snic-emu.log
nic_start() {
	local i
	snic_log "start: snic-emu --run-dir $RUN_DIR --nic snic0,port=net_af_packet0,ip=$SNIC_IP$NIC_IP6,pcap=$PCAP,netdev=off -- --vdev=net_af_packet0,iface=$TAP,framecnt=4096"
	# A private EAL prefix: other snic tests on this machine may run a
	# NIC named snic0 at the same time.  No kernel interface for the NIC:
	# the host's side of the tap has the same subnet already.
	env -u LD_LIBRARY_PATH "$EMU" --run-dir "$RUN_DIR" \
		--nic "snic0,port=net_af_packet0,ip=$SNIC_IP$NIC_IP6,pcap=$PCAP,netdev=off" -- \
		"--vdev=net_af_packet0,iface=$TAP,framecnt=4096" "--file-prefix=snic-interop-$$" \
		>"$NIC_LOG" 2>&1 </dev/null &
	SNIC_EMU_PID=$!
	for (( i = 0; i < $(snic_secs 40) * 10; i++ )); do
		grep -q '^ready' "$NIC_LOG" && break
		kill -0 "$SNIC_EMU_PID" 2>/dev/null ||
			{ SNIC_EMU_PID=; snic_tail "$NIC_LOG" 30; snic_fail "snic-emu exited before 'ready'"; }
		sleep 0.1
	done
	grep -q '^ready' "$NIC_LOG" || { snic_tail "$NIC_LOG" 30; snic_fail "snic-emu not ready within 40 s"; }
	export SNIC_RUN_DIR=$RUN_DIR
	export LD_LIBRARY_PATH=$SNIC_BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	snic_log "snic0 ready (pid $SNIC_EMU_PID)"
}

# SIGTERM; it must exit 0 and remove its runtime files.
nic_stop() {
	local pid=$SNIC_EMU_PID rc=0
	kill -TERM "$pid" 2>/dev/null || true
	timeout "$(snic_secs 20)" tail --pid="$pid" -f /dev/null || true
	kill -0 "$pid" 2>/dev/null && snic_fail "snic-emu ignored SIGTERM for 20 s"
	wait "$pid" || rc=$?
	SNIC_EMU_PID=
	(( rc == 0 )) || { snic_tail "$NIC_LOG" 30; snic_fail "snic-emu exited with status $rc after SIGTERM"; }
	[[ ! -e $RUN_DIR/snic0.bar ]] || snic_fail "snic-emu left snic0.bar in $RUN_DIR"
	snic_log "snic-emu stopped: exit 0, runtime files removed"
}

# ------------------------------------------------------------------ cases

# Lines of snicctl counters worth keeping beside a failure.
ctl_snapshot() { # FILE
	"$CTL" --json show snic0 >"$1" 2>&1 || true
}

declare -a C_NAME=() C_KIND=() C_PROG=() C_ARGS=() C_VMARGS=() C_NETEM=()
# case_def NAME KIND(pp|pt) PROG "ARGS (both sides)" "EXTRA ARGS on the rxe side" [NETEM]
case_def() {
	C_NAME+=("$1") C_KIND+=("$2") C_PROG+=("$3") C_ARGS+=("$4") C_VMARGS+=("${5:-}") C_NETEM+=("${6:-}")
}

# Limit of one program run: a known failure under netem is a hang.
PROG_SECS=90
[[ $list == lossy ]] && PROG_SECS=60
[[ $list == cm ]] && PROG_SECS=30
[[ $list == bench ]] && PROG_SECS=180
# Volumes are modest: the VM runs under TCG, and the oracle cases read
# every frame of the capture (about 1 ms of CPU per frame each).
if [[ $list == lossless ]]; then
	case_def rc-4k      pp ibv_rc_pingpong  "-s 4096 -m 1024 -n 100 -c"
	case_def rc-64k     pp ibv_rc_pingpong  "-s 65536 -m 1024 -n 10 -c"
	case_def ud         pp ibv_ud_pingpong  "-s 1024 -n 100 -c"
	case_def srq        pp ibv_srq_pingpong "-s 4096 -m 1024 -q 4 -n 25 -c"
	case_def uc         pp ibv_uc_pingpong  "-s 4096 -m 1024 -n 100 -c"
	# 3 KiB: FIRST, MIDDLE and LAST packets at path MTU 1024.
	case_def write-bw   pt ib_write_bw   "-n 200 -s 3072 -F"
	# READ/atomic with no -o on either side: both offer 128 outstanding
	# requests (max_qp_rd_atom), and perftest uses the device's figure.
	case_def read-bw    pt ib_read_bw    "-n 200 -s 3072 -F"
	case_def send-bw    pt ib_send_bw    "-n 200 -s 3072 -F"
	case_def atomic-bw  pt ib_atomic_bw  "-n 200 -A CMP_AND_SWAP -F"
	case_def write-lat  pt ib_write_lat  "-n 200 -s 64 -F"
	case_def read-lat   pt ib_read_lat   "-n 200 -s 64 -F"
	case_def send-lat   pt ib_send_lat   "-n 200 -s 64 -F"
	case_def atomic-lat pt ib_atomic_lat "-n 200 -A FETCH_AND_ADD -F"
elif [[ $list == bench ]]; then
	# make bench (tools/bench.sh): perftest between snic and rxe, figures
	# printed as "BENCH" lines; the VM runs under TCG on this machine.
	case_def write-bw   pt ib_write_bw   "-n 1000 -s 65536 -F"
	case_def read-bw    pt ib_read_bw    "-n 1000 -s 65536 -F"
	case_def send-bw    pt ib_send_bw    "-n 1000 -s 65536 -F"
	case_def write-lat  pt ib_write_lat  "-n 1000 -s 64 -F"
	case_def read-lat   pt ib_read_lat   "-n 1000 -s 64 -F"
	case_def send-lat   pt ib_send_lat   "-n 1000 -s 64 -F"
elif [[ $list == ipv6 ]]; then
	# RoCE v2 over IPv6 GIDs (issue 15): the lossless list's programs
	# that carry data, with snic's GID 1 and rxe's IPv6 GID.
	case_def rc-4k      pp ibv_rc_pingpong  "-s 4096 -m 1024 -n 100 -c"
	case_def ud         pp ibv_ud_pingpong  "-s 1024 -n 100 -c"
	case_def write-bw   pt ib_write_bw   "-n 200 -s 3072 -F"
	case_def read-bw    pt ib_read_bw    "-n 200 -s 3072 -F"
	case_def send-bw    pt ib_send_bw    "-n 200 -s 3072 -F"
	# The latency programs over the IPv6 GIDs (-x).
	case_def write-lat  pt ib_write_lat  "-n 200 -s 64 -F"
	case_def read-lat   pt ib_read_lat   "-n 200 -s 64 -F"
	case_def send-lat   pt ib_send_lat   "-n 200 -s 64 -F"
	case_def atomic-lat pt ib_atomic_lat "-n 200 -A FETCH_AND_ADD -F"
	# rping over the IPv6 addresses: snic's rdma_cm and the kernel's,
	# the CM MADs over IPv6 (check_cm_ip6.sh in the tshark oracle)
	case_def rping      cm rping         "-C 100 -S 64 -v -V"
	# RC under loss, reordering and duplication at once, over IPv6 (a
	# fresh VM with netem set, vm_config): both must recover, the data
	# checked (-c).  Volumes small enough for the oracles to read every
	# frame.
	# Seeded (netem_reseed; no correlation, which netem would start
	# from an unseeded value).
	n6="loss 2% duplicate 2% delay 2ms reorder 1%"
	case_def rc-4k-impaired    pp ibv_rc_pingpong "-s 4096 -m 1024 -n 200 -c" "" "$n6"
	case_def write-bw-impaired pt ib_write_bw     "-n 100 -s 4096 -F" "" "$n6"
elif [[ $list == cm ]]; then
	# The connection managers, snic's and the kernel's: 64-byte pings,
	# each one's data checked.
	case_def rping      cm rping         "-C 100 -S 64 -v -V"
else
	# Impairments in the VM, on RoCE frames both ways, one fresh VM per
	# configuration (vm_config), the backports kernel.  Duplication is
	# reproducible (determ_setup): every 20th frame, the same ordinals in
	# every run.  Loss and reordering are netem's draws, seeded before
	# each program run (netem_reseed: a fixed seed per case, side and
	# direction): random-looking, the same draw for the Nth frame in
	# every run.  Not periodic: periodic ones held rxe's go-back-N for
	# good - every 50th frame dropped was the first of its 50-frame
	# retransmission pass every time (rc-64k-loss/vm-server, 90 s), and
	# with every 10th frame delayed 2 ms each of its passes ended in
	# another sequence NAK (write-bw-reorder/snic-server: 191,000 frames
	# in 180 s, unfinished).
	for n in "loss 2%" "delay 2ms reorder 1%" "determ duplicate 20"; do
		tag=${n#determ }
		tag=${tag%% *}
		case $tag in drop) tag=loss ;; delay) tag=reorder ;; esac
		case_def "rc-4k-$tag"    pp ibv_rc_pingpong "-s 4096 -m 1024 -n 300 -c" "" "$n"
		case_def "rc-64k-$tag"   pp ibv_rc_pingpong "-s 65536 -m 1024 -n 50 -c" "" "$n"
		case_def "write-bw-$tag" pt ib_write_bw "-n 300 -s 65536 -F" "" "$n"
		case_def "read-bw-$tag"  pt ib_read_bw  "-n 300 -s 65536 -F" "" "$n"
		case_def "send-bw-$tag"  pt ib_send_bw  "-n 300 -s 65536 -F" "" "$n"
	done
fi

# A CASE that names none of LIST's cases is a typo (say, with the
# direction a result line adds: read-bw-loss/vm-server): say so, rather
# than start nothing and fail later on the emulator that never ran.
for n in "${ONLY[@]}"; do
	printf '%s\n' "${C_NAME[@]}" | grep -qxF -- "$n" ||
		snic_fail "no case '$n' in list $list (cases: ${C_NAME[*]})"
done

# The flag that names the GID index differs: pingpong -g, perftest -x.
gid_flag() { # KIND IDX
	if [[ $1 == pp ]]; then echo "-g $2"; else echo "-x $2"; fi
}

# Result line each program prints when it completed.
result_ok() { # KIND FILE
	if [[ $1 == cm ]]; then
		# rping -v: every ping's data (rdma-ping-N) printed, checked
		# (-V) against what was sent; all N of them
		local n want=${C_ARGS[$CUR_I]#*-C }
		want=${want%% *}
		n=$(grep -o 'rdma-ping-[0-9]*:' "$2" | sort -u | wc -l)
		(( n == want ))
	elif [[ $1 == pp ]]; then
		grep -Eq '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$2"
	else
		# perftest: "#bytes #iterations ..." then a row of figures
		grep -Eq '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$2"
	fi
}

PORT=18000
# The VM's server of a pair (started into /tmp/s.out, /tmp/s.rc): wait
# for it to end; its output on stdout, its exit status as ours.
# The server ran under `timeout SECS` in the guest, so /tmp/s.rc fills
# within SECS of its start by the guest's clock; the host's limit is 30 s
# (x scale) more, so that only a frozen guest exceeds it (guest_fault),
# not a slow one (an iteration count here would be).
vm_server_end() { # SECS
	VM_SECS=$(( $1 / SNIC_TIMEOUT_SCALE + 10 )) vm "while [ ! -s /tmp/s.rc ]; do sleep 0.2; done; cat /tmp/s.out; exit \$(cat /tmp/s.rc)"
}

# snic's server of a pair: stopped when the client failed, then reaped;
# its exit status as ours.
host_server_end() { # PID CLIENT_FAILED(0|1)
	local rc=0
	if (( $2 )); then
		sleep 1
		kill -TERM "$1" 2>/dev/null || true
	fi
	wait "$1" || rc=$?
	snic__untrack "$1"
	return "$rc"
}

# Both sides' output into the log, their exit statuses into VERDICT.
sides_verdict() { # HOUT VOUT HRC VRC
	sed 's/^/    snic| /' "$1"
	sed 's/^/    vm  | /' "$2"
	(( $3 == 0 )) || VERDICT+="snic side exit $3; "
	(( $4 == 0 )) || VERDICT+="rxe side exit $4; "
}

# The listener of an rdma_cm program is no TCP socket: wait until the CM
# that owns it shows it (the kernel's: `rdma resource show cm_id`; snic's:
# snicctl's listener table).  Status 0 once it does.
vm_cm_listening() { # PORT
	vm "for i in \$(seq 300); do rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -q ':$1\b' && exit 0; sleep 0.1; done; exit 1"
}
snic_cm_listening() { # PORT PID
	local i
	for (( i = 0; i < 300; i++ )); do
		"$CTL" show snic0 2>/dev/null | grep -Eq "listen .* port $1 " && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Status 0 when an rping side's exit status RC is rping's own teardown
# race, not a failure of the exchange: every ping verified (result_ok),
# then the DISCONNECTED event, then its cm thread's next
# rdma_get_cm_event on the channel main had already destroyed ("Bad file
# descriptor"; rping's cm_thread exits -1 on any error there, whichever
# CM is underneath).  Seen once in ~15 runs, rxe's rping client.
rping_teardown_race() { # OUT RC
	(( $2 == 255 )) && result_ok cm "$1" &&
		grep -q 'DISCONNECT EVENT' "$1" &&
		[[ $(grep -c 'rdma_get_cm_event: Bad file descriptor' "$1") == 1 ]] &&
		snic_log "  (rping's teardown race in $(basename "$1"): exit 255 after every ping was verified; not counted)"
}

# rping between the two connection managers: snic's (our librdmacm.so.1
# and the firmware's QP1) and the kernel's (rdma_ucm), IBTA CM MADs
# (REQ/REP/RTU, DREQ/DREP) between two implementations.  Sets VERDICT.
run_cm_pair() { # I SERVER(vm|snic) DIR
	local i=$1 srv=$2 cd=$3 prog=${C_PROG[$1]} args=${C_ARGS[$1]} secs hrc=0 vrc=0 hpid sip
	local hout=$cd/snic.out vout=$cd/vm.out scmd ccmd
	secs=$(snic_secs "$PROG_SECS")
	PORT=$(( PORT + 1 ))
	if [[ $srv == vm ]]; then sip=$VM_IP; else sip=$SNIC_IP; fi
	if [[ $list == ipv6 ]]; then
		if [[ $srv == vm ]]; then sip=$VM_IP6; else sip=$SNIC_IP6; fi
	fi
	scmd="$prog -s -a $sip -p $PORT $args" ccmd="$prog -c -a $sip -p $PORT $args"
	VERDICT=
	if [[ $srv == vm ]]; then
		snic_log "  vm server: $scmd"
		vm "rm -f /tmp/s.*; ( timeout $secs $scmd >/tmp/s.out 2>&1; echo \$? >/tmp/s.rc ) &" ||
			{ VERDICT="rxe server did not start"; return; }
		vm_cm_listening "$PORT" || VERDICT+="the kernel's rdma_cm shows no listener on $PORT; "
		snic_log "  snic client: $ccmd"
		# shellcheck disable=SC2086 # words by design
		timeout -k 5 "$secs" $ccmd >"$hout" 2>&1 </dev/null || hrc=$?
		vm_server_end "$secs" >"$vout" 2>&1 || vrc=$?
	else
		snic_log "  snic server: $scmd"
		# shellcheck disable=SC2086 # words by design
		timeout -k 5 "$secs" $scmd >"$hout" 2>&1 </dev/null &
		hpid=$!
		SNIC_BG_PIDS+=("$hpid")
		if snic_cm_listening "$PORT" "$hpid"; then
			snic_log "  vm client: $ccmd"
			VM_SECS=$(( secs / SNIC_TIMEOUT_SCALE + 10 )) vm "timeout $secs $ccmd" >"$vout" 2>&1 || vrc=$?
		else
			VERDICT+="snic's CM shows no listener on $PORT; "
		fi
		host_server_end "$hpid" "$(( vrc != 0 || ${#VERDICT} > 0 ))" || hrc=$?
	fi
	CUR_I=$i
	rping_teardown_race "$hout" "$hrc" && hrc=0
	rping_teardown_race "$vout" "$vrc" && vrc=0
	sides_verdict "$hout" "$vout" "$hrc" "$vrc"
	result_ok cm "$hout" || VERDICT+="not every ping verified on the snic side; "
	result_ok cm "$vout" || VERDICT+="not every ping verified on the rxe side; "
}

# One program run: server on one side, client on the other.  Sets VERDICT.
run_pair() { # I SERVER(vm|snic) DIR
	[[ ${C_KIND[$1]} == cm ]] && { run_cm_pair "$@"; return; }
	local i=$1 srv=$2 cd=$3 prog=${C_PROG[$1]} kind=${C_KIND[$1]}
	local args=${C_ARGS[$1]} vmx=${C_VMARGS[$1]} secs hrc=0 vrc=0 hpid
	secs=$(snic_secs "$PROG_SECS")
	PORT=$(( PORT + 1 ))
	local vmcmd hcmd
	vmcmd="$prog -d rxe0 $(gid_flag "$kind" "$VM_GID") -p $PORT $args $vmx"
	# Under netem, rxe's pingpong QPs linger as snic's do: peer-linger.c
	# (ibv_rc_pingpong has no closing handshake; a lost last ACK would
	# otherwise be retried for ever against a destroyed QP).
	[[ $kind == pp && -n ${C_NETEM[$i]} ]] &&
		vmcmd="env LD_PRELOAD=/usr/lib/snic-peer-linger.so SNIC_PEER_LINGER_MS=2000 $vmcmd"
	# The argument strings are words by design (no quoting inside).
	read -r -a hcmd <<<"$prog -d snic0 $(gid_flag "$kind" $SNIC_GID) -p $PORT $args"
	local hout=$cd/snic.out vout=$cd/vm.out
	if [[ $srv == vm ]]; then
		snic_log "  vm server: $vmcmd"
		vm "rm -f /tmp/s.*; ( timeout $secs $vmcmd >/tmp/s.out 2>&1; echo \$? >/tmp/s.rc ) & \
			for i in \$(seq 300); do netstat -ltn | grep -q ':$PORT ' && exit 0; sleep 0.1; done; exit 1" ||
			{ VERDICT="rxe server never listened on $PORT"; vm "cat /tmp/s.out" >"$vout" 2>&1; return; }
		snic_log "  snic client: ${hcmd[*]} $VM_IP"
		timeout -k 5 "$secs" "${hcmd[@]}" "$VM_IP" >"$hout" 2>&1 </dev/null || hrc=$?
		vm_server_end "$secs" >"$vout" 2>&1 || vrc=$?
	else
		snic_log "  snic server: ${hcmd[*]}"
		timeout -k 5 "$secs" "${hcmd[@]}" >"$hout" 2>&1 </dev/null &
		hpid=$!
		SNIC_BG_PIDS+=("$hpid")
		if ! snic_wait_listen "$PORT" 30 "$hpid"; then
			kill -TERM "$hpid" 2>/dev/null || true
			wait "$hpid" || true
			snic__untrack "$hpid"
			VERDICT="snic server never listened on $PORT"
			return
		fi
		snic_log "  vm client: $vmcmd $HOST_IP"
		VM_SECS=$(( secs / SNIC_TIMEOUT_SCALE + 10 )) vm "timeout $secs $vmcmd $HOST_IP" >"$vout" 2>&1 || vrc=$?
		host_server_end "$hpid" "$(( vrc != 0 ))" || hrc=$?
	fi
	VERDICT=
	sides_verdict "$hout" "$vout" "$hrc" "$vrc"
	# Pingpong prints its result on both sides; perftest on its client.
	if [[ $kind == pp || $srv == vm ]]; then
		result_ok "$kind" "$hout" || VERDICT+="no result line on the snic side; "
	fi
	if [[ $kind == pp || $srv == snic ]]; then
		result_ok "$kind" "$vout" || VERDICT+="no result line on the rxe side; "
	fi
}

# The capture slice of a failed case, for whoever looks into it: headers
# only (128 bytes a frame), since a retransmission flood is millions of
# frames.
# make bench: the client's perftest result row (FILE: the client's
# output), as "BENCH PROGRAM LABEL ROW".
bench_row() { # I LABEL FILE
	awk -v p="${C_PROG[$1]}" -v d="$2" '/#bytes/ { hdr = 1; next }
		hdr && $1 ~ /^[0-9]+$/ { print "BENCH", p, d, $0; exit }' "$3"
}

# make bench: the same perftest programs between two rxe VMs, the
# software RoCE a user of this machine would otherwise run at both ends.
# The two guests are wired back to back by QEMU's socket back end (no
# host interface); the tap VM and snic-emu are stopped first, so the two
# TCG guests share the 2 cores with nothing of ours.  Two TCG guests are
# slow: BENCH_RXE_N iterations instead of the snic pairs' 1000.
BENCH_RXE_N=200
BENCH_RXE_A=10.78.0.10 BENCH_RXE_B=10.78.0.11
bench_rxe_pair() {
	local i secs name cd src vrc args cmd port=17790 a=$D/ctl-rxe-a.sock b=$D/ctl-rxe-b.sock
	secs=$(snic_secs "$PROG_SECS")
	vm_stop
	snic_log "rxe <-> rxe: two more VMs, back to back (QEMU socket netdev), -n $BENCH_RXE_N"
	VM_SOCK=$a VM_NET="socket,id=n0,listen=127.0.0.1:$port" VM_MAC=52:54:00:4e:00:0a VM_ADDR=$BENCH_RXE_A vm_boot
	QEMU_PID2=$QEMU_PID QEMU_PID=
	VM_SOCK=$b VM_NET="socket,id=n0,connect=127.0.0.1:$port" VM_MAC=52:54:00:4e:00:0b VM_ADDR=$BENCH_RXE_B vm_boot
	for i in "${!C_NAME[@]}"; do
		want_case "${C_NAME[$i]}" || continue
		name=${C_NAME[$i]}/rxe-rxe cd=$D/${C_NAME[$i]}/rxe-rxe src=0 vrc=0 VERDICT=
		mkdir -p "$cd"
		PORT=$(( PORT + 1 ))
		args=${C_ARGS[$i]/-n 1000/-n $BENCH_RXE_N}
		cmd="${C_PROG[$i]} -d rxe0 -x $VM_GID4 -p $PORT $args"
		snic_log "case $name: $cmd (server $BENCH_RXE_A, client $BENCH_RXE_B)"
		if VM_SOCK=$a vm "rm -f /tmp/s.*; ( timeout $secs $cmd >/tmp/s.out 2>&1; echo \$? >/tmp/s.rc ) & \
			for i in \$(seq 300); do netstat -ltn | grep -q ':$PORT ' && exit 0; sleep 0.1; done; exit 1"; then
			VM_SOCK=$b VM_SECS=$(( secs / SNIC_TIMEOUT_SCALE + 10 )) vm "timeout $secs $cmd $BENCH_RXE_A" \
				>"$cd/client.out" 2>&1 || vrc=$?
			VM_SOCK=$a vm_server_end "$secs" >"$cd/server.out" 2>&1 || src=$?
			sed 's/^/    rxe-b| /' "$cd/client.out"
			(( src == 0 )) || VERDICT+="server exit $src; "
			(( vrc == 0 )) || VERDICT+="client exit $vrc; "
			result_ok pt "$cd/client.out" || VERDICT+="no result line on the client; "
		else
			VERDICT="server never listened on $PORT; "
		fi
		if [[ -z $VERDICT ]]; then
			passed=$(( passed + 1 ))
			bench_row "$i" rxe-rxe "$cd/client.out"
			printf 'PASS %s\n' "$name" | tee -a "$RESULTS"
		else
			failed=$(( failed + 1 ))
			printf 'FAIL %-28s  %s\n' "$name" "$VERDICT" | tee -a "$RESULTS"
		fi
	done
}

# The first SAMPLE_FRAMES frames of a program run, whole (the lossy list's
# oracles read these).
keep_sample() { # DIR T0 T1
	sleep 0.3 # the capture is written out every 100 ms
	if editcap -A "$2" -B "$3" "$PCAP" "$1/slice.pcap" >/dev/null 2>&1; then
		editcap -r "$1/slice.pcap" "$1/sample.pcap" "1-$SAMPLE_FRAMES" >/dev/null 2>&1 || true
	fi
	rm -f -- "$1/slice.pcap"
}

keep_slice() { # DIR T0 T1
	sleep 0.3 # the capture is written out every 100 ms
	editcap -s 128 -A "$2" -B "$3" "$PCAP" "$1/capture-headers.pcap" >/dev/null 2>&1 || true
}

# The lossy cases impair RoCE frames (UDP 4791, over IPv4 or IPv6) only,
# inside the VM (this host's kernel has no netem), with both netem
# qdiscs at the root of an ifb device: ifb1 (handle 30:) takes what rxe
# sends (eth0's egress redirected by a filter on a prio root), ifb0
# (40:) what it receives (eth0's ingress).  No netem is the child of a
# classful qdisc: netem's duplicate re-enqueues at the root, which with
# it under prio on eth0 (the first set-up) went with a 225 s transmit
# stall of eth0 in the guest.  Set once, right after the VM booted
# (vm_config).
NETEM_LIMIT="limit 10000"
# Debian's tc: busybox (which prefers its applets) has its own, smaller one.
TC=/usr/bin/tc
netem_setup() { # SPEC
	local f='' p n=0
	# One u32 filter per protocol (each its own priority)
	for p in "ip u32 match ip protocol 17 0xff match ip dport 4791 0xffff" \
		"ipv6 u32 match ip6 protocol 17 0xff match ip6 dport 4791 0xffff"; do
		n=$(( n + 1 ))
		f+="$TC filter add dev eth0 parent 1: protocol ${p%% *} prio $n ${p#* } action mirred egress redirect dev ifb1 && "
		f+="$TC filter add dev eth0 parent ffff: protocol ${p%% *} prio $n ${p#* } action mirred egress redirect dev ifb0 && "
	done
	vm "ip link set ifb0 up && ip link set ifb1 up &&
		$TC qdisc add dev ifb1 root handle 30: netem $NETEM_LIMIT $1 seed 1 &&
		$TC qdisc add dev ifb0 root handle 40: netem $NETEM_LIMIT $1 seed 2 &&
		$TC qdisc add dev eth0 root handle 1: prio &&
		$TC qdisc add dev eth0 handle ffff: ingress && $f true" ||
		snic_fail "netem $1 could not be set in the VM"
	snic_log "netem in the VM, both ways on RoCE frames: $1 (seeded before each program run)"
	[[ $list == lossy && $1 == *loss* ]] && netem_seed_check
	return 0
}

# What the seed buys, checked on traffic that is the same in every run:
# pings over the VM's lo (no RoCE frame goes there) through a netem
# "loss 2%" on lo, reseeded with `tc qdisc change` as netem_reseed does;
# the frames it dropped in each of 4 batches of 50 pings are the pass's
# fingerprint.  Two passes with one seed must drop alike (an unseeded
# netem matches in all 4 batches about once in 600 tries); a third with
# another seed is shown beside them.  lo's netem goes before any case.
netem_seed_check() {
	local out a b
	out=$(VM_SECS=180 vm "for s in 42 42 7; do
		$TC qdisc add dev lo root handle 9: netem loss 2% seed 1 &&
		$TC qdisc change dev lo root handle 9: netem loss 2% seed \$s || exit 1; p=0; f=;
		for b in 1 2 3 4; do ping -q -c 50 -i 0.005 -W 1 127.0.0.1 >/dev/null 2>&1;
			d=\$($TC -s qdisc show dev lo | sed -n 's/.*dropped \([0-9]*\),.*/\1/p'); f=\"\$f \$((d - p))\"; p=\$d; done;
		echo \"seed \$s:\$f\"; $TC qdisc del dev lo root; done") ||
		snic_fail "the netem seed check on the VM's lo failed: $out"
	sed 's/^/  seed| /' <<<"$out"
	a=$(sed -n 1p <<<"$out") b=$(sed -n 2p <<<"$out")
	[[ $a == "seed 42: "* && $a == "$b" ]] ||
		snic_fail "netem's seed did not repeat its draws on identical traffic: '$a' then '$b'"
	snic_log "netem's seed repeats its draws: the same frames dropped in both passes with seed 42 (lo, 4 x 50 pings)"
}

# The seed of one program run's netem draws in one direction: fixed per
# case, side and direction (a hash of them), so a case draws the same
# sequence in every run; SNIC_INTEROP_SEED (default 0) picks another set.
netem_seed() { # NAME DIR
	printf '%s' "${SNIC_INTEROP_SEED:-0}:$1:$2" | cksum | cut -d' ' -f1
}

# Before each program run: both netem qdiscs reseeded (`tc qdisc change`
# keeps the qdisc and its queue, which is idle between runs; only the
# parameters and the PRNG state are set again), so the Nth frame through
# a direction meets the same draw in every run of the case.  The draws
# are netem's loss, duplicate and reorder ones (without correlation:
# netem starts a correlated draw from an unseeded value, init_crandom).
netem_reseed() { # NAME
	local so si
	so=$(netem_seed "$1" rxe-snic) si=$(netem_seed "$1" snic-rxe)
	vm "$TC qdisc change dev ifb1 root handle 30: netem $NETEM_LIMIT $CUR_NETEM seed $so &&
		$TC qdisc change dev ifb0 root handle 40: netem $NETEM_LIMIT $CUR_NETEM seed $si" ||
		snic_fail "netem could not be reseeded in the VM"
	snic_log "netem seeds for $1: rxe->snic $so, snic->rxe $si"
}

# The reproducible impairments (SPEC "determ drop|duplicate|delay N
# [DELAY]"): act_gact's deterministic mode picks every Nth RoCE frame in
# each direction (its own counter per direction: ordinals N, 2N, 3N...,
# the same in every run), no random draw anywhere.  The chosen frame is
#   drop       dropped (gact's own verdict);
#   duplicate  mirrored into the direction's ifb (a plain fifo), which
#              sends the copy on after the original;
#   delay      redirected into the direction's ifb, whose root is a
#              fixed-delay netem (no jitter: netem draws nothing), so the
#              frames after it overtake it: reordering.
# The other frames pass untouched (gact ok).  Frames an ifb sends back
# skip classification (tcf_action_exec: skb_skip_tc_classify), so a copy
# or a delayed frame is neither counted nor chosen again.  The qdiscs
# are set before any RoCE frame and never changed (see netem_setup).
determ_setup() { # SPEC
	local what n delay root act f='' p k=0
	read -r _ what n delay <<<"$1"
	root="pfifo limit 10000"
	case $what in
	drop) act=drop ;;
	duplicate) act="pipe"; f=mirror ;;
	delay) act="pipe"; f=redirect root="netem $NETEM_LIMIT delay $delay" ;;
	*) snic_fail "unknown deterministic impairment: $1" ;;
	esac
	# Two counters per direction and family: ACKs (BTH opcode 0x11) and
	# the rest, each its own ordinals, so that how the peers happen to
	# coalesce ACKs does not move which data packets are chosen.
	local flt='' m cls
	for p in "ip 28 match ip protocol 17 0xff match ip dport 4791 0xffff" \
		"ipv6 48 match ip6 protocol 17 0xff match ip6 dport 4791 0xffff"; do
		read -r fam off m <<<"$p"
		for cls in "match u8 0x11 0xff at $off" ""; do
			k=$(( k + 1 ))
			flt+="$TC filter add dev eth0 parent 1: protocol $fam prio $k u32 $m $cls action gact ok random determ $act $n"
			[[ -n $f ]] && flt+=" action mirred egress $f dev ifb1"
			flt+=" && $TC filter add dev eth0 parent ffff: protocol $fam prio $k u32 $m $cls action gact ok random determ $act $n"
			[[ -n $f ]] && flt+=" action mirred egress $f dev ifb0"
			flt+=" && "
		done
	done
	vm "ip link set ifb0 up && ip link set ifb1 up &&
		$TC qdisc add dev ifb1 root handle 30: $root &&
		$TC qdisc add dev ifb0 root handle 40: $root &&
		$TC qdisc add dev eth0 root handle 1: prio &&
		$TC qdisc add dev eth0 handle ffff: ingress && $flt true" ||
		snic_fail "'$1' could not be set in the VM"
	snic_log "deterministic impairment in the VM, both ways on RoCE frames: every ${n}th frame ${what}${delay:+ by $delay}"
}
# The qdiscs' counters (cumulative over the VM's configuration) into FILE.
netem_counters() { # FILE LABEL
	if [[ $CUR_NETEM == determ* ]]; then
		determ_counters "$1" "$2"
		return
	fi
	local out
	out=$(vm "echo '$2 rxe -> snic (eth0 egress via ifb1):'; $TC -s qdisc show dev ifb1;
		echo '$2 snic -> rxe (eth0 ingress via ifb0):'; $TC -s qdisc show dev ifb0" 2>&1) || true
	echo "$out" >>"$1"
	# One line per direction: LABEL DIR seed S sent P dropped D
	# (cumulative over the VM's configuration)
	awk -v l="$2" '/ -> / { d = $2 $3 $4 } / seed / { s = $0; sub(/.* seed /, "", s); sub(/ .*/, "", s) }
		/Sent [0-9]+ bytes/ { x = $0; sub(/.*dropped /, "", x); sub(/,.*/, "", x)
			print l, d, "seed", s, "sent", $4, "dropped", x }' <<<"$out" >>"$1"
}

# The deterministic impairment's counters: the filters' action statistics
# (gact counts every RoCE frame it saw and the ones it dropped, mirred the
# ones it copied or delayed), in full and as one line per direction,
#   LABEL DIR frames P chosen S bad B
# (DIR rxe->snic or snic->rxe, cumulative over the VM's configuration;
# B: counters whose choice broke the rule below).
# Fails the case unless each counter chose its frames P/N rounded down:
# ordinals N, 2N, ... and no others, whatever the traffic (a check that
# the selection is the deterministic one, not a random draw).
determ_counters() { # FILE LABEL
	local dir parent out line n
	read -r _ _ n _ <<<"$CUR_NETEM"
	for dir in rxe-\>snic:1: snic-\>rxe:ffff:; do
		parent=${dir#*:}
		dir=${dir%%:*}
		out=$(vm "$TC -s filter show dev eth0 parent $parent") || { echo "$2 $dir: tc failed" >>"$1"; continue; }
		{ echo "$2 $dir (eth0 ${parent/1:/egress}):"; echo "$out"; } | sed 's/ffff:)/ingress)/' >>"$1"
		# per gact instance: frames P, chosen S (its drops, or what the
		# mirred after it copied or delayed); bad: instances where S is
		# not P/N rounded down
		line=$(awk -v l="$2" -v d="$dir" -v n="$n" '
			function done_one() { if (i) { c = (mi ? m : dr); f += p; ch += c; if (c != int(p / n)) bad++ } }
			/action order [0-9]+: *gact/ { done_one(); i = 1; a = "gact"; mi = 0; m = 0; dr = 0; p = 0 }
			/action order [0-9]+: *mirred/ { a = "mirred"; mi = 1 }
			/Sent [0-9]+ bytes [0-9]+ pkt/ { x = $0; sub(/.*dropped /, "", x); sub(/,.*/, "", x)
				if (a == "gact") { p = $4; dr = x } else m = $4 }
			END { done_one(); print l, d, "frames", f + 0, "chosen", ch + 0, "bad", bad + 0 }' <<<"$out")
		echo "$line" >>"$1"
		awk '{ exit $8 != 0 }' <<<"$line" ||
			DETERM_BAD+="$line: not every ${n}th frame; "
	done
}

# Status 0 when the deterministic impairment chose frames in both
# directions during the case.
determ_chosen_both() { # FILE
	awk '$3 == "frames" { c[$1 " " $2] = $6 }
		END { exit !(c["after rxe->snic"] > c["before rxe->snic"] && c["after snic->rxe"] > c["before snic->rxe"]) }' "$1"
}

# Status 0 when netem dropped frames in both directions during the case
# (the dropped counters after it above those before).
netem_dropped_both() { # FILE
	awk '$3 == "seed" && $7 == "dropped" { d[$1 " " $2] = $8 }
		END { exit !(d["after rxe->snic"] > d["before rxe->snic"] && d["after snic->rxe"] > d["before snic->rxe"]) }' "$1"
}

# Status 0 when netem dropped frames in at least one direction.
netem_dropped_any() { # FILE
	awk '$3 == "seed" && $7 == "dropped" { d[$1 " " $2] = $8 }
		END { exit !(d["after rxe->snic"] > d["before rxe->snic"] || d["after snic->rxe"] > d["before snic->rxe"]) }' "$1"
}

# Which netem check a case gets.  The lossy list's one-way runs move
# 300 x 64 KiB, enough ACKs back for a 2-5 % loss to hit both ways; the
# ipv6 list's short one-way run (100 x 4 KiB) sends back only a few
# coalesced ACKs, which 2 % loss leaves untouched about half the time:
# there, drops in one direction prove the link impaired.
netem_dropped_enough() { # I FILE
	if [[ $list == ipv6 && ${C_KIND[$1]} == pt ]]; then
		netem_dropped_any "$2"
	else
		netem_dropped_both "$2"
	fi
}

want_case() { # NAME
	local n
	(( ${#ONLY[@]} == 0 )) && return 0
	for n in "${ONLY[@]}"; do [[ $n == "$1" ]] && return 0; done
	return 1
}

# One program run, both ways' verdicts into RESULTS.  Status 1 when it
# failed with the guest kernel's own fault in the VM's console.
run_case() { # I SRV NAME DIR
	local i=$1 srv=$2 name=$3 cd=$4 t0 t1 s0=$SECONDS
	mkdir -p "$cd"
	snic_log "case $name: ${C_PROG[$i]} ${C_ARGS[$i]}${C_NETEM[$i]:+ (netem ${C_NETEM[$i]})}"
	ctl_snapshot "$cd/snicctl-before.json"
	DETERM_BAD=
	[[ -n ${C_NETEM[$i]} && ${C_NETEM[$i]} != determ* ]] && netem_reseed "$name"
	[[ -n ${C_NETEM[$i]} ]] && netem_counters "$cd/netem.txt" before
	t0=$(date +%s.%N)
	VERDICT=
	run_pair "$i" "$srv" "$cd"
	t1=$(date +%s.%N)
	[[ $list == lossy ]] && keep_sample "$cd" "$t0" "$t1"
	if [[ -n ${C_NETEM[$i]} ]]; then
		netem_counters "$cd/netem.txt" after
		if [[ ${C_NETEM[$i]} == determ* ]]; then
			grep -E '^(before|after) ' "$cd/netem.txt" | grep frames | sed 's/^/  tc| /'
			determ_chosen_both "$cd/netem.txt" ||
				VERDICT+="the impairment chose no frame in one direction (is the link impaired?); "
			[[ -z $DETERM_BAD ]] || VERDICT+=$DETERM_BAD
		else
			# this run's own figures (the counters are cumulative):
			# what two runs of the case compare
			awk '$3 == "seed" { k = $2; if ($1 == "before") { p[k] = $6; d[k] = $8 }
				else print "  tc| this run " k " seed " $4 ": sent " $6 - p[k] ", dropped " $8 - d[k] }' "$cd/netem.txt"
		fi
		if [[ ${C_NETEM[$i]} == *loss* ]]; then
			netem_dropped_enough "$i" "$cd/netem.txt" ||
				VERDICT+="netem dropped nothing in one direction (is the link impaired?); "
		fi
	fi
	ctl_snapshot "$cd/snicctl-after.json"
	if [[ $list == bench && -z $VERDICT ]]; then
		# the client's row: snic's when the VM serves
		if [[ $srv == vm ]]; then bench_row "$i" snic-client "$cd/snic.out"; else bench_row "$i" rxe-client "$cd/vm.out"; fi
	fi
	# A case that failed may have left the NIC unusable: later cases
	# must not inherit that.
	kill -0 "$SNIC_EMU_PID" 2>/dev/null || snic_fail "snic-emu died during $name"
	kill -0 "$QEMU_PID" 2>/dev/null || VERDICT+="the VM exited; "
	if [[ -n $VERDICT ]] && guest_fault "$cd" >"$cd/guest-fault.txt"; then
		keep_slice "$cd" "$t0" "$t1"
		printf 'GUEST-FAULT %-21s %4ss  %s\n' "$name" "$(( SECONDS - s0 ))" "$VERDICT" | tee -a "$RESULTS"
		sed 's/^/  guest| /' "$cd/guest-fault.txt"
		return 1
	fi
	if [[ -z $VERDICT ]]; then
		passed=$(( passed + 1 ))
		printf 'PASS %-28s %4ss\n' "$name" "$(( SECONDS - s0 ))" | tee -a "$RESULTS"
	else
		failed=$(( failed + 1 ))
		keep_slice "$cd" "$t0" "$t1"
		printf 'FAIL %-28s %4ss  %s\n' "$name" "$(( SECONDS - s0 ))" "$VERDICT" | tee -a "$RESULTS"
	fi
	kill -0 "$QEMU_PID" 2>/dev/null || snic_fail "the VM died during $name"
	return 0
}

# ------------------------------------------------------------------ main
tap_up
passed=0 failed=0 recoveries=0 t_start=$SECONDS
for i in "${!C_NAME[@]}"; do
	want_case "${C_NAME[$i]}" || continue
	if [[ ${C_NETEM[$i]} != "$CUR_NETEM" ]]; then
		vm_config "${C_NETEM[$i]}"
		[[ -n $SNIC_EMU_PID ]] || nic_start
	fi
	for srv in vm snic; do
		name=${C_NAME[$i]}/$srv-server
		run_case "$i" "$srv" "$name" "$D/$name" && continue
		# Bounded recovery from the guest kernel's own fault (Debian
		# 6.1.192 under TCG: a virtio-net transmit stall, an rdma_rxe
		# oops), never from a failure without one: once per suite run,
		# loudly, on a fresh VM with the same configuration, the case
		# run again from the start.  A second fault fails the suite.
		mv -f -- "$D/$name" "$D/$name-guest-fault"
		(( recoveries++ == 0 )) ||
			snic_fail "the guest kernel faulted again during $name (console in $D/$name-guest-fault/guest-fault.txt)"
		snic_log "!!! RECOVERY: the guest kernel faulted during $name (not snic: see $D/$name-guest-fault/guest-fault.txt); a fresh VM, $name again"
		vm_config "${C_NETEM[$i]}"
		run_case "$i" "$srv" "$name" "$D/$name" ||
			snic_fail "the guest kernel faulted again during $name"
	done
done
(( recoveries == 0 )) || snic_log "!!! $recoveries recovery from a guest kernel fault in this run (GUEST-FAULT in $RESULTS)"
if [[ $list == ipv6 ]]; then
	vm_ipv6_neigh_check
	want_case rping && cm_ipv6_negative_check
fi
nic_stop
mkdir -p "$(dirname "$SAVED_PCAP")"
frames=$(capinfos -c -M "$PCAP" 2>/dev/null | awk '/Number of packets/ { print $NF }')
if (( ${frames:-0} > FLOOD_FRAMES )); then
	# Gigabytes: not kept; the oracle cases report the flood instead.
	rm -f -- "$PCAP"
	echo "$frames" >"$SAVED_PCAP.flood"
	snic_log "capture: $frames frames (a retransmission flood), not kept"
elif [[ $list == lossy ]]; then
	mapfile -t samples < <(ls "$D"/*/*-server/sample.pcap 2>/dev/null)
	(( ${#samples[@]} > 0 )) && mergecap -a -w "$SAVED_PCAP" "${samples[@]}"
	# SNIC_INTEROP_KEEP_PCAP=1: the whole capture stays, for a look at
	# a run's retransmissions (tens of MB)
	if [[ -n ${SNIC_INTEROP_KEEP_PCAP:-} ]]; then mv -f -- "$PCAP" "$D/snic-full.pcap"; else rm -f -- "$PCAP"; fi
	snic_log "capture: $frames frames; the oracles' sample of ${#samples[@]} runs in $SAVED_PCAP"
else
	mv -f -- "$PCAP" "$SAVED_PCAP"
	snic_log "capture: $SAVED_PCAP ($frames frames)"
fi
snic_log "rxe's view at the end:"
vm "rdma statistic show link rxe0/1" 2>&1 | sed 's/^/  vm| /' || true
[[ $list == bench ]] && bench_rxe_pair
echo "== interop $list: $passed passed, $failed failed in $(( SECONDS - t_start ))s (plus boot)"
cat "$RESULTS"
(( passed + failed > 0 )) || snic_fail "no case selected"
(( failed == 0 ))
