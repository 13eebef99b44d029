#!/usr/bin/env bash
# `make demo BOARD=qemu-virt` (tools/demo.sh execs this): the same demo as
# on the emu board, on two NICs that are bare-metal aarch64 images in QEMU
# (qemu-virt board, tools/snic-qemu): snic0 (198.18.0.1) and snic1
# (198.18.0.2), one host-memory file, wired by unix datagram sockets.
# Builds the image first (`make qemu`; newlib once per machine).
# Exits non-zero if any demo_step failed.  Logs stay in $SNIC_BUILD/demo-qemu/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SNIC_BUILD=${SNIC_BUILD:-${BUILD:-build}}
export SNIC_CASE_DIR=${SNIC_CASE_DIR:-$SNIC_BUILD/demo-qemu}
# shellcheck source=tests/integration/qemu-lib.sh
. "$ROOT/tests/integration/qemu-lib.sh"
# shellcheck source=tools/demo-lib.sh
. "$ROOT/tools/demo-lib.sh"

snic_private_netns "$0" "$@"

rm -f -- "$SNIC_CASE_DIR"/*.out "$SNIC_CASE_DIR"/*.log
printf '%ssnic demo (qemu-virt)%s: the firmware as bare-metal aarch64 images in QEMU, driven by unmodified verbs programs\n' "$DEMO_B" "$DEMO_N"

demo_step "0. make qemu (the image; newlib is built once per machine, ~5 min the first time)"
make -s BUILD="$SNIC_BUILD" qemu >"$SNIC_CASE_DIR/make-qemu.out" 2>&1 ||
	{ demo_indent <"$SNIC_CASE_DIR/make-qemu.out"; snic_fail "make qemu failed"; }
qv_need_image
demo_ok "$(aarch64-linux-gnu-size "$QV_IMAGE" | tail -n 1 | awk '{ printf "text %d, data %d, bss %d bytes", $1, $2, $3 }')"

demo_step "1. Start two QEMU NICs: snic0 (198.18.0.1) and snic1 (198.18.0.2), unix datagram sockets between them"
qv_run_dir
qv_start snic0 198.18.0.1 "unix:$SNIC_CASE_DIR/snic0.sock:$SNIC_CASE_DIR/snic1.sock" --host-mem-size 256M
qv_start snic1 198.18.0.2 "unix:$SNIC_CASE_DIR/snic1.sock:$SNIC_CASE_DIR/snic0.sock"
demo_ok "ready (runtime files in $SNIC_RUN_DIR)"

demo_devinfo
SNIC_PINGPONG_TIMEOUT=120 demo_pingpong "server on snic1, client on snic0"
demo_verbs_test 3

demo_step "5. Stop the NICs (each firmware prints its counters on its console)"
for n in snic0 snic1; do
	if qv_stop "$n" >"$SNIC_CASE_DIR/stop-$n.out" 2>&1; then
		grep -A40 'counters (non-zero)' "$SNIC_CASE_DIR/console-$n.log" | demo_indent
		demo_ok "$n stopped cleanly"
	else
		demo_indent <"$SNIC_CASE_DIR/stop-$n.out"
		demo_bad "stop $n"
	fi
done

demo_end "two QEMU NICs came up, moved the data above over RoCEv2 and stopped cleanly (logs in $(demo_rel "$SNIC_CASE_DIR")/)."
