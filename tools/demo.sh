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
# `make demo BOARD=qemu-virt` runs the same demo on two NICs that are
# bare-metal images in QEMU.
if [[ ${BOARD:-emu} == qemu-virt ]]; then
	exec "$ROOT/tools/demo-qemu.sh" "$@"
fi
SNIC_BUILD=${SNIC_BUILD:-${BUILD:-build}}
export SNIC_CASE_DIR=${SNIC_CASE_DIR:-$SNIC_BUILD/demo}
# shellcheck source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"
# shellcheck source=tools/demo-lib.sh
. "$ROOT/tools/demo-lib.sh"

# The pingpong programs talk TCP (127.0.0.1) to swap QP numbers; run the
# whole demo in a private network namespace when the machine allows it.
snic_private_netns "$0" "$@"

snic_need_exec "$SNIC_BUILD/bin/snic-emu" "$SNIC_BUILD/tests/snic_verbs_test"
[[ -f $SNIC_BUILD/lib/libibverbs.so.1 ]] ||
	snic_fail "$SNIC_BUILD/lib/libibverbs.so.1 is missing (was it built? run 'make')"
snic_need_cmd ibv_devinfo ibv_rc_pingpong
rm -f -- "$SNIC_CASE_DIR"/*.out "$SNIC_CASE_DIR"/*.log

printf '%ssnic demo%s: RDMA NIC firmware on two emulated NICs, driven by unmodified verbs programs\n' "$DEMO_B" "$DEMO_N"
echo "  host driver: $(demo_rel "$SNIC_BUILD/lib/libibverbs.so.1") (LD_LIBRARY_PATH), logs: $(demo_rel "$SNIC_CASE_DIR")/"

# ------------------------------------------------------------------ 1
demo_step "1. Start snic-emu: snic0 (198.18.0.1) and snic1 (198.18.0.2), back-to-back"
# On failure snic_emu_start prints why (and snic-emu's log) and ends the demo.
snic_emu_start >"$SNIC_CASE_DIR/demo-start.out"
demo_ok "ready (pid $SNIC_EMU_PID, runtime files in $SNIC_RUN_DIR)"

demo_devinfo
demo_pingpong "server on snic1, client on snic0 (RC SEND/RECV, 1000 x 4096 bytes, RoCE v2 GID 0)"
demo_verbs_test 0

# ------------------------------------------------------------------ 5
demo_step "5. Stop the NICs (SIGTERM)"
if snic_emu_stop >"$SNIC_CASE_DIR/demo-stop.out" 2>&1; then
	demo_ok "snic-emu exited 0 and removed its runtime files"
else
	grep -E '^FAIL' "$SNIC_CASE_DIR/demo-stop.out" | demo_indent || true
	demo_bad "snic-emu stop"
fi

# ------------------------------------------------------------------ what moved
demo_step "What moved"
echo "  ibv_rc_pingpong (client, snic0):"
grep -E ' (bytes|iters) in ' "$SNIC_CASE_DIR/pingpong-client.out" 2>/dev/null | demo_indent || echo "    (no summary)"
echo "  ibv_rc_pingpong (server, snic1):"
grep -E ' (bytes|iters) in ' "$SNIC_CASE_DIR/pingpong-server.out" 2>/dev/null | demo_indent || echo "    (no summary)"
echo "  snic-emu counters (printed at exit):"
# Everything snic-emu printed after its "ready" line: the counter dump.
awk 'seen { print "    " $0 } /(^|[^[:alnum:]_])ready([^[:alnum:]_]|$)/ { seen = 1 }' "$SNIC_EMU_LOG"
echo

demo_end "two NICs came up, moved the data above over RoCEv2 and stopped cleanly."
echo "Next: make test (all suites), README.md (how it works, what is supported)."
