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

# a copy of snic0.bar named $1 whose header names host memory $2 ("" = same)
fake_bar() { # NAME HOSTMEM
	local d=$SNIC_RUN_DIR
	cp "$d/snic0.bar" "$d/$1.bar"
	# name (offset 8, 16 bytes) and host_mem (offset 24, 64 bytes)
	printf '%s\0' "$1" | dd of="$d/$1.bar" bs=1 seek=8 conv=notrunc status=none
	[[ -z $2 ]] || printf '%s\0' "$2" | dd of="$d/$1.bar" bs=1 seek=24 conv=notrunc status=none
	chmod 600 "$d/$1.bar"
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
# status in KILLED_RC, the time of the kill in KILLED_T0, its output OUT
# shown.
kill_emu_waited() { # PID OUT
	KILLED_RC=0
	sleep 1
	KILLED_T0=$SECONDS
	kill -KILL "$SNIC_EMU_PID"
	wait "$SNIC_EMU_PID" 2>/dev/null || true
	SNIC_EMU_PID=
	wait "$1" || KILLED_RC=$?
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

# CMD... in the background (output in OUT, pid in BG_PID, stopped by
# lib.sh's clean-up if the case fails) once it printed a line starting
# with READY.
bg_start() { # OUT READY CMD...
	local out=$1 ready=$2 i
	shift 2
	"$@" >"$out" 2>&1 </dev/null &
	BG_PID=$!
	SNIC_BG_PIDS+=("$BG_PID")
	for (( i = 0; i < 300; i++ )); do
		grep -q "^$ready" "$out" && return 0
		kill -0 "$BG_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$out"
	snic_fail "$(basename "$1" .out): no '$ready' from $*"
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

case ${1:-} in
slots) case_slots ;;
files) case_files ;;
broker-stall) case_broker_stall ;;
cmd-stall) case_cmd_stall ;;
*) snic_fail "usage: $0 slots|files|broker-stall|cmd-stall" ;;
esac
