#!/usr/bin/env bash
# Suite "hostile": host processes that attack others on the same NIC
# (issue 10; what the emu board isolates: boards/emu/README.md, "Security
# model").
#   tests/integration/hostile.sh slots   snic_hostile: slot state, owner pid,
#                                        orphan flag, fw_state and mailboxes
#                                        rewritten by another process; others'
#                                        pages registered and CQ/QP rings
#                                        pointed at them; pools exhausted by
#                                        another context; its QPs rung from
#                                        other pages; the BAR file's
#                                        statistics read; more than a
#                                        process's share of slots taken
#   tests/integration/hostile.sh files   runtime files: private modes, a
#                                        planted BAR and a symlinked
#                                        host-memory file refused
#   tests/integration/hostile.sh broker-stall  a context opened while the NIC
#                                        process is stopped 12 s succeeds
#                                        after; one waiting on a NIC killed
#                                        fails within seconds
#   tests/integration/hostile.sh cmd-stall  a command (REG_MR) issued while
#                                        the NIC process is stopped 9 s
#                                        succeeds after; one pending when
#                                        the NIC is killed fails within
#                                        seconds
#   tests/integration/hostile.sh fw-pid  another process rewrites fw_pid
#                                        (and fakes a heartbeat): a live
#                                        NIC keeps working, a killed one
#                                        fails calls at once
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=tests/integration/hostile-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/hostile-lib.sh"

case_slots() {
	snic_need_exec "$SNIC_BUILD/tests/snic_hostile"
	snic_emu_start
	local rc=0
	snic_run hostile 120 "$SNIC_BUILD/tests/snic_hostile" --dev0 snic0 -v || rc=$?
	snic_emu_stop || exit 1
	(( rc == 0 )) || snic_fail "snic_hostile failed (status $rc)"
	hostile_checks "$SNIC_EMU_LOG" "$SNIC_EMU_LOG"
	snic_log "victim unaffected; $HOSTILE_SUMMARY"
}

# a copy of snic0.bar named $1 whose header names host memory $2 ("" = same),
# served: we hold its write lock as a NIC's server does (the host driver
# lists only BARs whose lock is held, host-driver/core/liveness.c)
fake_bar() { # NAME HOSTMEM
	local d=$SNIC_RUN_DIR fd
	cp "$d/snic0.bar" "$d/$1.bar"
	# name (offset 8, 16 bytes) and host_mem (offset 24, 64 bytes)
	printf '%s\0' "$1" | dd of="$d/$1.bar" bs=1 seek=8 conv=notrunc status=none
	[[ -z $2 ]] || printf '%s\0' "$2" | dd of="$d/$1.bar" bs=1 seek=24 conv=notrunc status=none
	chmod 600 "$d/$1.bar"
	exec {fd}<>"$d/$1.bar"
	"$SNIC_BUILD/bin/snic-lock" hold "$fd" || snic_fail "cannot lock the fake $1.bar"
}

devlist() { # NAME: ibv_devices' output and stderr
	snic_run "$1" 20 env "${PRE[@]}" ibv_devices || true
}

# Debian's programs on an ASan build of our library need the runtime first.
PRE=()
asan_preload() {
	local rt
	rt=$(ldd "$SNIC_BUILD/lib/libibverbs.so.1" | awk '/libasan/ { print $3 }')
	[[ -z $rt ]] || PRE=("LD_PRELOAD=$rt" ASAN_OPTIONS=detect_leaks=0)
}

case_files() {
	snic_need_cmd ibv_devices ibv_devinfo stat
	snic_emu_start
	asan_preload
	local d=$SNIC_RUN_DIR out
	out=$(stat -c '%a %n' "$d" "$d"/*.bar "$d"/host0.mem)
	snic_log "modes: $(tr '\n' ' ' <<<"$out")"
	[[ $(stat -c %a "$d") == 700 ]] || snic_fail "run dir is not 0700: $out"
	for f in "$d"/*.bar "$d"/host0.mem; do
		[[ $(stat -c %a "$f") == 600 ]] || snic_fail "$f is not 0600: $out"
	done
	# a BAR planted by another user
	fake_bar evil0 ""
	chown 65534 "$d/evil0.bar"
	devlist planted-owner
	grep -q 'refusing .*/evil0.bar: not owned by the run directory' "$SNIC_CASE_DIR/planted-owner.out" ||
		snic_fail "a BAR of another owner was not refused"
	! grep -qw evil0 <(grep -v refusing "$SNIC_CASE_DIR/planted-owner.out") ||
		snic_fail "a BAR of another owner was listed"
	# one anybody may write
	chown 0 "$d/evil0.bar"
	chmod 666 "$d/evil0.bar"
	devlist planted-mode
	grep -q 'refusing .*/evil0.bar: writable by group or others' "$SNIC_CASE_DIR/planted-mode.out" ||
		snic_fail "a world-writable BAR was not refused"
	rm -f "$d/evil0.bar"
	# a BAR that is a symlink
	ln -s "$d/snic0.bar" "$d/link0.bar"
	devlist planted-link
	grep -q 'refusing .*/link0.bar: a symlink' "$SNIC_CASE_DIR/planted-link.out" ||
		snic_fail "a symlinked BAR was not refused"
	rm -f "$d/link0.bar"
	# a device whose host memory is a symlink (to the real window)
	fake_bar fake0 link.mem
	ln -s "$d/host0.mem" "$d/link.mem"
	local rc=0
	snic_run open-fake 20 env "${PRE[@]}" ibv_devinfo -d fake0 || rc=$?
	(( rc != 0 )) || snic_fail "a device whose host memory is a symlink was opened"
	grep -q 'refusing .*/link.mem: a symlink' "$SNIC_CASE_DIR/open-fake.out" ||
		snic_fail "the symlinked host-memory file was not refused with a message"
	rm -f "$d/fake0.bar" "$d/link.mem"
	# the real devices still work
	snic_run devinfo 20 env "${PRE[@]}" ibv_devinfo -d snic0 || snic_fail "snic0 no longer opens"
	snic_emu_stop || exit 1
	snic_log "private modes; planted BARs (owner, mode, symlink) and a symlinked host memory refused"
}

# The stopped snic-emu killed 1 s after PID began to wait on it: PID's
# status in KILLED_RC, the time of the kill in KILLED_T0, the milliseconds
# from the kill to PID's end in KILLED_MS, its output OUT shown.
kill_emu_waited() { # PID OUT
	local t0
	KILLED_RC=0
	sleep 1
	KILLED_T0=$SECONDS t0=${EPOCHREALTIME/[.,]/}
	kill -KILL "$SNIC_EMU_PID"
	wait "$SNIC_EMU_PID" 2>/dev/null || true
	SNIC_EMU_PID=
	wait "$1" || KILLED_RC=$?
	KILLED_MS=$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
	sed 's/^/  killed| /' "$2"
	rm -rf -- "$SNIC_EMU_RUN_DIR"
}

# PID waits on the stopped snic-emu: it must still wait after SECS s, and
# once snic-emu runs again end with status 0 and a line matching RE in
# OUT (WHAT names it in the messages).
stall_survived() { # PID OUT SECS RE WHAT
	local rc=0
	sleep "$3"
	kill -0 "$1" 2>/dev/null || rc=1
	kill -CONT "$SNIC_EMU_PID"
	(( rc == 0 )) || { cat "$2"; snic_fail "$5 gave up while snic-emu was stopped for $3 s"; }
	wait "$1" || rc=$?
	sed 's/^/  stalled| /' "$2"
	(( rc == 0 )) && grep -q "$4" "$2" ||
		snic_fail "$5 failed after the stall (status $rc)"
	snic_log "$5 waited through a $3 s stall of snic-emu and succeeded"
}

# A context asked of a stalled NIC process (SIGSTOP, as a loaded machine
# stalls it): the host driver waits while the process lives, longer than
# its old fixed 10 s, and the open succeeds once the NIC runs again; a NIC
# killed while an open waits ends that wait within seconds (no hang).
case_broker_stall() {
	snic_need_cmd ibv_devinfo
	snic_emu_start
	local out=$SNIC_CASE_DIR/stalled.out pid rc=0 t0 emu=$SNIC_EMU_PID
	kill -STOP "$emu"
	timeout -k 5 120 ibv_devinfo -d snic0 >"$out" 2>&1 </dev/null &
	pid=$!
	stall_survived "$pid" "$out" 12 "hca_id:[[:space:]]*snic0" "an open (ibv_devinfo -d snic0)"

	out=$SNIC_CASE_DIR/killed.out
	kill -STOP "$emu"
	timeout -k 5 120 ibv_devinfo -d snic0 >"$out" 2>&1 </dev/null &
	pid=$!
	kill_emu_waited "$pid" "$out"
	rc=$KILLED_RC t0=$KILLED_T0
	(( rc != 0 && rc != 124 && rc != 137 )) ||
		snic_fail "ibv_devinfo on a killed NIC: status $rc (want a failure, not a hang)"
	(( SECONDS - t0 <= 10 )) ||
		snic_fail "ibv_devinfo took $(( SECONDS - t0 )) s to notice the NIC died"
	snic_log "an open waiting on a NIC that died failed after $(( SECONDS - t0 )) s (status $rc)"
}

# An open context's command while snic-emu is stopped: it waits while the
# NIC's process lives (the old fixed 5 s gave ETIMEDOUT under load), and a
# NIC killed while it waits ends the wait within seconds.
stall_cmd_start() { # OUT GO: the program open and waiting for GO
	rm -f "$2"
	bg_start "$1" open "$SNIC_BUILD/tests/snic_hostile" --stall-cmd snic0 "$2"
	STALL_PID=$BG_PID
}

case_cmd_stall() {
	snic_need_exec "$SNIC_BUILD/tests/snic_hostile"
	snic_emu_start
	local out=$SNIC_CASE_DIR/cmd-stalled.out go=$SNIC_CASE_DIR/go rc=0 t0 emu=$SNIC_EMU_PID
	stall_cmd_start "$out" "$go"
	kill -STOP "$emu"
	touch "$go"
	stall_survived "$STALL_PID" "$out" 9 "reg_mr succeeded" "a REG_MR"

	out=$SNIC_CASE_DIR/cmd-killed.out
	stall_cmd_start "$out" "$go"
	kill -STOP "$emu"
	touch "$go"
	kill_emu_waited "$STALL_PID" "$out"
	rc=$KILLED_RC t0=$KILLED_T0
	(( rc == 1 )) && grep -q "reg_mr failed" "$out" ||
		snic_fail "REG_MR on a killed NIC: status $rc (want a failure, not a hang)"
	(( SECONDS - t0 <= 5 )) ||
		snic_fail "REG_MR took $(( SECONDS - t0 )) s to notice the NIC died"
	snic_log "a REG_MR waiting on a NIC that died failed after $(( SECONDS - t0 )) s"
}

# Whether the NIC lives is the kernel's word: the write lock its server
# holds on the BAR file (host-driver/core/liveness.c), not the header's fw_pid,
# which any process of the user may write.  A hostile process writes
# fw_pid every 100 us (snic_liveness write) while verbs programs run:
#  - NIC alive, fw_pid = the writer's own pid, 1, 0, a dead pid: snic0 is
#    listed and opens, rounds of commands all succeed; with the dead pid
#    a REG_MR also waits through a 3 s stall of snic-emu and succeeds
#    (before: the device was hidden and commands failed with EIO); the
#    same with its own pid while the writer also keeps fw_state DOWN and
#    the heartbeat still (before: EIO after 30 ms of a still heartbeat);
#  - NIC killed, fw_pid = the writer's pid, 1, 0, while the writer also
#    keeps fw_state UP and the heartbeat moving: a REG_MR pending at the
#    kill and one issued after it fail within FWPID_DEAD_MS (before: a
#    60 s wait, ETIMEDOUT); with fw_pid 1 the BAR file is also truncated
#    before the second, whose SIGBUS must not wait for a NIC that is gone
#    (within 1 s; before: 2 s, the guard asked fw_pid).
FWPID_DEAD_MS=$(( 1500 * ${SNIC_TIMEOUT_SCALE:-1} ))

fwpid_writer_start() { # PID [--fake-alive|--fake-dead]
	bg_start "$SNIC_CASE_DIR/writer-$1${2:-}.out" writing \
		"$SNIC_BUILD/tests/snic_liveness" write snic0 "$@"
	WRITER_PID=$BG_PID
}

fwpid_writer_stop() {
	kill "$WRITER_PID" 2>/dev/null || true
	wait "$WRITER_PID" 2>/dev/null || true
}

fwpid_alive() { # stall|- PID [--fake-dead]: the NIC lives whatever the header says
	local what="fw_pid $2${3:+ $3}" tag=$2${3:-}
	local go=$SNIC_CASE_DIR/go-$tag out=$SNIC_CASE_DIR/stall-$tag.out
	if [[ $1 == stall ]]; then
		# a command pending through a stall, opened before the lie
		stall_cmd_start "$out" "$go"
		fwpid_writer_start "${@:2}"
		kill -STOP "$SNIC_EMU_PID"
		touch "$go"
		stall_survived "$STALL_PID" "$out" 3 "reg_mr succeeded" "a REG_MR ($what)"
	else
		fwpid_writer_start "${@:2}"
	fi
	snic_run "devinfo-$tag" 30 ibv_devinfo -d snic0 ||
		snic_fail "snic0 not listed or not opened with $what"
	snic_run "cmds-$tag" 60 "$SNIC_BUILD/tests/snic_liveness" cmds snic0 1500 ||
		snic_fail "commands failed with $what while the NIC lives"
	fwpid_writer_stop
}

fwpid_killed() { # VALUE: fw_pid VALUE, a NIC that looks alive, killed
	local go=$SNIC_CASE_DIR/go-k$1 out=$SNIC_CASE_DIR/killed-$1.out pending
	local go2=$SNIC_CASE_DIR/go2-k$1 out2=$SNIC_CASE_DIR/after-$1.out bar ms
	local bar_fd limit=$FWPID_DEAD_MS
	snic_emu_start
	bar=$SNIC_RUN_DIR/snic0.bar
	fwpid_writer_start "$1" --fake-alive
	stall_cmd_start "$out" "$go"
	pending=$STALL_PID
	stall_cmd_start "$out2" "$go2"
	exec {bar_fd}<"$bar"
	kill -STOP "$SNIC_EMU_PID"
	touch "$go"
	kill_emu_waited "$pending" "$out"
	(( KILLED_RC == 1 )) && grep -q "reg_mr failed" "$out" ||
		snic_fail "fw_pid $1: REG_MR pending on a killed NIC: status $KILLED_RC (want a failure)"
	(( KILLED_MS <= FWPID_DEAD_MS )) ||
		snic_fail "fw_pid $1: the pending REG_MR took $KILLED_MS ms to notice the NIC died"
	if [[ $1 == 1 ]]; then
		# the guard's wait for a truncated file to come back ends at
		# once too (it was 2 s): a bound that does not scale
		truncate -s 0 "/proc/$BASHPID/fd/$bar_fd"
		limit=1000
	fi
	exec {bar_fd}<&-
	touch "$go2"
	wait "$STALL_PID" && snic_fail "fw_pid $1: REG_MR on a dead NIC succeeded"
	sed 's/^/  after| /' "$out2"
	ms=$(sed -n 's/^reg_mr failed after \([0-9.]*\) s.*/\1/p' "$out2" | awk '{ printf "%d", $1 * 1000 }')
	[[ -n $ms ]] && (( ms <= limit )) ||
		snic_fail "fw_pid $1: REG_MR issued after the NIC died did not fail within $limit ms ('$ms')"
	fwpid_writer_stop
	snic_log "fw_pid $1, heartbeat faked: pending REG_MR failed $KILLED_MS ms after the kill, a new one after $ms ms$([[ $1 != 1 ]] || echo ' (BAR file truncated)')"
}

case_fw_pid() {
	snic_need_exec "$SNIC_BUILD/tests/snic_liveness" "$SNIC_BUILD/tests/snic_hostile"
	snic_need_cmd ibv_devinfo truncate
	local dead
	sleep 0 & dead=$!
	wait "$dead" || true
	! kill -0 "$dead" 2>/dev/null || snic_fail "pid $dead is not dead"
	snic_emu_start
	fwpid_alive - self
	fwpid_alive - 1
	fwpid_alive - 0
	fwpid_alive stall "$dead"
	fwpid_alive stall self --fake-dead
	snic_emu_stop || exit 1
	snic_log "NIC alive: listed, opened, commands fine with fw_pid self, 1, 0 and dead ($dead), also with fw_state DOWN and the heartbeat held (fw_pid self)"
	for v in self 1 0; do
		fwpid_killed "$v"
	done
}

case ${1:-} in
slots) case_slots ;;
files) case_files ;;
broker-stall) case_broker_stall ;;
cmd-stall) case_cmd_stall ;;
fw-pid) case_fw_pid ;;
*) snic_fail "usage: $0 slots|files|broker-stall|cmd-stall|fw-pid" ;;
esac
