#!/usr/bin/env bash
# ThreadSanitizer over the firmware's cores on real threads (not part of
# make test: a race shows when its interleaving happens, so a clean run
# proves little, and TSan slows snic-emu ~100x).  Builds snic-emu with
# -fsanitize=thread into build-tsan/ (DPDK itself uninstrumented), runs
# it with 2 firmware cores per NIC, drives it with normal (uninstrumented)
# programs - snic-qpbench tight (a CQ shared by both cores, nearly full)
# and perftest SEND, READ, atomics, UD and 64 KiB WRITE, each with QPs on
# both cores - and fails when TSan reported anything that tools/tsan.supp
# does not explain.  Run it after changing what the cores share.
#   tools/tsan.sh [CORES]          1..16, default 2
# DPDK is not instrumented: frame buffers that change threads inside it
# (a ring port's ring, a pool's shared ring: with 3 cores core 0 steers
# in software and relays) are handed over with __tsan_release/_acquire
# in the HAL (hal/dpdk/hal_dpdk.c mbuf_give/mbuf_take, under TSan only).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tests/integration/lib.sh
. "$root/tests/integration/lib.sh"
snic_private_netns "$0" "$@"
cores=${1:-2}
[[ $cores =~ ^[0-9]+$ ]] && (( cores >= 1 && cores <= 16 )) ||
	{ echo "usage: $0 [CORES 1..16]" >&2; exit 2; }
cd "$root"
make -s all >/dev/null
make -s BUILD=build-tsan OPT=-O1 SAN="-fsanitize=thread -Wno-tsan" build-tsan/bin/snic-emu
log=$SNIC_CASE_DIR/tsan-emu.log
rd=$(mktemp -d /dev/shm/snic-tsan.XXXXXX)
# (setarch -R: TSan's shadow layout wants the program's mappings where
# ASLR with this kernel's entropy may not put them)
TSAN_OPTIONS="halt_on_error=0 history_size=3 suppressions=$root/tools/tsan.supp" \
	setarch -R build-tsan/bin/snic-emu --run-dir "$rd" --cores "$cores" >"$log" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$rd"' EXIT
for (( i = 0; i < 600; i++ )); do
	grep -q '^ready:' "$log" && break
	kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
	sleep 0.1
done
export SNIC_RUN_DIR=$rd LD_LIBRARY_PATH=$root/build/lib
rc=0
timeout 120 build/bin/snic-qpbench tight 50 2 || rc=1
port=$(snic_free_port 26115)
for t in "ib_send_bw -q 4 -s 4096 -n 500" "ib_read_bw -q 4 -s 4096 -n 500" \
	 "ib_atomic_bw -q 2 -n 500" "ib_send_bw -c UD -q 2 -s 1024 -n 500" \
	 "ib_write_bw -q 2 -s 65536 -n 200"; do
	read -r -a cmd <<<"$t"
	timeout 120 "${cmd[@]}" -d snic1 -F -x 0 -p "$port" >/dev/null 2>&1 </dev/null &
	spid=$!
	snic_wait_listen "$port" 60 "$spid" >/dev/null || { rc=1; continue; }
	if timeout 120 "${cmd[@]}" -d snic0 -F -x 0 -p "$port" 127.0.0.1 >/dev/null 2>&1 </dev/null &&
	   wait "$spid"; then
		echo "ran: $t"
	else
		echo "failed: $t"; rc=1
	fi
done
kill -INT "$pid"
wait "$pid" || rc=1
trap - EXIT
rm -rf "$rd"
n=$(grep -c 'WARNING: ThreadSanitizer' "$log" || true)
grep 'SUMMARY: ThreadSanitizer' "$log" | sort | uniq -c || true
echo "tsan: $n report(s) with $cores cores per NIC; log $log"
(( n == 0 && rc == 0 ))
