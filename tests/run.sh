#!/usr/bin/env bash
# snic test runner.
#
#   tests/run.sh [suite|case ...]     default: every suite, in this order
#   tests/run.sh --list               print the suites and their cases
#
# Suites: unit devinfo pingpong verbs wire perftest engines multi badconfig hostile cm netdev route qemu arm
# interop interop-lossy interop-cm interop-ipv6.  A case can also be named alone
# (e.g. tests/run.sh pingpong/events).
#
# Each case runs as its own process under timeout(1) (a hard limit; the whole
# process group is killed), its output in $SNIC_BUILD/test-logs/<case>.log and
# its scratch files in $SNIC_BUILD/test-logs/<case>/.  The runner prints one
# PASS/FAIL line per case with its duration, the tail of the log of each
# failure, and ends with the line "N passed, N failed"; it exits 1 if any case
# failed, 2 on bad usage.
#
# Environment:
#   SNIC_BUILD          build tree to test (default: $BUILD, else build)
#   SNIC_TIMEOUT_SCALE  multiply every time limit (default 1, 3 for *asan*)
#   SNIC_LOG_TAIL       log lines shown for a failed case (default 40)
#   SNIC_EMU_CORES      firmware cores per NIC of every snic-emu the cases
#                       start (its --cores default; 1 when unset)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export LC_ALL=C

SNIC_BUILD=${SNIC_BUILD:-${BUILD:-build}}
case $SNIC_BUILD in
/*) ;;
*) SNIC_BUILD=$ROOT/$SNIC_BUILD ;;
esac
if [[ -z ${SNIC_TIMEOUT_SCALE:-} ]]; then
	case ${SNIC_BUILD##*/} in
	*asan*) SNIC_TIMEOUT_SCALE=3 ;;
	*) SNIC_TIMEOUT_SCALE=1 ;;
	esac
fi
[[ $SNIC_TIMEOUT_SCALE =~ ^[1-9][0-9]*$ ]] ||
	{ echo "tests/run.sh: SNIC_TIMEOUT_SCALE must be a positive integer" >&2; exit 2; }
SNIC_TEST_LOGS=$SNIC_BUILD/test-logs
export SNIC_BUILD SNIC_TIMEOUT_SCALE SNIC_TEST_LOGS
LOG_TAIL=${SNIC_LOG_TAIL:-40}
IT=tests/integration

# ------------------------------------------------------------------ cases
# case_add SUITE NAME LIMIT_SECONDS COMMAND...   (limits before scaling)
# A normal run takes 3-6 minutes here (plus newlib's one-time build for
# qemu/build); the limits only bound a hang, they are not expectations.
SUITES=(unit devinfo pingpong verbs wire perftest engines multi cores badconfig hostile cm)
C_SUITE=() C_NAME=() C_LIMIT=() C_CMD=()
case_add() {
	local suite=$1 name=$2 limit=$3 cmd
	shift 3
	printf -v cmd '%q ' "$@"
	C_SUITE+=("$suite") C_NAME+=("$name") C_LIMIT+=("$limit") C_CMD+=("${cmd% }")
}
# unit, abi-doc: their own limits inside (unit.sh 900 s, abi-doc.sh 2 x 600
# s; 303-361 s and 271 s were measured at load 10-16 on 2 cores, 150 and
# 60 + 60 s the limits before) and a little more
case_add unit     unit                 960 bash "$IT/unit.sh"
# every unit test again with 2 firmware cores per fake NIC (polled in turn),
# with 4 (the fake port steering into 4 RX queues; cores >= 2) and with 3
# (not a power of two: core 0 steers in software)
case_add unit     unit/cores2          960 env SNIC_UNIT_CORES=2 bash "$IT/unit.sh"
case_add unit     unit/cores4          960 env SNIC_UNIT_CORES=4 bash "$IT/unit.sh"
case_add unit     unit/cores3          960 env SNIC_UNIT_CORES=3 bash "$IT/unit.sh"
case_add unit     unit/layers           30 bash tools/check-layers.sh
case_add unit     unit/abi-doc        1260 bash "$IT/abi-doc.sh"
case_add unit     unit/verbs-table      30 bash "$IT/verbs-table.sh"
# the host driver's broker client against a fake broker (tests/hostdrv)
case_add unit     unit/broker-client    30 "$SNIC_BUILD/tests/hostdrv/broker_client"
# a --users member's kick lands while the firmware goes to sleep (tests/hostdrv)
case_add unit     unit/kick-window      30 "$SNIC_BUILD/tests/hostdrv/kick_window"
# pin.c's first copy into the window: splice, pwrite, memcpy (tests/hostdrv)
case_add unit     unit/window-fill      30 "$SNIC_BUILD/tests/hostdrv/window_fill"
# its streaming copy and fill against memcpy/memset (tests/hostdrv)
case_add unit     unit/stream-copy      30 "$SNIC_BUILD/tests/hostdrv/stream_copy"
# the DPDK HAL's ring pair: bad queue counts, steering, a stop under way (tests/hal)
case_add unit     unit/dpdk-ring        60 "$SNIC_BUILD/tests/hal/dpdk_ring"
# the boards' context broker keys segments by pid and start time (tests/hostagent)
case_add unit     unit/broker-id        30 "$SNIC_BUILD/tests/hostagent/ctx_broker_id"
# hal/posix/users.c: a symlink is not followed when sharing a path
case_add unit     unit/users-share      30 "$SNIC_BUILD/tests/hostagent/users_share"
# the fuzz targets, 40 s each from the seed corpus (tools/fuzz.sh): the
# limit follows SNIC_FUZZ_SECONDS (4 targets), plus 600 s for the ASan
# build of the firmware before them (a fixed 400 s left ~280 s for it)
FUZZ_SECS=${SNIC_FUZZ_SECONDS:-40}
case_add unit     unit/fuzz  $(( 4 * FUZZ_SECS + 600 )) bash tools/fuzz.sh run "$FUZZ_SECS"
case_add devinfo  devinfo/list          45 bash "$IT/devinfo.sh" list
case_add devinfo  devinfo/snic0         45 bash "$IT/devinfo.sh" port snic0 198.18.0.1 fd00:5e1c::c612:1
case_add devinfo  devinfo/snic1         45 bash "$IT/devinfo.sh" port snic1 198.18.0.2 fd00:5e1c::c612:2
case_add devinfo  devinfo/restart       90 bash "$IT/devinfo.sh" restart
case_add pingpong pingpong/default      90 bash "$IT/pingpong.sh" 18515
case_add pingpong pingpong/s65536-n1000 180 bash "$IT/pingpong.sh" 18615 -s 65536 -n 1000
case_add pingpong pingpong/events       90 bash "$IT/pingpong.sh" 18715 -e
case_add pingpong pingpong/loopback     90 env SNIC_PP_SERVER_DEV=snic0 bash "$IT/pingpong.sh" 18915
case_add pingpong pingpong/ud           90 env SNIC_PP_PROG=ibv_ud_pingpong bash "$IT/pingpong.sh" 19015
case_add pingpong pingpong/srq          90 env SNIC_PP_PROG=ibv_srq_pingpong bash "$IT/pingpong.sh" 19115
case_add pingpong pingpong/uc           90 env SNIC_PP_PROG=ibv_uc_pingpong bash "$IT/pingpong.sh" 19215
case_add pingpong pingpong/xsrq         90 env SNIC_PP_PROG=ibv_xsrq_pingpong SNIC_PP_OK_RE='^success$' bash "$IT/pingpong.sh" 19815
case_add pingpong pingpong/xsrq-events  90 env SNIC_PP_PROG=ibv_xsrq_pingpong SNIC_PP_OK_RE='^success$' bash "$IT/pingpong.sh" 19915 -e -n 50 -s 8000
case_add pingpong pingpong/ipv6         90 env SNIC_PP_GID=1 bash "$IT/pingpong.sh" 19315
case_add pingpong pingpong/ud-ipv6      90 env SNIC_PP_GID=1 SNIC_PP_PROG=ibv_ud_pingpong bash "$IT/pingpong.sh" 19415
case_add pingpong pingpong/uc-ipv6      90 env SNIC_PP_GID=1 SNIC_PP_PROG=ibv_uc_pingpong bash "$IT/pingpong.sh" 24515
case_add pingpong pingpong/loopback-ipv6 90 env SNIC_PP_GID=1 SNIC_PP_SERVER_DEV=snic0 bash "$IT/pingpong.sh" 24615
case_add pingpong pingpong/lossy       180 bash "$IT/lossy.sh" 22515 -n 300
case_add pingpong pingpong/ctxdeath    180 bash "$IT/ctxdeath.sh" 20515
case_add verbs    verbs                300 bash "$IT/verbs.sh"
case_add verbs    verbs/ext            300 bash "$IT/verbs-ext.sh"
case_add verbs    verbs/ipv6           300 bash "$IT/verbs.sh" --gid-index 1
case_add verbs    verbs/ext-ipv6       300 bash "$IT/verbs-ext.sh" --gid-index 1
case_add verbs    verbs/qp-scale       180 bash "$IT/qpscale.sh" 1000 10000
case_add verbs    verbs/cq-tight       120 bash "$IT/qpscale.sh" tight 100 4
case_add wire     wire/capture         240 bash "$IT/wire.sh" capture
case_add wire     wire/scapy           120 bash "$IT/wire.sh" scapy
case_add wire     wire/tshark          120 bash "$IT/wire.sh" tshark
case_add wire     wire/capture-ipv6    240 env SNIC_WIRE_IP6=1 bash "$IT/wire.sh" capture
case_add wire     wire/scapy-ipv6      120 env SNIC_WIRE_IP6=1 bash "$IT/wire.sh" scapy
case_add wire     wire/tshark-ipv6     120 env SNIC_WIRE_IP6=1 bash "$IT/wire.sh" tshark
case_add wire     wire/xrc             300 bash "$IT/wire.sh" xrc
# perftest: small iteration counts and sizes (they print figures, not verdicts)
PT=(-n 200)
case_add perftest perftest/write_bw      90 bash "$IT/perftest.sh" 19515 ib_write_bw "${PT[@]}" -s 4096
case_add perftest perftest/write_lat     90 bash "$IT/perftest.sh" 19615 ib_write_lat "${PT[@]}" -s 64
case_add perftest perftest/read_bw       90 bash "$IT/perftest.sh" 19715 ib_read_bw "${PT[@]}" -s 4096
case_add perftest perftest/read_lat      90 bash "$IT/perftest.sh" 19815 ib_read_lat "${PT[@]}" -s 64
case_add perftest perftest/send_bw       90 bash "$IT/perftest.sh" 19915 ib_send_bw "${PT[@]}" -s 4096
case_add perftest perftest/send_bw_ud    90 bash "$IT/perftest.sh" 20315 ib_send_bw "${PT[@]}" -c UD -s 1024
case_add perftest perftest/send_lat      90 bash "$IT/perftest.sh" 20015 ib_send_lat "${PT[@]}" -s 64
case_add perftest perftest/atomic_bw     90 bash "$IT/perftest.sh" 20115 ib_atomic_bw "${PT[@]}"
case_add perftest perftest/atomic_lat    90 bash "$IT/perftest.sh" 20215 ib_atomic_lat "${PT[@]}"
# perftest's buffers in SysV SHM_HUGETLB memory, registered on both sides
case_add perftest perftest/write_bw_huge 90 bash "$IT/perftest.sh" 20615 ib_write_bw "${PT[@]}" -s 65536 --use_hugepages
case_add perftest perftest/table         30 bash "$IT/perftest-table.sh"
# NICs as separate snic-emu processes over memif and af_packet (multi.sh),
# bad configurations (badconfig.sh).
# engines: UCX, Open MPI and MPICH, unmodified, over the verbs transports
case_add engines  engines/ucx-info       90 bash "$IT/engines.sh" ucx-info
case_add engines  engines/ucx-perftest  180 bash "$IT/engines.sh" ucx-perftest 23515
case_add engines  engines/ompi          180 bash "$IT/engines.sh" ompi
case_add engines  engines/mpich         180 bash "$IT/engines.sh" mpich
case_add multi    multi/memif-server-first 240 bash "$IT/multi.sh" memif-server-first
case_add multi    multi/memif-client-first 240 bash "$IT/multi.sh" memif-client-first
case_add multi    multi/memif-restart    240 bash "$IT/multi.sh" memif-restart
case_add multi    multi/afpacket         600 bash "$IT/multi.sh" afpacket
case_add multi    multi/snicctl          180 bash "$IT/multi.sh" snicctl
case_add multi    multi/mpi-memif        240 bash "$IT/multi.sh" mpi-memif
case_add multi    multi/memif-rping      240 bash "$IT/multi.sh" memif-rping
case_add multi    multi/dev-owner        90 bash "$IT/devowner.sh"
# Two firmware cores per NIC on real threads (cores.sh): each case is
# another suite's, with its data checks, and must show frames steered to
# core 1 (a pingpong pair's QPs put there by SNIC_PP_HOLD_SLOT).  Issue 11: the multi-core configuration's correctness in make
# test (its speed: tools/bench-cores.sh in make bench).
case_add cores    cores/pingpong        120 bash "$IT/cores.sh" pingpong.sh 25515 -c -n 2000 -s 4096
case_add cores    cores/events          120 bash "$IT/cores.sh" pingpong.sh 25815 -e -n 2000 -s 4096
case_add cores    cores/lossy           240 bash "$IT/cores.sh" lossy.sh 25615 -n 300
case_add cores    cores/verbs           300 bash "$IT/cores.sh" verbs.sh
case_add cores    cores/verbs-ext       300 bash "$IT/cores.sh" verbs-ext.sh
case_add cores    cores/qp-scale        180 bash "$IT/cores.sh" qpscale.sh 1000 10000
case_add cores    cores/cq-tight        120 bash "$IT/cores.sh" qpscale.sh tight 100 8
case_add cores    cores/write_bw         90 bash "$IT/cores.sh" perftest.sh 25715 ib_write_bw "${PT[@]}" -s 4096 -q 4
case_add cores    cores/hostile-slots   120 bash "$IT/cores.sh" hostile.sh slots
case_add cores    cores/ompi            180 bash "$IT/cores.sh" engines.sh ompi
case_add cores    cores/mpich           180 bash "$IT/cores.sh" engines.sh mpich
for b in unknown-vdev eal-args port-down socket-dir nic-name nic-ip6 no-port socket-in-use; do
	case_add badconfig "badconfig/$b"     60 bash "$IT/badconfig.sh" "$b"
done
# host processes attacking others on the same NIC (issue 10)
case_add hostile  hostile/slots         120 bash "$IT/hostile.sh" slots
case_add hostile  hostile/files          60 bash "$IT/hostile.sh" files
case_add hostile  hostile/broker-stall   90 bash "$IT/hostile.sh" broker-stall
case_add hostile  hostile/cmd-stall      90 bash "$IT/hostile.sh" cmd-stall
case_add hostile  hostile/fw-pid        120 bash "$IT/hostile.sh" fw-pid
case_add hostile  hostile/users         150 bash "$IT/users.sh"

# The rdma_cm: our librdmacm.so.1 and the firmware's QP1 (cm.sh).
for c in rping rdma_server udaddy ucmatose ucmatose-bind ucmatose-migrate cmtime write_bw \
	 read_lat send_bw ours last-recv server-death reject abandon timeout unreachable errors \
	 wire rping-ipv6 udaddy-ipv6 ucmatose-ipv6 errors-ipv6; do
	case_add cm "cm/$c"                 180 bash "$IT/cm.sh" "$c"
done
case_add cm       cm/abi                 60 bash tools/abi-check.sh --rdmacm

# The NICs' kernel network interfaces and what uses them (netdev.sh).
# (fi_rdm_race is not here: it reproduces libfabric 1.17 ofi_rxm's
# teardown race, README "libfabric (verbs provider)", and passes while the
# race is there.)
SUITES+=(netdev)
for c in ping fi_info fi_msg fi_rdm fi_dgram ompi_ofi; do
	case_add netdev "netdev/$c"         180 bash "$IT/netdev.sh" "$c"
done

# RoCE v2 through an IP router in a namespace (route.sh).
SUITES+=(route)
for c in kernel nic-gw unreachable; do
	case_add route "route/$c"           240 bash "$IT/route.sh" "$c"
done

# The qemu-virt board: the bare-metal aarch64 image in QEMU (qemu.sh).
# qemu/build builds newlib once per machine (minutes) and the image.
SUITES+=(qemu)
case_add qemu     qemu/build           1200 bash "$IT/qemu.sh" build
case_add qemu     qemu/devinfo           90 bash "$IT/qemu.sh" devinfo
case_add qemu     qemu/fault             90 bash "$IT/qemu.sh" fault
case_add qemu     qemu/nostart           90 bash "$IT/qemu.sh" nostart
case_add qemu     qemu/pingpong         180 bash "$IT/qemu.sh" pingpong 21515
case_add qemu     qemu/verbs            300 bash "$IT/qemu.sh" verbs
case_add qemu     qemu/ctxdeath         180 bash "$IT/qemu.sh" ctxdeath 21715
case_add qemu     qemu/hostile          420 bash "$IT/qemu.sh" hostile
case_add qemu     qemu/fw-pid           120 bash "$IT/qemu.sh" fw-pid
case_add qemu     qemu/users            120 bash "$IT/qemu.sh" users
case_add qemu     qemu/memfd-race        90 bash "$IT/qemu.sh" memfd-race
case_add qemu     qemu/interop-pingpong 180 bash "$IT/qemu.sh" interop-pingpong 21615
case_add qemu     qemu/interop-verbs    300 bash "$IT/qemu.sh" interop-verbs

# The aarch64 Linux build (the DPU's Linux-on-Arm) under qemu-user (arm.sh):
# arm/build makes the arm64 sysroot once per machine (10-50 s, 61 MB)
# and builds into $SNIC_BUILD-aarch64; the other cases use that build.
SUITES+=(arm)
case_add arm      arm/build             900 bash "$IT/arm.sh" build
case_add arm      arm/unit              300 bash "$IT/arm.sh" unit
case_add arm      arm/interop           600 bash "$IT/arm.sh" interop
case_add arm      arm/hostdriver        300 bash "$IT/arm.sh" hostdriver
case_add arm      arm/bluefield          60 bash "$IT/arm.sh" bluefield

# Interoperability with Linux's rdma_rxe in a Debian VM (tests/interop/):
# interop/prepare builds the VM once per machine (~10-30 s, cached in
# ~/.cache/snic/rxe-vm-<recipe>); interop/rxe boots it once and runs every program
# pair in both directions; the oracles then read every captured frame.
IO=tests/interop/interop.sh
SUITES+=(interop)
case_add interop  interop/prepare       600 bash "$IO" prepare
case_add interop  interop/rxe           900 bash "$IO" run lossless
case_add interop  interop/scapy         600 bash "$IO" scapy lossless
case_add interop  interop/tshark        600 bash "$IO" tshark lossless
# The RC cases under netem loss/reordering/duplication (README
# "Interoperability"): 30 program runs on three fresh VMs (one per netem
# configuration), 2-6 min here, and the oracles on a sample of each.
SUITES+=(interop-lossy)
case_add interop-lossy interop-lossy/prepare 600 bash "$IO" prepare
case_add interop-lossy interop-lossy/rxe    1800 bash "$IO" run lossy
case_add interop-lossy interop-lossy/scapy   600 bash "$IO" scapy lossy
case_add interop-lossy interop-lossy/tshark  600 bash "$IO" tshark lossy
# rping between snic's rdma_cm and the kernel's, both ways (~1-2 min).
SUITES+=(interop-cm)
# Suites run only when named (none today; interop-lossy joined the
# default after 10 runs in a row of its fresh-VM set-up).
NOT_DEFAULT=()
case_add interop-cm interop-cm/prepare 600 bash "$IO" prepare
case_add interop-cm interop-cm/rxe     600 bash "$IO" run cm
case_add interop-cm interop-cm/scapy   300 bash "$IO" scapy cm
case_add interop-cm interop-cm/tshark  300 bash "$IO" tshark cm
# RoCE v2 over IPv6 GIDs against rxe (~2-3 min): pingpong RC/UD,
# write/read/send bw, the _lat programs, RC under netem (a second VM),
# both ways, every RoCE frame IPv6, neighbour discovery.
SUITES+=(interop-ipv6)
case_add interop-ipv6 interop-ipv6/prepare 600 bash "$IO" prepare
case_add interop-ipv6 interop-ipv6/rxe     600 bash "$IO" run ipv6
# (scapy reads ~19,000 frames, the rping case's ~2,450 among them: at
# load ~25 the clean part alone took 9 min, past a 300 s x 3 limit)
case_add interop-ipv6 interop-ipv6/scapy   600 bash "$IO" scapy ipv6
case_add interop-ipv6 interop-ipv6/tshark  300 bash "$IO" tshark ipv6

usage() {
	echo "usage: tests/run.sh [--list] [suite|case ...]"
	echo "suites: ${SUITES[*]}"
}

list_cases() {
	local s i
	for s in "${SUITES[@]}"; do
		echo "$s:"
		for i in "${!C_NAME[@]}"; do
			[[ ${C_SUITE[i]} == "$s" ]] &&
				printf '  %-24s %4ss  %s\n' "${C_NAME[i]}" "$(( C_LIMIT[i] * SNIC_TIMEOUT_SCALE ))" "${C_CMD[i]}"
		done
	done
}

# ------------------------------------------------------------------ selection
SELECTED=()      # indexes into C_*, in suite order
want=()
for a in "$@"; do
	case $a in
	-h|--help) usage; exit 0 ;;
	--list) list_cases; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) want+=("$a") ;;
	esac
done
if (( ${#want[@]} == 0 )); then
	for a in "${SUITES[@]}"; do
		[[ " ${NOT_DEFAULT[*]} " == *" $a "* ]] || want+=("$a")
	done
fi
for a in "${want[@]}"; do
	hit=0
	for i in "${!C_NAME[@]}"; do
		if [[ ${C_SUITE[i]} == "$a" || ${C_NAME[i]} == "$a" ]]; then
			hit=1
			[[ " ${SELECTED[*]} " == *" $i "* ]] || SELECTED+=("$i")
		fi
	done
	if (( ! hit )); then
		echo "tests/run.sh: no suite or case named '$a'" >&2
		usage >&2
		exit 2
	fi
done
# Keep the defined order (unit, devinfo, pingpong, verbs, wire, perftest) whatever the
# order of the arguments: wire/scapy needs wire/capture first.
mapfile -t SELECTED < <(printf '%s\n' "${SELECTED[@]}" | sort -n)

# ------------------------------------------------------------------ running
mkdir -p "$SNIC_TEST_LOGS"
CUR_PID=
# shellcheck disable=SC2317 # reached through the trap
on_signal() {
	trap - INT TERM
	if [[ -n $CUR_PID ]]; then
		kill -TERM "$CUR_PID" 2>/dev/null || true  # timeout(1) passes it on
		wait "$CUR_PID" 2>/dev/null || true
		kill -KILL -- "-$CUR_PID" 2>/dev/null || true
	fi
	echo
	echo "tests/run.sh: interrupted"
	exit 130
}
trap on_signal INT TERM

now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$(( 10#$t ))"; }
fmt_secs() { printf '%d.%ds' "$(( $1 / 1000000 ))" "$(( $1 % 1000000 / 100000 ))"; }

passed=0 failed=0 failed_names=() last_suite=
summary=$SNIC_TEST_LOGS/summary.txt
: >"$summary"
echo "snic tests: build $SNIC_BUILD, logs $SNIC_TEST_LOGS (time limits x$SNIC_TIMEOUT_SCALE)"
run_start=$(now_us)

for i in "${SELECTED[@]}"; do
	suite=${C_SUITE[i]} name=${C_NAME[i]}
	limit=$(( C_LIMIT[i] * SNIC_TIMEOUT_SCALE ))
	if [[ $suite != "$last_suite" ]]; then
		echo "== $suite"
		last_suite=$suite
	fi
	log=$SNIC_TEST_LOGS/$name.log
	dir=$SNIC_TEST_LOGS/$name
	rm -rf -- "$dir" "$log"
	mkdir -p "$dir" "$(dirname "$log")"
	eval "cmd=(${C_CMD[i]})"
	{
		echo "# case $name: ${C_CMD[i]}"
		echo "# limit ${limit}s, started $(date '+%F %T')"
	} >"$log"
	t0=$(now_us)
	rc=0
	# timeout(1) puts the case in its own process group and, at the limit,
	# signals all of it (TERM, then KILL 10 s later).
	SNIC_CASE_DIR=$dir timeout -k 10 "$limit" "${cmd[@]}" >>"$log" 2>&1 </dev/null &
	CUR_PID=$!
	wait "$CUR_PID" || rc=$?
	# timeout(1) led its own process group: anything of the case still in
	# it (a grandchild that outlived its parent) is killed now.
	if kill -0 -- "-$CUR_PID" 2>/dev/null; then
		echo "# leftover processes of the case killed: $(pgrep -g "$CUR_PID" 2>/dev/null | tr '\n' ' ')" >>"$log"
		kill -KILL -- "-$CUR_PID" 2>/dev/null || true
	fi
	CUR_PID=
	dt=$(( $(now_us) - t0 ))
	echo "# exit status $rc after $(fmt_secs "$dt")" >>"$log"
	if (( rc == 0 )); then
		passed=$(( passed + 1 ))
		printf 'PASS  %-26s %8s\n' "$name" "$(fmt_secs "$dt")"
		echo "PASS $name $(fmt_secs "$dt")" >>"$summary"
	else
		failed=$(( failed + 1 ))
		failed_names+=("$name")
		why="exit status $rc"
		if (( rc == 124 || rc == 137 )); then
			why="timed out after ${limit}s"
		fi
		printf 'FAIL  %-26s %8s  (%s)\n' "$name" "$(fmt_secs "$dt")" "$why"
		echo "FAIL $name $(fmt_secs "$dt") $why" >>"$summary"
		echo "      ---- last $LOG_TAIL lines of ${log#"$ROOT"/}"
		tail -n "$LOG_TAIL" -- "$log" | sed 's/^/      | /'
		echo "      ----"
	fi
done

echo "== done in $(fmt_secs "$(( $(now_us) - run_start ))"); logs in ${SNIC_TEST_LOGS#"$ROOT"/}/"
if (( failed )); then
	echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed"
echo "$passed passed, $failed failed" >>"$summary"
exit $(( failed ? 1 : 0 ))
