# shellcheck shell=bash
# Helpers for the qemu-virt cases (tests/integration/qemu.sh) and for
# tools/demo-qemu.sh, on top of lib.sh.  Source it; do not run it.
#
#   qv_need_image           fail unless `make qemu` built the images
#   qv_run_dir              a private run dir (unless snic_emu_start made one)
#                           exported as SNIC_RUN_DIR, with LD_LIBRARY_PATH
#   qv_start NAME IP NET [snic-qemu options]   start tools/snic-qemu in the
#                           background; returns once it printed "ready:"
#   qv_stop NAME            SIGTERM; return 1 ("FAIL: ...") unless it exits 0
#                           within the limit and removed its BAR file
# Every launcher still running when the case ends is stopped (then killed).

# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QV_LAUNCHER=$SNIC_ROOT/tools/snic-qemu
QV_IMAGE=$SNIC_BUILD/qemu-virt/snic-fw.elf
QV_FAULT_IMAGE=$SNIC_BUILD/qemu-virt/snic-fw-fault.elf
declare -A QV_PID=() QV_LOG=()
# a command qv_start runs the launcher under (e.g. setpriv dropping every
# capability: memfd-race); empty: as we are
QV_AS=()
QV_OWN_RUN_DIR=

qv__cleanup() {
	local n
	for n in "${!QV_PID[@]}"; do
		echo "cleanup: snic-qemu $n (pid ${QV_PID[$n]}) still running, stopping it" >&2
		snic__kill_wait "${QV_PID[$n]}" 15
		snic_tail "${QV_LOG[$n]}" 20
	done
	[[ -z $QV_OWN_RUN_DIR ]] || rm -rf -- "$QV_OWN_RUN_DIR"
	return 0
}
# The case's status goes to snic__cleanup as an argument: when qv__cleanup
# returned it, a failed case's non-zero return ended the trap there under
# errexit (lib.sh's clean-up never ran: background programs, snic-emu and
# the run dir were left behind).
qv__rc=0
trap 'qv__rc=$?; qv__cleanup; snic__cleanup "$qv__rc"' EXIT

qv_need_image() {
	snic_need_cmd qemu-system-aarch64
	[[ -r $QV_IMAGE && -r $QV_FAULT_IMAGE ]] ||
		snic_fail "$QV_IMAGE is missing: build it with 'make qemu' (case qemu/build)"
}

qv_run_dir() {
	if [[ -z ${SNIC_RUN_DIR:-} || -z $SNIC_EMU_RUN_DIR ]]; then
		QV_OWN_RUN_DIR=$(mktemp -d /dev/shm/snic-test.XXXXXX) ||
			snic_fail "cannot create a run dir under /dev/shm"
		export SNIC_RUN_DIR=$QV_OWN_RUN_DIR
	fi
	export LD_LIBRARY_PATH=$SNIC_BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

qv_start() { # NAME IP NET [snic-qemu options...]
	local name=$1 ip=$2 net=$3 log i limit
	shift 3
	[[ -n ${SNIC_RUN_DIR:-} ]] || qv_run_dir
	log=$SNIC_CASE_DIR/snic-qemu-$name.log
	QV_LOG[$name]=$log
	snic_log "start: snic-qemu --name $name --ip $ip --net $net $*"
	"${QV_AS[@]}" env -u LD_LIBRARY_PATH "$QV_LAUNCHER" --name "$name" --ip "$ip" --net "$net" \
		--run-dir "$SNIC_RUN_DIR" --image "$QV_IMAGE" \
		--console "$SNIC_CASE_DIR/console-$name.log" "$@" \
		>"$log" 2>&1 </dev/null &
	QV_PID[$name]=$!
	limit=$(snic_secs 60)
	for (( i = 0; ; i++ )); do
		grep -q '^snic-qemu: ready:' "$log" 2>/dev/null && break
		if ! kill -0 "${QV_PID[$name]}" 2>/dev/null; then
			local rc=0
			wait "${QV_PID[$name]}" || rc=$?
			unset "QV_PID[$name]"
			snic_tail "$log" 40
			snic_tail "$SNIC_CASE_DIR/console-$name.log" 20
			snic_fail "snic-qemu $name exited (status $rc) before 'ready'"
		fi
		(( i < limit * 10 )) || {
			snic_tail "$log" 40
			snic_fail "snic-qemu $name not ready within ${limit}s"
		}
		sleep 0.1
	done
	snic_log "$(grep '^snic-qemu: ready:' "$log")"
}

qv_stop() { # NAME
	local name=$1 pid=${QV_PID[$1]:-} rc limit
	[[ -n $pid ]] || { echo "FAIL: qv_stop: $name is not running" >&2; return 1; }
	limit=$(snic_secs 20)
	snic_log "stop: SIGTERM to snic-qemu $name (pid $pid)"
	if ! snic_term_wait "$pid" "$limit"; then
		unset "QV_PID[$name]"
		snic_tail "${QV_LOG[$name]}" 40
		echo "FAIL: snic-qemu $name did not exit within ${limit}s of SIGTERM" >&2
		return 1
	fi
	rc=$SNIC_EXIT_RC
	unset "QV_PID[$name]"
	sed "s/^/  $name| /" "${QV_LOG[$name]}"
	sed "s/^/  $name console| /" "$SNIC_CASE_DIR/console-$name.log"
	if (( rc != 0 )); then
		echo "FAIL: snic-qemu $name exited with status $rc after SIGTERM (want 0)" >&2
		return 1
	fi
	if [[ -e $SNIC_RUN_DIR/$name.bar ]]; then
		echo "FAIL: snic-qemu $name left $SNIC_RUN_DIR/$name.bar behind" >&2
		return 1
	fi
	grep -q 'stop requested, stopping' "$SNIC_CASE_DIR/console-$name.log" || {
		echo "FAIL: the firmware of $name did not report a clean stop" >&2
		return 1
	}
	snic_log "snic-qemu $name exited 0 and removed its BAR"
}

# snic-emu with --nic ports, up to 60 s to get ready (lib.sh's
# snic_emu_start); snic_emu_stop stops it as usual.
qv_emu_start() { # [snic-emu options...]
	SNIC_EMU_READY_TIMEOUT=60 snic_emu_start "$@"
}
