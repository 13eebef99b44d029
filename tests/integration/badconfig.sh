#!/usr/bin/env bash
# Cases "badconfig/*": snic-emu given a bad configuration must say what is
# wrong and exit non-zero promptly (never hang), leaving no runtime files.
#   tests/integration/badconfig.sh CASE
# CASE: unknown-vdev eal-args port-down socket-dir nic-name nic-ip6 no-port
#       socket-in-use
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

EMU=$SNIC_BUILD/bin/snic-emu
snic_need_exec "$EMU"
RUN_DIR=$(mktemp -d /dev/shm/snic-test.XXXXXX)
SOCK_DIR=$SNIC_CASE_DIR/sock
mkdir -p "$SOCK_DIR"
SERVER_PID=
bad_cleanup() {
	local rc=$?
	[[ -z $SERVER_PID ]] || snic__kill_wait "$SERVER_PID" 10
	rm -rf -- "$RUN_DIR"
	(exit "$rc")
	snic__cleanup
}
trap bad_cleanup EXIT
memif() { # ROLE [SOCKET]
	echo "--vdev=net_memif0,role=$1,socket=${2:-$SOCK_DIR/m.sock},socket-abstract=no"
}

# expect STATUS ERE SECS -- snic-emu arguments
expect() {
	local want=$1 re=$2 secs=$3 rc=0 out
	shift 4
	out=$SNIC_CASE_DIR/emu.out
	snic_log "run: snic-emu --run-dir $RUN_DIR $* (want exit $want, /$re/)"
	timeout -k 5 "$(snic_secs "$secs")" env -u LD_LIBRARY_PATH "$EMU" \
		--run-dir "$RUN_DIR" "$@" >"$out" 2>&1 </dev/null || rc=$?
	sed 's/^/  emu| /' "$out"
	(( rc != 124 && rc != 137 )) || snic_fail "snic-emu hung (killed after ${secs}s)"
	(( rc == want )) || snic_fail "exit status $rc, want $want"
	grep -Eq -- "$re" "$out" || snic_fail "no message matching /$re/"
	[[ -z $(snic__ls "$RUN_DIR") ]] ||
		snic_fail "runtime files left behind: $(snic__ls "$RUN_DIR")"
	snic_log "ok: exit $rc and the message says why"
}

case ${1:-} in
unknown-vdev)
	expect 1 "Unable to parse device 'net_bogus0'.*|DPDK EAL init failed" 30 -- \
		--nic snic0,port=net_bogus0 -- --vdev=net_bogus0
	grep -q "DPDK EAL init failed" "$SNIC_CASE_DIR/emu.out" || snic_fail "no EAL failure line"
	;;
eal-args)
	expect 1 "DPDK EAL init failed: Invalid argument" 30 -- \
		--nic snic0,port=net_memif0 -- --no-such-eal-option
	;;
port-down)
	# A memif client whose server never comes.
	expect 1 "snic0: port net_memif0 did not come up within 2 s" 30 -- \
		--nic snic0,port=net_memif0 --link-timeout 2 -- "$(memif client)"
	;;
socket-dir)
	expect 1 "the directory of memif socket $SOCK_DIR/missing/m.sock does not exist" 30 -- \
		--nic snic0,port=net_memif0 -- "$(memif server "$SOCK_DIR/missing/m.sock")"
	;;
nic-name)
	expect 2 "invalid NIC name '0bad'" 10 -- --nic 0bad,port=net_memif0
	expect 2 "invalid NIC name 'bad/name'" 10 -- --nic bad/name,port=net_memif0
	expect 2 "invalid NIC name 'much-too-long-name'" 10 -- --nic much-too-long-name,port=x
	expect 2 "port=DEV is required" 10 -- --nic snic0
	;;
nic-ip6)
	# GID 1 must be a unicast IPv6 address of its own
	expect 2 "bad ip6 '::ffff:1.2.3.4'" 10 -- --nic snic0,port=net_memif0,ip6=::ffff:1.2.3.4
	expect 2 "bad ip6 'ff02::1'" 10 -- --nic snic0,port=net_memif0,ip6=ff02::1
	expect 2 "bad ip6 '1::2::3'" 10 -- --nic snic0,port=net_memif0,ip6=1::2::3
	expect 2 "share a name, port or address" 10 -- --nic snic0,port=net_memif0,ip6=fd00::1 \
		--nic snic1,port=net_memif1,ip6=fd00::1
	;;
no-port)
	expect 1 "snic0: no DPDK port named 'net_memif9' \(ports: net_memif0\)" 30 -- \
		--nic snic0,port=net_memif9 -- "$(memif server)"
	;;
socket-in-use)
	rm -f -- "$SNIC_CASE_DIR/server.out"
	env -u LD_LIBRARY_PATH "$EMU" --run-dir "$RUN_DIR" --link-timeout 0 \
		--nic snic1,port=net_memif0 -- "$(memif server)" \
		>"$SNIC_CASE_DIR/server.out" 2>&1 </dev/null &
	SERVER_PID=$!
	for (( i = 0; i < 300; i++ )); do
		grep -q "^ready" "$SNIC_CASE_DIR/server.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '^ready' "$SNIC_CASE_DIR/server.out" || snic_fail "the first server is not ready"
	rc=0
	timeout 30 env -u LD_LIBRARY_PATH "$EMU" --run-dir "$RUN_DIR" \
		--nic snic2,port=net_memif0 -- "$(memif server)" \
		>"$SNIC_CASE_DIR/emu.out" 2>&1 </dev/null || rc=$?
	sed 's/^/  emu| /' "$SNIC_CASE_DIR/emu.out"
	(( rc == 1 )) || snic_fail "second server: exit status $rc, want 1"
	grep -q "memif socket $SOCK_DIR/m.sock is in use by another running server" \
		"$SNIC_CASE_DIR/emu.out" || snic_fail "no 'in use' message"
	[[ ! -e $RUN_DIR/snic2.bar ]] || snic_fail "snic2.bar left behind"
	kill -0 "$SERVER_PID" || snic_fail "the first server died"
	snic_log "ok: a second server on a live socket is refused, the first keeps running"
	;;
*)
	snic_fail "usage: $0 unknown-vdev|eal-args|port-down|socket-dir|nic-name|no-port|socket-in-use"
	;;
esac
snic_log "badconfig/$1: passed"
