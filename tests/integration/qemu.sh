#!/usr/bin/env bash
# Cases "qemu/*": the qemu-virt board (the firmware as a bare-metal aarch64
# image with newlib, in QEMU under TCG) driven by the unchanged host driver.
#   tests/integration/qemu.sh build            make qemu (builds newlib once
#                                              per machine: minutes)
#   tests/integration/qemu.sh devinfo          ibv_devinfo lists a QEMU NIC
#   tests/integration/qemu.sh pingpong PORT [ibv_rc_pingpong options]
#                                              two QEMU NICs (unix datagrams)
#   tests/integration/qemu.sh verbs            snic_verbs_test between them
#   tests/integration/qemu.sh interop-pingpong PORT | interop-verbs
#                                              a QEMU NIC and an emu NIC: QEMU
#                                              on a tap, snic-emu's DPDK
#                                              af_packet port on the same tap
#   tests/integration/qemu.sh hostile          snic_hostile against a QEMU NIC:
#                                              others' slots, pages, doorbells,
#                                              pools, share of slots, a slot
#                                              still mapped not reused (the
#                                              host agent's isolation)
#   tests/integration/qemu.sh fw-pid           whether a QEMU NIC lives is
#                                              its BAR file's lock, not the
#                                              fw_pid another process writes
#   tests/integration/qemu.sh users            a QEMU NIC shared with a group
#                                              (--users): modes, a member's
#                                              ibv_devinfo; the O_PATH holder
#                                              of another uid than the agent
#                                              cannot chmod or open the next
#                                              holder's slot and segment
#   tests/integration/qemu.sh memfd-race       a process without capabilities
#                                              races the start-up: the agent's
#                                              memfds and memory stay closed
#   tests/integration/qemu.sh fault            the fault image reports and
#                                              QEMU exits non-zero
#   tests/integration/qemu.sh nostart          a QEMU that cannot start
set -euo pipefail
# shellcheck source=tests/integration/qemu-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/qemu-lib.sh"
# shellcheck source=tests/integration/hostile-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/hostile-lib.sh"

what=${1:-}
shift || true

# Two QEMU NICs: snic2 (198.18.0.3) and snic3 (198.18.0.4), one host-memory
# file, wired by unix datagram sockets.
two_qemu_nics() {
	qv_run_dir
	local a=$SNIC_CASE_DIR/snic2.sock b=$SNIC_CASE_DIR/snic3.sock
	qv_start snic2 198.18.0.3 "unix:$a:$b" --host-mem-size 256M
	qv_start snic3 198.18.0.4 "unix:$b:$a"
}

# snic0 in snic-emu on a DPDK af_packet port over tap snq0, snic2 in QEMU
# on the same tap.  In the case's private network namespace only.
TAP=snq0
emu_and_qemu() {
	[[ ${SNIC_IN_NETNS:-} == 1 ]] ||
		snic_fail "the interop cases need a private network namespace (root or user namespaces) for their tap device"
	snic_need_cmd ip
	ip tuntap add dev "$TAP" mode tap || snic_fail "cannot create tap $TAP"
	ip link set "$TAP" up || snic_fail "cannot set $TAP up"
	sysctl -qw "net.ipv6.conf.$TAP.disable_ipv6=1" 2>/dev/null || true
	qv_emu_start --link-timeout 0 \
		--nic snic0,port=net_af_packet0,ip=198.18.0.1 --host-mem host0.mem -- \
		"--vdev=net_af_packet0,iface=$TAP,framesz=2048,blocksz=4096"
	qv_run_dir
	qv_start snic2 198.18.0.3 "tap:$TAP" --host-mem host0.mem --mtu 1500
}

# ibv_rc_pingpong, server on SERVER_DEV, client on CLIENT_DEV (lib.sh).
pingpong() { # SERVER_DEV CLIENT_DEV PORT_BASE [options]
	local sdev=$1 cdev=$2
	shift 2
	SNIC_PP_SERVER_DEV=$sdev SNIC_PP_CLIENT_DEV=$cdev SNIC_PINGPONG_TIMEOUT=120 \
		snic_pingpong "$@" || snic_fail "ibv_rc_pingpong $sdev <- $cdev $* failed"
}

verbs() { # DEV0 DEV1
	snic_need_exec "$SNIC_BUILD/tests/snic_verbs_test"
	snic_run verbs 240 "$SNIC_BUILD/tests/snic_verbs_test" --dev0 "$1" --dev1 "$2" \
		--only write,read,send || snic_fail "snic_verbs_test $1 -> $2 failed"
	grep -Eq '^verbs: [0-9]+ passed, 0 failed' "$SNIC_CASE_DIR/verbs.out" ||
		snic_fail "snic_verbs_test: no '0 failed' summary"
}

case $what in
build)
	cd "$SNIC_ROOT"
	snic_need_cmd aarch64-linux-gnu-gcc
	snic_log "make qemu (newlib is built once per machine into $(tools/build-newlib.sh --print-prefix || true))"
	make -s BUILD="$SNIC_BUILD" qemu || snic_fail "make qemu failed"
	for f in "$QV_IMAGE" "$QV_FAULT_IMAGE"; do
		[[ -s $f ]] || snic_fail "$f was not built"
	done
	aarch64-linux-gnu-size "$QV_IMAGE"
	;;
devinfo)
	qv_need_image
	qv_run_dir
	qv_start snic2 198.18.0.3 "unix:$SNIC_CASE_DIR/a.sock:$SNIC_CASE_DIR/b.sock" --host-mem-size 64M
	snic_run devinfo 30 ibv_devinfo || snic_fail "ibv_devinfo failed"
	grep -Eq '^hca_id:[[:space:]]+snic2$' "$SNIC_CASE_DIR/devinfo.out" ||
		snic_fail "ibv_devinfo does not list snic2"
	grep -q 'PORT_ACTIVE' "$SNIC_CASE_DIR/devinfo.out" || snic_fail "snic2's port is not PORT_ACTIVE"
	snic_run devinfo-v 30 ibv_devinfo -v -d snic2 || snic_fail "ibv_devinfo -v failed"
	grep -q 'GID\[  0\]:.*::ffff:198.18.0.3, RoCE v2' "$SNIC_CASE_DIR/devinfo-v.out" ||
		snic_fail "no RoCE v2 GID ::ffff:198.18.0.3 at index 0"
	qv_stop snic2 || exit 1
	[[ ! -e $SNIC_RUN_DIR/host0.mem ]] || snic_fail "host0.mem left behind"
	;;
pingpong)
	snic_private_netns "$0" pingpong "$@"
	qv_need_image
	two_qemu_nics
	base=${1:?port}
	shift
	pingpong snic3 snic2 "$base" "$@"
	qv_stop snic2 || exit 1
	qv_stop snic3 || exit 1
	;;
verbs)
	qv_need_image
	two_qemu_nics
	verbs snic2 snic3
	qv_stop snic2 || exit 1
	qv_stop snic3 || exit 1
	;;
ctxdeath)
	# verbs processes SIGKILLed mid-traffic on QEMU NICs: their sockets to
	# the host agent close, the agent tells the firmware (the control
	# page's mailbox) and the firmware reclaims their contexts.
	snic_private_netns "$0" ctxdeath "$@"
	qv_need_image
	two_qemu_nics
	snic_kill_midtraffic snic3 snic2 "$(snic_free_port "${1:?port}")" 3
	reclaimed=0
	for (( i = 0; i < 100; i++ )); do
		reclaimed=$("$SNIC_BUILD/bin/snicctl" --json show snic2 snic3 |
			/usr/bin/python3 -c 'import json,sys
d = json.load(sys.stdin)
nics = d["nics"] if isinstance(d, dict) else d
print(sum(n["port"]["counters"].get("ctx_reclaimed", 0) for n in nics))')
		(( reclaimed >= 2 )) && break
		sleep 0.1
	done
	(( reclaimed >= 2 )) || snic_fail "expected 2 reclaimed contexts on the QEMU NICs, snicctl says $reclaimed"
	snic_log "the QEMU NICs reclaimed $reclaimed contexts of killed processes"
	pingpong snic3 snic2 "$(( ${1} + 10 ))"
	qv_stop snic2 || exit 1
	qv_stop snic3 || exit 1
	;;
hostile)
	# host processes attacking a victim on a QEMU NIC (issue 10): the
	# agent's slots and segments, the firmware's page owner table, its
	# guard (fw_state) and quotas, the agent's check before reusing a slot
	# or segment.  Three segments of 896 MiB: the pool attacker's 16,000
	# QPs need more than 600 MiB of rings; the victim, a process keeping
	# its ended context's segment and the next process one each.
	qv_need_image
	snic_need_exec "$SNIC_BUILD/tests/snic_hostile"
	qv_run_dir
	qv_start snic2 198.18.0.3 "unix:$SNIC_CASE_DIR/a.sock:$SNIC_CASE_DIR/b.sock" \
		--host-mem-size 64M --segments 3 --segment-size 896M
	rc=0
	snic_run hostile 240 env SNIC_HOSTILE_BOARD=qemu "$SNIC_BUILD/tests/snic_hostile" \
		--dev0 snic2 -v || rc=$?
	qv_stop snic2 || exit 1
	(( rc == 0 )) || snic_fail "snic_hostile against the QEMU NIC failed (status $rc)"
	log=$SNIC_CASE_DIR/snic-qemu-snic2.log con=$SNIC_CASE_DIR/console-snic2.log
	hostile_checks "$log" "$con"
	h=$(sed -n 's/.* \([0-9]*\) slots or segments held back.*/\1/p' "$log")
	(( ${h:-0} >= 6 )) || snic_fail "expected the agent to hold back each of the three stale holders' slot and segment, it says '${h}'"
	e=$(sed -n 's/.* \([0-9]*\) contexts ended (their slot or segment opened or chmodded.*/\1/p' "$log")
	(( ${e:-0} >= 1 )) || snic_fail "expected the agent to end the context whose slot and segment an O_PATH holder reopened, it says '${e}'"
	r=$(awk '$1 == "ctx_reclaimed" { s += $2 } END { print s + 0 }' "$con")
	(( r >= 1 )) || snic_fail "expected the pool attacker's context reclaimed, the counters say $r"
	snic_log "victim unaffected; $HOSTILE_SUMMARY (the broker: the host agent); $h slots or segments held back, $e ended after an O_PATH reopen, $r contexts of dead processes reclaimed"
	;;
fw-pid)
	# Whether a QEMU NIC lives is the lock the launcher holds on its BAR
	# file (QEMU and the host agent inherit the descriptor), not the
	# fw_pid any process of the user may write (hostile.sh fw-pid for
	# snic-emu): with a dead pid written there every 100 us, commands on
	# the live NIC succeed; with the writer's own pid, fw_state UP and a
	# moving heartbeat, a REG_MR issued as QEMU is killed fails within
	# QV_DEAD_MS (the launcher sees QEMU gone within 1 s and ends; before:
	# 60 s, ETIMEDOUT).
	qv_need_image
	snic_need_exec "$SNIC_BUILD/tests/snic_liveness" "$SNIC_BUILD/tests/snic_hostile"
	qv_run_dir
	qv_start snic2 198.18.0.3 "unix:$SNIC_CASE_DIR/a.sock:$SNIC_CASE_DIR/b.sock" --host-mem-size 64M
	sleep 0 & dead=$!
	wait "$dead" || true
	bg_start "$SNIC_CASE_DIR/writer-dead.out" writing \
		"$SNIC_BUILD/tests/snic_liveness" write snic2 "$dead"
	snic_run cmds 120 "$SNIC_BUILD/tests/snic_liveness" cmds snic2 1500 ||
		snic_fail "commands failed on the live QEMU NIC with fw_pid $dead (dead)"
	kill "$BG_PID" && wait "$BG_PID" || true
	bg_start "$SNIC_CASE_DIR/writer-self.out" writing \
		"$SNIC_BUILD/tests/snic_liveness" write snic2 self --fake-alive
	go=$SNIC_CASE_DIR/go out=$SNIC_CASE_DIR/after.out
	bg_start "$out" open "$SNIC_BUILD/tests/snic_hostile" --stall-cmd snic2 "$go"
	prog=$BG_PID
	qpid=$(sed -n 's/.*QEMU pid \([0-9]*\),.*/\1/p' "${QV_LOG[snic2]}")
	[[ -n $qpid ]] || snic_fail "no QEMU pid in the launcher's output"
	kill -KILL "$qpid"
	touch "$go"
	rc=0
	wait "$prog" || rc=$?
	sed 's/^/  after| /' "$out"
	(( rc == 1 )) && grep -q "reg_mr failed" "$out" ||
		snic_fail "REG_MR on a killed QEMU NIC: status $rc (want a failure)"
	ms=$(sed -n 's/^reg_mr failed after \([0-9.]*\) s.*/\1/p' "$out" | awk '{ printf "%d", $1 * 1000 }')
	QV_DEAD_MS=$(( 3000 * ${SNIC_TIMEOUT_SCALE:-1} ))
	(( ${ms:-999999} <= QV_DEAD_MS )) ||
		snic_fail "REG_MR on a killed QEMU NIC took $ms ms to fail (limit $QV_DEAD_MS)"
	rc=0
	wait "${QV_PID[snic2]}" || rc=$?
	unset "QV_PID[snic2]"
	(( rc == 1 )) || snic_fail "snic-qemu exited $rc after QEMU was killed (want 1)"
	snic_log "QEMU NIC: commands fine with fw_pid $dead (dead); killed with fw_pid faked: REG_MR failed after $ms ms"
	;;
users)
	# a QEMU NIC shared with a group (snic-qemu --users, README.md "Who
	# may use the NICs"): the run dir, BAR and socket the group's, the
	# host memory and admin socket not; a member (another uid than the
	# launcher's and the agent's, root) lists and opens it; the O_PATH
	# attack of qemu/hostile with the holder and the newcomer as two
	# other uids of the group: the memfds are the agent's (root's), so
	# the holder's chmod through its O_PATH descriptors fails (EPERM)
	# and nothing opens or is read
	qv_need_image
	snic_need_exec "$SNIC_BUILD/tests/snic_hostile" "$SNIC_BUILD/tests/snic_member"
	snic_need_cmd setpriv groupadd groupdel stat
	(( EUID == 0 )) || snic_fail "needs root (setpriv to other uids, a group)"
	users_group
	qv_run_dir
	qv_start snic2 198.18.0.3 "unix:$SNIC_CASE_DIR/a.sock:$SNIC_CASE_DIR/b.sock" \
		--host-mem-size 64M --segments 2 --segment-size 64M --users "$USERS_GROUP"
	d=$SNIC_RUN_DIR
	snic_log "modes: $(stat -c '%a %G %n' "$d" "$d"/* | tr '\n' ' ')"
	[[ $(stat -c '%a %G' "$d") == "750 $USERS_GROUP" ]] || snic_fail "run dir: $(stat -c '%a %G' "$d"), want 750 $USERS_GROUP"
	[[ $(stat -c '%a %G' "$d/snic2.bar") == "640 $USERS_GROUP" ]] || snic_fail "snic2.bar: $(stat -c '%a %G' "$d/snic2.bar")"
	[[ $(stat -c '%a %G' "$d/snic2.sock") == "660 $USERS_GROUP" ]] || snic_fail "snic2.sock: $(stat -c '%a %G' "$d/snic2.sock")"
	[[ $(stat -c %a "$d/snic2.admin.sock") == 600 && $(stat -c %a "$d/host0.mem") == 600 ]] ||
		snic_fail "the admin socket or the host memory is not 0600"
	# a second launcher without --users in that run dir: refused before
	# it changes the run dir's mode (run_dir_users.c's rule)
	rc=0
	snic_run second 30 env -u LD_LIBRARY_PATH "$QV_LAUNCHER" --name snic3 --ip 198.18.0.4 \
		--net "unix:$SNIC_CASE_DIR/c.sock:$SNIC_CASE_DIR/e.sock" || rc=$?
	(( rc == 1 )) && grep -q "is shared .* by the live server of snic2.bar" "$SNIC_CASE_DIR/second.out" ||
		snic_fail "a second launcher with other --users in a shared run dir: status $rc, not refused with a message"
	[[ $(stat -c '%a %G' "$d") == "750 $USERS_GROUP" ]] || snic_fail "run dir after the refused launcher: $(stat -c '%a %G' "$d")"
	member=(setpriv --reuid=64993 --regid="$USERS_GID" --clear-groups --)
	snic_run devinfo 60 "${member[@]}" ibv_devinfo -d snic2 || snic_fail "the member cannot open snic2"
	snic_run bar-write 20 "${member[@]}" "$SNIC_BUILD/tests/snic_member" bar-write "$d/snic2.bar" ||
		snic_fail "the member opened the BAR file for writing"
	snic_run closed 20 "${member[@]}" "$SNIC_BUILD/tests/snic_member" closed "$d/host0.mem" "$d/snic2.admin.sock" ||
		snic_fail "the member reached the host memory or the admin socket"
	rc=0
	snic_run opath 120 "$SNIC_BUILD/tests/snic_hostile" --opath-uids snic2 64994 64995 "$USERS_GID" || rc=$?
	qv_stop snic2 || exit 1
	(( rc == 0 )) || snic_fail "the O_PATH holder of another uid reached the next holder's slot or segment (status $rc)"
	snic_log "QEMU NIC shared with $USERS_GROUP: modes, a member's devinfo; BAR read-only, host memory and admin socket closed to it; an O_PATH holder of another uid: chmod EPERM, nothing opened"
	;;
memfd-race)
	# another process of the user races the NIC's start-up and tries to
	# open the host agent's memfds through /proc/<pid>/fd of the agent
	# and of QEMU, and their memory through /proc/<pid>/mem, and takes
	# their sockets (pidfd_getfd) to peek at what is queued there: the
	# agent is not dumpable from its start, QEMU (its shim) before it
	# asks for the memfds (on a socket pair made after its prctl; nothing
	# is queued on the inherited socket), so nothing opens.  The NIC
	# and the racer both run as uid 0 without any capability (setpriv):
	# as a user's processes are to each other (with capabilities the
	# kernel would refuse the racer for lacking the agent's, whatever
	# the agent's dumpability; this way that is what decides)
	qv_need_image
	racer=$SNIC_BUILD/tests/hostagent/memfd_racer
	snic_need_exec "$racer"
	snic_need_cmd setpriv
	qv_run_dir
	nocaps=(setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all --)
	stopf=$SNIC_CASE_DIR/racer.stop
	rm -f -- "$stopf"
	"${nocaps[@]}" "$racer" "$(snic_secs 60)" "$stopf" "$SNIC_RUN_DIR" \
		>"$SNIC_CASE_DIR/racer.out" 2>&1 &
	rpid=$!
	QV_AS=("${nocaps[@]}")
	qv_start snic2 198.18.0.3 "unix:$SNIC_CASE_DIR/a.sock:$SNIC_CASE_DIR/b.sock" --host-mem-size 64M
	QV_AS=()
	: >"$stopf"
	wait "$rpid" || snic_fail "the racer failed (status $?)"
	# the NIC still serves (the agent, without capabilities, hands out
	# its memfds of mode 0000 by reopening them)
	snic_run devinfo 30 ibv_devinfo -d snic2 || snic_fail "ibv_devinfo failed"
	grep -q 'PORT_ACTIVE' "$SNIC_CASE_DIR/devinfo.out" || snic_fail "snic2's port is not PORT_ACTIVE"
	qv_stop snic2 || exit 1
	sed 's/^/  racer| /' "$SNIC_CASE_DIR/racer.out"
	read -r a q s o d i t < <(sed -n 's/^racer: \([0-9]*\) agents seen, \([0-9]*\) QEMUs seen, \([0-9]*\) scans, \([0-9]*\) opened, \([0-9]*\) denied, \([0-9]*\) idle, \([0-9]*\) sockets taken$/\1 \2 \3 \4 \5 \6 \7/p' \
		"$SNIC_CASE_DIR/racer.out")
	[[ -n ${a:-} ]] || snic_fail "no summary from the racer"
	(( a >= 1 && q >= 1 )) || snic_fail "the racer did not see the agent and QEMU start ($a agents, $q QEMUs: raced nothing in $s scans)"
	(( d >= 1 )) || snic_fail "the racer tried nothing"
	(( o == 0 )) || snic_fail "the racer opened the agent's memfds (or peeked them on a socket it took from QEMU) or the agent's or QEMU's memory $o times during start-up"
	snic_log "$s scans over the start-up, $d opens of the memfds and memory of the agent and QEMU denied, none opened ($i of the memory of QEMU's stand-in, which never holds ours); $t sockets taken from QEMU before its prctl, no memfd peeked on them"
	;;
interop-pingpong)
	snic_private_netns "$0" interop-pingpong "$@"
	qv_need_image
	emu_and_qemu
	base=${1:?port}
	shift
	pingpong snic2 snic0 "$base" "$@"
	qv_stop snic2 || exit 1
	snic_emu_stop || exit 1
	;;
interop-verbs)
	snic_private_netns "$0" interop-verbs "$@"
	qv_need_image
	emu_and_qemu
	verbs snic0 snic2
	verbs snic2 snic0
	qv_stop snic2 || exit 1
	snic_emu_stop || exit 1
	;;
fault)
	qv_need_image
	qv_run_dir
	rc=0
	snic_log "start: snic-qemu with the fault image (it must stop with an exception report)"
	timeout --foreground -k 5 "$(snic_secs 60)" "$QV_LAUNCHER" --name snicf --ip 198.18.0.9 \
		--net "unix:$SNIC_CASE_DIR/f.sock:$SNIC_CASE_DIR/g.sock" --host-mem-size 16M \
		--run-dir "$SNIC_RUN_DIR" --image "$QV_FAULT_IMAGE" \
		--console "$SNIC_CASE_DIR/console.log" >"$SNIC_CASE_DIR/launcher.out" 2>&1 || rc=$?
	sed 's/^/  launcher| /' "$SNIC_CASE_DIR/launcher.out"
	sed 's/^/  console| /' "$SNIC_CASE_DIR/console.log"
	(( rc == 1 )) || snic_fail "snic-qemu exited with $rc, want 1"
	grep -q 'QEMU exit status 3' "$SNIC_CASE_DIR/launcher.out" || snic_fail "QEMU did not exit with status 3"
	for pat in 'EXCEPTION: sync (EL1h): data abort' 'ESR_EL1  0x00000000960000' \
		   'FAR_EL1  0x0000000000dead00' 'ELR_EL1  0x00000000400'; do
		grep -qF "$pat" "$SNIC_CASE_DIR/console.log" || snic_fail "no '$pat' in the exception report"
	done
	[[ -z $(snic__ls "$SNIC_RUN_DIR") ]] || snic_fail "files left in the run dir: $(snic__ls "$SNIC_RUN_DIR")"
	;;
nostart)
	qv_need_image
	qv_run_dir
	net="unix:$SNIC_CASE_DIR/f.sock:$SNIC_CASE_DIR/g.sock"
	# 1. No QEMU binary at all.
	rc=0
	"$QV_LAUNCHER" --name snicx --ip 198.18.0.9 --net "$net" --run-dir "$SNIC_RUN_DIR" \
		--qemu /nonexistent/qemu-system-aarch64 >"$SNIC_CASE_DIR/1.out" 2>&1 || rc=$?
	sed 's/^/  1| /' "$SNIC_CASE_DIR/1.out"
	(( rc == 1 )) && grep -q "error: QEMU ('/nonexistent/qemu-system-aarch64') not found" "$SNIC_CASE_DIR/1.out" ||
		snic_fail "no clear error for a missing QEMU (status $rc)"
	# 2. QEMU refuses its arguments (a tap it may not create: bad name).
	rc=0
	timeout --foreground -k 5 "$(snic_secs 60)" "$QV_LAUNCHER" --name snicx --ip 198.18.0.9 \
		--netdev "no-such-backend" --host-mem-size 16M --run-dir "$SNIC_RUN_DIR" \
		>"$SNIC_CASE_DIR/2.out" 2>&1 || rc=$?
	sed 's/^/  2| /' "$SNIC_CASE_DIR/2.out"
	(( rc == 1 )) && grep -q 'error: snicx: QEMU exited before the firmware came up (QEMU exit status 1)' "$SNIC_CASE_DIR/2.out" &&
		grep -q 'qemu: .*no-such-backend' "$SNIC_CASE_DIR/2.out" ||
		snic_fail "no clear error for a QEMU that cannot start (status $rc)"
	# 3. The image is missing.
	rc=0
	"$QV_LAUNCHER" --name snicx --ip 198.18.0.9 --net "$net" --run-dir "$SNIC_RUN_DIR" \
		--image /nonexistent.elf >"$SNIC_CASE_DIR/3.out" 2>&1 || rc=$?
	sed 's/^/  3| /' "$SNIC_CASE_DIR/3.out"
	(( rc == 1 )) && grep -q "make qemu" "$SNIC_CASE_DIR/3.out" || snic_fail "no clear error for a missing image"
	[[ -z $(snic__ls "$SNIC_RUN_DIR") ]] || snic_fail "files left in the run dir: $(snic__ls "$SNIC_RUN_DIR")"
	;;
*)
	snic_fail "usage: $0 build|devinfo|pingpong PORT|verbs|hostile|users|fw-pid|memfd-race|interop-pingpong PORT|interop-verbs|fault|nostart"
	;;
esac
snic_log "qemu $what: ok"
