#!/usr/bin/env bash
# What `make demo` runs after building: bring up two emulated NICs, run
# Debian's unmodified verbs programs and our own through them, show what
# moved, stop the NICs.  Exits non-zero if any step failed.
#
#   tools/demo.sh            (SNIC_BUILD selects the build tree, default build)
#
# Everything it starts is stopped on exit, also on Ctrl-C.  Its logs stay in
# $SNIC_BUILD/demo/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# --- qemu-virt board (issue 4): `make demo BOARD=qemu-virt` runs the same
# demo on two NICs that are bare-metal images in QEMU.
if [[ ${BOARD:-emu} == qemu-virt ]]; then
	exec "$ROOT/tools/demo-qemu.sh" "$@"
fi
# --- end qemu-virt
SNIC_BUILD=${SNIC_BUILD:-${BUILD:-build}}
export SNIC_CASE_DIR=${SNIC_CASE_DIR:-$SNIC_BUILD/demo}
# shellcheck source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"

# The pingpong programs talk TCP (127.0.0.1) to swap QP numbers; run the
# whole demo in a private network namespace when the machine allows it.
snic_private_netns "$0" "$@"

if [[ -t 1 ]]; then
	B=$'\e[1m' G=$'\e[32m' R=$'\e[31m' N=$'\e[0m'
else
	B='' G='' R='' N=''
fi
failed=()
step() { printf '\n%s==> %s%s\n' "$B" "$*" "$N"; }
ok() { printf '    %sok%s  %s\n' "$G" "$N" "$*"; }
bad() { printf '    %sFAILED%s  %s\n' "$R" "$N" "$*"; failed+=("$1"); }
indent() { sed 's/^/    /'; }
rel() { echo "${1#"$ROOT"/}"; }

snic_need_exec "$SNIC_BUILD/bin/snic-emu" "$SNIC_BUILD/tests/snic_verbs_test"
[[ -f $SNIC_BUILD/lib/libibverbs.so.1 ]] ||
	snic_fail "$SNIC_BUILD/lib/libibverbs.so.1 is missing (was it built? run 'make')"
snic_need_cmd ibv_devinfo ibv_rc_pingpong
rm -f -- "$SNIC_CASE_DIR"/*.out "$SNIC_CASE_DIR"/*.log

printf '%ssnic demo%s: RDMA NIC firmware on two emulated NICs, driven by unmodified verbs programs\n' "$B" "$N"
echo "  host driver: $(rel "$SNIC_BUILD/lib/libibverbs.so.1") (LD_LIBRARY_PATH), logs: $(rel "$SNIC_CASE_DIR")/"

# ------------------------------------------------------------------ 1
step "1. Start snic-emu: snic0 (198.18.0.1) and snic1 (198.18.0.2), back-to-back"
# On failure snic_emu_start prints why (and snic-emu's log) and ends the demo.
snic_emu_start >"$SNIC_CASE_DIR/demo-start.out"
ok "ready (pid $SNIC_EMU_PID, runtime files in $SNIC_RUN_DIR)"

# ------------------------------------------------------------------ 2
step "2. ibv_devinfo (Debian's ibverbs-utils) sees the NICs"
if timeout --foreground 20 ibv_devinfo >"$SNIC_CASE_DIR/devinfo.out" 2>&1; then
	indent <"$SNIC_CASE_DIR/devinfo.out"
	ok "ibv_devinfo"
else
	indent <"$SNIC_CASE_DIR/devinfo.out"
	bad "ibv_devinfo"
fi

# ------------------------------------------------------------------ 3
step "3. ibv_rc_pingpong: server on snic1, client on snic0 (RC SEND/RECV, 1000 x 4096 bytes, RoCE v2 GID 0)"
if ( snic_pingpong 18515 ) >"$SNIC_CASE_DIR/pingpong.out" 2>&1; then
	ok "ibv_rc_pingpong: both sides exited 0"
else
	grep -E '^FAIL|^ibv_rc_pingpong' "$SNIC_CASE_DIR/pingpong.out" | indent || true
	tail -n 8 "$SNIC_CASE_DIR/pingpong-client.out" 2>/dev/null | indent || true
	bad "ibv_rc_pingpong (see $(rel "$SNIC_CASE_DIR")/pingpong*.out)"
fi

# ------------------------------------------------------------------ 4
step "4. snic_verbs_test --only write,read,send (our program: data checked byte for byte)"
vt=0
timeout --foreground 300 "$SNIC_BUILD/tests/snic_verbs_test" --dev0 snic0 --dev1 snic1 \
	--only write,read,send >"$SNIC_CASE_DIR/verbs-test.out" 2>&1 </dev/null || vt=$?
indent <"$SNIC_CASE_DIR/verbs-test.out"
if (( vt == 0 )); then
	ok "snic_verbs_test"
else
	bad "snic_verbs_test (status $vt)"
fi

# ------------------------------------------------------------------ 5
step "5. Stop the NICs (SIGTERM)"
if snic_emu_stop >"$SNIC_CASE_DIR/demo-stop.out" 2>&1; then
	ok "snic-emu exited 0 and removed its runtime files"
else
	grep -E '^FAIL' "$SNIC_CASE_DIR/demo-stop.out" | indent || true
	bad "snic-emu stop"
fi

# ------------------------------------------------------------------ what moved
step "What moved"
echo "  ibv_rc_pingpong (client, snic0):"
grep -E ' (bytes|iters) in ' "$SNIC_CASE_DIR/pingpong-client.out" 2>/dev/null | indent || echo "    (no summary)"
echo "  ibv_rc_pingpong (server, snic1):"
grep -E ' (bytes|iters) in ' "$SNIC_CASE_DIR/pingpong-server.out" 2>/dev/null | indent || echo "    (no summary)"
echo "  snic-emu counters (printed at exit):"
# Everything snic-emu printed after its "ready" line: the counter dump.
awk 'seen { print "    " $0 } /(^|[^[:alnum:]_])ready([^[:alnum:]_]|$)/ { seen = 1 }' "$SNIC_EMU_LOG"
echo

if (( ${#failed[@]} )); then
	printf '%sdemo FAILED%s: %s\n' "$R" "$N" "$(IFS=';'; echo "${failed[*]}")"
	echo "logs: $(rel "$SNIC_CASE_DIR")/"
	exit 1
fi
printf '%sdemo OK%s: two NICs came up, moved the data above over RoCEv2 and stopped cleanly.\n' "$G" "$N"
echo "Next: make test (all suites), README.md (how it works, what is supported)."
