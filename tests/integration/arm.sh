#!/usr/bin/env bash
# Cases "arm/*": the aarch64 Linux build (the DPU's Linux-on-Arm), run here
# under qemu-user.
#   tests/integration/arm.sh build
#       tools/arm64-sysroot.sh (cached) and `make ARCH=aarch64` into
#       $SNIC_BUILD-aarch64; `file` says AArch64 for every program; dpkg's
#       foreign architectures unchanged and the native DPDK/rdma-core
#       packages still installable as they are (apt-get -s)
#   tests/integration/arm.sh unit
#       the CUnit suites built for aarch64, under qemu-aarch64 (the loss
#       suite at 20,000 messages per loss rate)
#   tests/integration/arm.sh interop
#       an Arm snic-emu NIC (qemu-aarch64) and an x86 snic-emu NIC on the
#       two ends of a tap device in a private network namespace: the Arm
#       NIC on DPDK's net_tap (it makes the tap), the x86 NIC on
#       net_af_packet bound to that tap.  ibv_rc_pingpong default and
#       -s 65536 -n 200, snic_verbs_test WRITE/READ/SEND (data checked),
#       the Arm NIC's capture of the default pingpong and the verbs test
#       checked by check_roce.py and check_tshark.sh.
#       Neither memif nor af_packet can carry the Arm end: DPDK's memif
#       ring layout follows RTE_CACHE_LINE_SIZE (128 in Debian's arm64
#       DPDK, 64 on x86-64), and qemu-user 7.2 does not implement
#       setsockopt(SOL_PACKET, PACKET_VERSION), which af_packet needs.
#   tests/integration/arm.sh hostdriver
#       everything Arm: the Arm snic-emu (its default two NICs) and
#       snic_verbs_test built for aarch64 with the aarch64 host driver
#       (build-aarch64/lib/libibverbs.so.1), all under qemu-aarch64:
#       WRITE/READ/SEND, data checked
#   tests/integration/arm.sh bluefield
#       the bluefield board's binary, started without the card, exits
#       non-zero naming what is missing (the card, DOCA DMA)
# Environment: SNIC_ARM_FRESH=1 (build) makes the sysroot in a private,
# empty cache (downloads again) and builds from nothing in the case's
# folder, as on a fresh machine; both are removed at the end.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode=${1:-}
case $mode in
build | unit | interop | hostdriver | bluefield) ;;
*) snic_fail "usage: $0 build | unit | interop | hostdriver | bluefield" ;;
esac
[[ $mode == interop || $mode == hostdriver ]] && snic_private_netns "$0" "$@"

ARM_BUILD=$SNIC_BUILD-aarch64
QEMU=qemu-aarch64
snic_need_cmd "$QEMU" aarch64-linux-gnu-gcc file

# The sysroot (made by the build case; cached after that).
arm_sysroot() {
	SYSROOT=$("$SNIC_ROOT/tools/arm64-sysroot.sh" --print) ||
		snic_fail "no arm64 sysroot yet at $SYSROOT: run the arm/build case first"
}

case_build() {
	local before after f bins
	before=$(dpkg --print-foreign-architectures | tr '\n' ' ')
	if [[ ${SNIC_ARM_FRESH:-} == 1 ]]; then
		export SNIC_ARM64_CACHE=$SNIC_CASE_DIR/cache
		ARM_BUILD=$SNIC_CASE_DIR/build-aarch64
		snic_log "SNIC_ARM_FRESH=1: sysroot in a private empty cache $SNIC_ARM64_CACHE, build in $ARM_BUILD"
	fi
	snic_run sysroot 600 "$SNIC_ROOT/tools/arm64-sysroot.sh" ||
		snic_fail "tools/arm64-sysroot.sh failed"
	snic_run make 900 make -C "$SNIC_ROOT" -j2 ARCH=aarch64 BUILD="$ARM_BUILD" all ||
		snic_fail "make ARCH=aarch64 failed"
	bins=("$ARM_BUILD/bin/snic-emu" "$ARM_BUILD/bin/snicctl" "$ARM_BUILD/bin/snic-bluefield"
	      "$ARM_BUILD/lib/libibverbs.so.1" "$ARM_BUILD/tests/unit-tests"
	      "$ARM_BUILD/tests/snic_verbs_test")
	for f in "${bins[@]}"; do
		snic_need_exec "$f"
		file -b "$f" | tee -a "$SNIC_CASE_DIR/file.out" | grep -q 'ELF 64-bit LSB .*ARM aarch64' ||
			snic_fail "$f is not an AArch64 ELF: $(file -b "$f")"
		snic_log "AArch64 ELF: ${f#"$SNIC_ROOT"/}"
	done
	after=$(dpkg --print-foreign-architectures | tr '\n' ' ')
	[[ $after == "$before" ]] ||
		snic_fail "dpkg's foreign architectures changed: '$before' -> '$after'"
	snic_log "dpkg foreign architectures unchanged: '${after% }'"
	# The native packages the other boards build with: installed, and apt
	# would change nothing about them.
	[[ ${SNIC_ARM_FRESH:-} == 1 ]] && rm -rf -- "$SNIC_ARM64_CACHE" "$ARM_BUILD"
	snic_run apt-native 120 apt-get -s -o Debug::NoLocking=1 install \
		libdpdk-dev dpdk libibverbs-dev ibverbs-utils rdma-core ||
		snic_fail "apt-get -s install of the native packages failed"
	grep -q '^0 upgraded, 0 newly installed, 0 to remove' "$SNIC_CASE_DIR/apt-native.out" ||
		snic_fail "apt would change the native DPDK/rdma-core packages"
}

case_unit() {
	arm_sysroot
	snic_need_exec "$ARM_BUILD/tests/unit-tests"
	# The loss suite with 20,000 messages per loss rate instead of
	# 100,000: the x86 unit case runs the long one; here it is the Arm
	# code paths that count, at a fifth of qemu-user's time.
	snic_run unit-aarch64 600 "$QEMU" -L "$SYSROOT" -E LOSS_MSGS=20000 "$ARM_BUILD/tests/unit-tests" ||
		snic_fail "unit tests (aarch64, qemu-user) failed"
	grep -Eq 'tests +[0-9]+ +[0-9]+ +[0-9]+ +0 ' "$SNIC_CASE_DIR/unit-aarch64.out" ||
		snic_fail "no CUnit summary with 0 failures"
}

case_interop() {
	arm_sysroot
	# shellcheck source=tests/integration/nics.sh
	. "$SNIC_ROOT/tests/integration/nics.sh"
	snic_need_exec "$ARM_BUILD/bin/snic-emu"
	local pcap=$SNIC_CASE_DIR/arm.pcap tap=snicarm$$
	NIC_EXEC[nic0]="$QEMU -L $SYSROOT $ARM_BUILD/bin/snic-emu"
	nic_spawn nic0 -- --nic "snic0,port=net_tap0,pcap=$pcap" -- "--vdev=net_tap0,iface=$tap"
	nic_wait_ready 60 nic0
	# Only our NICs' frames on the wire: no IPv6 autoconfiguration.
	sysctl -qw "net.ipv6.conf.$tap.disable_ipv6=1" || true
	nic_spawn nic1 -- --nic snic1,port=net_af_packet0 -- \
		"--vdev=net_af_packet0,iface=$tap,framecnt=4096"
	nic_wait_ready 40 nic1
	pingpong 20415
	verbs verbs-data --only write,read,send
	# The capture as it is now, taken while the NIC runs (written out
	# every 100 ms in whole records): ~18,000 frames, every opcode the
	# exchanges use.  The 64 KiB pingpong after it adds ~26,000 frames of
	# SEND FIRST/MIDDLE/LAST that would only double the oracles' time.
	sleep 0.5
	nic_alive nic0 || snic_fail "the Arm NIC is gone"
	cp -- "$pcap" "$pcap.snapshot"
	pingpong 20515 -s 65536 -n 200
	# Both oracles at once (each spends ~1.5 ms of scapy per frame).
	snic_run check-roce 300 "$PY" "$SNIC_ROOT/tests/wire/check_roce.py" "$pcap.snapshot" \
		--min-frames 1024 --expect-opcodes 0x00,0x01,0x02,0x04,0x06,0x07,0x08,0x0a,0x0c,0x0d,0x0e,0x0f,0x10,0x11 \
		>/dev/null &
	local roce=$! rc=0
	SNIC_BG_PIDS+=("$roce")
	snic_run check-tshark 300 bash "$SNIC_ROOT/tests/wire/check_tshark.sh" "$pcap.snapshot" \
		0x00 0x01 0x02 0x04 0x06 0x07 0x08 0x0a 0x0c 0x0d 0x0e 0x0f 0x10 0x11 ||
		snic_fail "check_tshark.sh rejected the Arm NIC's capture"
	wait "$roce" || rc=$?
	snic__untrack "$roce"
	sed 's/^/  check-roce| /' "$SNIC_CASE_DIR/check-roce.out"
	(( rc == 0 )) || snic_fail "check_roce.py rejected the Arm NIC's capture (status $rc)"
	nic_stop nic0 snic0
	nic_stop nic1 snic1
}

case_hostdriver() {
	arm_sysroot
	# shellcheck source=tests/integration/nics.sh
	. "$SNIC_ROOT/tests/integration/nics.sh"
	snic_need_exec "$ARM_BUILD/bin/snic-emu" "$ARM_BUILD/tests/snic_verbs_test" \
		"$ARM_BUILD/lib/libibverbs.so.1"
	NIC_EXEC[pair]="$QEMU -L $SYSROOT $ARM_BUILD/bin/snic-emu"
	nic_spawn pair --
	nic_wait_ready 60 pair
	# qemu-user hands the guest our environment: its LD_LIBRARY_PATH must
	# name the aarch64 host driver, not the x86 one.
	snic_run verbs-arm 300 "$QEMU" -L "$SYSROOT" -E "LD_LIBRARY_PATH=$ARM_BUILD/lib" \
		"$ARM_BUILD/tests/snic_verbs_test" --only write,read,send ||
		snic_fail "snic_verbs_test (aarch64, with the aarch64 host driver) failed"
	grep -Eq '^verbs: [1-9][0-9]* passed, 0 failed' "$SNIC_CASE_DIR/verbs-arm.out" ||
		snic_fail "no passing verbs summary"
	nic_stop pair snic0
	[[ ! -e $RUN_DIR/host0.mem ]] || snic_fail "the Arm snic-emu left host0.mem behind"
}

case_bluefield() {
	local bf=$ARM_BUILD/bin/snic-bluefield rc fake=$SNIC_CASE_DIR/sysfs
	arm_sysroot
	snic_need_exec "$bf"
	# No card, no DOCA: all three named, exit 1, before any DPDK work.
	rc=0
	"$QEMU" -L "$SYSROOT" "$bf" >"$SNIC_CASE_DIR/nocard.out" 2>&1 </dev/null || rc=$?
	sed 's/^/  nocard| /' "$SNIC_CASE_DIR/nocard.out"
	(( rc == 1 )) || snic_fail "snic-bluefield without the card: exit status $rc (want 1)"
	grep -q 'cannot start snic0: 3 missing' "$SNIC_CASE_DIR/nocard.out" &&
		grep -q 'the card: no BlueField-2/3 ConnectX function (PCI 15b3:a2d6 or 15b3:a2dc)' "$SNIC_CASE_DIR/nocard.out" &&
		grep -q 'host memory: DOCA DMA is missing' "$SNIC_CASE_DIR/nocard.out" &&
		grep -q 'host BAR: DOCA Device Emulation is missing' "$SNIC_CASE_DIR/nocard.out" ||
		snic_fail "snic-bluefield did not name the card, DOCA DMA and DOCA Device Emulation"
	! grep -q '^EAL\|^ready' "$SNIC_CASE_DIR/nocard.out" || snic_fail "snic-bluefield started DPDK anyway"
	# A card in a stand-in sysfs (a BlueField-3 function): found, and only
	# DOCA named missing; still exit 1 (no pretend host memory).
	mkdir -p "$fake/bus/pci/devices/0000:03:00.0" "$fake/bus/pci/devices/0000:00:00.0"
	printf '0x15b3\n' >"$fake/bus/pci/devices/0000:03:00.0/vendor"
	printf '0xa2dc\n' >"$fake/bus/pci/devices/0000:03:00.0/device"
	printf '0x15b3\n' >"$fake/bus/pci/devices/0000:00:00.0/vendor"
	printf '0xa2d6\n' >"$fake/bus/pci/devices/0000:00:00.0/device.not"
	rc=0
	"$QEMU" -L "$SYSROOT" "$bf" --sysfs "$fake" >"$SNIC_CASE_DIR/card.out" 2>&1 </dev/null || rc=$?
	sed 's/^/  card| /' "$SNIC_CASE_DIR/card.out"
	(( rc == 1 )) || snic_fail "snic-bluefield with a card but no DOCA: exit status $rc (want 1)"
	grep -q 'BlueField-3 ConnectX function 0000:03:00.0' "$SNIC_CASE_DIR/card.out" &&
		grep -q 'cannot start snic0: 2 missing' "$SNIC_CASE_DIR/card.out" &&
		grep -q 'DOCA DMA is missing' "$SNIC_CASE_DIR/card.out" ||
		snic_fail "snic-bluefield did not find the card or did not name DOCA"
	# The EAL arguments it would give DPDK on the card.
	snic_run print-eal 30 "$QEMU" -L "$SYSROOT" "$bf" --sysfs "$fake" --print-eal \
		--representor pf0vf0 --cores 1-7 || snic_fail "--print-eal failed"
	grep -q -- ' -l 1-7 -a 0000:03:00.0,representor=pf0vf0 --file-prefix=snic-snic0$' \
		"$SNIC_CASE_DIR/print-eal.out" || snic_fail "unexpected EAL arguments"
}

case $mode in
build) case_build ;;
hostdriver) case_hostdriver ;;
bluefield) case_bluefield ;;
unit) case_unit ;;
interop) case_interop ;;
esac
snic_log "arm/$mode: passed"
