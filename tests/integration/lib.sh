# shellcheck shell=bash
# Shared helpers for the integration cases (tests/integration/*.sh) and for
# tools/demo.sh.  Source it; do not run it.
#
# What it gives a case:
#   snic_emu_start [snic-emu options]  start snic-emu in the background with a
#                        private run dir, wait for "ready", export SNIC_RUN_DIR
#                        and LD_LIBRARY_PATH for the verbs programs
#   snic_emu_stop        SIGTERM; return 1 ("FAIL: ...") unless it exits 0
#                        within the limit and removed its runtime files
#   snic_run NAME SECS CMD...   run a program with a hard timeout, its output
#                        in $SNIC_CASE_DIR/NAME.out and copied to our stdout
#   snic_verbs_case NAME PROGRAM [options]   one of our verbs programs
#                        (build/tests/PROGRAM) on snic0 and snic1 of its own
#                        snic-emu
#   snic_term_wait PID SECS   SIGTERM, wait for the exit (status in
#                        SNIC_EXIT_RC); 1 when it had to be killed
#   snic_server_client PROG SDEV CDEV PORT SECS SOUT COUT [options]   a
#                        client/server verbs program pair over 127.0.0.1
#   snic_kill_midtraffic SDEV CDEV PORT SECS   a long ibv_rc_pingpong,
#                        both ends SIGKILLed after SECS of traffic
#   snic_pingpong PORT_BASE [ibv_rc_pingpong options]   server on snic1,
#                        client on snic0, over TCP on 127.0.0.1 only
#                        (SNIC_PP_PROG: ibv_ud/uc/srq_pingpong instead;
#                        SNIC_PP_SERVER_DEV/SNIC_PP_CLIENT_DEV: other NICs,
#                        e.g. both snic0 for loopback; SNIC_PP_HOLD_SLOT=1:
#                        the pair's QPs in the second free slot)
#   snic_private_netns "$0" "$@"   re-run the script in a private network
#                        namespace (only loopback) when the machine allows it
#   snic_cpu_group PID...   put processes into one CPU cgroup of this
#                        script (removed on exit); snic_cpu_group_leave PID...
#   snic_fail MSG        print "FAIL: MSG" and end the case (exit 1)
# Everything started here is killed by the EXIT trap, whatever happens.
#
# Environment (set by tests/run.sh; defaults for running a case by hand):
#   SNIC_BUILD      build tree (default: build)
#   SNIC_CASE_DIR   scratch/log folder of this case (default: a temp folder)
#   SNIC_TEST_LOGS  root of all case logs (default: $SNIC_BUILD/test-logs)
#   SNIC_TIMEOUT_SCALE  multiply every timeout (default 1; e.g. 3 for ASan)

SNIC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SNIC_BUILD=${SNIC_BUILD:-build}
case $SNIC_BUILD in
	/*) ;;
	*) SNIC_BUILD=$SNIC_ROOT/$SNIC_BUILD ;;
esac
SNIC_TEST_LOGS=${SNIC_TEST_LOGS:-$SNIC_BUILD/test-logs}
SNIC_TIMEOUT_SCALE=${SNIC_TIMEOUT_SCALE:-1}
export SNIC_BUILD SNIC_TEST_LOGS SNIC_TIMEOUT_SCALE
# Stable, parseable output from every tool we call.
export LC_ALL=C

if [[ -z ${SNIC_CASE_DIR:-} ]]; then
	SNIC_CASE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/snic-case.XXXXXX")
fi
mkdir -p "$SNIC_CASE_DIR"
export SNIC_CASE_DIR

SNIC_EMU_PID=
SNIC_EMU_LOG=
SNIC_EMU_RUN_DIR=      # the private run dir we created (removed on exit)
SNIC_BG_PIDS=()        # other background programs to kill on exit

# Seconds, scaled: snic_secs 30 -> 30 * SNIC_TIMEOUT_SCALE
snic_secs() {
	echo $(( $1 * SNIC_TIMEOUT_SCALE ))
}

snic_log() {
	printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"
}

snic_fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}

# Print the last lines of a file, indented, to stderr (for failure reports).
snic_tail() { # FILE [LINES]
	local f=$1 n=${2:-30}
	if [[ -s $f ]]; then
		echo "---- last $n lines of $f" >&2
		tail -n "$n" -- "$f" | sed 's/^/    /' >&2
	elif [[ -e $f ]]; then
		echo "---- $f is empty" >&2
	fi
}

# Names in a folder, on one line (for messages).
snic__ls() { # DIR
	local f names=()
	for f in "$1"/* "$1"/.[!.]*; do
		[[ -e $f ]] && names+=("${f##*/}")
	done
	echo "${names[*]}"
}

snic_need_exec() { # PATH...
	local p
	for p in "$@"; do
		[[ -x $p ]] || snic_fail "$p is missing or not executable (was it built? run 'make')"
	done
}

snic_need_cmd() { # CMD...
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			snic_fail "'$c' not found (run tools/setup-deps.sh)"
	done
}

# ---------------------------------------------------------------- cleanup

# SIGTERM to PID (our child), then wait up to SECS seconds for it to exit.
# Returns 0 once it has, its exit status in SNIC_EXIT_RC; 1 when it was
# still running (it is then killed with SIGKILL and reaped).
snic_term_wait() { # PID SECS
	local pid=$1 secs=$2 i
	SNIC_EXIT_RC=0
	kill -TERM "$pid" 2>/dev/null || true
	for (( i = 0; i < secs * 10; i++ )); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		return 1
	fi
	wait "$pid" 2>/dev/null || SNIC_EXIT_RC=$?
}

snic__kill_wait() { # PID SECS: TERM, wait up to SECS, then KILL
	kill -0 "$1" 2>/dev/null || return 0
	snic_term_wait "$1" "$2" ||
		echo "cleanup: pid $1 ignored SIGTERM for ${2}s, sent SIGKILL" >&2
}

snic__cleanup() { # [STATUS]: the case's, else $?
	local rc=${1:-$?} pid
	trap - EXIT INT TERM
	for pid in "${SNIC_BG_PIDS[@]}"; do
		snic__kill_wait "$pid" 3
	done
	if [[ -n $SNIC_EMU_PID ]]; then
		echo "cleanup: snic-emu (pid $SNIC_EMU_PID) still running, stopping it" >&2
		snic__kill_wait "$SNIC_EMU_PID" 10
		SNIC_EMU_PID=
		[[ -n $SNIC_EMU_LOG ]] && snic_tail "$SNIC_EMU_LOG" 20
	fi
	if [[ -n $SNIC_EMU_RUN_DIR ]]; then
		rm -rf -- "$SNIC_EMU_RUN_DIR"
	fi
	snic__cpu_group_remove
	exit "$rc"
}

# ---------------------------------------------------------------- CPU group
# snic_cpu_group PID...: move the processes (every thread; their children
# from then on) into one CPU cgroup of this script, created on first use and
# removed on exit; 1 where no cpu controller is writable.  Why: the kernel's
# autogroup schedules each session as one entity, and sched_yield, how
# snic-emu and ibv_poll_cq give the CPU away while they poll, only passes it
# to tasks of the same group.  MPICH's launcher starts every rank in a
# session of its own, so with more pollers than cores a rank that waits
# keeps a core from snic-emu or from its peer until the scheduler's tick.
# A batch system's job cgroup puts the job together the same way (README
# "UCX, Open MPI and MPICH over snic").
SNIC_CPU_GROUP=        # the cgroup we created
SNIC_CPU_GROUP_HOME=   # where this shell was before
snic_cpu_group() { # PID...
	local root pid
	if [[ -z $SNIC_CPU_GROUP ]]; then
		if [[ -w /sys/fs/cgroup/cpu/cgroup.procs ]]; then
			root=/sys/fs/cgroup/cpu     # cgroup v1, cpu controller
			SNIC_CPU_GROUP_HOME=$root$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3; exit }' /proc/self/cgroup)
		elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
			root=/sys/fs/cgroup         # cgroup v2
			SNIC_CPU_GROUP_HOME=$root$(awk -F: '$1 == 0 { print $3; exit }' /proc/self/cgroup)
		else
			return 1
		fi
		SNIC_CPU_GROUP_HOME=${SNIC_CPU_GROUP_HOME%/}
		mkdir "$root/snic-job.$$" 2>/dev/null || return 1
		SNIC_CPU_GROUP=$root/snic-job.$$
	fi
	for pid in "$@"; do
		echo "$pid" >"$SNIC_CPU_GROUP/cgroup.procs" || return 1
	done
}

# snic_cpu_group_leave PID...: back to where this shell was.
snic_cpu_group_leave() { # PID...
	local pid
	[[ -n $SNIC_CPU_GROUP ]] || return 0
	for pid in "$@"; do
		echo "$pid" >"$SNIC_CPU_GROUP_HOME/cgroup.procs" 2>/dev/null || true
	done
}

# This shell back; the group goes once it is empty.
snic__cpu_group_remove() {
	[[ -n $SNIC_CPU_GROUP ]] || return 0
	snic_cpu_group_leave $$
	rmdir "$SNIC_CPU_GROUP" 2>/dev/null ||
		echo "cleanup: $SNIC_CPU_GROUP still has processes: $(tr '\n' ' ' <"$SNIC_CPU_GROUP/cgroup.procs")" >&2
	SNIC_CPU_GROUP=
}

trap snic__cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Forget a background pid once it has been waited for.
snic__untrack() { # PID
	local p keep=()
	for p in "${SNIC_BG_PIDS[@]}"; do
		[[ $p == "$1" ]] || keep+=("$p")
	done
	SNIC_BG_PIDS=("${keep[@]}")
}

# ---------------------------------------------------------------- programs

# Wait (bounded) for the background server $SPID, once its client is done:
# its output (NAME.out) shown indented, status 0 required; SPID cleared.
snic_server_done() { # NAME
	local name=$1 i secs rc=0
	secs=$(snic_secs 60)
	for (( i = 0; i < secs * 10; i++ )); do
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SPID" 2>/dev/null; then
		kill -KILL "$SPID" 2>/dev/null || true
		snic_fail "$name: server still running ${secs}s after its client finished"
	fi
	wait "$SPID" || rc=$?
	snic__untrack "$SPID"
	SPID=
	sed "s/^/  $name| /" "$SNIC_CASE_DIR/$name.out"
	(( rc == 0 )) || snic_fail "$name: server exit status $rc"
}

# Run CMD with a hard timeout; output to $SNIC_CASE_DIR/NAME.out and, indented,
# to our stdout.  Returns CMD's status (124 = timed out).
snic_run() { # NAME SECS CMD...
	local name=$1 secs rc=0
	secs=$(snic_secs "$2")
	shift 2
	local out=$SNIC_CASE_DIR/$name.out
	snic_log "run: $* (limit ${secs}s)"
	# --foreground keeps the program in our process group, so the runner's
	# own timeout reaches it too.
	timeout --foreground -k 5 "$secs" "$@" >"$out" 2>&1 </dev/null || rc=$?
	sed "s/^/  $name| /" "$out"
	if (( rc == 124 || rc == 137 )); then
		snic_log "$name: timed out after ${secs}s"
	elif (( rc != 0 )); then
		snic_log "$name: exit status $rc"
	fi
	return "$rc"
}

# ---------------------------------------------------------------- snic-emu

# Start snic-emu with a private run dir; returns once it printed "ready".
# Exports SNIC_RUN_DIR (where the host driver finds the NICs) and
# LD_LIBRARY_PATH (our libibverbs.so.1 first) for the programs run next.
# shellcheck disable=SC2120 # options are optional
snic_emu_start() { # [snic-emu options...]
	local emu=$SNIC_BUILD/bin/snic-emu limit i f base
	snic_need_exec "$emu"
	[[ -z $SNIC_EMU_PID ]] || snic_fail "snic_emu_start: snic-emu already running"
	base=/dev/shm
	[[ -d $base && -w $base ]] || base=${TMPDIR:-/tmp}
	SNIC_EMU_RUN_DIR=$(mktemp -d "$base/snic-test.XXXXXX") ||
		snic_fail "cannot create a run dir under $base"
	SNIC_EMU_LOG=$SNIC_CASE_DIR/snic-emu.log
	# emptied here, not only by the redirection below: that one is made
	# by the child after the fork, and the loop's first grep could still
	# find a previous start's "ready" in the log (then the case went on
	# before this emulator had even made its BAR: ibv_get_device_list
	# skipped the half-made file, "not a live snic BAR")
	: >"$SNIC_EMU_LOG"
	snic_log "start: snic-emu --run-dir $SNIC_EMU_RUN_DIR $*"
	# snic-emu gets neither our LD_LIBRARY_PATH nor a stdin.
	env -u LD_LIBRARY_PATH "$emu" --run-dir "$SNIC_EMU_RUN_DIR" "$@" \
		>"$SNIC_EMU_LOG" 2>&1 </dev/null &
	SNIC_EMU_PID=$!
	limit=$(snic_secs "${SNIC_EMU_READY_TIMEOUT:-30}")
	for (( i = 0; ; i++ )); do
		if grep -q '^ready:' "$SNIC_EMU_LOG" 2>/dev/null; then
			break
		fi
		if ! kill -0 "$SNIC_EMU_PID" 2>/dev/null; then
			local rc=0
			wait "$SNIC_EMU_PID" || rc=$?
			SNIC_EMU_PID=
			snic_tail "$SNIC_EMU_LOG" 40
			snic_fail "snic-emu exited (status $rc) before printing 'ready'"
		fi
		if (( i >= limit * 10 )); then
			snic_tail "$SNIC_EMU_LOG" 40
			snic_fail "snic-emu printed no 'ready' within ${limit}s (is its stdout flushed?)"
		fi
		sleep 0.1
	done
	# the default pair's files (with --nic, the NICs name their own)
	[[ " $* " == *" --nic "* ]] || for f in snic0.bar snic1.bar host0.mem; do
		[[ -e $SNIC_EMU_RUN_DIR/$f ]] ||
			snic_fail "snic-emu is ready but $SNIC_EMU_RUN_DIR/$f does not exist (have: $(snic__ls "$SNIC_EMU_RUN_DIR"))"
	done
	snic_log "snic-emu ready after ~$(( i / 10 )).$(( i % 10 ))s (pid $SNIC_EMU_PID)"
	export SNIC_RUN_DIR=$SNIC_EMU_RUN_DIR
	export LD_LIBRARY_PATH=$SNIC_BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# Stop snic-emu with SIGTERM.  Returns 1 (after printing "FAIL: ...") unless
# it exits with status 0 within the limit and removed its runtime files.
# Cases call it as:  snic_emu_stop || exit 1
snic_emu_stop() {
	local pid=$SNIC_EMU_PID limit rc f left=()
	if [[ -z $pid ]]; then
		echo "FAIL: snic_emu_stop: snic-emu is not running" >&2
		return 1
	fi
	limit=$(snic_secs "${SNIC_EMU_STOP_TIMEOUT:-20}")
	snic_log "stop: SIGTERM to snic-emu (pid $pid)"
	if ! snic_term_wait "$pid" "$limit"; then
		SNIC_EMU_PID=
		snic_tail "$SNIC_EMU_LOG" 40
		echo "FAIL: snic-emu did not exit within ${limit}s of SIGTERM (killed)" >&2
		return 1
	fi
	rc=$SNIC_EXIT_RC
	SNIC_EMU_PID=
	unset SNIC_RUN_DIR
	if (( rc != 0 )); then
		snic_tail "$SNIC_EMU_LOG" 40
		echo "FAIL: snic-emu exited with status $rc after SIGTERM (want 0)" >&2
		return 1
	fi
	for f in snic0.bar snic1.bar host0.mem; do
		[[ ! -e $SNIC_EMU_RUN_DIR/$f ]] || left+=("$f")
	done
	if (( ${#left[@]} )); then
		echo "FAIL: snic-emu exited but left its runtime files in $SNIC_EMU_RUN_DIR: ${left[*]}" >&2
		return 1
	fi
	if [[ -n $(snic__ls "$SNIC_EMU_RUN_DIR") ]]; then
		snic_log "note: other files left in the run dir: $(snic__ls "$SNIC_EMU_RUN_DIR")"
	fi
	snic_log "snic-emu exited 0 and removed its runtime files"
	rm -rf -- "$SNIC_EMU_RUN_DIR"
	SNIC_EMU_RUN_DIR=
}

# One of our verbs programs (build/tests/PROGRAM: snic_verbs_test,
# snic_verbs_ext) on snic0 and snic1 of its own snic-emu, output in
# $SNIC_CASE_DIR/NAME.out.  Ends the case unless the program exits 0 and
# the emulator stops cleanly; returns with $SNIC_EMU_LOG still there.
snic_verbs_case() { # NAME PROGRAM [program options...]
	local name=$1 prog=$2 rc=0
	shift 2
	snic_need_exec "$SNIC_BUILD/tests/$prog"
	snic_emu_start
	snic_run "$name" 240 "$SNIC_BUILD/tests/$prog" --dev0 snic0 --dev1 snic1 "$@" || rc=$?
	snic_emu_stop || exit 1
	(( rc == 0 )) || snic_fail "$prog $* failed (status $rc)"
}

# ---------------------------------------------------------------- TCP ports

# /proc/net/tcp{,6} lines whose local port is PORT (state filter optional).
snic__tcp_port() { # PORT [STATE_HEX]
	local hex files=() f
	printf -v hex '%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		[[ -r $f ]] && files+=("$f")
	done
	(( ${#files[@]} )) || return 1
	awk -v p=":$hex" -v st="${2:-}" '
		FNR > 1 && substr($2, length($2) - 4) == p && (st == "" || $4 == st) { found = 1 }
		END { exit !found }' "${files[@]}"
}

# First TCP port from BASE on that no local socket uses.
# snic_median_row COL: of the rows on stdin, the one whose column COL
# is the median (make bench's repeated runs: one outlier of a shared
# machine drops out).
snic_median_row() { sort -g -k "$1,$1" | awk '{ r[NR] = $0 } END { print r[int((NR + 1) / 2)] }'; }

# snic_pct A B: A as a percentage of B ("12.3 %"); "-" when A is empty
# or B is not above 0.
snic_pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.1f %%", 100 * a / b; else print "-" }'; }

# snic_bw_iters SIZE: perftest -n for a bandwidth run of SIZE-byte
# messages (make bench): 512 MiB or 200,000 messages, whichever is fewer,
# at least 500.  At -n 5000 a 64-B run lasted ~2 ms and a 4 KiB one ~4 ms,
# so one late scheduler turn of this shared VM decided the figure.
# SNIC_BENCH_ITERS overrides it.
snic_bw_iters() {
	local n
	[[ -n ${SNIC_BENCH_ITERS:-} ]] && { echo "$SNIC_BENCH_ITERS"; return; }
	n=$(( (512 << 20) / $1 ))
	(( n > 200000 )) && n=200000
	(( n < 500 )) && n=500
	echo "$n"
}

snic_free_port() { # BASE
	local p
	for (( p = $1; p < $1 + 200; p++ )); do
		if ! snic__tcp_port "$p"; then
			echo "$p"
			return 0
		fi
	done
	snic_fail "no free TCP port in $1..$(( $1 + 199 ))"
}

# Wait until something listens on PORT; give up if PID dies or after SECS.
snic_wait_listen() { # PORT SECS PID
	local port=$1 secs pid=$3 i
	secs=$(snic_secs "$2")
	for (( i = 0; i < secs * 10; i++ )); do
		snic__tcp_port "$port" 0A && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Re-run the calling script inside a private network namespace that has only
# a loopback interface, when the machine allows it (root, or unprivileged
# user namespaces).  ibv_rc_pingpong's server binds the wildcard address; in
# the namespace, nothing outside this test can reach it.  Call it first
# thing:  snic_private_netns "$0" "$@"
snic_private_netns() { # SCRIPT [ARGS...]
	[[ ${SNIC_IN_NETNS:-} == 1 || ${SNIC_NO_NETNS:-} == 1 ]] && return 0
	if command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1; then
		local flags=(--net)
		(( EUID == 0 )) || flags=(--user --map-root-user --net)
		if unshare "${flags[@]}" -- ip link set lo up 2>/dev/null; then
			trap - EXIT INT TERM
			exec env SNIC_IN_NETNS=1 SNIC_CASE_DIR="$SNIC_CASE_DIR" \
				unshare "${flags[@]}" -- bash -c \
				'ip link set lo up && exec bash "$@"' snic-netns "$@"
		fi
	fi
	snic_log "note: no private network namespace here; TCP stays on 127.0.0.1 (the pingpong server binds the wildcard address)"
}

# ---------------------------------------------------------------- pingpong

# A client/server pair of verbs programs (ibv_*_pingpong, perftest): PROG
# as the server on SDEV, then, once something listens on PORT, as the
# client on CDEV towards 127.0.0.1, the same options for both (they name
# PORT), each under a hard limit of SECS.  Output in SOUT and COUT, shown
# indented afterwards.  A client that fails does not leave the server
# waiting.  Sets SNIC_SERVER_RC and SNIC_CLIENT_RC (124 or 137: timed out);
# ends the case when the server never listens.
snic_server_client() { # PROG SDEV CDEV PORT SECS SOUT COUT [options...]
	local prog=$1 sdev=$2 cdev=$3 port=$4 secs=$5 sout=$6 cout=$7 spid
	shift 7
	SNIC_SERVER_RC=0 SNIC_CLIENT_RC=0
	snic_log "server: $prog -d $sdev $*"
	timeout --foreground -k 5 "$secs" "$prog" -d "$sdev" "$@" >"$sout" 2>&1 </dev/null &
	spid=$!
	SNIC_BG_PIDS+=("$spid")
	if ! snic_wait_listen "$port" 30 "$spid"; then
		kill -TERM "$spid" 2>/dev/null || true
		wait "$spid" || SNIC_SERVER_RC=$?
		snic__untrack "$spid"
		sed 's/^/  server| /' "$sout"
		snic_fail "$prog server never listened on port $port (status $SNIC_SERVER_RC)"
	fi
	snic_log "client: $prog -d $cdev $* 127.0.0.1"
	timeout --foreground -k 5 "$secs" "$prog" -d "$cdev" "$@" 127.0.0.1 \
		>"$cout" 2>&1 </dev/null || SNIC_CLIENT_RC=$?
	if (( SNIC_CLIENT_RC != 0 )); then
		# A failed client can leave the server waiting for completions.
		sleep 1
		kill -TERM "$spid" 2>/dev/null || true
	fi
	wait "$spid" || SNIC_SERVER_RC=$?
	snic__untrack "$spid"
	sed 's/^/  server| /' "$sout"
	sed 's/^/  client| /' "$cout"
}

# SNIC_PP_HOLD_SLOT=1: while the pair runs, a waiting ibv_rc_pingpong
# server on each NIC (it listens only once its QP exists) holds the first
# free QP slot, so the pair's QPs take the next one: with 2 firmware cores
# per NIC, slot 2 is core 0's and slot 3 core 1's (tests/integration/cores.sh).
snic__hold_slots() { # PORT_BASE
	local dev port pid
	for dev in snic0 snic1; do
		port=$(snic_free_port "$1") || return 1
		ibv_rc_pingpong -d "$dev" -g 0 -p "$port" \
			>"$SNIC_CASE_DIR/holder-$dev.out" 2>&1 </dev/null &
		pid=$!
		SNIC_BG_PIDS+=("$pid")
		SNIC_PP_HOLDERS+=("$pid")
		if ! snic_wait_listen "$port" 30 "$pid"; then
			echo "slot holder on $dev never listened: $(cat "$SNIC_CASE_DIR/holder-$dev.out")" >&2
			return 1
		fi
	done
	snic_log "a waiting ibv_rc_pingpong server on snic0 and snic1 holds the first free QP slot"
}

snic__release_slots() {
	local pid
	kill -TERM "${SNIC_PP_HOLDERS[@]}" 2>/dev/null || true
	for pid in "${SNIC_PP_HOLDERS[@]}"; do
		wait "$pid" 2>/dev/null || true
		snic__untrack "$pid"
	done
	SNIC_PP_HOLDERS=()
}

# ibv_rc_pingpong: server on snic1, client on snic0 -> 127.0.0.1.  Both must
# exit 0 and print the "N bytes in S seconds" line.  Leaves the result lines
# in $SNIC_CASE_DIR/pingpong-{server,client}.out.
snic_pingpong() { # PORT_BASE [ibv_rc_pingpong options...]
	local base=$1 port src crc secs ok=1 side
	local prog=${SNIC_PP_PROG:-ibv_rc_pingpong}
	local sdev=${SNIC_PP_SERVER_DEV:-snic1} cdev=${SNIC_PP_CLIENT_DEV:-snic0}
	shift
	snic_need_cmd "$prog"
	port=$(snic_free_port "$base") || return 1
	secs=$(snic_secs "${SNIC_PINGPONG_TIMEOUT:-60}")
	local sout=$SNIC_CASE_DIR/pingpong-server.out cout=$SNIC_CASE_DIR/pingpong-client.out
	rm -f -- "$sout" "$cout"
	if [[ ${SNIC_IN_NETNS:-} == 1 ]]; then
		snic_log "TCP for the QP exchange: 127.0.0.1:$port in a private network namespace"
	fi
	SNIC_PP_HOLDERS=()
	if [[ ${SNIC_PP_HOLD_SLOT:-} == 1 ]]; then
		snic__hold_slots $((base + 40)) || { snic__release_slots; return 1; }
	fi
	snic_server_client "$prog" "$sdev" "$cdev" "$port" "$secs" "$sout" "$cout" \
		-g "${SNIC_PP_GID:-0}" -p "$port" "$@"
	snic__release_slots
	src=$SNIC_SERVER_RC crc=$SNIC_CLIENT_RC
	for side in server client; do
		local rc=$src out=$sout
		[[ $side == client ]] && { rc=$crc; out=$cout; }
		if (( rc == 124 || rc == 137 )); then
			echo "$prog $side: timed out after ${secs}s" >&2; ok=0
		elif (( rc != 0 )); then
			echo "$prog $side: exit status $rc" >&2; ok=0
		fi
		# SNIC_PP_OK_RE: the line that says it worked, for programs
		# that print another (ibv_xsrq_pingpong: "success")
		if ! grep -Eq "${SNIC_PP_OK_RE:-^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec\$}" "$out"; then
			echo "$prog $side: no '${SNIC_PP_OK_RE:-bytes in ... seconds}' line" >&2; ok=0
		fi
	done
	(( ok )) || return 1
}

# A long ibv_rc_pingpong (server on SDEV, client on CDEV), both ends killed
# with SIGKILL after SECS seconds of traffic: processes that die owning
# contexts, QPs, CQs and MRs.  Output in $SNIC_CASE_DIR/victim-*.out.
snic_kill_midtraffic() { # SDEV CDEV PORT SECS
	local sdev=$1 cdev=$2 port=$3 secs=$4 spid cpid
	snic_log "long pingpong on port $port, to be killed mid-traffic"
	ibv_rc_pingpong -d "$sdev" -g 0 -p "$port" -n 100000000 \
		>"$SNIC_CASE_DIR/victim-server.out" 2>&1 </dev/null &
	spid=$!
	SNIC_BG_PIDS+=("$spid")
	snic_wait_listen "$port" 60 "$spid" || snic_fail "victim server never listened"
	ibv_rc_pingpong -d "$cdev" -g 0 -p "$port" -n 100000000 127.0.0.1 \
		>"$SNIC_CASE_DIR/victim-client.out" 2>&1 </dev/null &
	cpid=$!
	SNIC_BG_PIDS+=("$cpid")
	sleep "$secs"
	kill -0 "$cpid" 2>/dev/null ||
		snic_fail "victim client ended early: $(cat "$SNIC_CASE_DIR/victim-client.out")"
	kill -KILL "$cpid" "$spid"
	wait "$cpid" "$spid" 2>/dev/null || true
	snic__untrack "$cpid"
	snic__untrack "$spid"
	snic_log "killed both victims (SIGKILL) while traffic was flowing"
}
