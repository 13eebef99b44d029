#!/usr/bin/env bash
# `make demo BOARD=qemu-virt` (tools/demo.sh execs this): the same demo as
# on the emu board, on two NICs that are bare-metal aarch64 images in QEMU
# (qemu-virt board, tools/snic-qemu): snic0 (198.18.0.1) and snic1
# (198.18.0.2), one host-memory file, wired by unix datagram sockets.
# Builds the image first (`make qemu`; newlib once per machine).
# Exits non-zero if any step failed.  Logs stay in $SNIC_BUILD/demo-qemu/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SNIC_BUILD=${SNIC_BUILD:-${BUILD:-build}}
export SNIC_CASE_DIR=${SNIC_CASE_DIR:-$SNIC_BUILD/demo-qemu}
# shellcheck source=tests/integration/qemu-lib.sh
. "$ROOT/tests/integration/qemu-lib.sh"

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

rm -f -- "$SNIC_CASE_DIR"/*.out "$SNIC_CASE_DIR"/*.log
printf '%ssnic demo (qemu-virt)%s: the firmware as bare-metal aarch64 images in QEMU, driven by unmodified verbs programs\n' "$B" "$N"

step "0. make qemu (the image; newlib is built once per machine, ~5 min the first time)"
make -s BUILD="$SNIC_BUILD" qemu >"$SNIC_CASE_DIR/make-qemu.out" 2>&1 ||
	{ indent <"$SNIC_CASE_DIR/make-qemu.out"; snic_fail "make qemu failed"; }
qv_need_image
ok "$(aarch64-linux-gnu-size "$QV_IMAGE" | tail -n 1 | awk '{ printf "text %d, data %d, bss %d bytes", $1, $2, $3 }')"

step "1. Start two QEMU NICs: snic0 (198.18.0.1) and snic1 (198.18.0.2), unix datagram sockets between them"
qv_run_dir
qv_start snic0 198.18.0.1 "unix:$SNIC_CASE_DIR/snic0.sock:$SNIC_CASE_DIR/snic1.sock" --host-mem-size 256M
qv_start snic1 198.18.0.2 "unix:$SNIC_CASE_DIR/snic1.sock:$SNIC_CASE_DIR/snic0.sock"
ok "ready (runtime files in $SNIC_RUN_DIR)"

step "2. ibv_devinfo (Debian's ibverbs-utils) sees the NICs"
if timeout --foreground 20 ibv_devinfo >"$SNIC_CASE_DIR/devinfo.out" 2>&1; then
	indent <"$SNIC_CASE_DIR/devinfo.out"
	ok "ibv_devinfo"
else
	indent <"$SNIC_CASE_DIR/devinfo.out"
	bad "ibv_devinfo"
fi

step "3. ibv_rc_pingpong: server on snic1, client on snic0"
if ( SNIC_PINGPONG_TIMEOUT=120 snic_pingpong 18515 ) >"$SNIC_CASE_DIR/pingpong.out" 2>&1; then
	grep -h 'bytes in' "$SNIC_CASE_DIR"/pingpong-client.out | indent
	ok "ibv_rc_pingpong: both sides exited 0"
else
	indent <"$SNIC_CASE_DIR/pingpong.out"
	bad "ibv_rc_pingpong"
fi

step "4. snic_verbs_test --only write,read,send (data checked byte for byte)"
vt=0
timeout --foreground 300 "$SNIC_BUILD/tests/snic_verbs_test" --dev0 snic0 --dev1 snic1 \
	--only write,read,send >"$SNIC_CASE_DIR/verbs-test.out" 2>&1 </dev/null || vt=$?
tail -n 3 "$SNIC_CASE_DIR/verbs-test.out" | indent
if (( vt == 0 )); then ok "snic_verbs_test"; else bad "snic_verbs_test (status $vt)"; fi

step "5. Stop the NICs (each firmware prints its counters on its console)"
for n in snic0 snic1; do
	if qv_stop "$n" >"$SNIC_CASE_DIR/stop-$n.out" 2>&1; then
		grep -A40 'counters (non-zero)' "$SNIC_CASE_DIR/console-$n.log" | indent
		ok "$n stopped cleanly"
	else
		indent <"$SNIC_CASE_DIR/stop-$n.out"
		bad "stop $n"
	fi
done

if (( ${#failed[@]} )); then
	printf '\n%sdemo failed:%s %s\n' "$R" "$N" "${failed[*]}"
	exit 1
fi
printf '\n%sdemo passed%s (logs in %s)\n' "$G" "$N" "$SNIC_CASE_DIR"
